package codecs

import "strconv"

// A protocol that travels over TCP (Description.Transport TCP) speaks a
// byte stream, while a Query takes messages. Stream is the one driver
// that turns the one into the other, for every side that holds the
// connection (the relay, the command line): it cuts the bytes received
// into messages with the protocol's MessageLen, feeds them to the Query,
// collects what the Query wants written next, and stops when the Query
// says the reply is complete, when the reply reaches its cap, or when the
// framing is malformed. It does no I/O: its caller reads, writes and
// keeps the time.
//
//	s := codecs.NewStream(q, d.MessageLen, d.ReplyCap)
//	write(s.Start())
//	for s.Stop() == codecs.StreamOn {
//		b := read()
//		n, send := s.Take(b) // b[:n] is what counts as the reply
//		write(send)
//	}

// StreamStop says why a Stream stopped.
type StreamStop uint8

const (
	StreamOn         StreamStop = iota // not stopped: more bytes are wanted
	StreamDone                         // the Query said the reply is complete
	StreamCap                          // the reply reached its cap before it was complete
	StreamBadFraming                   // MessageLen found the stream malformed
)

var streamStops = [...]string{"on", "done", "cap", "bad-framing"}

// String is the stop's name: "on", "done", "cap", "bad-framing".
func (s StreamStop) String() string {
	if int(s) < len(streamStops) {
		return streamStops[s]
	}
	return "stop-" + strconv.Itoa(int(s))
}

// DefaultStreamCap is a stream reply's cap where the protocol's
// ReplyCap leaves a field zero: 128 KiB in at most 1024 messages.
var DefaultStreamCap = ReplyCap{Bytes: 128 << 10, Datagrams: 1024}

// Stream drives a Query over a byte stream (see above). Its zero value is
// not usable; NewStream makes one. It is not safe for concurrent use.
type Stream struct {
	q        Query
	cut      func([]byte) int
	cap      ReplyCap
	pending  []byte // bytes taken and not yet a whole message
	bytes    int    // bytes taken
	messages int    // messages fed
	stop     StreamStop
	err      error // the last error Feed returned
}

// NewStream starts driving q over a stream cut by messageLen (a
// Description's MessageLen: the length of the first whole message of b,
// 0 while more bytes are needed, negative when b cannot start a message;
// nil: each received piece is a message), within cap (zero fields:
// DefaultStreamCap's).
func NewStream(q Query, messageLen func(b []byte) int, cap ReplyCap) *Stream {
	if cap.Bytes <= 0 {
		cap.Bytes = DefaultStreamCap.Bytes
	}
	if cap.Datagrams <= 0 {
		cap.Datagrams = DefaultStreamCap.Datagrams
	}
	return &Stream{q: q, cut: messageLen, cap: cap}
}

// Start returns the bytes to write first: q.Start()'s messages one after
// the other. It is empty for a protocol whose server speaks first.
func (s *Stream) Start() []byte { return concat(s.q.Start()) }

// Take takes bytes received from the server. It returns how many of
// them count as the reply (fewer than len(b) when the cap cuts b; none
// once stopped) and the bytes to write next, if the Query asks for any.
// A stop is read with Stop after each call.
func (s *Stream) Take(b []byte) (n int, send []byte) {
	if s.stop != StreamOn {
		return 0, nil
	}
	n = len(b)
	capped := false
	if left := s.cap.Bytes - s.bytes; n > left {
		n, capped = left, true
	}
	s.bytes += n
	if s.cut == nil {
		if n > 0 {
			send = s.feed(append([]byte(nil), b[:n]...), send)
		}
	} else {
		s.pending = append(s.pending, b[:n]...)
		for s.stop == StreamOn && len(s.pending) > 0 {
			m := s.cut(s.pending)
			if m == 0 {
				break
			}
			if m < 0 || m > len(s.pending) {
				s.stop = StreamBadFraming
				break
			}
			msg := s.pending[:m:m]
			s.pending = s.pending[m:]
			send = s.feed(msg, send)
		}
	}
	if s.stop == StreamOn && capped {
		s.stop = StreamCap
	}
	return n, send
}

// feed hands one message to the Query unless the message cap is reached.
func (s *Stream) feed(msg, send []byte) []byte {
	if s.messages >= s.cap.Datagrams {
		s.stop = StreamCap
		return send
	}
	s.messages++
	more, done, err := s.q.Feed(msg)
	if err != nil {
		s.err = err
	}
	if done {
		s.stop = StreamDone
		return send
	}
	for _, m := range more {
		send = append(send, m...)
	}
	return send
}

// Stop says whether the stream stopped, and why.
func (s *Stream) Stop() StreamStop { return s.stop }

// Bytes is how many received bytes the stream took (at most the cap).
func (s *Stream) Bytes() int { return s.bytes }

// Messages is how many messages the stream fed to the Query.
func (s *Stream) Messages() int { return s.messages }

// Pending is how many bytes taken are not yet a whole message.
func (s *Stream) Pending() int { return len(s.pending) }

// Err is the last error the Query's Feed returned (a message it did not
// take), or nil.
func (s *Stream) Err() error { return s.err }

