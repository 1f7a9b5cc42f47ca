// Command checkfiles refuses what should not be committed: an executable
// (ELF, Mach-O, PE; a build output belongs under bin/, which is ignored)
// and any file over 1 MiB, except the browser modules' committed artefacts
// (web/static/querylens.wasm.* and the family modules' compressed forms,
// web/static/querylens-<family>.wasm.br and .gz, which go install needs in
// the tree). It
// reads every file in git's index (tracked, or added and not yet committed)
// from the work tree, one pass, at most a few bytes of each, and prints
// one line per refused file naming it and why. scripts/lint.sh runs it.
//
//	go run ./internal/cmd/checkfiles [FILE...]
//
// With no FILE it checks `git ls-files`, from the repository root.
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strconv"
)

// maxSize is the largest file the repository takes, outside allowedBig.
const maxSize = 1 << 20

// allowedBig are the files (path.Match patterns, slash-separated from the
// root) that may exceed maxSize: the precompressed browser modules, which
// are embedded in the binary and so must be committed (the combined one,
// and each protocol family's: scripts/build-wasm.sh).
var allowedBig = []string{"web/static/querylens.wasm.*", "web/static/querylens-*.wasm.br", "web/static/querylens-*.wasm.gz"}

// magics are the first bytes of the executable formats refused, with the
// format's name. PE is not here: it needs more than its first bytes (see
// isPE).
var magics = []struct {
	magic []byte
	kind  string
}{
	{[]byte{0x7f, 'E', 'L', 'F'}, "an ELF executable or object"},
	{[]byte{0xfe, 0xed, 0xfa, 0xce}, "a Mach-O executable (32-bit, big-endian)"},
	{[]byte{0xce, 0xfa, 0xed, 0xfe}, "a Mach-O executable (32-bit)"},
	{[]byte{0xfe, 0xed, 0xfa, 0xcf}, "a Mach-O executable (64-bit, big-endian)"},
	{[]byte{0xcf, 0xfa, 0xed, 0xfe}, "a Mach-O executable (64-bit)"},
	// Universal (fat) Mach-O binaries and Java class files share this
	// magic; both are build outputs.
	{[]byte{0xca, 0xfe, 0xba, 0xbe}, "a universal Mach-O executable or a Java class file"},
	{[]byte{0xbe, 0xba, 0xfe, 0xca}, "a universal Mach-O executable"},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	names := args
	if len(names) == 0 {
		root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			fmt.Fprintln(stderr, "checkfiles: not in a git work tree:", err)
			return 2
		}
		if err := os.Chdir(string(bytes.TrimSpace(root))); err != nil {
			fmt.Fprintln(stderr, "checkfiles:", err)
			return 2
		}
		out, err := exec.Command("git", "ls-files", "-z", "--cached").Output()
		if err != nil {
			fmt.Fprintln(stderr, "checkfiles: git ls-files:", err)
			return 2
		}
		names = nil
		for _, n := range bytes.Split(out, []byte{0}) {
			if len(n) > 0 {
				names = append(names, string(n))
			}
		}
	}
	refused := 0
	for _, name := range names {
		why, err := checkFile(name)
		if err != nil {
			fmt.Fprintln(stderr, "checkfiles:", err)
			return 2
		}
		if why != "" {
			fmt.Fprintf(stdout, "%s: %s\n", name, why)
			refused++
		}
	}
	if refused > 0 {
		fmt.Fprintf(stdout, "%d file(s) must not be committed: build outputs go under bin/ (ignored); git rm --cached them\n", refused)
		return 1
	}
	return 0
}

// checkFile opens one file and checks it. A name the work tree no longer
// has (deleted, not yet staged) and anything but a regular file (a
// symbolic link, a submodule) pass.
func checkFile(name string) (string, error) {
	fi, err := os.Lstat(name)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", nil
	}
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return check(name, f, fi.Size())
}

// check says why the file name, of size bytes read through r, must not be
// committed, or "" when it may be.
func check(name string, r io.ReaderAt, size int64) (string, error) {
	head := make([]byte, 4)
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	head = head[:n]
	for _, m := range magics {
		if bytes.HasPrefix(head, m.magic) {
			return "refused: " + m.kind + " (magic " + hex(m.magic) + ")", nil
		}
	}
	if bytes.HasPrefix(head, []byte("MZ")) {
		pe, err := isPE(r, size)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if pe {
			return "refused: a PE (Windows) executable (MZ header with a PE signature)", nil
		}
	}
	if size > maxSize && !allowed(name) {
		return "refused: " + strconv.FormatInt(size, 10) + " bytes, over the " + strconv.Itoa(maxSize) +
			"-byte (1 MiB) limit for a committed file", nil
	}
	return "", nil
}

// isPE says whether a file starting with "MZ" is a PE image: its DOS
// header's e_lfanew (a little-endian uint32 at 0x3c) points at the
// signature "PE\0\0". A text that merely starts with "MZ" is not one.
func isPE(r io.ReaderAt, size int64) (bool, error) {
	if size < 0x40 {
		return false, nil
	}
	var b [4]byte
	if _, err := r.ReadAt(b[:], 0x3c); err != nil {
		return false, err
	}
	off := int64(binary.LittleEndian.Uint32(b[:]))
	if off+4 > size {
		return false, nil
	}
	if _, err := r.ReadAt(b[:], off); err != nil {
		return false, err
	}
	return string(b[:]) == "PE\x00\x00", nil
}

func allowed(name string) bool {
	for _, p := range allowedBig {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func hex(b []byte) string {
	const digits = "0123456789abcdef"
	s := make([]byte, 0, 2*len(b))
	for _, c := range b {
		s = append(s, digits[c>>4], digits[c&15])
	}
	return string(s)
}
