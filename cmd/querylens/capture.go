package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/codecs/quake3"
	"github.com/querylens/querylens/pcapng"
	"github.com/querylens/querylens/server"
)

// querylens inspect --pcap FILE reads a capture (pcap or pcapng, any link
// type package pcapng reads) and decodes every UDP datagram of a known
// protocol, pairing queries with their replies and grouping the datagrams
// of a reply split over several into one message; and every TCP turn of a
// protocol that travels over TCP (capture_tcp.go).
//
// Which protocol a datagram speaks is decided, in order, by:
//
//  1. the conversation: a datagram from a server to a client that queried it
//     in a protocol is tried in that protocol first (GameSpy v2's replies
//     have no magic, so content alone is a weak guess);
//  2. the port: a well-known port of the protocol table (server.GuessProtocol)
//     on either end, if that codec's Detect does not reject the bytes;
//  3. the content: the codec whose Detect is most confident, at least
//     codecs.Likely (a weak guess on an unknown port is not taken: DNS or
//     game traffic would be mistaken for GameSpy v2 replies).
//
// A query (kind query or master-query) goes from the client to the server;
// anything else from the server to the client. The reply datagrams from a
// server to a client are collected until the codec decodes them as one
// message without error (Codec.Decode takes a message's datagrams in any
// order, and fails while a split reply lacks parts), until the client asks
// again, or until the capture ends; then the group is printed once, under
// the frame of its last datagram, and the earlier datagrams point to it.

// captureOptions are inspect's flags that apply to a capture.
type captureOptions struct {
	file   string
	proto  codecs.Codec // -p: every datagram in this protocol
	json   bool
	spans  bool // --json with layers and spans
	pretty bool
}

// Bounds of the grouping, so a capture of a flood cannot hold all of it.
const (
	maxGroupParts = 64    // datagrams of one reply group (A2S and GameSpy allow fewer)
	maxHeld       = 10000 // datagrams printed late because a group is open
	// maxConvs bounds the client-server pairs remembered; past it, the
	// pairs without an open group are forgotten (a later reply then pairs
	// with no query).
	maxConvs = 1 << 16
)

// endpointPair names one client and one server.
type endpointPair struct{ client, server pcapng.Endpoint }

// conversation is what the capture showed between one client and one server.
type conversation struct {
	codec      codecs.Codec
	queryFrame int   // the last query's frame, 0 if none was seen
	queryAt    int64 // its time, µs
	group      []*record
	parts      [][]byte
}

// record is one UDP datagram's line of output, held until its message is
// decoded.
type record struct {
	dg       pcapng.Datagram // Payload is a copy
	codec    codecs.Codec
	by       string // "conversation", "port", "content" or "protocol flag"
	kind     codecs.Kind
	done     bool
	msg      *codecs.Message
	err      error
	frames   []int // the frames of the message, when it has several
	partOf   int   // the frame of the message this datagram is a part of
	replyTo  int   // the query's frame
	replyDur int64 // µs since the query
}

type captureInspector struct {
	e     *env
	opt   captureOptions
	w     *bufio.Writer
	convs map[endpointPair]*conversation
	queue []*record // in frame order; the head is printed once done
	held  int       // records in open groups
	out   []byte
	ports map[uint16]codecs.Codec // server.GuessProtocol's answers, nil for none
	tcp   map[int]*tcpConv        // by stream number

	known, unknown, messages, turns int
}

func (e *env) inspectCapture(opt captureOptions) int {
	f, err := os.Open(opt.file)
	if err != nil {
		io.WriteString(e.stderr, "querylens inspect: "+err.Error()+"\n")
		return exitFail
	}
	defer f.Close()
	return e.inspectReader(opt, f)
}

