// Package codectest holds the test helpers the four protocol packages
// share: golden files regenerated with -update, hex fixtures with
// comments, the truncated-prefix check, the span coverage check and the
// error assertion. It is imported only by _test.go files.
package codectest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
)

// Update rewrites golden files instead of comparing them:
// go test ./codecs/... -update.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Unhex decodes hex that may hold spaces and newlines; '#' starts a
// comment that runs to the end of the line.
func Unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, _ := unhex(t, s)
	return b
}

func unhex(t testing.TB, s string) (b []byte, firstComment string) {
	t.Helper()
	var digits strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			if firstComment == "" {
				firstComment = strings.TrimSpace(line[i+1:])
			}
			line = line[:i]
		}
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b, firstComment
}

// ReadHex reads a hand-written hex file holding one datagram (over as many
// lines as it likes) and returns it with the file's first comment, which
// says where the bytes came from.
func ReadHex(t testing.TB, path string) (b []byte, source string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return unhex(t, string(raw))
}

// ReadHexLines reads a hex file holding one datagram per line (comments
// and blank lines skipped).
func ReadHexLines(t testing.TB, path string) [][]byte {
	t.Helper()
	out, _ := ReadHexFile(t, path)
	return out
}

// ReadHexFile is ReadHexLines that also returns the file's first comment,
// which says where the datagrams came from.
func ReadHexFile(t testing.TB, path string) (datagrams [][]byte, source string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		d, comment := unhex(t, line)
		if source == "" {
			source = comment
		}
		if len(d) > 0 {
			datagrams = append(datagrams, d)
		}
	}
	return datagrams, source
}

