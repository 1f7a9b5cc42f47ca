package wire

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		f    Frame
		wire string // hex-free: the expected bytes
	}{
		{"query", Frame{Type: FrameQuery, ID: 0x01020304, Protocol: "ogp", Target: "a:1", Datagram: []byte{0xff, 0}},
			"\x01\x01\x02\x03\x04\x03ogp\x03a:1\xff\x00"},
		{"query empty datagram", Frame{Type: FrameQuery, ID: 7, Protocol: "", Target: ""}, "\x01\x00\x00\x00\x07\x00\x00"},
		{"ping", Frame{Type: FramePing, ID: 9}, "\x02\x00\x00\x00\x09"},
		{"cancel", Frame{Type: FrameCancel, ID: 0xffffffff}, "\x03\xff\xff\xff\xff"},
		{"release", Frame{Type: FrameRelease, ID: 7}, "\x04\x00\x00\x00\x07"},
		{"hello", Frame{Type: FrameHello, Hello: Hello{Version: 1, MaxDatagram: 8192, ReplyWindowMS: 2000, MaxInFlight: 64, CacheTTLMS: 10000}},
			"\x80\x01\x20\x00\x00\x00\x07\xd0\x00\x40\x00\x00\x27\x10"},
		{"reply", Frame{Type: FrameReply, ID: 5, RTT: 1500, Flags: FlagCached | FlagCoalesced, Datagram: []byte("RA")},
			"\x81\x00\x00\x00\x05\x00\x00\x05\xdc\x03RA"},
		{"end", Frame{Type: FrameEnd, ID: 5, Reason: EndByteCap, Replies: 3}, "\x82\x00\x00\x00\x05\x01\x00\x03"},
		{"error", Frame{Type: FrameError, ID: 5, Code: CodeDenied, Message: "private: x"},
			"\x83\x00\x00\x00\x05\x04\x00\x0aprivate: x"},
		{"pong", Frame{Type: FramePong, ID: 1}, "\x84\x00\x00\x00\x01"},
		{"exchange", Frame{Type: FrameExchange, ID: 6, Protocol: "mc", Target: "a:1", Options: map[string]string{"port": "1", "host": "a"}},
			"\x05\x00\x00\x00\x06\x02mc\x03a:1\x04host\x01a\x04port\x011"},
		{"exchange without options", Frame{Type: FrameExchange, ID: 6, Protocol: "mc", Target: "a"}, "\x05\x00\x00\x00\x06\x02mc\x01a"},
		{"chunk", Frame{Type: FrameChunk, ID: 6, Offset: 0x10000, Flags: FlagCached, Datagram: []byte("xy")},
			"\x86\x00\x00\x00\x06\x00\x01\x00\x00\x01xy"},
		{"end done", Frame{Type: FrameEnd, ID: 6, Reason: EndSlowClient, Replies: 2}, "\x82\x00\x00\x00\x06\x08\x00\x02"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := AppendFrame(nil, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.wire {
				t.Fatalf("wire %q, want %q", b, tc.wire)
			}
			got, err := ParseFrame(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Datagram) == 0 {
				got.Datagram = nil
			}
			if !reflect.DeepEqual(got, tc.f) {
				t.Fatalf("parsed %+v, want %+v", got, tc.f)
			}
		})
	}
}

func TestParseFrameErrors(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		field  string
		err    error
		wantID uint32
	}{
		{"empty", "", "type", ErrShortFrame, 0},
		{"unknown type", "\x7f", "type", ErrUnknownFrame, 0},
		{"short id", "\x01\x00\x00", "id", ErrShortFrame, 0},
		{"protocol past end", "\x01\x00\x00\x00\x09\x05ab", "protocol", ErrShortFrame, 9},
		{"target length missing", "\x01\x00\x00\x00\x09\x01a", "target_len", ErrShortFrame, 9},
		{"ping trailing", "\x02\x00\x00\x00\x01\x00", "end", ErrTrailingBytes, 1},
		{"end short", "\x82\x00\x00\x00\x01\x00", "replies", ErrShortFrame, 1},
		{"error message past end", "\x83\x00\x00\x00\x02\x01\x00\x05ab", "message", ErrShortFrame, 2},
		{"hello short", "\x80\x01", "max_datagram", ErrShortFrame, 0},
		{"exchange option repeated", "\x05\x00\x00\x00\x03\x01p\x01t\x01k\x00\x01k\x00", "options.key", ErrBadOptions, 3},
		{"exchange options out of order", "\x05\x00\x00\x00\x03\x01p\x01t\x01k\x00\x01a\x00", "options.key", ErrBadOptions, 3},
		{"exchange empty key", "\x05\x00\x00\x00\x03\x01p\x01t\x00\x00", "options.key", ErrBadOptions, 3},
		{"exchange value past end", "\x05\x00\x00\x00\x03\x01p\x01t\x01k\x05ab", "options.value", ErrShortFrame, 3},
		{"chunk short", "\x86\x00\x00\x00\x03\x00\x00", "offset", ErrShortFrame, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFrame([]byte(tc.in))
			var fe *BadFrameError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v in field %s", err, tc.err, tc.field)
			}
			if f.ID != tc.wantID {
				t.Fatalf("id %d, want %d", f.ID, tc.wantID)
			}
			if fe.Offset > len(tc.in) {
				t.Fatalf("offset %d beyond input %d", fe.Offset, len(tc.in))
			}
		})
	}
}

