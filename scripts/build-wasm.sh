#!/usr/bin/env bash
# Builds the browser decoder, copies the toolchain's JS glue next to it (so
# the two always match), and precompresses the module as the server sends it:
# zopfli when installed (gzip-compatible, ~4% smaller than gzip -9), else gzip -9.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d wasm ] || { echo "build-wasm: no wasm/ package yet, skipping"; exit 0; }
mkdir -p web/static
GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o web/static/querylens.wasm ./wasm
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" web/static/wasm_exec.js
if command -v zopfli >/dev/null; then
  zopfli --i5 -c web/static/querylens.wasm > web/static/querylens.wasm.gz
else
  gzip -9 -n -c web/static/querylens.wasm > web/static/querylens.wasm.gz
fi
