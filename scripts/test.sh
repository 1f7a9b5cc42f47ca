#!/usr/bin/env bash
# go tool task test: lint, every package's tests under -race, then the pure
# packages' tests compiled to js/wasm under node.
#   scripts/test.sh [go test arguments...]   (go tool task test -- -run X)
#
# Lint (scripts/lint.sh, which writes nothing in the tree) runs alongside the
# race tests, its output kept until it ends: the two compile disjoint sets of
# packages (lint without -race, the tests with it), and lint's serial steps
# (the tools' links, tsc, the module's check) and the tests' waits (browser,
# servers on loopback) leave a core idle that the other fills. go test's own
# vet pass is off: lint runs the whole go vet ./..., tests included.
# The wasm tests come after the race tests: they reuse the js/wasm packages
# lint's staticcheck compiled.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
bash scripts/lint.sh >"$log" 2>&1 &
lint=$!
failed=()
# -timeout: go test's default of 10 minutes per package binary is not a
# bound on a loaded 2-core machine (cmd/querylens passed it once at a load
# average of 20); the CI run's own cap bounds the whole.
# -gcflags: -race turns on checkptr, which checks every unsafe.Pointer
# conversion as it runs; modernc.org's SQLite (C translated to Go: pointer
# arithmetic throughout) spent about half its time there (package history's
# tests: 15 s, 7 s without). That checks the library, not querylens: it is
# off for modernc.org's packages only; every package keeps the race
# detector, and querylens's own keep checkptr.
# The packages whose tests take longest come first (go test keeps the
# order it is given and runs two at once): listed in import-path order,
# web, the longest (its browser tests, ~200 s), started last and ran alone
# at the end while a core idled.
go test -race -gcflags='modernc.org/...=-d=checkptr=0' -vet=off -count=1 -timeout 30m ./web ./cmd/querylens ./demo ./... "$@" || failed+=("go test -race")
bash scripts/test-wasm.sh || failed+=("the wasm tests")
wait "$lint" || failed+=(lint)
echo "--- lint (scripts/lint.sh)"
cat "$log"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAIL: ${failed[*]}" >&2
  exit 1
fi
