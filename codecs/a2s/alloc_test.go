package a2s_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
)

// TestAllocs keeps the hot paths' allocations where they are: the relay
// checks and keys every query, and the browser decodes thousands of
// replies.
func TestAllocs(t *testing.T) {
	c := &a2s.Codec{}
	q := fixture(t, "rules_request")[0]
	info := fixture(t, "info_source_full")[0]
	conv := fixture(t, "conversation")
	buf := make([]byte, 0, 64)
	cases := []struct {
		name string
		max  float64
		fn   func()
	}{
		{"DecodeRequest", 0, func() { a2s.DecodeRequest(q) }},
		{"CheckQuery", 0, func() { c.CheckQuery(q) }},
		{"AppendRequest", 0, func() { buf, _ = a2s.AppendRequest(buf[:0], a2s.Request{Type: a2s.TypeRulesRequest}) }},
		{"DetectQuery", 0, func() { c.Detect(q) }},
		{"DecodeResponse info", 9, func() { a2s.DecodeResponse(info, nil) }},
		{"Codec.Decode conversation", 100, func() { c.Decode(conv, codecs.DecodeOptions{}) }},
	}
	for _, tc := range cases {
		if n := testing.AllocsPerRun(50, tc.fn); n > tc.max {
			t.Errorf("%s: %v allocations, budget %v", tc.name, n, tc.max)
		}
	}
}
