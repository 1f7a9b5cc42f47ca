#!/usr/bin/env bash
# Builds the browser decoder reproducibly and precompresses it as the server
# sends it (brotli by Go code pinned in go.mod, gzip by compress/gzip: no
# system tool).
#
#   bash scripts/build-wasm.sh          build, copy wasm_exec.js, precompress
#   bash scripts/build-wasm.sh --check  build to a temporary directory and fail
#                                       if the committed module is stale
#
# Committed (embedded by web, so `go build` and `go install` need no build
# step): web/static/querylens.wasm.{br,gz,json} and wasm_exec.js. The raw
# web/static/querylens.wasm is left for tools (benchmarks) and is gitignored.
#
# Reproducible: the toolchain named by go.mod's go line (GOTOOLCHAIN), no
# VCS stamp (-buildvcs=false: a new commit must not change the module),
# -trimpath, no symbol tables, and the environment that changes code
# generation cleared (GOFLAGS, which would else fall back to `go env -w`
# settings, GOWASM, GOEXPERIMENT).
set -euo pipefail
cd "$(dirname "$0")/.."
check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: bash scripts/build-wasm.sh [--check]" >&2; exit 2 ;;
esac

gover=$(awk '$1 == "go" { print $2; exit }' go.mod)
export GOTOOLCHAIN="go$gover" GOFLAGS=-mod=readonly GOEXPERIMENT= CGO_ENABLED=0
build=(go build -trimpath -buildvcs=false -ldflags="-s -w")
desc="GOTOOLCHAIN=go$gover GOOS=js GOARCH=wasm GOWASM= ${build[*]} ./wasm"

if $check; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  GOOS=js GOARCH=wasm GOWASM= "${build[@]}" -o "$tmp/querylens.wasm" ./wasm
  if ! cmp -s "$(go env GOROOT)/lib/wasm/wasm_exec.js" web/static/wasm_exec.js; then
    echo "web/static/wasm_exec.js is not the one of go$gover: run go tool task build:wasm and commit web/static" >&2
    exit 1
  fi
  go run ./internal/cmd/precompress -check -in "$tmp/querylens.wasm" -dir web/static
  exit 0
fi

mkdir -p web/static
GOOS=js GOARCH=wasm GOWASM= "${build[@]}" -o web/static/querylens.wasm ./wasm
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" web/static/wasm_exec.js
chmod 0644 web/static/wasm_exec.js
go run ./internal/cmd/precompress -in web/static/querylens.wasm -dir web/static -build "$desc"
