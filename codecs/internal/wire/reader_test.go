package wire

import (
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
)

func TestReaderStickyError(t *testing.T) {
	var spans []codecs.Span
	r := NewReader("test", []byte{1, 2, 0, 'h', 'i', 0}, 0, &spans)
	if got := r.U16LE("a"); got != 0x0201 {
		t.Fatalf("U16LE = %#x", got)
	}
	if got := string(r.CString("s")); got != "" {
		t.Fatalf("CString = %q", got)
	}
	r.Enter("players", 2)
	if got := string(r.CString("name")); got != "hi" {
		t.Fatalf("CString = %q", got)
	}
	if got := r.U32LE("ping"); got != 0 || r.Err() == nil {
		t.Fatalf("U32LE past end = %d, err %v", got, r.Err())
	}
	r.U8("later") // must not overwrite the first error
	var e *codecs.Error
	if !errors.As(r.Err(), &e) || e.Field != "players[2].ping" || e.Offset != 6 || !errors.Is(e, codecs.ErrShort) {
		t.Fatalf("err = %#v", r.Err())
	}
	if len(spans) != 3 || spans[2].Field != "players[2].name" || spans[2].Start != 3 || spans[2].End != 6 || spans[2].Value != "hi" {
		t.Fatalf("spans = %+v", spans)
	}
}

func TestReaderNoSpansNoAllocs(t *testing.T) {
	b := []byte{1, 2, 3, 4, 'a', 0, 9}
	r := NewReader("test", b, 0, nil)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(b, 0)
		r.Enter("players", 1)
		r.U32LE("x")
		r.CString("name")
		r.U8("y")
		r.Leave()
	})
	if allocs != 0 {
		t.Errorf("allocs = %v, want 0", allocs)
	}
}

func TestCStringUnterminated(t *testing.T) {
	r := NewReader("test", []byte{'a', 'b'}, 0, nil)
	r.CString("name")
	var e *codecs.Error
	if !errors.As(r.Err(), &e) || e.Offset != 0 || !errors.Is(e, codecs.ErrShort) {
		t.Fatalf("err = %v", r.Err())
	}
}

func TestSkipRecordsNothing(t *testing.T) {
	var spans []codecs.Span
	r := NewReader("test", []byte{1, 2, 3}, 0, &spans)
	if got := r.Skip("s", 2); len(got) != 2 || got[1] != 2 || len(spans) != 0 {
		t.Fatalf("Skip = %v, spans %v", got, spans)
	}
	r.Mark("s", "custom", 0, "v")
	if r.Skip("t", 2) != nil || r.Offset() != 2 || len(spans) != 1 {
		t.Fatalf("Skip past end: offset %d, spans %v, err %v", r.Offset(), spans, r.Err())
	}
	var e *codecs.Error
	if !errors.As(r.Err(), &e) || e.Field != "t" || e.Offset != 2 || !errors.Is(e, codecs.ErrShort) {
		t.Fatalf("err = %v", r.Err())
	}
}
