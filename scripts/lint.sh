#!/usr/bin/env bash
# go vet, staticcheck (pinned as a go.mod tool), go.mod/go.sum tidiness,
# gofmt, checks that the committed *_templ.go files and the precompressed
# browser modules (web/static/querylens.wasm.*, querylens-<family>.wasm.*
# and querylens.modules.json) are fresh, and tsc --noEmit
# over the pages' JavaScript.
set -euo pipefail
cd "$(dirname "$0")/.."
go vet ./...
go tool staticcheck ./...
# wasm/ builds only for js/wasm; the analyser itself runs on the host.
if [ -d wasm ]; then
  GOOS=js GOARCH=wasm "$(go tool -n staticcheck)" ./wasm/...
fi
if ! go mod tidy -diff; then
  echo "go.mod/go.sum are not tidy: run go mod tidy and commit"; exit 1
fi
# --- committed files: no executables, nothing over 1 MiB -----------------
# Every file in git's index (tracked or added): refused if it is an
# executable (ELF, Mach-O, PE) or larger than 1 MiB, except the browser
# modules' artefacts web/static/querylens.wasm.* and querylens-*.wasm.{br,gz}. Build outputs go under
# bin/ (ignored). internal/cmd/checkfiles names each file and why.
go run ./internal/cmd/checkfiles
# --- end of committed files ----------------------------------------------
unformatted=$(gofmt -l $(git ls-files -co --exclude-standard '*.go' | grep -v '_templ.go$') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
# templ formats and generates in a copy of the *.templ and *_templ.go files:
# lint writes nothing in the tree, so that go tool task test can run the
# tests while it lints (templ rewrites every *_templ.go it generates, and a
# test build reading one then could see it half-written).
if ls web 2>/dev/null | grep -q . && git ls-files -co --exclude-standard '*.templ' | grep -q .; then
  templ=$(go tool -n templ)
  templdir=$(mktemp -d)
  trap 'rm -rf "$templdir"' EXIT
  git ls-files -co --exclude-standard go.mod '*.templ' '*_templ.go' | tar -cf - -T - | tar -xf - -C "$templdir"
  (cd "$templdir" && "$templ" fmt -fail . >/dev/null && "$templ" generate >/dev/null) ||
    { echo "templ fmt or generate failed: run go tool templ fmt . and go tool task generate"; exit 1; }
  stale=$({ git ls-files -co --exclude-standard '*.templ' '*_templ.go'; (cd "$templdir" && find . -name '*_templ.go' | sed 's#^\./##'); } |
    sort -u | while IFS= read -r f; do cmp -s "$f" "$templdir/$f" || echo "$f"; done)
  if [ -n "$stale" ]; then
    echo "templ fmt or generate would change these files: run go tool templ fmt . and go tool task generate, and commit"; echo "$stale"; exit 1
  fi
fi
# The committed browser module must be what the sources build to. Both
# halves: a fresh build matches the manifest in the tree (and the .gz is
# what compress/gzip makes of it, the .br decompresses to it), and the tree's
# module files are the committed ones (build:wasm, a dependency of the test
# tasks, may have just rewritten them).
if [ -d wasm ]; then
  bash scripts/build-wasm.sh --check || { echo "the committed browser module is stale: run go tool task build:wasm and commit web/static"; exit 1; }
  if ! git diff --quiet -- 'web/static/querylens*.wasm.br' 'web/static/querylens*.wasm.gz' 'web/static/querylens*.wasm.json' web/static/querylens.modules.json web/static/wasm_exec.js ||
    git ls-files --others --exclude-standard -- 'web/static/querylens*.wasm.*' web/static/querylens.modules.json | grep -q .; then
    echo "the browser modules in web/static differ from the committed ones: commit them (go tool task build:wasm made them)"; git status --short -- web/static; exit 1
  fi
fi
# The page scripts read the server model (state names, row layout, relay
# codes) from the generated web/static/model.js only: it must be fresh, and
# no other script may spell a state name or index a row by number.
go run ./internal/cmd/genmodel -check -o web/static/model.js
states=$(go run ./internal/cmd/genmodel -names | paste -sd'|')
quote="[\"'\`]"
if grep -nE "$quote($states)$quote" $(ls web/static/*.js | grep -v -e '/model.js$' -e '/wasm_exec.js$'); then
  echo "a state name spelt in a page script: use State, PageState or StateWord from model.js"; exit 1
fi
if grep -nE '\brow\[[0-9]+\]' $(ls web/static/*.js | grep -v -e '/model.js$' -e '/wasm_exec.js$'); then
  echo "a numeric row index in a page script: use Row from model.js"; exit 1
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

# ---- Protocol names: said once, by the protocol's own package ----
# Outside codecs/<proto>/ (and demo/, bench/, docs, tests, the table of
# public default masters in server/masters_default.go, the game table
# generated from GameDig's games list, server/games/gamedig.go, and the server-only
# adapters and data named for their protocol, masters/<proto>.go and
# server/<proto>.go; the stores' conformance suite, history/historytest,
# is test code) no Go, templ or page script spells a registered
# protocol's name as a string literal: generic code asks the registry and
# the protocol's description
# (codecs.Description, server.Protocol, the page's cfg.protocols). Comments
# are left out: whole-line ones, and a trailing // comment holding no
# quote (one that quotes a name is flagged: reword it).
names=$(go run ./cmd/querylens protocols --names)
names_re=$(echo "$names" | paste -sd'|')
quote="[\"'\`]"
adapters=$(echo "$names" | sed -E 's#^(.*)$#masters/\1.go|server/\1.go#' | paste -sd'|')
strip_comments() { sed -E -e 's#^[[:space:]]*(//|/\*|\*).*$##' -e "s#[[:space:]]//[^\"'\`]*\$##" "$1"; }
found=0
for f in $(git ls-files --cached --others --exclude-standard -- '*.go' '*.templ' 'web/static/*.js' 'web/static/**/*.js' |
  grep -vE '^(codecs|demo|bench|docs)/|^history/historytest/|_test\.go$|_templ\.go$|^server/masters_default\.go$|^server/games/gamedig\.go$|^web/static/(model|wasm_exec)\.js$' |
  grep -vxE "$adapters"); do
  if strip_comments "$f" | grep -nE "$quote($names_re)$quote" | sed "s#^#$f:#" | grep .; then found=1; fi
done
if [ "$found" = 1 ]; then
  echo "a protocol's name spelt outside its package: read it from the registry or its description (codecs/doc.go, \"Adding a protocol\")"; exit 1
fi
