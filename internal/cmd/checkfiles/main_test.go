package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pe is the start of a PE image: a DOS header whose e_lfanew points at
// the PE signature.
func pe() []byte {
	b := make([]byte, 0x100)
	copy(b, "MZ")
	binary.LittleEndian.PutUint32(b[0x3c:], 0x80)
	copy(b[0x80:], "PE\x00\x00\x64\x86")
	return b
}

func TestCheck(t *testing.T) {
	big := make([]byte, maxSize+1)
	tests := []struct {
		name, file string
		data       []byte
		want       string // a substring of the reason; "" when the file may be committed
	}{
		{"ELF", "benchreport", []byte("\x7fELF\x02\x01\x01\x00rest"), "ELF"},
		{"ELF, 4 bytes", "a.out", []byte("\x7fELF"), "ELF"},
		{"PE", "querylens.exe", pe(), "PE (Windows)"},
		{"Mach-O 64-bit", "querylens", []byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, "Mach-O executable (64-bit)"},
		{"Mach-O 32-bit", "querylens", []byte{0xce, 0xfa, 0xed, 0xfe, 7, 0, 0, 0}, "Mach-O executable (32-bit)"},
		{"Mach-O big-endian", "querylens", []byte{0xfe, 0xed, 0xfa, 0xcf, 0, 0, 0, 7}, "Mach-O"},
		{"universal Mach-O", "querylens", []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}, "universal Mach-O"},
		{"script with a shebang", "scripts/lint.sh", []byte("#!/usr/bin/env bash\nset -e\n"), ""},
		{"text starting with MZ", "docs/mz.txt", []byte("MZ is the DOS header's magic, and this is prose about it; no PE here.\n"), ""},
		{"short MZ", "mz", []byte("MZ"), ""},
		{"MZ pointing past the end", "mz", append([]byte("MZ"), bytes.Repeat([]byte{0xff}, 0x40)...), ""},
		{"empty", "empty", nil, ""},
		{"big file", "docs/huge.md", big, "over the 1048576-byte"},
		{"big browser module artefact", "web/static/querylens.wasm.gz", big, ""},
		{"big raw module elsewhere", "web/static/other.wasm.gz", big, "over the"},
		{"big family module artefact", "web/static/querylens-a.wasm.br", big, ""},
		{"big family module, gzip", "web/static/querylens-a.wasm.gz", big, ""},
		{"big raw family module", "web/static/querylens-a.wasm", big, "over the"},
		{"big family module below static", "web/static/x/querylens-a.wasm.br", big, "over the"},
		{"1 MiB exactly", "docs/edge.md", big[:maxSize], ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := check(tc.file, bytes.NewReader(tc.data), int64(len(tc.data)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("check(%q) = %q, want %q", tc.file, got, tc.want)
			}
		})
	}
}

// TestRun checks files on disk: each refused one is named on its own line,
// and the exit status says whether any was.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script := write("build.sh", []byte("#!/bin/sh\necho hi\n"))
	elf := write("tool", []byte("\x7fELF\x02\x01\x01"))
	exe := write("tool.exe", pe())
	missing := filepath.Join(dir, "gone")

	var out, errs bytes.Buffer
	if code := run([]string{script, missing}, &out, &errs); code != 0 || out.Len() != 0 {
		t.Errorf("a script and a deleted file: exit %d, output %q %q", code, out.String(), errs.String())
	}
	out.Reset()
	code := run([]string{script, elf, exe}, &out, &errs)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if code != 1 || len(lines) != 3 || !strings.HasPrefix(lines[0], elf+": refused: an ELF") ||
		!strings.HasPrefix(lines[1], exe+": refused: a PE") || !strings.HasPrefix(lines[2], "2 file(s)") {
		t.Errorf("exit %d, output:\n%s", code, out.String())
	}
}
