#!/usr/bin/env bash
# Builds the browser decoders reproducibly and precompresses them as the
# server sends them (brotli by Go code pinned in go.mod, gzip by
# compress/gzip: no system tool): the combined module (every protocol family,
# the inspector's capture reader and pcapng writer) and one module per
# protocol family registered (the same wasm main with only that codec
# package linked, and -tags family, which leaves the inspector's readers
# out), so that a page downloads only the protocols it shows
# (docs/architecture.md, "The browser modules").
#
#   bash scripts/build-wasm.sh          build, copy wasm_exec.js, precompress
#   bash scripts/build-wasm.sh --check  build to a temporary directory and fail
#                                       if a committed module is stale
#
# Committed (embedded by web, so `go build` and `go install` need no build
# step): web/static/querylens.wasm.{br,gz,json}, querylens-<family>.wasm.{br,gz,json}
# for each family, querylens.modules.json (which module holds which
# families and protocols, and their sizes) and wasm_exec.js. The raw modules
# (web/static/querylens*.wasm) are left for tools (benchmarks) and are
# gitignored.
#
# The families come from the registry (precompress -list): this script
# names no protocol. A family's module is ./wasm built with an -overlay that
# replaces codecs/all/all.go by a file importing only codecs and the
# family's package. The module of no family (codecs alone) is built too, to
# measure each family's share (internal/wasmmodule.FamilyBudget); its sizes
# go in the index, the module nowhere.
#
# Reproducible: the toolchain named by go.mod's go line (GOTOOLCHAIN), no
# VCS stamp (-buildvcs=false: a new commit must not change the module),
# -trimpath (the overlay's temporary path is not recorded either), no symbol
# tables, and the environment that changes code generation cleared
# (GOFLAGS, which would else fall back to `go env -w` settings, GOWASM,
# GOEXPERIMENT).
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
desc="GOTOOLCHAIN=go$gover GOOS=js GOARCH=wasm GOWASM= ${build[*]}"
pkg=$(go list -m)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if $check; then
  out=$tmp
  if ! cmp -s "$(go env GOROOT)/lib/wasm/wasm_exec.js" web/static/wasm_exec.js; then
    echo "web/static/wasm_exec.js is not the one of go$gover: run go tool task build:wasm and commit web/static" >&2
    exit 1
  fi
  pc=(go run ./internal/cmd/precompress -check -dir web/static)
else
  out=web/static
  mkdir -p web/static
  cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" web/static/wasm_exec.js
  chmod 0644 web/static/wasm_exec.js
  pc=(go run ./internal/cmd/precompress -dir web/static)
fi

# The registry's families: "package<TAB>protocol,protocol" a line.
go run ./internal/cmd/precompress -list >"$tmp/families"
all_pkgs=$(cut -f1 "$tmp/families" | paste -sd,)
all_protocols=$(cut -f2 "$tmp/families" | tr , '\n' | sort | paste -sd,)

GOOS=js GOARCH=wasm GOWASM= "${build[@]}" -o "$out/querylens.wasm" ./wasm
b=(-build "$desc ./wasm")
$check && b=()
"${pc[@]}" "${b[@]}" -in "$out/querylens.wasm" -name querylens.wasm -families "$all_pkgs" -protocols "$all_protocols"
modules=(querylens.wasm)

# One module per family: codecs/all/all.go replaced by an import of the
# family's package alone.
while IFS=$'\t' read -r fam protocols; do
  name="querylens-${fam##*/}.wasm"
  src="$tmp/${fam##*/}.go"
  printf 'package all\n\nimport (\n\t_ "%s/codecs"\n\t_ "%s"\n)\n' "$pkg" "$fam" >"$src"
  printf '{"Replace": {"%s": "%s"}}\n' "$PWD/codecs/all/all.go" "$src" >"$tmp/${fam##*/}.overlay.json"
  GOOS=js GOARCH=wasm GOWASM= "${build[@]}" -tags family -overlay "$tmp/${fam##*/}.overlay.json" -o "$out/$name" ./wasm
  b=(-build "$desc -tags family -overlay (codecs/all/all.go importing $fam alone) ./wasm")
  $check && b=()
  "${pc[@]}" "${b[@]}" -in "$out/$name" -name "$name" -families "$fam" -protocols "$protocols"
  modules+=("$name")
done <"$tmp/families"

# The module of no family (codecs alone), measured into the index, never
# sent: each family's share is its module less this one.
printf 'package all\n\nimport _ "%s/codecs"\n' "$pkg" >"$tmp/base.go"
printf '{"Replace": {"%s": "%s"}}\n' "$PWD/codecs/all/all.go" "$tmp/base.go" >"$tmp/base.overlay.json"
GOOS=js GOARCH=wasm GOWASM= "${build[@]}" -tags family -overlay "$tmp/base.overlay.json" -o "$tmp/base.wasm" ./wasm

"${pc[@]}" -index -base "$tmp/base.wasm" "${modules[@]}"