// WriteHexFile writes datagrams in the form ReadHexFile reads: the source
// as the first comment, then one datagram a line in groups of 32 bytes.
func WriteHexFile(t testing.TB, path, source string, datagrams [][]byte) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# " + source + "\n")
	for _, d := range datagrams {
		for i := 0; i < len(d); i += 32 {
			b.WriteString(hex.EncodeToString(d[i:min(len(d), i+32)]))
			if i+32 < len(d) {
				b.WriteString(" ")
			}
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Message is one golden message file (testdata/*.hex): the datagrams of
// one message in the order they arrived (or a stream's chunks), separated
// by DatagramMark lines where there are several, and the comment on its
// first line, which says where they came from.
type Message struct {
	Name, Source string // the file's name without ".hex"; its first comment
	Datagrams    [][]byte
}

// DatagramMark is the line that separates the datagrams of a Message file.
const DatagramMark = "# datagram"

// ReadMessage reads the Message file at path.
func ReadMessage(t testing.TB, path string) Message {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := Message{Name: strings.TrimSuffix(filepath.Base(path), ".hex")}
	first, rest, _ := strings.Cut(string(raw), "\n")
	m.Source = strings.TrimSpace(strings.TrimPrefix(first, "#"))
	for _, chunk := range strings.Split(rest, DatagramMark+"\n") {
		if b := Unhex(t, chunk); len(b) > 0 {
			m.Datagrams = append(m.Datagrams, b)
		}
	}
	return m
}

// ReadMessages reads every Message file pattern matches (a filepath.Glob
// pattern, "testdata/*.hex"); none is a failure.
func ReadMessages(t testing.TB, pattern string) []Message {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden messages match %s: %v", pattern, err)
	}
	ms := make([]Message, 0, len(paths))
	for _, p := range paths {
		ms = append(ms, ReadMessage(t, p))
	}
	return ms
}

// CheckGoldens decodes each message with c, with spans, and compares the
// annotated dump and the JSON with testdata/NAME.golden (go test -update
// rewrites them): a message named "bad-…" must fail to decode; the spans
// of every datagram of the others tile it.
func CheckGoldens(t *testing.T, c codecs.Codec, ms []Message) {
	for _, g := range ms {
		t.Run(g.Name, func(t *testing.T) {
			m, err := c.Decode(g.Datagrams, codecs.DecodeOptions{Spans: true})
			out := []byte("# " + g.Source + "\n")
			out = codecs.AppendDump(out, m)
			plain, err2 := c.Decode(g.Datagrams, codecs.DecodeOptions{})
			if (err == nil) != (err2 == nil) {
				t.Fatalf("spans change the outcome: %v / %v", err, err2)
			}
			out = append(out, "json: "...)
			if err != nil {
				out = codecs.AppendJSON(out, codecs.ErrorObject(err, plain))
			} else {
				out = plain.AppendJSON(out)
			}
			out = append(out, '\n')
			Golden(t, filepath.Join("testdata", g.Name+".golden"), out)
			if strings.HasPrefix(g.Name, "bad-") {
				if err == nil {
					t.Errorf("%s decodes without error", g.Name)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			for i := range m.Layers {
				SpansTile(t, m, i)
			}
		})
	}
}

// CheckTruncations decodes with c every prefix of every datagram of each
// message, alone and in place of itself among the others of its message:
// none panics or returns no message, a prefix of fewer than 2 bytes never
// decodes, and each error is a *codecs.Error at or before the cut
// (Prefixes).
func CheckTruncations(t *testing.T, c codecs.Codec, ms []Message) {
	for _, g := range ms {
		t.Run(g.Name, func(t *testing.T) {
			for k, d := range g.Datagrams {
				Prefixes(t, d, func(p []byte) error {
					m, err := c.Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
					if m == nil {
						t.Fatalf("prefix %d: nil message", len(p))
					}
					if len(p) < 2 && err == nil {
						t.Errorf("prefix %d decodes", len(p))
					}
					if err == nil && m.Kind == codecs.KindResponse {
						SpansCover(t, m)
					}
					set := append([][]byte(nil), g.Datagrams...)
					set[k] = p
					if m, _ := c.Decode(set, codecs.DecodeOptions{Spans: true}); m == nil {
						t.Fatalf("prefix %d among the others: nil message", len(p))
					}
					return err
				}, nil)
			}
		})
	}
}

// Golden compares got with the file at path, or writes it there with
// -update. A difference names the first line that differs.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update and read the diff): %s", path, firstDiff(want, got))
	}
}

func firstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n want " + w + "\n got  " + g
		}
	}
	return "same lines, different bytes"
}

// SpansCover checks the inspector's view of m: every span lies inside its
// layer, and every byte of every layer is in exactly one span other than
// the "group" spans that enclose others.
func SpansCover(t testing.TB, m *codecs.Message) {
	t.Helper()
	covered := make([][]bool, len(m.Layers))
	for i, l := range m.Layers {
		covered[i] = make([]bool, len(l.Bytes))
	}
	for _, s := range m.Spans {
		if s.Layer < 0 || s.Layer >= len(m.Layers) || s.Start < 0 || s.Start > s.End || s.End > len(m.Layers[s.Layer].Bytes) {
			t.Errorf("span %+v outside its layer", s)
			continue
		}
		if s.Kind == "group" {
			continue
		}
		for i := s.Start; i < s.End; i++ {
			if covered[s.Layer][i] {
				t.Errorf("layer %d: byte %d in two spans (the second %s)", s.Layer, i, s.Field)
				return
			}
			covered[s.Layer][i] = true
		}
	}
	for li, c := range covered {
		for i, ok := range c {
			if !ok {
				t.Errorf("layer %d (%s): byte %d is in no span", li, m.Layers[li].Name, i)
				break
			}
		}
	}
}

// Prefixes calls decode with every proper prefix of b, shortest first,
// and checks what a cut datagram must give: no panic, and either no error
// (decode itself says whether that prefix may succeed, failing t if not)
// or a *codecs.Error whose Offset lies in [0, limit]. limit is
// len(prefix) when limitOf is nil; otherwise limitOf(prefix, e), for
// errors whose offset counts in another layer (a Huffman payload).
func Prefixes(t *testing.T, b []byte, decode func(prefix []byte) error, limitOf func(prefix []byte, e *codecs.Error) int) {
	t.Helper()
	for i := range len(b) {
		p := b[:i:i] // a full slice expression: reading past the prefix cannot see b's bytes
		err := call(t, i, decode, p)
		if err == nil {
			continue
		}
		e, ok := errors.AsType[*codecs.Error](err)
		if !ok {
			t.Fatalf("prefix %d: %v (%T) is not a *codecs.Error", i, err, err)
		}
		limit := i
		if limitOf != nil {
			limit = limitOf(p, e)
		}
		if e.Offset < 0 || e.Offset > limit {
			t.Fatalf("prefix %d: error offset %d outside [0, %d]: %v", i, e.Offset, limit, err)
		}
	}
}

func call(t *testing.T, i int, decode func([]byte) error, p []byte) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("prefix %d: panic: %v", i, r)
		}
	}()
	return decode(p)
}

// WantError checks that err is a *codecs.Error wrapping sentinel, for
// field (unless "") at offset (unless < 0), and returns it.
func WantError(t testing.TB, err, sentinel error, field string, offset int) *codecs.Error {
	t.Helper()
	e, ok := errors.AsType[*codecs.Error](err)
	if !ok {
		t.Fatalf("err = %v (%T), want a *codecs.Error", err, err)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("err = %v, want one wrapping %v", err, sentinel)
	}
	if field != "" && e.Field != field {
		t.Errorf("err field = %q, want %q (%v)", e.Field, field, err)
	}
	if offset >= 0 && e.Offset != offset {
		t.Errorf("err offset = %d, want %d (%v)", e.Offset, offset, err)
	}
	return e
}

// SpansTile is a stricter SpansCover for a layer decoded field after
// field: its spans, less the "group" spans that enclose others, follow each
// other without gap or overlap from byte 0 to the layer's end.
func SpansTile(t testing.TB, m *codecs.Message, layer int) {
	t.Helper()
	at := 0
	for _, s := range m.Spans {
		if s.Layer != layer || s.Kind == "group" {
			continue
		}
		if s.Start != at || s.End < s.Start {
			t.Fatalf("layer %d: span %+v, want one starting at %d", layer, s, at)
		}
		at = s.End
	}
	if n := len(m.Layers[layer].Bytes); at != n {
		t.Fatalf("layer %d: spans end at %d of %d bytes", layer, at, n)
	}
}
