package zandronum

import (
	"encoding/binary"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// segPayload builds one segment payload by hand.
func segPayload(num, total uint8, off, size, totalSize uint16, data []byte) []byte {
	p := binary.LittleEndian.AppendUint32(nil, CodeSegmented)
	p = append(p, num, total)
	p = binary.LittleEndian.AppendUint16(p, off)
	p = binary.LittleEndian.AppendUint16(p, size)
	p = binary.LittleEndian.AppendUint16(p, totalSize)
	return append(p, data...)
}

func segmentsOf(t *testing.T, r Response, maxPacket int) [][]byte {
	t.Helper()
	ps, err := AppendSegmentedPayloads(nil, r, maxPacket)
	noErr(t, "AppendSegmentedPayloads", err)
	return ps
}

func TestSegmentedOrder(t *testing.T) {
	r := extendedResponse()
	ps := segmentsOf(t, r, 100)
	if len(ps) < 5 {
		t.Fatalf("%d segments", len(ps))
	}
	want := r
	want.Code = CodeSegmented
	for _, tc := range []struct {
		name  string
		order []int
	}{
		{"in order", []int{0, 1, 2, 3, 4}},
		{"reversed", []int{4, 3, 2, 1, 0}},
		{"shuffled", []int{2, 4, 0, 3, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in [][]byte
			for _, k := range tc.order {
				in = append(in, ps[k])
			}
			in = append(in, ps[5:]...)
			got, err := DecodeSegmentedPayloads(in)
			noErr(t, "DecodeSegmentedPayloads", err)
			equal(t, "reply", want, got)
			got, err = DecodeSegmented(wrapAll(in))
			noErr(t, "DecodeSegmented", err)
			equal(t, "reply from datagrams", want, got)
		})
	}
	t.Run("one segment", func(t *testing.T) {
		ds, err := AppendSegmented(nil, r, DefaultMaxPacketSize)
		noErr(t, "AppendSegmented", err)
		equal(t, "segments", 1, len(ds))
		got, err := DecodeSegmented(ds)
		noErr(t, "DecodeSegmented", err)
		equal(t, "reply", want, got)
	})
	t.Run("sizes as the server cuts them", func(t *testing.T) {
		for i, p := range ps {
			g, err := DecodeSegmentPayload(p)
			noErr(t, "DecodeSegmentPayload", err)
			equal(t, "number", uint8(i), g.Number)
			equal(t, "total", uint8(len(ps)), g.Total)
			equal(t, "offset", uint16(i*88), g.Offset)
			if i < len(ps)-1 {
				equal(t, "size", uint16(88), g.Size)
			}
			if len(p) > 100 {
				t.Errorf("segment %d is %d bytes, more than the packet size", i, len(p))
			}
		}
	})
}

// TestSegmentedErrors: every inconsistency is an error naming the
// segment's layer and field, never a panic or an allocation by the
// announced sizes.
func TestSegmentedErrors(t *testing.T) {
	body := segmentsOf(t, Response{Code: CodeAccepted, Time: 5, Version: "version 1", Flags: SQF_NAME, Name: "server"}, 24)
	// 25 bytes of reply in 12-byte chunks: 0-12, 12-24, 24-25.
	if len(body) != 3 {
		t.Fatalf("%d segments", len(body))
	}
	data := func(i int) []byte { return body[i][segmentHeader:] }
	for _, tc := range []struct {
		name     string
		in       [][]byte
		sentinel error
		field    string
		layer    string
		offset   int
	}{
		{"offset past the total", [][]byte{segPayload(0, 1, 0xfff0, 4, 100, []byte{1, 2, 3, 4})},
			codecs.ErrBadValue, "segment.offset", "payload", 6},
		{"offset plus size past the total", [][]byte{segPayload(0, 1, 90, 20, 100, make([]byte, 20))},
			codecs.ErrBadValue, "segment.offset", "payload", 6},
		{"number not below total", [][]byte{segPayload(3, 3, 0, 1, 1, []byte{0})},
			codecs.ErrBadValue, "segment.number", "payload", 4},
		{"zero segments", [][]byte{segPayload(0, 0, 0, 0, 0, nil)},
			codecs.ErrBadValue, "segment.total", "payload", 5},
		{"size larger than the chunk", [][]byte{segPayload(0, 1, 0, 60000, 60000, []byte{1})},
			codecs.ErrShort, "segment.data", "payload", 12},
		{"header cut", [][]byte{segPayload(0, 1, 0, 1, 1, nil)[:9]},
			codecs.ErrShort, "segment.size", "payload", 8},
		{"not a segment", [][]byte{body[0], codectest.Unhex(t, "775d5600")},
			codecs.ErrBadMagic, "response", "payload 1", 0},
		{"totals disagree", [][]byte{body[0], segPayload(1, 4, 12, 12, 25, data(1))},
			codecs.ErrBadValue, "segment.total", "payload 1", 5},
		{"total sizes disagree", [][]byte{body[0], segPayload(1, 3, 12, 12, 26, data(1))},
			codecs.ErrBadValue, "segment.total_size", "payload 1", 10},
		{"segment twice", [][]byte{body[1], body[0], body[1]},
			codecs.ErrBadValue, "segment.number", "payload 2", 4},
		{"segment missing", [][]byte{body[2], body[0]},
			codecs.ErrIncomplete, "segments", "", 0},
		{"overlap", [][]byte{body[0], segPayload(1, 3, 10, 12, 25, data(1)), body[2]},
			codecs.ErrBadValue, "segment.offset", "payload 1", 6},
		{"gap", [][]byte{body[0], segPayload(1, 3, 13, 11, 25, data(1)[:11]), body[2]},
			codecs.ErrBadValue, "segment.offset", "payload 1", 6},
		{"chunks short of the total", [][]byte{body[0], body[1], segPayload(2, 3, 24, 0, 25, nil)},
			codecs.ErrIncomplete, "segment.total_size", "payload 2", 10},
		{"no segments", nil, codecs.ErrIncomplete, "segments", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSegmentedPayloads(tc.in)
			e := codecErr(t, "DecodeSegmentedPayloads", err, tc.sentinel, tc.field, tc.layer)
			equal(t, "offset", tc.offset, e.Offset)
			if len(tc.in) == 0 {
				return
			}
			m, err := (&Codec{}).Decode(wrapAll(tc.in), codecs.DecodeOptions{Spans: true})
			if tc.field != "response" {
				e = codecErr(t, "Codec.Decode", err, tc.sentinel, tc.field, tc.layer)
				equal(t, "offset", tc.offset, e.Offset)
			}
			if m == nil {
				t.Fatal("no partial message")
			}
		})
	}
}

// TestSegmentedPartial: with a segment missing, the part received from
// offset 0 on still decodes, and the error says what is missing.
func TestSegmentedPartial(t *testing.T) {
	ps := segmentsOf(t, extendedResponse(), 120)
	m, err := (&Codec{}).Decode([][]byte{Wrap(nil, ps[1]), Wrap(nil, ps[0])}, codecs.DecodeOptions{})
	codecErr(t, "Decode", err, codecs.ErrIncomplete, "segments", "")
	equal(t, "kind", codecs.KindResponse, m.Kind)
	equal(t, "name", "Café Deathmatch", m.Info.Name)
	if _, ok := m.Fields.Get("security"); ok {
		t.Error("fields past the received part are shown")
	}
	seg, _ := m.Fields.Get("segments")
	if n := len(seg.([]codecs.Object)); n != 2 {
		t.Errorf("%d segments in fields, want 2", n)
	}
}