// inspectReader is inspectCapture on an open file (opt.file names it in
// messages).
func (e *env) inspectReader(opt captureOptions, f io.Reader) int {
	ci := &captureInspector{e: e, opt: opt, w: bufio.NewWriterSize(e.stdout, 64<<10), convs: map[endpointPair]*conversation{}, ports: map[uint16]codecs.Codec{}}
	r := pcapng.NewReader(f) // it reads in large chunks itself
	status := exitOK
	for {
		dg, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			ci.finish()
			ci.w.Flush()
			io.WriteString(e.stderr, "querylens inspect: "+opt.file+": "+err.Error()+"\n")
			status = exitFail
			break
		}
		if dg.TCP {
			ci.tcpTurn(dg)
			continue
		}
		ci.datagram(dg)
	}
	if status == exitOK {
		ci.finish()
		ci.w.Flush()
	}
	st := r.Stats()
	msg := "querylens inspect: " + opt.file + ": " + strconv.Itoa(st.Frames) + " frames, " + strconv.Itoa(st.UDP) + " UDP datagrams"
	if st.Segments > 0 {
		msg += ", " + strconv.Itoa(st.Turns) + " TCP turns in " + strconv.Itoa(st.Streams) + " streams"
	}
	msg += " (" + strconv.Itoa(ci.known) + " of known protocols in " + strconv.Itoa(ci.messages) + " messages, " + strconv.Itoa(ci.unknown) + " unknown)"
	if st.Cut > 0 || st.Gaps > 0 || st.Evicted > 0 {
		msg += ", " + strconv.Itoa(st.Cut) + " turns cut, " + strconv.Itoa(st.Gaps) + " with bytes missing, " + strconv.Itoa(st.Evicted) + " streams evicted"
	}
	if st.Reassembled > 0 || st.Fragments > 0 {
		msg += ", " + strconv.Itoa(st.Reassembled) + " reassembled from " + strconv.Itoa(st.Fragments) + " fragments"
	}
	if st.Truncated > 0 {
		msg += ", " + strconv.Itoa(st.Truncated) + " cut by the snap length"
	}
	io.WriteString(e.stderr, msg+"\n")
	return status
}

// classify finds the datagram's protocol and kind; nil when no protocol
// claims it.
func (ci *captureInspector) classify(dg *pcapng.Datagram) (codecs.Codec, codecs.Kind, string) {
	p := dg.Payload
	if c := ci.opt.proto; c != nil {
		k, _ := c.Detect(p)
		return c, k, "protocol flag"
	}
	if cv := ci.convs[endpointPair{client: dg.Dst, server: dg.Src}]; cv != nil && cv.queryFrame > 0 {
		if k, conf := cv.codec.Detect(p); conf > codecs.NotMine && !isQuery(k) {
			return cv.codec, k, "conversation"
		}
	}
	for _, port := range [2]uint16{dg.Dst.Port, dg.Src.Port} {
		if c := ci.portProtocol(port); c != nil {
			if k, conf := c.Detect(p); conf > codecs.NotMine {
				return c, k, "port"
			}
		}
	}
	var best codecs.Codec
	var kind codecs.Kind
	bestConf := codecs.NotMine
	for _, c := range codecs.Protocols() {
		if k, conf := c.Detect(p); conf > bestConf {
			best, kind, bestConf = c, k, conf
		}
	}
	if bestConf < codecs.Likely {
		return nil, "", ""
	}
	return best, kind, "content"
}

// portProtocol is server.GuessProtocol's codec for a port, remembered.
func (ci *captureInspector) portProtocol(port uint16) codecs.Codec {
	c, ok := ci.ports[port]
	if !ok {
		if name := server.GuessProtocol(int(port)); name != "" {
			c, _ = codecs.Lookup(name)
		}
		ci.ports[port] = c
	}
	return c
}

func isQuery(k codecs.Kind) bool { return k == codecs.KindQuery || k == codecs.KindMasterQuery }

func (ci *captureInspector) datagram(dg pcapng.Datagram) {
	dg.Payload = append([]byte(nil), dg.Payload...)
	c, kind, by := ci.classify(&dg)
	rec := &record{dg: dg, codec: c, by: by, kind: kind}
	ci.queue = append(ci.queue, rec)
	if c == nil {
		ci.unknown++
		rec.done = true
		ci.flush()
		return
	}
	ci.known++
	if isQuery(kind) {
		pair := endpointPair{client: dg.Src, server: dg.Dst}
		cv := ci.conv(pair, c)
		ci.close(cv) // a new question ends the answer to the last one
		cv.queryFrame, cv.queryAt = dg.Frame, dg.Micros
		rec.msg, rec.err = c.Decode([][]byte{dg.Payload}, ci.decodeOptions())
		rec.done = true
		ci.messages++
		ci.flush()
		return
	}
	pair := endpointPair{client: dg.Dst, server: dg.Src}
	cv := ci.conv(pair, c)
	if cv.codec != c {
		ci.close(cv)
		cv.codec = c
	}
	if cv.queryFrame > 0 {
		rec.replyTo, rec.replyDur = cv.queryFrame, dg.Micros-cv.queryAt
	}
	cv.group = append(cv.group, rec)
	cv.parts = append(cv.parts, dg.Payload)
	ci.held++
	msg, err := c.Decode(cv.parts, ci.decodeOptions())
	if err == nil && !incomplete(msg) || len(cv.group) >= maxGroupParts {
		ci.resolve(cv, msg, err)
	}
	for ci.held > maxHeld && ci.closeOldest() {
	}
	ci.flush()
}

