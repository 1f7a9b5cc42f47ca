#!/usr/bin/env bash
# Builds the browser decoder and copies the toolchain's JS glue next to it, so
# the two always match.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d wasm ] || { echo "build-wasm: no wasm/ package yet, skipping"; exit 0; }
mkdir -p web/static
GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o web/static/querylens.wasm ./wasm
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" web/static/wasm_exec.js
