package main

import (
	"bytes"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/pcapng"
)

// TCP turns (package pcapng returns a TCP connection as turns: the bytes
// one side sent before the other answered) are read among the protocols
// that travel over TCP: a codec whose Description.Transport is TCP (a
// server's status over a stream: Minecraft Java), or whose master is
// spoken to over TCP (Description.Master.Transport: GameSpy v1's master
// list). Which one a connection speaks is decided once per stream, in
// order, by:
//
//  1. the -p flag;
//  2. the port: server.GuessProtocol of either end, if that codec speaks
//     TCP there (its own ports for a stream protocol, its master's port
//     for a TCP master);
//  3. the content: the stream protocol whose Detect is at least
//     codecs.Likely on the turn (or on its first message, cut with the
//     protocol's MessageLen); for a master that speaks first, the master
//     conversation taking the connection's first turn as its greeting.
//
// Later turns of the stream are in that protocol ("conversation"). A
// stream protocol's turn is cut into messages and decoded whole
// (codecs.DecodeStream); a reply turn names the request turn before it.
// A master's turns are fed to the master conversation (the protocol's
// NewQuery with the master's options), the greeting and then the list,
// whose turn carries the decoded list. A turn the capture cut (pcapng's
// 512 KiB bound) or missing bytes (a segment never captured) says so.

// maxTCPConvs bounds the streams remembered; past it the table starts
// over (a later turn of a forgotten stream is classified again).
const maxTCPConvs = 1 << 16

// tcpConv is what inspect knows of one TCP stream.
type tcpConv struct {
	codec  codecs.Codec // nil: not found yet
	master bool         // the stream is a conversation with a master
	server pcapng.Endpoint
	known  bool // server is set
	by     string
	// The last request turn's frame and time.
	reqFrame int
	reqAt    int64
	request  []byte   // a master's: the client's turns so far
	greeting [][]byte // a master's: its messages before the client spoke
	done     bool     // a master's list was decoded
}

// tcpTurn prints one TCP turn.
func (ci *captureInspector) tcpTurn(dg pcapng.Datagram) {
	dg.Payload = append([]byte(nil), dg.Payload...)
	ci.turns++
	if ci.tcp == nil || len(ci.tcp) >= maxTCPConvs {
		ci.tcp = map[int]*tcpConv{}
	}
	cv := ci.tcp[dg.Stream]
	if cv == nil {
		cv = &tcpConv{}
		ci.tcp[dg.Stream] = cv
	}
	rec := &record{dg: dg, done: true}
	ci.queue = append(ci.queue, rec)
	defer ci.flush()
	by := "conversation"
	if cv.codec == nil {
		if !ci.classifyTCP(cv, &dg) {
			ci.unknown++
			return
		}
		by = cv.by
	}
	ci.known++
	ci.messages++
	rec.codec, rec.by = cv.codec, by
	fromServer := cv.known && dg.Src == cv.server
	if fromServer && cv.reqFrame > 0 {
		rec.replyTo, rec.replyDur = cv.reqFrame, dg.Micros-cv.reqAt
	}
	if cv.master {
		ci.masterTurn(cv, rec, fromServer)
		return
	}
	c := cv.codec
	p := dg.Payload
	rec.kind, _ = c.Detect(p)
	if rec.kind == "" {
		if msgs, _, _ := codecs.CutStream(p, codecs.DescriptionOf(c).MessageLen); len(msgs) > 0 {
			rec.kind, _ = c.Detect(msgs[0])
		}
	}
	if rec.kind == "" && !fromServer {
		rec.kind = codecs.KindQuery
	}
	if !fromServer {
		cv.reqFrame, cv.reqAt = dg.Frame, dg.Micros
		// A request the codec recognises whole (the legacy ping, which
		// the stream's framing does not cut) is decoded as one message.
		if k, conf := c.Detect(p); conf > codecs.NotMine && isQuery(k) {
			rec.msg, rec.err = c.Decode([][]byte{p}, ci.decodeOptions())
			return
		}
	}
	rec.msg, rec.err = codecs.DecodeStream(c, p, ci.decodeOptions())
}

// classifyTCP finds the protocol of a stream from one of its turns; it
// says whether it found one.
func (ci *captureInspector) classifyTCP(cv *tcpConv, dg *pcapng.Datagram) bool {
	if c := ci.opt.proto; c != nil {
		d := codecs.DescriptionOf(c)
		switch {
		case codecs.Streamed(c):
			cv.codec, cv.by = c, "protocol flag"
			cv.server, cv.known = dg.Dst, true // the client speaks first
			if k, _ := c.Detect(dg.Payload); k != "" && !isQuery(k) {
				cv.server = dg.Src
			}
		case d.Master != nil && d.Master.Transport == codecs.TCP:
			cv.codec, cv.master, cv.by = c, true, "protocol flag"
			cv.server, cv.known = dg.Dst, true
			if d.Master.ServerFirst && dg.Turn == 1 {
				cv.server = dg.Src
			}
		}
		return cv.codec != nil
	}
	for _, end := range [2]pcapng.Endpoint{dg.Dst, dg.Src} {
		c := ci.portProtocol(end.Port)
		if c != nil && !codecs.Streamed(c) && (codecs.DescriptionOf(c).Master == nil || codecs.DescriptionOf(c).Master.Transport != codecs.TCP) {
			c = ci.streamPortProtocol(end.Port) // a UDP protocol's port that a TCP one uses too (25565)
		}
		if c == nil {
			continue
		}
		d := codecs.DescriptionOf(c)
		switch {
		case codecs.Streamed(c):
			cv.codec = c
		case d.Master != nil && d.Master.Transport == codecs.TCP && d.Master.Port == int(end.Port):
			cv.codec, cv.master = c, true
		default:
			continue
		}
		cv.server, cv.known, cv.by = end, true, "port"
		return true
	}
	m, ok := codecs.DetectTurn(codecs.Protocols(), dg.Payload, dg.Turn)
	if !ok {
		return false
	}
	cv.codec, cv.master, cv.by, cv.known = m.Codec, m.Master, "content", true
	cv.server = dg.Dst
	if m.FromServer {
		cv.server = dg.Src
	}
	return true
}