// incomplete says whether a message that decoded says parts are missing:
// most codecs fail with codecs.ErrIncomplete then, but GameSpy v1 (a reply
// without its \final\ datagram, or with a gap in the numbers) and
// Quake III's server lists (no end-of-list marker: the list may go on in
// the next datagram) decode with a warning.
func incomplete(m *codecs.Message) bool {
	for _, w := range m.Warnings {
		switch w {
		case gamespy1.WarnNoFinal, gamespy1.WarnMissing, quake3.WarnNoEnd:
			return true
		}
	}
	return false
}

func (ci *captureInspector) decodeOptions() codecs.DecodeOptions {
	return codecs.DecodeOptions{Spans: !ci.opt.json || ci.opt.spans}
}

func (ci *captureInspector) conv(pair endpointPair, c codecs.Codec) *conversation {
	cv := ci.convs[pair]
	if cv == nil {
		if len(ci.convs) >= maxConvs {
			for k, old := range ci.convs {
				if len(old.group) == 0 {
					delete(ci.convs, k)
				}
			}
		}
		cv = &conversation{codec: c}
		ci.convs[pair] = cv
	}
	return cv
}

// close decodes an open reply group as it stands (an error says what is
// missing) and resolves it.
func (ci *captureInspector) close(cv *conversation) {
	if len(cv.group) == 0 {
		return
	}
	msg, err := cv.codec.Decode(cv.parts, ci.decodeOptions())
	ci.resolve(cv, msg, err)
}

// resolve marks a reply group done: the last datagram carries the message.
func (ci *captureInspector) resolve(cv *conversation, msg *codecs.Message, err error) {
	last := cv.group[len(cv.group)-1]
	last.msg, last.err = msg, err
	if len(cv.group) > 1 {
		for _, r := range cv.group {
			last.frames = append(last.frames, r.dg.Frame)
			if r != last {
				r.partOf = last.dg.Frame
			}
		}
	}
	for _, r := range cv.group {
		r.done = true
	}
	ci.held -= len(cv.group)
	ci.messages++
	cv.group, cv.parts = nil, nil
}

// closeOldest closes the group holding the oldest unprinted datagram; it
// says whether there was one.
func (ci *captureInspector) closeOldest() bool {
	for _, r := range ci.queue {
		if !r.done {
			for _, cv := range ci.convs {
				if len(cv.group) > 0 && cv.group[0] == r {
					ci.close(cv)
					return true
				}
			}
		}
	}
	return false
}

// finish closes every open group and prints the rest, at the end of the
// capture.
func (ci *captureInspector) finish() {
	for len(ci.queue) > 0 {
		if !ci.closeOldest() {
			break // cannot happen: every record not done is in an open group
		}
		ci.flush()
	}
}

// flush prints the records at the head of the queue that are done.
func (ci *captureInspector) flush() {
	n := 0
	for n < len(ci.queue) && ci.queue[n].done {
		r := ci.queue[n]
		if ci.opt.json {
			ci.out = ci.appendJSON(ci.out[:0], r)
		} else {
			ci.out = ci.appendText(ci.out[:0], r)
		}
		ci.w.Write(ci.out)
		ci.queue[n] = nil
		n++
	}
	if n > 0 {
		ci.queue = append(ci.queue[:0], ci.queue[n:]...)
	}
}

// appendTime appends a capture time as RFC 3339 with microseconds, UTC.
func appendTime(dst []byte, micros int64) []byte {
	return time.UnixMicro(micros).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000Z")
}

func appendMillis(dst []byte, micros int64) []byte {
	return strconv.AppendFloat(dst, float64(micros)/1000, 'f', 3, 64)
}

