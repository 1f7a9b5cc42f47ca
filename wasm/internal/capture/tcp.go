package capture

import (
	"bytes"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/pcapng"
)

// TCP turns (pcapng returns a TCP connection as turns: the bytes one side
// sent before the other answered) become rows flagged FlagTCP, their
// payload kept here (FlagStored: a turn is not one run of the file's
// bytes), counted in MaxStored. A stream's protocol is one of the codecs
// that travel over TCP, found at its first turn of a known protocol: by
// a port (a stream protocol's usual ports, a TCP master's port), then by
// the content (a stream protocol's Detect, at least codecs.Likely, on the
// turn or its first message; a master that speaks first taking the turn
// as its greeting). A request turn starts a group; the server's next
// turn is its reply (query = the request's row) in the same group. A
// master's turns are "greeting", "master-query" and "master-list".

// tcpStream is what the session knows of one TCP stream.
type tcpStream struct {
	conv   uint32 // the conversation id of its rows
	proto  uint8  // Unknown until found
	master bool
	server pcapng.Endpoint
	req    int32 // row of the last request turn, -1 for none
	group  uint32
}

// turnKinds are a master's turns' kinds.
const kindGreeting codecs.Kind = "greeting"

func (s *Session) turnRow(dst []byte, dg pcapng.Datagram) []byte {
	row := s.rows
	s.rows++
	if s.streams == nil || len(s.streams) >= maxConvs {
		s.streams = map[int]*tcpStream{}
	}
	st := s.streams[dg.Stream]
	if st == nil {
		s.convIDs++
		st = &tcpStream{conv: s.convIDs, proto: Unknown, req: -1}
		s.streams[dg.Stream] = st
	}
	if st.proto == Unknown {
		s.classifyTCP(st, &dg)
	}
	var kind codecs.Kind
	fromServer := st.proto != Unknown && dg.Src == st.server
	if st.proto != Unknown {
		c := s.codecs[st.proto]
		switch {
		case st.master && fromServer && st.req < 0:
			kind = kindGreeting
		case st.master && fromServer:
			kind = codecs.KindMasterList
		case st.master:
			kind = codecs.KindMasterQuery
		default:
			kind, _ = c.Detect(dg.Payload)
			if kind == "" {
				if msgs, _, _ := codecs.CutStream(dg.Payload, codecs.DescriptionOf(c).MessageLen); len(msgs) > 0 {
					kind, _ = c.Detect(msgs[0])
				}
			}
			if kind == "" && !fromServer {
				kind = codecs.KindQuery
			}
		}
	}
	query := int32(-1)
	switch {
	case st.proto != Unknown && !fromServer:
		s.groups++
		st.group, st.req = s.groups, int32(row)
	case fromServer && st.req >= 0:
		query = st.req
	default:
		s.groups++
		st.group = s.groups
	}
	flags := uint8(FlagTCP)
	if dg.Cut {
		flags |= FlagCut
	}
	if dg.Gap {
		flags |= FlagGap
	}
	if s.storedBytes+len(dg.Payload) <= MaxStored {
		s.stored[row] = bytes.Clone(dg.Payload)
		s.storedBytes += len(dg.Payload)
		flags |= FlagStored
	} else {
		flags |= FlagLost
	}
	return s.appendRow(dst, dg, -1, query, st.group, st.proto, s.kind(kind), flags, st.conv)
}

// classifyTCP finds a stream's protocol from one of its turns.
func (s *Session) classifyTCP(st *tcpStream, dg *pcapng.Datagram) {
	for _, end := range [2]pcapng.Endpoint{dg.Dst, dg.Src} {
		for i, c := range s.codecs {
			d := codecs.DescriptionOf(c)
			switch {
			case codecs.Streamed(c) && hasPort(c, d, end.Port):
			case d.Master != nil && d.Master.Transport == codecs.TCP && d.Master.Port == int(end.Port):
				st.master = true
			default:
				continue
			}
			st.proto, st.server = uint8(i), end
			return
		}
	}
	if m, ok := codecs.DetectTurn(s.codecs, dg.Payload, dg.Turn); ok {
		st.proto, st.master, st.server = uint8(m.Index), m.Master, dg.Dst
		if m.FromServer {
			st.server = dg.Src
		}
	}
}

// hasPort says whether port is one of a stream protocol's usual ports.
func hasPort(c codecs.Codec, d codecs.Description, port uint16) bool {
	if c.DefaultPort() == int(port) {
		return true
	}
	for _, p := range d.Ports {
		if p == int(port) {
			return true
		}
	}
	return false
}
