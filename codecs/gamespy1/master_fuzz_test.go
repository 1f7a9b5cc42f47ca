package gamespy1_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
)

// addMasterSeeds seeds f with the master goldens' messages (greetings with
// and without \final\, text and compact lists, a refusal, a cut record)
// and a few hostile shapes.
func addMasterSeeds(f *testing.F) {
	for _, g := range masterGoldens(f) {
		for _, d := range g.Datagrams {
			f.Add(d)
		}
	}
	f.Add([]byte(`\basic\\secure\`))                   // an empty challenge
	f.Add([]byte(`\secure\ABCDEF\secure\GHIJKL`))      // two challenges
	f.Add([]byte(`\ip\999.1.1.1:1\final\`))            // an octet out of range
	f.Add([]byte(`\ip\1.2.3.4:65536\final\`))          // a port out of range
	f.Add([]byte("\x5cfinal\x5c\x00\x00\x00\x00\x00")) // \final\ bytes inside a record
}

// FuzzReadMasterList: never panics; every address listed parses; an
// error is a *codecs.Error within the input; a compact list lists at most
// one address per six bytes.
func FuzzReadMasterList(f *testing.F) {
	addMasterSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, compact := range []bool{false, true} {
			addrs, err := gamespy1.ReadMasterList(b, compact, 0, nil)
			if err != nil {
				e, ok := errors.AsType[*codecs.Error](err)
				if !ok || e.Offset < 0 || e.Offset > len(b) {
					t.Fatalf("error %v (%T)", err, err)
				}
			}
			for _, a := range addrs {
				if _, perr := netip.ParseAddrPort(a); perr != nil {
					t.Fatalf("listed %q: %v", a, perr)
				}
			}
			if compact && len(addrs) > len(b)/6 {
				t.Fatalf("%d records in %d bytes", len(addrs), len(b))
			}
			var spans []codecs.Span
			again, err2 := gamespy1.ReadMasterList(b, compact, 0, &spans)
			if len(again) != len(addrs) || (err == nil) != (err2 == nil) {
				t.Fatal("spans change the outcome")
			}
			for _, s := range spans {
				if s.Start < 0 || s.End > len(b) || s.Start > s.End {
					t.Fatalf("span %+v outside %d bytes", s, len(b))
				}
			}
		}
	})
}

// FuzzReadChallenge: never panics; a challenge read is 1 to
// MaxChallengeLen bytes of the input, without a '\'.
func FuzzReadChallenge(f *testing.F) {
	addMasterSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := gamespy1.ReadChallenge(b, nil)
		if err != nil {
			if _, ok := errors.AsType[*codecs.Error](err); !ok {
				t.Fatalf("error %v (%T)", err, err)
			}
			return
		}
		if c == "" || len(c) > gamespy1.MaxChallengeLen {
			t.Fatalf("challenge %q", c)
		}
		for i := 0; i < len(c); i++ {
			if c[i] == '\\' {
				t.Fatalf("challenge %q holds a backslash", c)
			}
		}
		if v := gamespy1.AppendValidate(nil, []byte(c), "Z5Nfb0"); len(v) != (len(c)+2)/3*4 {
			t.Fatalf("validate %q of %q", v, c)
		}
	})
}

// FuzzMasterStream feeds b, cut at every third byte, through the master
// conversation: MasterMessageLen stays within what it is given, nothing
// panics, and the conversation stops within its cap.
func FuzzMasterStream(f *testing.F) {
	addMasterSeeds(f)
	f.Add([]byte(`\basic\\secure\ABCDEF\final\\ip\1.2.3.4:5\final\`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := gamespy1.MasterMessageLen(b); n < 0 || n > len(b) {
			t.Fatalf("MasterMessageLen = %d of %d bytes", n, len(b))
		}
		q, err := (&gamespy1.Codec{}).NewQuery(map[string]string{"master": "true"})
		if err != nil {
			t.Fatal(err)
		}
		s := codecs.NewStream(q, gamespy1.MasterMessageLen, codecs.ReplyCap{Bytes: 1 << 10, Datagrams: 4})
		for i := 0; i < len(b) && s.Stop() == codecs.StreamOn; i += 3 {
			s.Take(b[i:min(i+3, len(b))])
		}
		if s.Bytes() > 1<<10 || s.Messages() > 4 {
			t.Fatalf("past the cap: %d bytes, %d messages", s.Bytes(), s.Messages())
		}
		q.Result(codecs.DecodeOptions{Spans: true})
	})
}
