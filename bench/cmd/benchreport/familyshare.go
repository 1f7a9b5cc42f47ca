package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/andybalholm/brotli"

	"github.com/querylens/querylens/internal/wasmmodule"
)

// familyShare is what one protocol family adds to the browser module: the
// module built without it (codecs/all without its import, by go build
// -overlay), against the module with every family. Brotli's window spans
// the whole module, so a family's share is this difference, not its
// packages' bytes compressed alone.
type familyShare struct {
	pkg        string // import path
	size, br   int    // the module without it: bytes, brotli
	dSize, dBr int    // what the family adds: bytes, brotli
}

// familyShares builds the module once without each family and compresses
// it as internal/cmd/precompress does (brotli quality 11, window 2^24).
// full and fullBr are the module with every family (its manifest).
func (e *env) familyShares(ctx context.Context, families []string, full, fullBr int) ([]familyShare, error) {
	dir := filepath.Join(e.tmp, "family-shares")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	allPath := filepath.Join(e.root, "codecs", "all", "all.go")
	all, err := os.ReadFile(allPath)
	if err != nil {
		return nil, err
	}
	var out []familyShare
	for i, pkg := range families {
		src, err := dropImport(string(all), pkg)
		if err != nil {
			return nil, fmt.Errorf("codecs/all/all.go: %w", err)
		}
		allFile := filepath.Join(dir, fmt.Sprintf("all-%d.go", i))
		if err := os.WriteFile(allFile, []byte(src), 0o644); err != nil {
			return nil, err
		}
		overlay, err := writeOverlay(filepath.Join(dir, fmt.Sprintf("overlay-%d.json", i)), map[string]string{allPath: allFile})
		if err != nil {
			return nil, err
		}
		wasm := filepath.Join(dir, fmt.Sprintf("without-%d.wasm", i))
		if err := e.buildWasm(ctx, "./wasm", overlay, wasm); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(wasm)
		if err != nil {
			return nil, err
		}
		br, err := brotliSize(ctx, b)
		if err != nil {
			return nil, err
		}
		out = append(out, familyShare{pkg: pkg, size: len(b), br: br, dSize: full - len(b), dBr: fullBr - br})
		fmt.Fprintf(e.log, "size: without %s: %d bytes, %d brotli (the family %d, %d)\n", pkg, len(b), br, full-len(b), fullBr-br)
	}
	return out, nil
}

// dropImport removes the blank import of pkg from a Go file.
func dropImport(src, pkg string) (string, error) {
	line := "\t_ \"" + pkg + "\"\n"
	if !strings.Contains(src, line) {
		return "", fmt.Errorf("no import of %s", pkg)
	}
	return strings.Replace(src, line, "", 1), nil
}

// brotliSize compresses b as the served module is compressed.
func brotliSize(ctx context.Context, b []byte) (int, error) {
	var buf bytes.Buffer
	w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: 24})
	if _, err := w.Write(b); err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return buf.Len(), ctx.Err()
}

// familySharesReport is the size section's table of the families' shares,
// and their goal: at most wasmmodule.BudgetPerFamily brotli each.
func familySharesReport(e *env, shares []familyShare) string {
	if len(shares) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### What each protocol family adds\n\n")
	b.WriteString("The module built again without one family at a time (codecs/all without its import, by `go build -overlay`; the same flags as scripts/build-wasm.sh) and compressed as served (brotli quality 11, window 2^24): a family's share is the module's size less the module without it. Brotli finds code the families share, so the shares add up to less than their packages compressed alone.\n\n")
	t := newTable("family", "module without it", "brotli", "the family adds", "brotli")
	worst := shares[0]
	for _, s := range shares {
		t.add(code(strings.TrimPrefix(s.pkg, "github.com/querylens/querylens/")), groupDigits(s.size), groupDigits(s.br), groupDigits(s.dSize), groupDigits(s.dBr))
		if s.dBr > worst.dBr {
			worst = s
		}
	}
	b.WriteString(t.String())
	met := worst.dBr <= wasmmodule.BudgetPerFamily
	name := strings.TrimPrefix(worst.pkg, "github.com/querylens/querylens/")
	fmt.Fprintf(&b, "\n- %s\n", goal(met, fmt.Sprintf("a protocol family's share of the module ≤ %s bytes of brotli (the budget's per-family part): the largest, %s, adds %s.", groupDigits(wasmmodule.BudgetPerFamily), code(name), groupDigits(worst.dBr))))
	e.addGoal(met, "a protocol family's share of the browser module (the module less the module without it), brotli", fmt.Sprintf("≤ %s bytes each", groupDigits(wasmmodule.BudgetPerFamily)),
		fmt.Sprintf("largest %s: %s bytes", name, groupDigits(worst.dBr)))
	return b.String()
}