// CutStream cuts a received stream b into its whole messages with
// messageLen (as NewStream does), aliasing b, and returns them with the
// bytes left over at the end that are not a whole message. A malformed
// framing stops the cut there: rest then starts at the bad message.
// For a page or a capture that has the stream whole and decodes it with
// Codec.Decode.
func CutStream(b []byte, messageLen func([]byte) int) (msgs [][]byte, rest []byte, bad bool) {
	if messageLen == nil {
		if len(b) == 0 {
			return nil, nil, false
		}
		return [][]byte{b}, nil, false
	}
	for len(b) > 0 {
		m := messageLen(b)
		if m == 0 {
			break
		}
		if m < 0 || m > len(b) {
			return msgs, b, true
		}
		msgs = append(msgs, b[:m:m])
		b = b[m:]
	}
	return msgs, b, false
}

func concat(ms [][]byte) []byte {
	var out []byte
	for _, m := range ms {
		out = append(out, m...)
	}
	return out
}

// TargetOptions returns the NewQuery options of a conversation with the
// server host:port (as the user gave them: a name is not resolved): for a
// protocol whose query carries its target (TargetInQuery), opts with
// "host" and "port" set to them, after refusing options that name another
// host or port, or a host with a CR or LF; for any other protocol, opts as
// they are. opts is not modified.
func (d Description) TargetOptions(host string, port int, opts map[string]string) (map[string]string, error) {
	if !d.TargetInQuery {
		return opts, nil
	}
	for i := 0; i < len(host); i++ {
		if host[i] == '\r' || host[i] == '\n' {
			return nil, OptionError(d.Name, "host", "a line break in the host")
		}
	}
	out := make(map[string]string, len(opts)+2)
	for k, v := range opts {
		out[k] = v
	}
	if h, ok := opts["host"]; ok && !EqualFoldASCII(h, host) {
		return nil, OptionError(d.Name, "host", "not the target's host "+host)
	} else if ok {
		host = h // the user's spelling
	}
	if p, ok := opts["port"]; ok {
		if n, err := ParseUint(p, 16); err != nil || int(n) != port {
			return nil, OptionError(d.Name, "port", "not the target's port "+strconv.Itoa(port))
		}
	}
	out["host"], out["port"] = host, strconv.Itoa(port)
	return out, nil
}

// NewConversation makes the query of a client that does not hold the
// connection itself (a page, whose relay holds a stream protocol's
// conversation): for a datagram protocol, c.NewQuery(opts); for a stream
// one (stream true), a query whose Feed takes the stream's bytes as they
// come, cut with the protocol's MessageLen, and asks nothing to be written
// (the relay writes what its own query builds). A stream query that
// carries its target (TargetInQuery) and is given none in opts is built
// naming "localhost" on the default port: the relay's query names the
// real one, and decoding the reply does not depend on it.
//
// The stream side is package codecs/pagestream, which sets this variable
// from init and which every family with a stream protocol imports: a
// browser module of datagram protocols alone does not link it, and its
// NewConversation is c.NewQuery's.
var NewConversation = func(c Codec, opts map[string]string) (q Query, stream bool, err error) {
	q, err = c.NewQuery(opts)
	return q, false, err
}

// DecodeStream decodes a stream protocol's reply given whole, as the
// bytes came (a relay's CHUNKs one after the other): cut into messages
// with the protocol's MessageLen, then decoded by c. Bytes left over at
// the end that are not a whole message make the error ErrIncomplete (with
// the message decoded from the rest). A datagram protocol's b is one
// datagram. Set by codecs/pagestream, as NewConversation; without it, b
// is decoded as one message.
var DecodeStream = func(c Codec, b []byte, opt DecodeOptions) (*Message, error) {
	return c.Decode([][]byte{b}, opt)
}

// TurnMatch is the protocol DetectTurn found for one turn of a TCP stream.
type TurnMatch struct {
	Index  int   // in the protocols DetectTurn was given
	Codec  Codec //
	Master bool  // the protocol's master conversation (Description.Master), not its query
	// FromServer says the turn came from the server: a reply, or a
	// master's greeting.
	FromServer bool
}

// DetectTurn finds, by content, which of protocols one turn of a TCP
// stream speaks (b: the bytes one side sent before the other answered;
// turn: its number in the stream, from 1): a stream protocol whose Detect
// claims the turn or its first message (MessageLen) Likely or more, or,
// on a stream's first turn, a protocol whose TCP master speaks first and
// whose master conversation takes the turn's first message as its
// greeting. ok is false when none does. The capture readers (the command
// line's and the page's) find a stream's protocol by its ports first.
func DetectTurn(protocols []Codec, b []byte, turn int) (m TurnMatch, ok bool) {
	for i, c := range protocols {
		d := DescriptionOf(c)
		if d.Transport == TCP {
			k, conf := c.Detect(b)
			if conf < Likely {
				if msgs, _, _ := CutStream(b, d.MessageLen); len(msgs) > 0 {
					k, conf = c.Detect(msgs[0])
				}
			}
			if conf >= Likely {
				return TurnMatch{Index: i, Codec: c, FromServer: k != KindQuery && k != KindMasterQuery}, true
			}
		}
		if ms := d.Master; ms != nil && ms.Transport == TCP && ms.ServerFirst && turn == 1 {
			msgs, _, bad := CutStream(b, ms.MessageLen)
			if bad || len(msgs) == 0 {
				continue
			}
			if q, err := c.NewQuery(ms.Options); err == nil {
				if _, _, err := q.Feed(msgs[0]); err == nil {
					return TurnMatch{Index: i, Codec: c, Master: true, FromServer: true}, true
				}
			}
		}
	}
	return TurnMatch{}, false
}
