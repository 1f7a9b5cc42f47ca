#!/usr/bin/env bash
# Runs the pure packages (codecs, huffman, pcapng, internal/ipfmt, the server model
# server/ident and the relay vocabulary relay/wire) and the wasm boundary under node.
# Package server itself does not compile for js/wasm: it asks servers through
# netquery and the relay (net, net/http) and keeps history (history).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null || { echo "test-wasm: node is required"; exit 1; }
pkgs=(./huffman/... ./codecs/... ./pcapng/... ./internal/ipfmt ./server/ident ./relay/wire)
[ -d wasm ] && pkgs+=(./wasm/...)
GOOS=js GOARCH=wasm go test -count=1 -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" "${pkgs[@]}"
