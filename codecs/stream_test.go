package codecs_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
)

// lenFramed is a made-up stream framing: one length byte, then that many
// bytes; a length of 0xff is out of range.
func lenFramed(b []byte) int {
	switch {
	case len(b) == 0:
		return 0
	case b[0] == 0xff:
		return -1
	case len(b) < 1+int(b[0]):
		return 0
	}
	return 1 + int(b[0])
}

func msg(s string) []byte { return append([]byte{byte(len(s))}, s...) }

// chatQuery is a made-up conversation over lenFramed: the server may greet
// ("hi", answered with "ask"), sends "x…" messages, and "end" completes the
// reply; "bad" is not taken (an error, the conversation goes on).
type chatQuery struct {
	serverFirst bool
	got         []string
}

func (q *chatQuery) Start() [][]byte {
	if q.serverFirst {
		return nil
	}
	return [][]byte{msg("ask"), msg("more")}
}

func (q *chatQuery) Feed(b []byte) ([][]byte, bool, error) {
	body := string(b[1:])
	switch body {
	case "hi":
		return [][]byte{msg("ask")}, false, nil
	case "end":
		q.got = append(q.got, body)
		return nil, true, nil
	case "bad":
		return nil, false, errors.New("not mine")
	}
	q.got = append(q.got, body)
	return nil, false, nil
}

func (q *chatQuery) Result(codecs.DecodeOptions) (*codecs.Message, error) { return nil, nil }

func TestStream(t *testing.T) {
	join := func(ms ...string) []byte {
		var b []byte
		for _, m := range ms {
			b = append(b, msg(m)...)
		}
		return b
	}
	for _, tc := range []struct {
		name        string
		serverFirst bool
		cap         codecs.ReplyCap
		in          [][]byte // the reads
		start       string
		wantSend    string
		stop        codecs.StreamStop
		bytes       int
		got         []string
		err         bool
	}{
		{name: "done", in: [][]byte{join("x1", "x2", "end")}, start: string(join("ask", "more")),
			stop: codecs.StreamDone, bytes: 10, got: []string{"x1", "x2", "end"}},
		{name: "byte at a time", in: split(join("x1", "end")), start: string(join("ask", "more")),
			stop: codecs.StreamDone, bytes: 7, got: []string{"x1", "end"}},
		{name: "bytes after done ignored", in: [][]byte{join("end", "x9"), join("x8")}, start: string(join("ask", "more")),
			stop: codecs.StreamDone, bytes: 7, got: []string{"end"}},
		{name: "server first", serverFirst: true, in: [][]byte{join("hi"), join("x1", "end")},
			wantSend: string(join("ask")), stop: codecs.StreamDone, bytes: 10, got: []string{"x1", "end"}},
		{name: "incomplete", in: [][]byte{join("x1"), {5, 'a'}}, start: string(join("ask", "more")),
			stop: codecs.StreamOn, bytes: 5, got: []string{"x1"}},
		{name: "byte cap", cap: codecs.ReplyCap{Bytes: 6}, in: [][]byte{join("x1", "x2", "end")}, start: string(join("ask", "more")),
			stop: codecs.StreamCap, bytes: 6, got: []string{"x1", "x2"}},
		{name: "byte cap exact and done", cap: codecs.ReplyCap{Bytes: 7}, in: [][]byte{join("x1", "end", "x2")}, start: string(join("ask", "more")),
			stop: codecs.StreamDone, bytes: 7, got: []string{"x1", "end"}},
		{name: "message cap", cap: codecs.ReplyCap{Datagrams: 2}, in: [][]byte{join("x1", "x2", "x3", "end")}, start: string(join("ask", "more")),
			stop: codecs.StreamCap, bytes: 13, got: []string{"x1", "x2"}},
		{name: "bad framing", in: [][]byte{join("x1"), {0xff, 1, 2}}, start: string(join("ask", "more")),
			stop: codecs.StreamBadFraming, bytes: 6, got: []string{"x1"}},
		{name: "feed error goes on", in: [][]byte{join("bad", "end")}, start: string(join("ask", "more")),
			stop: codecs.StreamDone, bytes: 8, got: []string{"end"}, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &chatQuery{serverFirst: tc.serverFirst}
			s := codecs.NewStream(q, lenFramed, tc.cap)
			if got := string(s.Start()); got != tc.start {
				t.Fatalf("Start = %q, want %q", got, tc.start)
			}
			var sent []byte
			for _, b := range tc.in {
				_, send := s.Take(b)
				sent = append(sent, send...)
			}
			if string(sent) != tc.wantSend {
				t.Errorf("sent %q, want %q", sent, tc.wantSend)
			}
			if s.Stop() != tc.stop || s.Bytes() != tc.bytes {
				t.Errorf("stop %v after %d bytes, want %v after %d", s.Stop(), s.Bytes(), tc.stop, tc.bytes)
			}
			if !equal(q.got, tc.got) {
				t.Errorf("fed %q, want %q", q.got, tc.got)
			}
			if (s.Err() != nil) != tc.err {
				t.Errorf("Err = %v", s.Err())
			}
		})
	}
}

