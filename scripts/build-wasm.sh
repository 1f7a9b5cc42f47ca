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
#   bash scripts/build-wasm.sh --unchanged
#                                       succeed, building nothing, if the modules
#                                       in the tree are the committed ones and no
#                                       file compiled into them (nor go.mod,
#                                       go.sum) differs from the commit that last
#                                       wrote them: go tool task run then skips
#                                       the build on a fresh clone
#   bash scripts/build-wasm.sh --family IMPORTPATH --out DIR
#                                       build the module of one codec package
#                                       that is not in codecs/all (importing
#                                       IMPORTPATH registers it), as the
#                                       family modules are built, into
#                                       DIR/querylens-<family>.wasm.{br,gz,json},
#                                       for a querylens built with that package
#                                       to serve (querylens serve --modules DIR)
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
# Each module built is kept in a cache (QUERYLENS_WASM_CACHE, by default
# ~/.cache/querylens/wasm; the newest 64 kept) under a key that names every
# input of its build: the toolchain and flags, the build tags, the overlay's
# file, and the path (in the module or the module cache) and SHA-256 of every
# file of every non-standard package compiled in. The same sources build the
# same module anywhere (below), so a build whose key is cached copies it:
# lint's --check after a build, or a second clone, builds nothing again.
# QUERYLENS_WASM_CACHE=off builds everything.
#
# Reproducible: the toolchain named by go.mod's go line (GOTOOLCHAIN), no
# VCS stamp (-buildvcs=false: a new commit must not change the module),
# -trimpath (the overlay's temporary path is not recorded either), no symbol
# tables, and the environment that changes code generation cleared
# (GOFLAGS, which would else fall back to `go env -w` settings, GOWASM,
# GOEXPERIMENT).
set -euo pipefail
cd "$(dirname "$0")/.."
check=false unchanged=false family="" famout=""
usage="usage: bash scripts/build-wasm.sh [--check | --unchanged | --family IMPORTPATH --out DIR]"
case "${1:-}" in
  --check) check=true ;;
  --unchanged) unchanged=true ;;
  --family)
    [ $# = 4 ] && [ "$3" = --out ] || { echo "$usage" >&2; exit 2; }
    family=$2 famout=$4 ;;
  "") ;;
  *) echo "$usage" >&2; exit 2 ;;
esac

gover=$(awk '$1 == "go" { print $2; exit }' go.mod)
export GOTOOLCHAIN="go$gover" GOFLAGS=-mod=readonly GOEXPERIMENT= CGO_ENABLED=0
build=(go build -trimpath -buildvcs=false -ldflags="-s -w")
desc="GOTOOLCHAIN=go$gover GOOS=js GOARCH=wasm GOWASM= ${build[*]}"
pkg=$(go list -m)
cache=${QUERYLENS_WASM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/querylens/wasm}
modcache=$(go env GOMODCACHE)

# module_key prints the cache key of ./wasm built with build tags $1 and,
# if $2 is not empty, the overlay file $2 that replaces a file by $3.
module_key() {
  local tags=$1 overlay=$2 src=$3 flags=()
  [ -n "$tags" ] && flags+=(-tags "$tags")
  [ -n "$overlay" ] && flags+=(-overlay "$overlay")
  {
    echo "$desc"
    go version
    echo "tags: $tags"
    [ -n "$src" ] && cat "$src"
    GOOS=js GOARCH=wasm go list -deps "${flags[@]}" \
      -f '{{if not .Standard}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .SFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}' ./wasm |
      xargs -r -d '\n' sha256sum | sed -e "s#  $PWD/#  #" -e "s#  $modcache/#  mod:#"
  } | sha256sum | cut -c1-64
}

