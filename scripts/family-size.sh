#!/usr/bin/env bash
# Prints what each protocol family adds to the browser module, in bytes of
# brotli (the form the budget is on: internal/wasmmodule.BudgetPerFamily):
# the module is built once whole and once without each family (its import
# line removed from codecs/all/all.go), both compressed as
# scripts/build-wasm.sh does, and the share is the difference.
#
#   bash scripts/family-size.sh              every family imported by codecs/all
#   bash scripts/family-size.sh a2s ogp      only these (package names under codecs/)
#
# Output: one line per family, "family share budget" (share > budget marked
# OVER), then the whole module's brotli size. Builds go to a temporary
# directory; codecs/all/all.go is restored on exit, even after a failure or
# an interrupt. A family that others import (none today) would be measured
# as still linked, with a share of about 0.
set -euo pipefail
cd "$(dirname "$0")/.."

all=codecs/all/all.go
budget=40000
gover=$(awk '$1 == "go" { print $2; exit }' go.mod)
export GOTOOLCHAIN="go$gover" GOFLAGS=-mod=readonly GOEXPERIMENT= CGO_ENABLED=0 GOOS=js GOARCH=wasm GOWASM=

tmp=$(mktemp -d)
cp "$all" "$tmp/all.go.orig"
trap 'cp "$tmp/all.go.orig" "$all"; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# brsize NAME: builds ./wasm with codecs/all as it is now and prints the
# brotli size of the module.
brsize() {
  local dir="$tmp/$1"
  mkdir -p "$dir"
  go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$dir/querylens.wasm" ./wasm
  # precompress is a host tool: build and run it for the host.
  GOOS= GOARCH= go run ./internal/cmd/precompress -in "$dir/querylens.wasm" -dir "$dir" -build "$1" >/dev/null
  wc -c <"$dir/querylens.wasm.br" | tr -d ' '
}

if [ $# -gt 0 ]; then
  families=("$@")
else
  mapfile -t families < <(sed -n 's#^\s*_ "github.com/querylens/querylens/codecs/\([a-z0-9]*\)"$#\1#p' "$all")
fi

for f in "${families[@]}"; do
  if ! grep -q "^\s*_ \"github.com/querylens/querylens/codecs/$f\"\$" "$tmp/all.go.orig"; then
    echo "family-size: codecs/all does not import codecs/$f" >&2
    exit 2
  fi
done

whole=$(brsize whole)
for f in "${families[@]}"; do
  line="\"github.com/querylens/querylens/codecs/$f\""
  grep -v "^\s*_ $line\$" "$tmp/all.go.orig" >"$all"
  without=$(brsize "no-$f")
  cp "$tmp/all.go.orig" "$all"
  share=$((whole - without))
  mark=""
  [ "$share" -gt "$budget" ] && mark=" OVER"
  printf '%-14s %7d %7d%s\n' "$f" "$share" "$budget" "$mark"
done
printf '%-14s %7d\n' "module" "$whole"