func TestStreamTakeReportsCut(t *testing.T) {
	s := codecs.NewStream(&chatQuery{}, lenFramed, codecs.ReplyCap{Bytes: 4})
	if n, _ := s.Take(msg("x1")); n != 3 {
		t.Fatalf("took %d, want 3", n)
	}
	if n, _ := s.Take(msg("x2")); n != 1 || s.Stop() != codecs.StreamCap {
		t.Fatalf("took %d (stop %v), want 1 and cap", n, s.Stop())
	}
	if n, _ := s.Take(msg("x3")); n != 0 {
		t.Fatalf("took %d after the stop", n)
	}
}

func TestCutStream(t *testing.T) {
	b := append(append(msg("ab"), msg("c")...), 4, 'x')
	msgs, rest, bad := codecs.CutStream(b, lenFramed)
	if len(msgs) != 2 || string(msgs[0]) != string(msg("ab")) || string(rest) != "\x04x" || bad {
		t.Fatalf("CutStream = %q, %q, %v", msgs, rest, bad)
	}
	msgs, rest, bad = codecs.CutStream(append(msg("a"), 0xff, 0), lenFramed)
	if len(msgs) != 1 || !bad || len(rest) != 2 {
		t.Fatalf("CutStream of a bad framing = %q, %q, %v", msgs, rest, bad)
	}
}

// FuzzStream feeds any stream, read in pieces of any sizes, and checks
// the driver's promises: it never panics, takes no more than the cap,
// feeds only whole messages (their concatenation is a prefix of what it
// took), and stops for good.
func FuzzStream(f *testing.F) {
	f.Add([]byte("\x02x1\x03end"), []byte{1, 2, 3}, uint16(0), uint8(0)) // a whole reply in pieces
	f.Add([]byte("\x02hi\x02x1\xff"), []byte{9}, uint16(5), uint8(1))    // a greeting, then a bad length
	f.Add([]byte("\x05abc"), []byte{1}, uint16(3), uint8(2))             // a short message at the cap
	f.Fuzz(func(t *testing.T, stream, cuts []byte, capBytes uint16, capMsgs uint8) {
		q := &chatQuery{serverFirst: true}
		var fed []byte
		rq := &recordingQuery{Query: q, fed: &fed}
		s := codecs.NewStream(rq, lenFramed, codecs.ReplyCap{Bytes: int(capBytes), Datagrams: int(capMsgs)})
		limit := int(capBytes)
		if limit == 0 {
			limit = codecs.DefaultStreamCap.Bytes
		}
		var took []byte
		rest := stream
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(cuts) > 0 {
				n = min(n, 1+int(cuts[i%len(cuts)]))
			}
			stopped := s.Stop() != codecs.StreamOn
			k, _ := s.Take(rest[:n])
			if stopped && k != 0 {
				t.Fatalf("took %d bytes after stopping", k)
			}
			took = append(took, rest[:k]...)
			rest = rest[n:]
		}
		if s.Bytes() != len(took) || len(took) > limit {
			t.Fatalf("took %d (counted %d), cap %d", len(took), s.Bytes(), limit)
		}
		if !bytes.HasPrefix(took, fed) {
			t.Fatalf("fed %q, not a prefix of %q", fed, took)
		}
		if s.Stop() == codecs.StreamOn && len(fed)+s.Pending() != len(took) {
			t.Fatalf("fed %d and pending %d of %d taken", len(fed), s.Pending(), len(took))
		}
	})
}

type recordingQuery struct {
	codecs.Query
	fed *[]byte
}

func (r *recordingQuery) Feed(b []byte) ([][]byte, bool, error) {
	*r.fed = append(*r.fed, b...)
	return r.Query.Feed(b)
}

func split(b []byte) [][]byte {
	var out [][]byte
	for i := range b {
		out = append(out, b[i:i+1])
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
