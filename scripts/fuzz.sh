#!/usr/bin/env bash
# Runs every Fuzz* target in the module for a short time each.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-3s}
found=0
while IFS= read -r file; do
  dir=$(dirname "$file")
  for fn in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
    found=$((found+1))
    echo "fuzz $dir $fn ($fuzztime)"
    go test -run='^$' -fuzz="^${fn}\$" -fuzztime="$fuzztime" "./$dir" >/tmp/fuzz.$$ 2>&1 || { cat /tmp/fuzz.$$; rm -f /tmp/fuzz.$$; exit 1; }
  done
done < <(git ls-files -co --exclude-standard '*_test.go' | xargs grep -l '^func Fuzz' 2>/dev/null || true)
rm -f /tmp/fuzz.$$
echo "fuzz: $found targets passed"
