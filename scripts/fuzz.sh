#!/usr/bin/env bash
# Runs every Fuzz* target in the module within one fixed total budget:
#   scripts/fuzz.sh [BUDGET]   (go tool task fuzz; FUZZBUDGET=2m for a shorter pass)
# BUDGET (default 120s here, 10m through the task) is the wall time of the whole pass, compiling
# included, shared by the targets, so adding a protocol's fuzz targets does
# not make the pass longer: each target fuzzes for what is left of the
# budget divided by the targets left, but never less than FUZZMIN (default
# 1s). A budget too short for every target (each costs its minimum and
# about a second of start-up, each package a build: CI's 2m) fuzzes the
# targets in turn from a place set by the commit (git rev-parse HEAD), and
# stops when the budget is spent, naming the targets left for another run:
# the next commits start elsewhere, and go test ran every seed corpus
# already. Minimising a new input (an interesting one or a
# crasher) is capped by FUZZMINIMIZETIME (default 5s), so a slow
# minimisation cannot use up a target's time; go test's own default is a
# minute per input.
#
# Each package's test binary is built once, with the coverage
# instrumentation fuzzing needs (go test -c -fuzz), and every target of the
# package runs from it: `go test -fuzz` would build it again for each
# target, and on a cold cache the builds were most of the pass. The binary
# runs as go test runs it: in the package's directory (the seed corpus and
# new failing inputs are under testdata/fuzz there), with the cache of
# interesting inputs go test uses ($GOCACHE/fuzz/IMPORT/TARGET).
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-120s}
minimum=${FUZZMIN:-1s}
minimize=${FUZZMINIMIZETIME:-5s}
# seconds turns a Go duration of whole seconds or minutes (90s, 3m) into seconds.
seconds() {
  case "$1" in
    *m) echo $((${1%m} * 60)) ;;
    *s) echo "${1%s}" ;;
    *) echo "fuzz: durations are whole seconds or minutes (90s, 3m), got $1" >&2; exit 2 ;;
  esac
}
total=$(seconds "$budget") least=$(seconds "$minimum")
start=$SECONDS # the budget counts from here: the builds are part of the pass
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
# Every target, as "dir fn", in a stable order (a package's targets together).
mapfile -t targets < <(git ls-files -co --exclude-standard '*_test.go' | sort | while IFS= read -r file; do
  for fn in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
    echo "$(dirname "$file") $fn"
  done
done | sort -s -k1,1)
found=${#targets[@]}
if [ "$found" = 0 ]; then echo "fuzz: no targets found" >&2; exit 1; fi
# The turn's start: the commit's hash, as a number, modulo the targets, set
# back to the first target of its package (one build per package).
head=$(git rev-parse --short=7 HEAD 2>/dev/null || echo 0)
first=$((16#${head} % found))
while [ "$first" -gt 0 ] && [ "${targets[first]% *}" = "${targets[first - 1]% *}" ]; do first=$((first - 1)); done
targets=("${targets[@]:first}" "${targets[@]:0:first}")
echo "fuzz: $found targets within $budget, from ${targets[0]#* } (${targets[0]% *})"
module=$(go list -m)
fuzzcache=$(go env GOCACHE)/fuzz
left=$found built=""
# inputs counts the saved inputs of a target (0 when it has none).
inputs() { if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi; }
done_=0
for t in "${targets[@]}"; do
  dir=${t% *} fn=${t#* }
  # Out of budget (a target costs its minimum and ~1s more; a new package
  # a build too): the rest wait for another run.
  if [ "$done_" -gt 0 ] && [ $((SECONDS - start + least + 1)) -gt "$total" ]; then
    echo "fuzz: the budget is spent: $done_ of $found targets fuzzed; not this run: ${targets[*]:done_}" | sed -E 's/ ([a-z0-9_/.]+) (Fuzz)/ \1.\2/g'
    exit 0
  fi
  bin=$tmp/${dir//\//_}.test
  if [ "$dir" != "$built" ]; then
    b0=$SECONDS
    if ! go test -c -fuzz=. -o "$bin" "./$dir" >"$log" 2>&1; then
      cat "$log"
      echo "fuzz $dir: the test binary did not build" >&2
      exit 1
    fi
    echo "fuzz $dir: built in $((SECONDS - b0))s"
    built=$dir
  fi
  each=$(((total - (SECONDS - start)) / left))
  if [ "$each" -lt "$least" ]; then each=$least; fi
  left=$((left - 1))
  echo "fuzz $dir $fn (${each}s, minimise at most $minimize)"
  corpus="$dir/testdata/fuzz/$fn"
  before=$(inputs "$corpus")
  pkg=$module/$dir
  if [ "$dir" = . ]; then pkg=$module; fi
  for try in 1 2; do
    if (cd "$dir" && "$bin" -test.paniconexit0 -test.run='^$' -test.fuzz="^${fn}\$" -test.fuzztime="${each}s" \
      -test.fuzzminimizetime="$minimize" -test.fuzzcachedir="$fuzzcache/$pkg") >"$log" 2>&1; then
      break
    fi
    # Go 1.26's fuzz coordinator can report its own -fuzztime deadline
    # as a failure ("context deadline exceeded", no input written:
    # go.dev/issue/75804, fixed in Go 1.27). Only that exact case is
    # run again, once; a written input or any other failure fails.
    if grep -q '^    context deadline exceeded$' "$log" && ! grep -q 'Failing input written' "$log" &&
      [ "$(inputs "$corpus")" = "$before" ]; then
      if [ "$try" = 1 ]; then echo "fuzz $dir $fn: the coordinator's deadline race (go.dev/issue/75804), running it again"; continue; fi
      echo "fuzz $dir $fn: the coordinator's deadline race twice, no failing input found: counted as passed"; break
    fi
    cat "$log"
    # The binary names the input relative to the package; say where it is.
    if [ "$(inputs "$corpus")" != "$before" ]; then
      echo "fuzz $dir $fn: failing input written under $corpus (go test -run=$fn ./$dir runs it again)" >&2
    fi
    exit 1
  done
  done_=$((done_ + 1))
done
echo "fuzz: $found targets passed in $((SECONDS - start))s"
