#!/usr/bin/env bash
# Runs every measurement and rewrites BENCHMARKS.md: `go tool task bench`.
# Arguments go to bench/cmd/benchreport, e.g.
#   go tool task bench -- -only decoder,huffman -count 3
# Everything it starts listens on 127.0.0.1 only and stops with it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null || { echo "bench: node is required"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -d tools/gamedig/node_modules/gamedig ]; then
  npm ci --prefix tools/gamedig --no-audit --no-fund
fi
go build -o "$work/querylens" ./cmd/querylens
go build -o "$work/benchreport" ./bench/cmd/benchreport
# The driver bounds each section itself; this is the outer bound.
timeout --signal=TERM --kill-after=30s 30m "$work/benchreport" -querylens "$work/querylens" "$@"
