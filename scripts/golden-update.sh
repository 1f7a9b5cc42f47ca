#!/usr/bin/env bash
# Regenerates the golden files under testdata/ (go test -update): every
# codec package whose tests use codecs/internal/codectest (which defines
# -update), found at run time so that a new protocol needs no entry here,
# and the other packages with golden files.
set -euo pipefail
cd "$(dirname "$0")/.."
codecs=$(go list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./codecs/... |
	awk '{ for (i = 2; i <= NF; i++) if ($i ~ /codectest$/) { print $1; next } }')
# shellcheck disable=SC2086 # one package a word
go test $codecs ./pcapng ./cmd/querylens ./bench/cmd/benchreport -update "$@"