# build_module OUT TAGS [OVERLAY SRC]: go build of ./wasm into OUT, or the
# cached module of the same key.
build_module() {
  local out=$1 tags=$2 overlay=${3:-} src=${4:-} key flags=()
  [ -n "$tags" ] && flags+=(-tags "$tags")
  [ -n "$overlay" ] && flags+=(-overlay "$overlay")
  if [ "$cache" = off ]; then
    GOOS=js GOARCH=wasm GOWASM= "${build[@]}" "${flags[@]}" -o "$out" ./wasm
    return
  fi
  key=$(module_key "$tags" "$overlay" "$src")
  if [ -f "$cache/$key.wasm" ] && cp "$cache/$key.wasm" "$out"; then
    touch "$cache/$key.wasm"
    return
  fi
  GOOS=js GOARCH=wasm GOWASM= "${build[@]}" "${flags[@]}" -o "$out" ./wasm
  mkdir -p "$cache"
  cp "$out" "$cache/$key.wasm.$$" && mv -f "$cache/$key.wasm.$$" "$cache/$key.wasm"
  # Keep the newest 64 (a few builds' worth of every module).
  ls -1t "$cache"/*.wasm 2>/dev/null | tail -n +65 | xargs -r -d '\n' rm -f
}

if $unchanged; then
  # Lint checks on every commit that the committed module is what its
  # sources build to, so a module whose sources have not moved since it
  # was committed, built as this script builds it, needs no rebuilding.
  # Anything uncertain (no git, a changed or untracked file in a source
  # package, a module file edited since HEAD) answers "changed"; tests and
  # testdata do not count.
  base=$(git log -1 --format=%H -- web/static/querylens.wasm.json 2>/dev/null) && [ -n "$base" ] || exit 1
  git diff --quiet HEAD -- ':(glob)web/static/querylens*.wasm.*' web/static/querylens.modules.json web/static/wasm_exec.js || exit 1
  [ -z "$(git ls-files -o --exclude-standard -- ':(glob)web/static/querylens*.wasm.*')" ] || exit 1
  grep -qF "\"build\": \"$desc ./wasm\"" web/static/querylens.wasm.json || exit 1
  # The raw modules a build leaves for tools (and web's tests compare) are
  # the committed ones, or absent.
  for raw in web/static/querylens*.wasm; do
    [ -e "$raw" ] || continue
    sum=$(sha256sum "$raw" | cut -d' ' -f1)
    grep -qF "\"sha256\": \"$sum\"" "$raw.json" 2>/dev/null || exit 1
  done
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

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "$family" ]; then
  # One module for a codec package outside codecs/all: the families and
  # protocols it registers are read from the registry of precompress built
  # with the same overlay, so they are what the module registers.
  mkdir -p "$famout"
  printf 'package all\n\nimport (\n\t_ "%s/codecs"\n\t_ "%s"\n)\n' "$pkg" "$family" >"$tmp/family.go"
  printf '{"Replace": {"%s": "%s"}}\n' "$PWD/codecs/all/all.go" "$tmp/family.go" >"$tmp/family.overlay.json"
  go run -overlay "$tmp/family.overlay.json" ./internal/cmd/precompress -list >"$tmp/families"
  if [ "$(wc -l <"$tmp/families")" != 1 ]; then
    echo "build-wasm: $family registers $(wc -l <"$tmp/families") protocol families, want one:" >&2
    cat "$tmp/families" >&2
    exit 1
  fi
  IFS=$'\t' read -r fam protocols <"$tmp/families"
  name="querylens-${fam##*/}.wasm"
  build_module "$tmp/$name" family "$tmp/family.overlay.json" "$tmp/family.go"
  go run ./internal/cmd/precompress -dir "$famout" -build "$desc -tags family -overlay (codecs/all/all.go importing $family alone) ./wasm" \
    -in "$tmp/$name" -name "$name" -families "$fam" -protocols "$protocols"
  exit 0
fi

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

build_module "$out/querylens.wasm" ""
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
  build_module "$out/$name" family "$tmp/${fam##*/}.overlay.json" "$src"
  b=(-build "$desc -tags family -overlay (codecs/all/all.go importing $fam alone) ./wasm")
  $check && b=()
  "${pc[@]}" "${b[@]}" -in "$out/$name" -name "$name" -families "$fam" -protocols "$protocols"
  modules+=("$name")
done <"$tmp/families"

# The module of no family (codecs alone), measured into the index, never
# sent: each family's share is its module less this one.
printf 'package all\n\nimport _ "%s/codecs"\n' "$pkg" >"$tmp/base.go"
printf '{"Replace": {"%s": "%s"}}\n' "$PWD/codecs/all/all.go" "$tmp/base.go" >"$tmp/base.overlay.json"
build_module "$tmp/base.wasm" family "$tmp/base.overlay.json" "$tmp/base.go"

"${pc[@]}" -index -base "$tmp/base.wasm" "${modules[@]}"
