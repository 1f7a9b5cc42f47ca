// Package pagestream is the side of the stream protocols (codecs.TCP) a
// client has when it does not hold the connection itself: a page, whose
// relay holds the conversation and sends the reply's bytes as they come.
// It makes codecs.NewConversation's stream queries, fed those bytes and
// cut into messages with the protocol's MessageLen, and
// codecs.DecodeStream's decoding of a reply given whole.
//
// A codec package with a stream protocol imports it for its side effect,
// so that a browser module of datagram protocols alone does not link it:
//
//	import _ "github.com/querylens/querylens/codecs/pagestream"
package pagestream

import (
	"github.com/querylens/querylens/codecs"
)

func init() {
	codecs.NewConversation = conversation
	codecs.DecodeStream = decode
}

// conversation is codecs.NewConversation.
func conversation(c codecs.Codec, opts map[string]string) (codecs.Query, bool, error) {
	if !codecs.Streamed(c) {
		q, err := c.NewQuery(opts)
		return q, false, err
	}
	d := codecs.DescriptionOf(c)
	if d.TargetInQuery {
		host, port := opts["host"], 0
		if host == "" {
			host = "localhost"
		}
		if p, ok := opts["port"]; ok {
			n, err := codecs.ParseUint(p, 16)
			if err != nil {
				return nil, true, codecs.OptionError(d.Name, "port", "not a port")
			}
			port = int(n)
		} else if len(d.Ports) > 0 {
			port = d.Ports[0]
		}
		var err error
		if opts, err = d.TargetOptions(host, port, opts); err != nil {
			return nil, true, err
		}
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		return nil, true, err
	}
	return &query{q: q, st: codecs.NewStream(q, d.MessageLen, codecs.ReplyCap{Bytes: 1 << 30, Datagrams: 1 << 30})}, true, nil
}

// query is a stream protocol's query fed with the stream's bytes.
type query struct {
	q  codecs.Query
	st *codecs.Stream
}

func (s *query) Start() [][]byte { return s.q.Start() }

// Feed takes the next bytes of the stream (any length) and says whether
// the reply is complete; a malformed framing ends it with an error.
func (s *query) Feed(b []byte) ([][]byte, bool, error) {
	s.st.Take(b)
	switch s.st.Stop() {
	case codecs.StreamDone:
		return nil, true, nil
	case codecs.StreamBadFraming:
		return nil, true, &codecs.Error{Protocol: "stream", Field: "message length", Offset: s.st.Bytes() - s.st.Pending(), Err: codecs.ErrBadValue}
	}
	return nil, false, s.st.Err()
}

func (s *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) { return s.q.Result(opt) }

// decode is codecs.DecodeStream.
func decode(c codecs.Codec, b []byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	if !codecs.Streamed(c) {
		return c.Decode([][]byte{b}, opt)
	}
	msgs, rest, bad := codecs.CutStream(b, codecs.DescriptionOf(c).MessageLen)
	m, err := c.Decode(msgs, opt)
	if err == nil && (bad || len(rest) > 0) {
		err = &codecs.Error{Protocol: c.Name(), Field: "stream", Offset: len(b) - len(rest), Err: codecs.ErrIncomplete}
	}
	return m, err
}
