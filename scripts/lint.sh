#!/usr/bin/env bash
# go vet, gofmt, a check that the committed *_templ.go files are fresh, and
# tsc --noEmit over the pages' JavaScript.
set -euo pipefail
cd "$(dirname "$0")/.."
go vet ./...
unformatted=$(gofmt -l $(git ls-files -co --exclude-standard '*.go' | grep -v '_templ.go$') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
if ls web 2>/dev/null | grep -q . && git ls-files -co --exclude-standard '*.templ' | grep -q .; then
  go tool templ fmt -fail . >/dev/null
  go tool templ generate >/dev/null
  if ! git diff --quiet -- '*_templ.go'; then
    echo "templ generate changed committed *_templ.go files: run go tool task generate and commit"; git diff --stat -- '*_templ.go'; exit 1
  fi
fi
# The pages' JavaScript, type-checked as served (// @ts-check in every file;
# tsc pinned in tools/typescript). Without node this is skipped locally and
# fails in CI.
if command -v node >/dev/null; then
  for f in web/static/*.js; do
    [ "$f" = web/static/wasm_exec.js ] || head -1 "$f" | grep -q '^// @ts-check$' || { echo "$f: the first line must be // @ts-check"; exit 1; }
  done
  [ -d tools/typescript/node_modules/typescript ] || npm ci --prefix tools/typescript --no-audit --no-fund --loglevel=error
  node tools/typescript/node_modules/typescript/bin/tsc -p tools/typescript
elif [ -n "${CI:-}" ]; then
  echo "node is required to type-check web/static/*.js"; exit 1
else
  echo "lint: node not found, skipping the JavaScript type check"
fi
