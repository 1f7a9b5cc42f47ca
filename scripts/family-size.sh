#!/usr/bin/env bash
# Prints what each protocol family adds to the browser module, in bytes of
# brotli (the form the budget is on: internal/wasmmodule.BudgetPerFamily):
# the module is built once whole and once without each family (its import
# line removed from codecs/all/all.go), both compressed as
# scripts/build-wasm.sh does, and the share is the difference.
#
#   bash scripts/family-size.sh               every family imported by codecs/all
#   bash scripts/family-size.sh a2s ogp       only these (package names under codecs/)
#   bash scripts/family-size.sh -repeat 3 a2s the brotli share as the median of 3 layouts
#
# Output: a header, then one line per family, then the whole module:
#
#   family    brotli  min-max  budget  code  raw  [OVER]
#
#   brotli   the share in bytes of brotli (OVER when above budget). Brotli
#            of the whole module moves by a KB or two between builds of
#            nearly the same code, as the layout shifts, so with -repeat N
#            each build is made N times with the module laid out N ways
#            (the version string, -X main.version, padded to 0, 7, 13, 23,
#            … bytes moves every later datum and so every address in the
#            code) and the share is the median of the N differences, each
#            taken between builds of the same layout; min-max is their
#            range (one value when N is 1, the default).
#   code     the family's own functions in the whole module: the sum of
#            the code-section bodies named codecs/<family> (and its
#            subpackages), by internal/cmd/wasmfuncs. Uncompressed, and
#            exact: no layout or compression noise, so a cut of the
#            family's code shows here whatever brotli does. It misses what
#            the family alone pulls in from elsewhere (the standard library,
#            generic instances named by their package) and its data.
#   raw      the share in bytes of the uncompressed module (first layout):
#            code and data, everything the family brings, no compression
#            noise.
#
# Builds go to a temporary directory; codecs/all/all.go is restored on
# exit, even after a failure or an interrupt. A family that others import
# (none today) would be measured as still linked, with a share of about 0.
set -euo pipefail
cd "$(dirname "$0")/.."

repeat=1
if [ "${1:-}" = -repeat ]; then
  repeat=${2:?family-size: -repeat needs a count}
  shift 2
fi
case "$repeat" in ''|*[!0-9]*|0) echo "family-size: -repeat takes a count of 1 or more, got $repeat" >&2; exit 2 ;; esac

all=codecs/all/all.go
# The budget per family, as internal/wasmmodule declares it.
budget=$(sed -n 's/^[[:space:]]*BudgetPerFamily = \([0-9_]*\)$/\1/p' internal/wasmmodule/budget.go | tr -d _)
case "$budget" in ''|*[!0-9]*) echo "family-size: no BudgetPerFamily in internal/wasmmodule/budget.go" >&2; exit 2 ;; esac
gover=$(awk '$1 == "go" { print $2; exit }' go.mod)
export GOTOOLCHAIN="go$gover" GOFLAGS=-mod=readonly GOEXPERIMENT= CGO_ENABLED=0 GOOS=js GOARCH=wasm GOWASM=

tmp=$(mktemp -d)
cp "$all" "$tmp/all.go.orig"
trap 'cp "$tmp/all.go.orig" "$all"; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# Host tools, built once.
GOOS= GOARCH= go build -o "$tmp/precompress" ./internal/cmd/precompress
GOOS= GOARCH= go build -o "$tmp/wasmfuncs" ./internal/cmd/wasmfuncs

# pad K: the version string of layout K (0-based): 0, 7, 13, 23, 31, …
# bytes, lengths that do not keep the later data on the same alignment.
pads=(0 7 13 23 31 43 53 61 71 83)
pad() {
  local n=${pads[$(($1 % ${#pads[@]}))]}
  head -c "$n" /dev/zero | tr '\0' x
}

# build NAME K: builds ./wasm with codecs/all as it is now in layout K and
# prints "brotli-bytes raw-bytes".
build() {
  local dir="$tmp/$1-$2"
  mkdir -p "$dir"
  go build -trimpath -buildvcs=false -ldflags="-s -w -X main.version=$(pad "$2")" -o "$dir/querylens.wasm" ./wasm
  "$tmp/precompress" -in "$dir/querylens.wasm" -dir "$dir" -build "$1" >/dev/null
  echo "$(wc -c <"$dir/querylens.wasm.br" | tr -d ' ') $(wc -c <"$dir/querylens.wasm" | tr -d ' ')"
}

# median of the numbers on stdin (the lower middle for an even count).
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

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

# The whole module with its names, for the code column.
go build -trimpath -buildvcs=false -o "$tmp/named.wasm" ./wasm
wholebr=() wholeraw=0
for ((k = 0; k < repeat; k++)); do
  read -r br raw < <(build whole "$k")
  wholebr+=("$br")
  [ "$k" = 0 ] && wholeraw=$raw
done

printf '%-10s %7s %15s %7s %7s %7s\n' family brotli min-max budget code raw
for f in "${families[@]}"; do
  line="\"github.com/querylens/querylens/codecs/$f\""
  grep -v "^\s*_ $line\$" "$tmp/all.go.orig" >"$all"
  shares=() raw=0
  for ((k = 0; k < repeat; k++)); do
    read -r br r < <(build "no-$f" "$k")
    shares+=($((wholebr[k] - br)))
    [ "$k" = 0 ] && raw=$((wholeraw - r))
  done
  cp "$tmp/all.go.orig" "$all"
  share=$(printf '%s\n' "${shares[@]}" | median)
  lo=$(printf '%s\n' "${shares[@]}" | sort -n | head -1)
  hi=$(printf '%s\n' "${shares[@]}" | sort -n | tail -1)
  code=$(
    prefix="github.com_querylens_querylens_codecs_$f"
    "$tmp/wasmfuncs" -sum "$prefix." -sum "${prefix}_" "$tmp/named.wasm" | awk '{ s += $1 } END { print s }'
  )
  mark=""
  [ "$share" -gt "$budget" ] && mark=" OVER"
  printf '%-10s %7d %15s %7d %7d %7d%s\n' "$f" "$share" "$lo-$hi" "$budget" "$code" "$raw" "$mark"
done
printf '%-10s %7d %15s %7s %7s %7d\n' module "$(printf '%s\n' "${wholebr[@]}" | median)" \
  "$(printf '%s\n' "${wholebr[@]}" | sort -n | head -1)-$(printf '%s\n' "${wholebr[@]}" | sort -n | tail -1)" "" "" "$wholeraw"
