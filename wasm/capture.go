//go:build js && wasm && !family

package main

import (
	"errors"
	"syscall/js"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/pcapng"
	"github.com/querylens/querylens/wasm/internal/capture"
)

// Captures opened in the inspector (web/static/capture-worker.js), by
// handle. The worker reads the file in chunks and drives one session:
//
//	captureOpen()                 → {handle, protocols: [name…], rowSize}
//	captureFeed(handle, bytes)    → undefined (the chunk is kept until read)
//	captureNext(handle, max)      → {rows: Uint8Array, n, more, endpoints: [new…], kinds: [new…], stats, error?}
//	                                rows: n rows of wasm/internal/capture's layout; more: feed the next chunk
//	captureEnd(handle)            → {stats, error?}  (the last block was cut, or the file is not a capture);
//	                                then captureNext gives the rows of the TCP turns still open, until n is 0
//	capturePayload(handle, row)   → Uint8Array | null  (rows flagged stored: reassembled datagrams, TCP turns)
//	captureClose(handle)
var (
	captures    = map[int]*capture.Session{}
	nextCapture = 1
)

func registerCapture(ns js.Value) {
	ns.Set("captureOpen", fn(captureOpen))
	ns.Set("captureFeed", fn(captureFeed))
	ns.Set("captureNext", fn(captureNext))
	ns.Set("captureEnd", fn(captureEnd))
	ns.Set("capturePayload", fn(capturePayload))
	ns.Set("captureClose", fn(func(args []js.Value) any {
		delete(captures, arg(args, 0).Int())
		return nil
	}))
}

func captureOpen(_ []js.Value) any {
	h := nextCapture
	nextCapture++
	captures[h] = capture.New()
	names := make([]string, 0, 8)
	for _, c := range codecs.Protocols() {
		names = append(names, c.Name())
	}
	return object(make(codecs.Object, 0, 3).Add("handle", h).Add("protocols", names).Add("rowSize", capture.RowSize))
}

// session returns the capture args[0] names, or a failure object.
func session(args []js.Value) (*capture.Session, js.Value) {
	if v := arg(args, 0); v.Type() == js.TypeNumber {
		if s := captures[v.Int()]; s != nil {
			return s, js.Value{}
		}
	}
	return nil, usageError("capture: no open capture by that handle")
}

func captureFeed(args []js.Value) any {
	s, fail := session(args)
	if s == nil {
		return fail
	}
	b, ok := bytesFromJS(arg(args, 1))
	if !ok {
		return usageError("captureFeed: want a Uint8Array")
	}
	s.Feed(b)
	return nil
}

// statsObject is the decoder's counts and the rows made: of UDP, and of
// TCP (segments, streams, turns, and the turns cut, with gaps, or of
// streams forgotten).
func statsObject(s *capture.Session) codecs.Object {
	st := s.Stats()
	return make(codecs.Object, 0, 13).Add("frames", st.Frames).Add("udp", st.UDP).Add("skipped", st.Skipped).
		Add("fragments", st.Fragments).Add("reassembled", st.Reassembled).Add("truncated", st.Truncated).
		Add("segments", st.Segments).Add("streams", st.Streams).Add("turns", st.Turns).Add("cut", st.Cut).
		Add("gaps", st.Gaps).Add("evicted", st.Evicted).Add("rows", s.Rows())
}

// captureErr is the failure object's error part for a reader error: the
// block and the file offset it names.
func captureErr(o codecs.Object, err error) codecs.Object {
	e := make(codecs.Object, 0, 3).Add("message", err.Error())
	var fe *pcapng.FormatError
	if errors.As(err, &fe) {
		e = e.Add("block", fe.Block).Add("offset", fe.Offset)
	}
	return o.Add("error", e)
}

var rowBuf []byte

func captureNext(args []js.Value) any {
	s, fail := session(args)
	if s == nil {
		return fail
	}
	max := 4096
	if v := arg(args, 1); v.Type() == js.TypeNumber && v.Int() > 0 {
		max = v.Int()
	}
	var err error
	rowBuf, err = s.Next(rowBuf[:0], max)
	eps, kinds := s.Endpoints(), s.Kinds()
	if eps == nil {
		eps = []string{}
	}
	if kinds == nil {
		kinds = []string{}
	}
	o := make(codecs.Object, 0, 6).Add("n", len(rowBuf)/capture.RowSize).Add("more", errors.Is(err, capture.ErrMore)).
		Add("endpoints", eps).Add("kinds", kinds).Add("stats", statsObject(s))
	if err != nil && !errors.Is(err, capture.ErrMore) {
		o = captureErr(o, err)
	}
	v := object(o)
	v.Set("rows", bytesToJS(rowBuf))
	return v
}

func captureEnd(args []js.Value) any {
	s, fail := session(args)
	if s == nil {
		return fail
	}
	o := make(codecs.Object, 0, 2).Add("stats", statsObject(s))
	if err := s.End(); err != nil {
		o = captureErr(o, err)
	}
	return object(o)
}

func capturePayload(args []js.Value) any {
	s, fail := session(args)
	if s == nil {
		return fail
	}
	if b, ok := s.Payload(arg(args, 1).Int()); ok {
		return bytesToJS(b)
	}
	return nil
}