func TestAppendFrameLimits(t *testing.T) {
	long := strings.Repeat("x", 256)
	for _, f := range []Frame{
		{Type: FrameQuery, Protocol: long},
		{Type: FrameQuery, Target: long},
		{Type: FrameError, Message: strings.Repeat("x", 1<<16)},
		{Type: 0x42},
	} {
		if b, err := AppendFrame([]byte("keep"), f); err == nil || string(b) != "keep" {
			t.Errorf("AppendFrame(%v) = %q, %v; want an error and dst unchanged", f.Type, b, err)
		}
	}
}

func TestFrameStrings(t *testing.T) {
	if FrameReply.String() != "reply" || FrameType(0x42).String() != "0x42" {
		t.Error("FrameType.String")
	}
	if CodeResolve.String() != "resolve" || Code(77).String() != "code-77" || Code(0).String() != "code-0" {
		t.Error("Code.String")
	}
	e := &RefusedError{Code: CodeDenied, Message: "private: 10.0.0.1:10666"}
	if e.Rule() != RulePrivate || !strings.Contains(e.Error(), "denied") {
		t.Errorf("RefusedError %q rule %q", e.Error(), e.Rule())
	}
}

func TestParseFrameAliases(t *testing.T) {
	b := []byte("\x81\x00\x00\x00\x05\x00\x00\x00\x01\x00RA")
	f, _ := ParseFrame(b)
	b[len(b)-1] = 'Z'
	if !bytes.Equal(f.Datagram, []byte("RZ")) {
		t.Fatal("Datagram should alias the input")
	}
	if cap(f.Datagram) != len(f.Datagram) {
		t.Fatal("Datagram's capacity must not reach past the frame")
	}
}

// TestBatch: a BATCH message holds the frames it was made of, in order,
// and every malformed one is refused with the byte at fault.
func TestBatch(t *testing.T) {
	frames := [][]byte{AppendIDFrame(nil, FramePong, 7), AppendEnd(nil, 3, EndWindow, 2), {byte(FrameReply), 0, 0, 0, 3, 0, 0, 0, 9, 0, 'R', 'A'}}
	msg := AppendBatch(nil, frames)
	got, err := SplitBatch(msg)
	if err != nil || len(got) != len(frames) {
		t.Fatalf("SplitBatch: %d frames, %v", len(got), err)
	}
	for i := range frames {
		if !bytes.Equal(got[i], frames[i]) {
			t.Errorf("frame %d: %x, want %x", i, got[i], frames[i])
		}
	}
	for _, tc := range []struct {
		name  string
		b     []byte
		field string
		off   int
	}{
		{"empty message", nil, "type", 0},
		{"not a batch", AppendIDFrame(nil, FramePong, 1), "type", 0},
		{"no frame", []byte{0x85}, "frame_len", 1},
		{"half a length", []byte{0x85, 0}, "frame_len", 1},
		{"empty frame", []byte{0x85, 0, 0}, "frame_len", 1},
		{"length past the end", []byte{0x85, 0, 5, 0x84, 0, 0}, "frame", 3},
		{"second length past the end", append(AppendBatch(nil, frames[:1]), 0, 9, 0x84), "frame", len(AppendBatch(nil, frames[:1])) + 2},
		{"batch in a batch", AppendBatch(nil, [][]byte{AppendBatch(nil, frames[:1])}), "frame", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SplitBatch(tc.b)
			var bf *BadFrameError
			if !errors.As(err, &bf) || bf.Field != tc.field || bf.Offset != tc.off {
				t.Fatalf("SplitBatch(%x) = %v, want a bad %s at offset %d", tc.b, err, tc.field, tc.off)
			}
		})
	}
}