// appendJSON writes one datagram's JSON line:
//
//	{"frame":3,"time":"…","src":"…","dst":"…","length":25,"protocol":"a2s",
//	 "detected_by":"port","kind":"query","message":{…}}
//
// A TCP turn adds "tcp_stream" and "tcp_turn" (and "cut" or "gap": true
// when the capture lost bytes of it), its frame being its first segment's.
// A reply adds "reply_to" (the query's frame) and "reply_ms"; the last
// datagram of a message split over several adds "frames"; the others carry
// "part_of" (the frame with the message) instead of "message". A datagram
// of no known protocol has "protocol": null. "message" is the decode of
// docs/protocols/json.md, or its failure object ({"error":…,"partial":…}).
func (ci *captureInspector) appendJSON(dst []byte, r *record) []byte {
	dg := &r.dg
	dst = append(dst, `{"frame":`...)
	dst = strconv.AppendInt(dst, int64(dg.Frame), 10)
	dst = append(dst, `,"time":"`...)
	dst = appendTime(dst, dg.Micros)
	dst = append(dst, `","src":"`...)
	dst = dg.Src.AppendTo(dst)
	dst = append(dst, `","dst":"`...)
	dst = dg.Dst.AppendTo(dst)
	dst = append(dst, `","length":`...)
	dst = strconv.AppendInt(dst, int64(len(dg.Payload)), 10)
	if dg.TCP {
		dst = append(dst, `,"tcp_stream":`...)
		dst = strconv.AppendInt(dst, int64(dg.Stream), 10)
		dst = append(dst, `,"tcp_turn":`...)
		dst = strconv.AppendInt(dst, int64(dg.Turn), 10)
		if dg.Cut {
			dst = append(dst, `,"cut":true`...)
		}
		if dg.Gap {
			dst = append(dst, `,"gap":true`...)
		}
	}
	if r.codec == nil {
		dst = append(dst, `,"protocol":null}`...)
		return append(dst, '\n')
	}
	dst = append(dst, `,"protocol":`...)
	dst = codecs.AppendJSONString(dst, r.codec.Name())
	dst = append(dst, `,"detected_by":`...)
	dst = codecs.AppendJSONString(dst, r.by)
	dst = append(dst, `,"kind":`...)
	dst = codecs.AppendJSONString(dst, string(r.kind))
	if r.replyTo > 0 {
		dst = append(dst, `,"reply_to":`...)
		dst = strconv.AppendInt(dst, int64(r.replyTo), 10)
		dst = append(dst, `,"reply_ms":`...)
		dst = appendMillis(dst, r.replyDur)
	}
	if r.partOf > 0 {
		dst = append(dst, `,"part_of":`...)
		dst = strconv.AppendInt(dst, int64(r.partOf), 10)
	} else if r.msg != nil || r.err != nil { // a master's greeting or request turn has none
		if r.frames != nil {
			dst = append(dst, `,"frames":`...)
			dst = codecs.AppendJSON(dst, r.frames)
		}
		dst = append(dst, `,"message":`...)
		if r.err != nil {
			dst = codecs.AppendJSON(dst, codecs.ErrorObject(r.err, r.msg))
		} else {
			dst = codecs.AppendJSON(dst, r.msg.Object())
		}
	}
	dst = append(dst, '}')
	if ci.opt.pretty {
		var out bytes.Buffer
		if err := json.Indent(&out, dst, "", "  "); err == nil {
			dst = append(dst[:0], out.Bytes()...)
		}
	}
	return append(dst, '\n')
}

// appendText writes a datagram of a known protocol as a heading line and,
// for the datagram that completes a message, the inspector's field dump:
//
//	frame 3  2025-03-01T12:00:00.000000Z  127.0.0.1:40000 → 127.0.0.1:27015  a2s query (port)
//	protocol a2s, kind query
//	layer 0 payload (25 bytes)
//	  …
//	frames 4,5  …  a2s response, reply to frame 3 after 0.412 ms (conversation)
func (ci *captureInspector) appendText(dst []byte, r *record) []byte {
	if r.codec == nil {
		return dst
	}
	dg := &r.dg
	if r.partOf > 0 {
		dst = append(dst, "frame "...)
		dst = strconv.AppendInt(dst, int64(dg.Frame), 10)
		dst = append(dst, "  part of the message of frame "...)
		dst = strconv.AppendInt(dst, int64(r.partOf), 10)
		return append(dst, '\n')
	}
	if r.frames != nil {
		dst = append(dst, "frames "...)
		for i, f := range r.frames {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(f), 10)
		}
	} else {
		dst = append(dst, "frame "...)
		dst = strconv.AppendInt(dst, int64(dg.Frame), 10)
	}
	dst = append(dst, "  "...)
	dst = appendTime(dst, dg.Micros)
	dst = append(dst, "  "...)
	dst = dg.Src.AppendTo(dst)
	dst = append(dst, " → "...)
	dst = dg.Dst.AppendTo(dst)
	dst = append(dst, "  "...)
	if dg.TCP {
		dst = appendTCPHeading(dst, dg)
		dst = append(dst, "  "...)
	}
	dst = append(dst, r.codec.Name()...)
	dst = append(dst, ' ')
	dst = append(dst, r.kind...)
	if r.replyTo > 0 {
		dst = append(dst, ", reply to frame "...)
		dst = strconv.AppendInt(dst, int64(r.replyTo), 10)
		dst = append(dst, " after "...)
		dst = appendMillis(dst, r.replyDur)
		dst = append(dst, " ms"...)
	}
	dst = append(dst, " ("...)
	dst = append(dst, r.by...)
	dst = append(dst, ")\n"...)
	if r.msg != nil {
		dst = codecs.AppendDump(dst, r.msg)
	}
	if r.err != nil {
		dst = append(dst, "error: "...)
		dst = append(dst, r.err.Error()...)
		dst = append(dst, '\n')
	}
	if w := tcpWarning(dg); w != "" {
		dst = append(dst, w...)
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}
