//go:build js && wasm && !family

package main

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/querylens/querylens/pcapng"
	"github.com/querylens/querylens/wasm/internal/capture"
)

// TestCaptureTCP reads a capture of one TCP exchange as the worker does,
// with the rows of the turns still open at the end read after captureEnd:
// two rows flagged TCP and stored, of one conversation, the reply naming
// the request; their bytes come from capturePayload; the stats count the
// stream and its turns.
func TestCaptureTCP(t *testing.T) {
	srv, _ := pcapng.ParseEndpoint("127.0.0.1:25565")
	request, reply := []byte("\x01\x00request"), bytes.Repeat([]byte("reply "), 600)
	file := pcapng.Append(nil, "test", []pcapng.Packet{
		{Micros: 1, Target: srv, Data: request, TCP: true, Stream: 7},
		{Micros: 2, Direction: pcapng.Received, Target: srv, Data: reply, TCP: true, Stream: 7},
	})
	h := ql.Call("captureOpen").Get("handle")
	ql.Call("captureFeed", h, bytesToJS(file))
	var rows []byte
	read := func() {
		for {
			r := ql.Call("captureNext", h, 16)
			if e := r.Get("error"); !e.IsUndefined() {
				t.Fatalf("captureNext: %s", stringify(e))
			}
			rows = append(rows, goBytes(t, r.Get("rows"))...)
			if r.Get("n").Int() == 0 || r.Get("more").Bool() {
				return
			}
		}
	}
	read()
	end := ql.Call("captureEnd", h)
	if !end.Get("error").IsUndefined() {
		t.Fatalf("captureEnd: %s", stringify(end))
	}
	read()
	if len(rows) != 2*capture.RowSize {
		t.Fatalf("%d bytes of rows, want the two turns", len(rows))
	}
	var convs [2]uint32
	for i, want := range [][]byte{request, reply} {
		row := rows[i*capture.RowSize:]
		if flags := row[42]; flags&capture.FlagTCP == 0 || flags&capture.FlagStored == 0 || flags&(capture.FlagCut|capture.FlagGap) != 0 {
			t.Errorf("row %d flags %#x, want TCP and stored, whole", i, flags)
		}
		convs[i] = binary.LittleEndian.Uint32(row[44:])
		if got := goBytes(t, ql.Call("capturePayload", h, i)); !bytes.Equal(got, want) {
			t.Errorf("row %d's payload %q, want %q", i, got, want)
		}
	}
	if q := int32(binary.LittleEndian.Uint32(rows[capture.RowSize+32:])); q != 0 || convs[0] != convs[1] {
		t.Errorf("the reply answers row %d (want 0); conversations %v, want one", q, convs)
	}
	st := ql.Call("captureNext", h).Get("stats")
	if st.Get("streams").Int() != 1 || st.Get("turns").Int() != 2 || st.Get("cut").Int() != 0 || st.Get("gaps").Int() != 0 || st.Get("segments").Int() == 0 {
		t.Errorf("stats %s, want 1 stream of 2 turns, whole", stringify(st))
	}
	ql.Call("captureClose", h)
}
