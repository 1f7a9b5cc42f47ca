#!/usr/bin/env bash
# Builds the browser decoder reproducibly and precompresses it as the server
# sends it (brotli by Go code pinned in go.mod, gzip by compress/gzip: no
# system tool).
#
#   bash scripts/build-wasm.sh          build, copy wasm_exec.js, precompress
#   bash scripts/build-wasm.sh --check  build to a temporary directory and fail
#                                       if the committed module is stale
#   bash scripts/build-wasm.sh --unchanged
#                                       succeed, building nothing, if the module
#                                       in the tree is the committed one and no
#                                       file compiled into it (nor go.mod, go.sum,
#                                       this script) differs from the commit that
#                                       last wrote it: go tool task run then skips
#                                       the build on a fresh clone
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
check=false unchanged=false
case "${1:-}" in
  --check) check=true ;;
  --unchanged) unchanged=true ;;
  "") ;;
  *) echo "usage: bash scripts/build-wasm.sh [--check | --unchanged]" >&2; exit 2 ;;
esac

gover=$(awk '$1 == "go" { print $2; exit }' go.mod)
export GOTOOLCHAIN="go$gover" GOFLAGS=-mod=readonly GOEXPERIMENT= CGO_ENABLED=0
build=(go build -trimpath -buildvcs=false -ldflags="-s -w")
desc="GOTOOLCHAIN=go$gover GOOS=js GOARCH=wasm GOWASM= ${build[*]} ./wasm"

if $unchanged; then
  # Lint checks on every commit that the committed module is what its
  # sources build to, so a module whose sources have not moved since it
  # was committed, built as this script builds it, needs no rebuilding.
  # Anything uncertain (no git, a changed or untracked file in a source
  # package, a module file edited since HEAD) answers "changed"; tests and
  # testdata do not count.
  base=$(git log -1 --format=%H -- web/static/querylens.wasm.json 2>/dev/null) && [ -n "$base" ] || exit 1
  git diff --quiet HEAD -- web/static/querylens.wasm.br web/static/querylens.wasm.gz web/static/querylens.wasm.json web/static/wasm_exec.js || exit 1
  grep -qF "\"build\": \"$desc\"" web/static/querylens.wasm.json || exit 1
  # The raw module a build leaves for tools (and web's tests compare) is the committed one, or absent.
  if [ -e web/static/querylens.wasm ]; then
    sum=$(sha256sum web/static/querylens.wasm | cut -d' ' -f1)
    grep -qF "\"sha256\": \"$sum\"" web/static/querylens.wasm.json || exit 1
  fi
  dirs=$({ GOOS=js GOARCH=wasm go list -deps -f '{{if not .Standard}}{{.Dir}}{{end}}' ./wasm &&
    go list -deps -f '{{if not .Standard}}{{.Dir}}{{end}}' ./internal/cmd/precompress; } | sort -u) || exit 1
  paths=(go.mod go.sum)
  while IFS= read -r d; do
    case "$d" in
      "$PWD") paths+=(':(glob)*.go' ':(glob)*.s') ;;
      "$PWD"/*) paths+=(":(glob)${d#"$PWD"/}/*.go" ":(glob)${d#"$PWD"/}/*.s") ;;
      *) ;; # a module outside the tree: pinned by go.mod and go.sum
    esac
  done <<<"$dirs"
  paths+=(':(exclude,glob)**/*_test.go')
  git diff --quiet "$base" -- "${paths[@]}" || exit 1
  [ -z "$(git ls-files -o --exclude-standard -- "${paths[@]}")" ] || exit 1
  exit 0
fi

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