// streamPortProtocol is the first stream protocol whose usual ports
// (DefaultPort, Description.Ports) hold port, or nil.
func (ci *captureInspector) streamPortProtocol(port uint16) codecs.Codec {
	for _, c := range codecs.Protocols() {
		if !codecs.Streamed(c) {
			continue
		}
		if c.DefaultPort() == int(port) {
			return c
		}
		for _, p := range codecs.DescriptionOf(c).Ports {
			if p == int(port) {
				return c
			}
		}
	}
	return nil
}

// masterTurn reads a turn of a conversation with a master: the client's
// turns are its request; the master's before the request are its
// greeting, and its turn after the request is the list, decoded by the
// master conversation fed the greeting and the list.
func (ci *captureInspector) masterTurn(cv *tcpConv, rec *record, fromServer bool) {
	dg := &rec.dg
	if !fromServer {
		rec.kind = codecs.KindMasterQuery
		cv.request = append(cv.request, dg.Payload...)
		cv.reqFrame, cv.reqAt = dg.Frame, dg.Micros
		return
	}
	m := codecs.DescriptionOf(cv.codec).Master
	msgs, rest, bad := codecs.CutStream(dg.Payload, m.MessageLen)
	if len(rest) > 0 || bad {
		msgs = append(msgs, rest) // a list a master cut short still ends
	}
	if cv.request == nil {
		cv.greeting = append(cv.greeting, msgs...)
		rec.kind = "greeting"
		return
	}
	rec.kind = codecs.KindMasterList
	if cv.done {
		rec.err = &codecs.Error{Protocol: cv.codec.Name(), Field: "stream", Offset: 0,
			Err: codecs.Detail(codecs.ErrBadValue, "more bytes after the master's list (after a gap, or a second list)")}
		return
	}
	cv.done = true
	opts := masterRequestOptions(m.Options, cv.request)
	q, err := cv.codec.NewQuery(opts)
	if err != nil {
		rec.err = err
		return
	}
	for _, b := range append(cv.greeting, msgs...) {
		if _, done, err := q.Feed(b); err != nil || done {
			break
		}
	}
	rec.msg, rec.err = q.Result(ci.decodeOptions())
	if rec.msg != nil && rec.msg.Kind != "" {
		rec.kind = rec.msg.Kind
	}
}

// masterRequestOptions adds to a master's options what the client's
// request asked for, read as the \key\value pairs of GameSpy's master
// requests: the game (gamename) and the list form (list, "cmp" for the
// binary one), so the list decodes in the form the master sent it.
func masterRequestOptions(base map[string]string, req []byte) map[string]string {
	opts := make(map[string]string, len(base)+2)
	for k, v := range base {
		opts[k] = v
	}
	parts := bytes.Split(req, []byte{'\\'})
	for i := 1; i+1 < len(parts); i += 2 {
		// \final\ ends a message with an empty value before the next
		// key's backslash, so the pairs stay aligned across messages.
		if k := string(parts[i]); k == "gamename" || k == "list" {
			if _, ok := opts[k]; !ok && len(parts[i+1]) > 0 {
				opts[k] = string(parts[i+1])
			}
		}
	}
	return opts
}

// appendTCPHeading appends "tcp stream N turn M" and the turn's flags to
// a text heading.
func appendTCPHeading(dst []byte, dg *pcapng.Datagram) []byte {
	dst = append(dst, "tcp stream "...)
	dst = strconv.AppendInt(dst, int64(dg.Stream), 10)
	dst = append(dst, " turn "...)
	dst = strconv.AppendInt(dst, int64(dg.Turn), 10)
	return dst
}

// tcpWarning is the warning line of a turn the capture cut or that lacks
// bytes, or "".
func tcpWarning(dg *pcapng.Datagram) string {
	switch {
	case dg.Cut && dg.Gap:
		return "warning: the turn is cut (over 512 KiB) and bytes of it were never captured"
	case dg.Cut:
		return "warning: the turn is cut: only its first 512 KiB are read"
	case dg.Gap:
		return "warning: bytes of this side were never captured (a gap in the stream): the turn stops before them or starts after them"
	}
	return ""
}
