package a2s_test

import (
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// The shared codec API, checked here until codecs/all imports the package
// (codecs/all/shape_test.go holds the same lines for the others).
var (
	_ codecs.Codec      = (*a2s.Codec)(nil)
	_ codecs.QueryKeyer = (*a2s.Codec)(nil)

	_ = a2s.Protocol
	_ = a2s.MaxQueryLen

	_ func([]byte, a2s.Request) ([]byte, error)        = a2s.AppendRequest
	_ func([]byte) (a2s.Request, error)                = a2s.DecodeRequest
	_ func([]byte, *a2s.Request) (a2s.Response, error) = a2s.DecodeResponse
)

// TestErrorsAlike mirrors codecs/all's test of the same name: a message
// is always returned with the error, and the error names the same field
// as every protocol's.
func TestErrorsAlike(t *testing.T) {
	c, err := codecs.Lookup(a2s.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Decode(nil, codecs.DecodeOptions{})
	check := func(what string, m *codecs.Message, err error, field string) {
		t.Helper()
		if m == nil || m.Protocol != a2s.Protocol {
			t.Errorf("%s: no partial message", what)
		}
		codectest.WantError(t, err, codecs.ErrIncomplete, field, -1)
	}
	check("Decode(no datagram)", m, err, "datagrams")
	q, err := c.NewQuery(nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err = q.Result(codecs.DecodeOptions{})
	check("Result before a reply", m, err, "reply")
	if _, done, err := q.Feed([]byte{1}); done || err == nil {
		t.Errorf("Feed(one byte) = done %v, %v", done, err)
	} else if _, ok := errors.AsType[*codecs.Error](err); !ok {
		t.Errorf("Feed(one byte): %T", err)
	}
	m, err = q.Result(codecs.DecodeOptions{})
	check("Result after a datagram ignored", m, err, "reply")
	if c.Name() != a2s.Protocol || c.DefaultPort() != 27015 || c.Title() == "" {
		t.Errorf("name %q port %d title %q", c.Name(), c.DefaultPort(), c.Title())
	}
}

// TestNoFields: with NoFields the kind, info, servers and warnings are the
// same and Fields is empty.
func TestNoFields(t *testing.T) {
	c := &a2s.Codec{}
	for _, p := range readPackets(t) {
		full, err1 := c.Decode(p.datagrams, codecs.DecodeOptions{})
		lean, err2 := c.Decode(p.datagrams, codecs.DecodeOptions{NoFields: true})
		if (err1 == nil) != (err2 == nil) || len(lean.Fields) != 0 {
			t.Errorf("%s: errors %v / %v, lean fields %v", p.name, err1, err2, lean.Fields)
		}
		full.Fields = nil
		if string(full.AppendJSON(nil)) != string(lean.AppendJSON(nil)) {
			t.Errorf("%s: NoFields changes more than the fields", p.name)
		}
	}
}
