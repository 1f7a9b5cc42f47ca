package a2s_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
)

// seed adds every datagram of testdata/*.hexlines (each file's first line says
// what it is: every query, reply, split and master form this package
// builds) and each split message reassembled.
func seed(f *testing.F) {
	for _, p := range readPackets(f) {
		for _, d := range p.datagrams {
			f.Add(d)
		}
		if len(p.datagrams) > 1 {
			if joined, err := a2s.Reassemble(nil, p.datagrams); err == nil {
				f.Add(joined)
			}
		}
	}
	f.Add([]byte{})                                // nothing
	f.Add([]byte("\xff\xff\xff\xff"))              // the header alone
	f.Add([]byte("\xff\xff\xff\xffD\xff"))         // a player count with no players
	f.Add([]byte("\xff\xff\xff\xffE\xff\xff"))     // a rule count with no rules
	f.Add([]byte("\xff\xff\xff\xfff\x0a\x7f\x00")) // a master entry cut short
}

// checkErr checks a decoding error is a *codecs.Error inside the input.
func checkErr(t *testing.T, err error, n int) {
	t.Helper()
	var e *codecs.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *codecs.Error", err, err)
	}
	if e.Offset < 0 || e.Offset > n || e.Protocol != a2s.Protocol {
		t.Fatalf("error %v: offset outside the %d bytes", err, n)
	}
}

// FuzzDecodeResponse: no panic; errors are located; what decodes encodes
// and decodes again to the same reply (Decode → Append → Decode).
func FuzzDecodeResponse(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := a2s.DecodeResponse(b, nil)
		if err != nil {
			checkErr(t, err, len(b))
			return
		}
		out, err := a2s.AppendResponse(nil, a)
		if err != nil {
			t.Fatalf("decoded reply does not encode: %v\n%+v", err, a)
		}
		a2, err := a2s.DecodeResponse(out, nil)
		if err != nil {
			t.Fatalf("re-encoded reply %x does not decode: %v", out, err)
		}
		// Compared through a second encoding: a NaN duration is not
		// equal to itself.
		if out2, err := a2s.AppendResponse(nil, a2); err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the reply:\n%x\n%x", out, out2)
		}
	})
}

// FuzzDecodeRequest: the same for queries.
func FuzzDecodeRequest(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := a2s.DecodeRequest(b)
		if err != nil {
			checkErr(t, err, len(b))
			return
		}
		out, err := a2s.AppendRequest(nil, q)
		if err != nil {
			t.Fatalf("decoded query does not encode: %v", err)
		}
		if q2, err := a2s.DecodeRequest(out); err != nil || !reflect.DeepEqual(q2, q) {
			t.Fatalf("round trip changed the query: %+v %+v %v", q, q2, err)
		}
	})
}

// FuzzDecodeMaster: master queries and pages.
func FuzzDecodeMaster(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := a2s.DecodeMasterReply(b); err != nil {
			checkErr(t, err, len(b))
		} else if p2, err := a2s.DecodeMasterReply(a2s.AppendMasterReply(nil, p.Servers, p.End)); err != nil || !reflect.DeepEqual(p, p2) {
			t.Fatalf("master page round trip: %+v %+v %v", p, p2, err)
		}
		if q, err := a2s.DecodeMasterRequest(b); err != nil {
			checkErr(t, err, len(b))
		} else if out, err := a2s.AppendMasterRequest(nil, q); err == nil {
			if q2, err := a2s.DecodeMasterRequest(out); err != nil || !reflect.DeepEqual(q2, q) {
				t.Fatalf("master query round trip: %+v %+v %v", q, q2, err)
			}
		}
	})
}

// FuzzCodec cuts the input into up to three datagrams and runs everything
// the registry offers on them: no panic, located errors, spans inside
// their layers, JSON that builds, a conversation that does not panic.
func FuzzCodec(f *testing.F) {
	for _, p := range readPackets(f) {
		if len(p.datagrams) >= 2 {
			f.Add(append(append([]byte(nil), p.datagrams[0]...), p.datagrams[1]...), uint16(len(p.datagrams[0])), uint16(0))
		}
		f.Add(p.datagrams[0], uint16(0), uint16(0))
	}
	c, err := codecs.Lookup(a2s.Protocol)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, cut1, cut2 uint16) {
		dgs := [][]byte{b}
		if c1 := int(cut1); c1 > 0 && c1 < len(b) {
			dgs = [][]byte{b[:c1], b[c1:]}
			if c2 := int(cut2); c2 > c1 && c2 < len(b) {
				dgs = [][]byte{b[:c1], b[c1:c2], b[c2:]}
			}
		}
		c.Detect(b)
		if c.CheckQuery(b) == nil && codecs.QueryKey(a2s.Protocol, b) == nil {
			t.Fatal("a valid query without a key")
		}
		for _, spans := range []bool{false, true} {
			m, err := c.Decode(dgs, codecs.DecodeOptions{Spans: spans})
			if m == nil {
				t.Fatal("nil message")
			}
			if err != nil {
				var e *codecs.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v (%T) is not a *codecs.Error", err, err)
				}
				codecs.AppendJSON(nil, codecs.ErrorObject(err, m))
			} else {
				m.AppendJSON(nil)
			}
			for _, s := range m.Spans {
				if s.Layer < 0 || s.Layer >= len(m.Layers) || s.Start < 0 || s.Start > s.End || s.End > len(m.Layers[s.Layer].Bytes) {
					t.Fatalf("span %+v outside its layer", s)
				}
			}
		}
		for _, opts := range []map[string]string{nil, {"master": "true"}} {
			q, _ := c.NewQuery(opts)
			q.Start()
			for _, d := range dgs {
				q.Feed(d)
			}
			q.Result(codecs.DecodeOptions{Spans: true})
		}
	})
}
