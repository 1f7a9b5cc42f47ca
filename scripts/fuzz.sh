#!/usr/bin/env bash
# Runs every Fuzz* target in the module for a short time each:
#   scripts/fuzz.sh [FUZZTIME]   (go tool task test:fuzz FUZZTIME=30s)
# Minimising a new input (an interesting one or a crasher) is capped by
# FUZZMINIMIZETIME (default 5s), so a slow minimisation cannot use up a
# target's time; go test's own default is a minute per input.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
minimize=${FUZZMINIMIZETIME:-5s}
found=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
while IFS= read -r file; do
  dir=$(dirname "$file")
  for fn in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
    found=$((found+1))
    echo "fuzz $dir $fn ($fuzztime, minimise at most $minimize)"
    go test -run='^$' -fuzz="^${fn}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimize" "./$dir" >"$log" 2>&1 || { cat "$log"; exit 1; }
  done
done < <(git ls-files -co --exclude-standard '*_test.go' | xargs grep -l '^func Fuzz' 2>/dev/null || true)
echo "fuzz: $found targets passed in $((SECONDS-start))s"
