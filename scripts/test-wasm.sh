#!/usr/bin/env bash
# Runs the pure packages (codecs, huffman, pcapng, internal/ipfmt) and the wasm boundary under node.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null || { echo "test-wasm: node is required"; exit 1; }
pkgs=(./huffman/... ./codecs/... ./pcapng/... ./internal/ipfmt)
[ -d wasm ] && pkgs+=(./wasm/...)
GOOS=js GOARCH=wasm go test -count=1 -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" "${pkgs[@]}"
