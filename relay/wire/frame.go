package wire

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
)

// Subprotocol is the WebSocket subprotocol both sides must name. A relay
// that changes the frame layout changes the name.
const Subprotocol = "querylens.relay.v1"

// SubprotocolBatch is Subprotocol with one more frame, BATCH: several
// frames in one WebSocket message, both ways. A client that offers it
// (before Subprotocol, for relays that do not know it) gets the frames
// queued together in one message, which costs a browser one message event
// instead of one per frame, and may send its own frames together, which
// costs it one WebSocket send instead of one per frame. Everything else is
// as in Subprotocol.
const SubprotocolBatch = "querylens.relay.v1.batch"

// SubprotocolStream is SubprotocolBatch with the frames of stream
// exchanges: EXCHANGE, by which the client asks the relay to hold one
// conversation of a TCP protocol itself, and CHUNK, which carries the
// reply's bytes with their offsets, ended by END with the stream reasons
// (EndDone and after). HELLO carries VersionStream on it. A client offers
// it first, then SubprotocolBatch and Subprotocol for older relays.
const SubprotocolStream = "querylens.relay.v2"

// Version is the value HELLO carries on Subprotocol and SubprotocolBatch.
const Version = 1

// VersionStream is the value HELLO carries on SubprotocolStream.
const VersionStream = 2

// DefaultStreamsPerClient is the relay's default cap of stream exchanges
// (TCP connections) in progress per client address. HELLO does not carry
// it: clients keep within it and learn a lower one from the relay's
// refusals (RuleTCPPerClient).
const DefaultStreamsPerClient = 8

// FrameType is the first byte of every frame. The payload layout of each
// type follows its constant; integers are big-endian.
type FrameType uint8

const (
	// Client to relay.
	FrameQuery  FrameType = 0x01 // u32 id | u8 n | protocol[n] | u8 m | target[m] | datagram (rest)
	FramePing   FrameType = 0x02 // u32 nonce
	FrameCancel FrameType = 0x03 // u32 id
	// FrameRelease is CANCEL without the END: the id is free once the
	// relay has read it, and nothing more comes for it.
	FrameRelease FrameType = 0x04 // u32 id
	// FrameExchange asks one conversation of a stream (TCP) protocol,
	// which the relay holds itself: the codec builds the query from the
	// options, (u8 k | key[k] | u8 v | value[v]) pairs to the frame's end,
	// keys in byte order, each once. SubprotocolStream only.
	FrameExchange FrameType = 0x05 // u32 id | u8 n | protocol[n] | u8 m | target[m] | options (rest)

	// Relay to client.
	FrameHello FrameType = 0x80 // u8 version | u16 max datagram | u32 window ms | u16 max in flight | u32 cache TTL ms
	FrameReply FrameType = 0x81 // u32 id | u32 rtt µs | u8 flags | datagram (rest)
	FrameEnd   FrameType = 0x82 // u32 id | u8 reason | u16 replies sent
	FrameError FrameType = 0x83 // u32 id (0: unreadable) | u8 code | u16 n | message[n] (UTF-8)
	FramePong  FrameType = 0x84 // u32 nonce
	// FrameBatch carries frames of the types above but HELLO, in order,
	// each with its length: (u16 n | frame[n]) to the message's end, at
	// least one. Only on SubprotocolBatch: to the client, and from it
	// with client frames.
	FrameBatch FrameType = 0x85
	// FrameChunk carries bytes of an EXCHANGE's reply stream, from offset
	// on; the chunks of one id come in order, without gaps. Its flags are
	// REPLY's. SubprotocolStream only.
	FrameChunk FrameType = 0x86 // u32 id | u32 offset | u8 flags | data (rest)
)

var frameNames = map[FrameType]string{
	FrameQuery: "query", FramePing: "ping", FrameCancel: "cancel", FrameRelease: "release",
	FrameHello: "hello", FrameReply: "reply", FrameEnd: "end", FrameError: "error", FramePong: "pong",
	FrameBatch: "batch", FrameExchange: "exchange", FrameChunk: "chunk",
}

// Known reports whether t is one of the frame types above.
func (t FrameType) Known() bool {
	_, ok := frameNames[t]
	return ok
}

func (t FrameType) String() string {
	if s, ok := frameNames[t]; ok {
		return s
	}
	return "0x" + strconv.FormatUint(uint64(t), 16)
}

// ReplyFlags is REPLY's flags byte.
type ReplyFlags uint8

const (
	FlagCached    ReplyFlags = 1 << 0 // served from the relay's cache
	FlagCoalesced ReplyFlags = 1 << 1 // one upstream query answered several askers
)

// EndReason is END's reason byte.
type EndReason uint8

const (
	EndWindow    EndReason = 0 // the reply window closed
	EndByteCap   EndReason = 1 // the per-query reply cap (bytes or datagrams) was reached
	EndCancelled EndReason = 2 // the client sent CANCEL (END is then sent even with 0 replies)

	// The reasons an EXCHANGE ends with (SubprotocolStream); END then
	// comes even without a CHUNK, and "replies" counts the CHUNKs.
	EndDone       EndReason = 3 // the codec said the reply is complete
	EndStreamCap  EndReason = 4 // the reply reached its cap (bytes or messages) first
	EndTimeout    EndReason = 5 // the deadline passed (connecting, or before the reply was complete)
	EndRefused    EndReason = 6 // the server refused the connection
	EndClosed     EndReason = 7 // the server closed (or reset) before the reply was complete
	EndSlowClient EndReason = 8 // the client did not take the chunks fast enough: the rest was not sent
	EndMalformed  EndReason = 9 // the stream's framing was malformed (the codec's MessageLen)
)

var endNames = [...]string{"window", "byte-cap", "cancelled", "done", "cap", "timeout", "refused", "closed", "slow-client", "malformed"}

// String is the reason's name, as docs/relay-protocol.md and the metrics
// spell it.
func (r EndReason) String() string {
	if int(r) < len(endNames) {
		return endNames[r]
	}
	return "end-" + strconv.Itoa(int(r))
}

// Hello is HELLO's payload: the limits a client must respect.
type Hello struct {
	Version       uint8
	MaxDatagram   uint16 // largest query or reply datagram, in bytes
	ReplyWindowMS uint32 // how long the relay listens for replies to one QUERY
	MaxInFlight   uint16 // QUERY ids that may be open at once on one connection
	CacheTTLMS    uint32 // how long a reply stays shared (0: no cache)
}

// Frame is one message in either direction. Which fields are used depends
// on Type (see the constants); Datagram aliases the buffer it was parsed from.
type Frame struct {
	Type     FrameType
	ID       uint32 // query id; the nonce for PING and PONG
	Protocol string // QUERY
	Target   string // QUERY
	Datagram []byte // QUERY, REPLY
	RTT      uint32 // REPLY, microseconds
	Flags    ReplyFlags
	Reason   EndReason // END
	Replies  uint16    // END
	Code     Code      // ERROR
	Message  string    // ERROR
	Hello    Hello     // HELLO
	Offset   uint32    // CHUNK
	// Options are EXCHANGE's query options.
	Options map[string]string
}

// Sizes of the fixed parts, for buffer planning.
const (
	// QueryHeaderMax is the longest QUERY without its datagram: type, id
	// and both length-prefixed strings at their longest. A relay's read
	// limit is this plus its largest datagram.
	QueryHeaderMax = 1 + 4 + 1 + 255 + 1 + 255
	// ReplyHeader is REPLY without its datagram.
	ReplyHeader = 1 + 4 + 4 + 1
	helloSize   = 1 + 1 + 2 + 4 + 2 + 4
	endSize     = 1 + 4 + 1 + 2
	idFrameSize = 1 + 4
	maxMessage  = 1<<16 - 1
)

// BadFrameError says why a frame did not parse or encode.
type BadFrameError struct {
	Type   FrameType
	Field  string
	Offset int
	Err    error
}

var (
	ErrShortFrame    = errors.New("short frame")
	ErrTrailingBytes = errors.New("trailing bytes")
	ErrUnknownFrame  = errors.New("unknown frame type")
	ErrFieldTooLong  = errors.New("field too long")
	ErrBadOptions    = errors.New("option keys empty, repeated or out of order")
)

func (e *BadFrameError) Error() string { return "relay: " + e.Detail() }

// Detail is the error without its "relay: " prefix, as an ERROR message
// names it after the rule: "query.target at offset 7: short frame".
func (e *BadFrameError) Detail() string {
	return e.Type.String() + "." + e.Field + " at offset " + strconv.Itoa(e.Offset) + ": " + e.Err.Error()
}

func (e *BadFrameError) Unwrap() error { return e.Err }

// frameReader consumes a frame; its first error sticks.
type frameReader struct {
	b   []byte
	off int
	typ FrameType
	err *BadFrameError
}

func (r *frameReader) fail(field string, err error) {
	if r.err == nil {
		r.err = &BadFrameError{Type: r.typ, Field: field, Offset: r.off, Err: err}
	}
}

func (r *frameReader) take(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b)-r.off {
		r.fail(field, ErrShortFrame)
		return nil
	}
	b := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

func (r *frameReader) u8(field string) uint8 {
	if b := r.take(field, 1); b != nil {
		return b[0]
	}
	return 0
}

func (r *frameReader) u16(field string) uint16 {
	if b := r.take(field, 2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *frameReader) u32(field string) uint32 {
	if b := r.take(field, 4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (r *frameReader) rest() []byte {
	if r.err != nil {
		return nil
	}
	b := r.b[r.off:len(r.b):len(r.b)]
	r.off = len(r.b)
	return b
}

// options reads EXCHANGE's option pairs to the frame's end: keys not
// empty, in strictly increasing byte order (so each once, and one
// encoding per set of options).
func (r *frameReader) options() map[string]string {
	var m map[string]string
	last := ""
	for r.err == nil && r.off < len(r.b) {
		at := r.off
		k := string(r.take("options.key", int(r.u8("options.key_len"))))
		v := string(r.take("options.value", int(r.u8("options.value_len"))))
		if r.err != nil {
			break
		}
		if k == "" || m != nil && k <= last {
			r.off = at
			r.fail("options.key", ErrBadOptions)
			break
		}
		if m == nil {
			m = make(map[string]string)
		}
		m[k], last = v, k
	}
	return m
}

func (r *frameReader) end() {
	if r.err == nil && r.off != len(r.b) {
		r.fail("end", ErrTrailingBytes)
	}
}

// ParseFrame decodes one frame. It never panics. On error the returned
// Frame holds what was read before the error; in particular ID is non-zero
// only when the id field could be read. Datagram aliases b.
func ParseFrame(b []byte) (Frame, error) {
	var f Frame
	if len(b) == 0 {
		return f, &BadFrameError{Field: "type", Err: ErrShortFrame}
	}
	f.Type = FrameType(b[0])
	r := frameReader{b: b, off: 1, typ: f.Type}
	switch f.Type {
	case FrameQuery:
		f.ID = r.u32("id")
		f.Protocol = string(r.take("protocol", int(r.u8("protocol_len"))))
		f.Target = string(r.take("target", int(r.u8("target_len"))))
		f.Datagram = r.rest()
	case FramePing, FrameCancel, FrameRelease, FramePong:
		f.ID = r.u32("id")
	case FrameExchange:
		f.ID = r.u32("id")
		f.Protocol = string(r.take("protocol", int(r.u8("protocol_len"))))
		f.Target = string(r.take("target", int(r.u8("target_len"))))
		f.Options = r.options()
	case FrameChunk:
		f.ID = r.u32("id")
		f.Offset = r.u32("offset")
		f.Flags = ReplyFlags(r.u8("flags"))
		f.Datagram = r.rest()
	case FrameHello:
		f.Hello.Version = r.u8("version")
		f.Hello.MaxDatagram = r.u16("max_datagram")
		f.Hello.ReplyWindowMS = r.u32("window_ms")
		f.Hello.MaxInFlight = r.u16("max_in_flight")
		f.Hello.CacheTTLMS = r.u32("cache_ttl_ms")
	case FrameReply:
		f.ID = r.u32("id")
		f.RTT = r.u32("rtt_us")
		f.Flags = ReplyFlags(r.u8("flags"))
		f.Datagram = r.rest()
	case FrameEnd:
		f.ID = r.u32("id")
		f.Reason = EndReason(r.u8("reason"))
		f.Replies = r.u16("replies")
	case FrameError:
		f.ID = r.u32("id")
		f.Code = Code(r.u8("code"))
		f.Message = string(r.take("message", int(r.u16("message_len"))))
	default:
		return f, &BadFrameError{Type: f.Type, Field: "type", Err: ErrUnknownFrame}
	}
	r.end()
	if r.err != nil {
		return f, r.err
	}
	return f, nil
}

// AppendFrame appends f's wire form to dst. It fails only when a
// length-prefixed field does not fit its prefix or the type is unknown.
func AppendFrame(dst []byte, f Frame) ([]byte, error) {
	switch f.Type {
	case FrameQuery:
		if len(f.Protocol) > 255 {
			return dst, &BadFrameError{Type: f.Type, Field: "protocol", Offset: 6, Err: ErrFieldTooLong}
		}
		if len(f.Target) > 255 {
			return dst, &BadFrameError{Type: f.Type, Field: "target", Offset: 7 + len(f.Protocol), Err: ErrFieldTooLong}
		}
		return AppendQuery(dst, f.ID, f.Protocol, f.Target, f.Datagram), nil
	case FrameExchange:
		if len(f.Protocol) > 255 {
			return dst, &BadFrameError{Type: f.Type, Field: "protocol", Offset: 6, Err: ErrFieldTooLong}
		}
		if len(f.Target) > 255 {
			return dst, &BadFrameError{Type: f.Type, Field: "target", Offset: 7 + len(f.Protocol), Err: ErrFieldTooLong}
		}
		for k, v := range f.Options {
			if len(k) > 255 || len(v) > 255 || k == "" {
				return dst, &BadFrameError{Type: f.Type, Field: "options." + k, Err: ErrFieldTooLong}
			}
		}
		return AppendExchange(dst, f.ID, f.Protocol, f.Target, f.Options), nil
	case FrameChunk:
		return AppendChunk(dst, f.ID, f.Offset, f.Flags, f.Datagram), nil
	case FramePing, FrameCancel, FrameRelease, FramePong:
		return AppendIDFrame(dst, f.Type, f.ID), nil
	case FrameHello:
		return AppendHello(dst, f.Hello), nil
	case FrameReply:
		return AppendReply(dst, f.ID, f.RTT, f.Flags, f.Datagram), nil
	case FrameEnd:
		return AppendEnd(dst, f.ID, f.Reason, f.Replies), nil
	case FrameError:
		if len(f.Message) > maxMessage {
			return dst, &BadFrameError{Type: f.Type, Field: "message", Offset: 8, Err: ErrFieldTooLong}
		}
		return AppendError(dst, f.ID, f.Code, f.Message), nil
	}
	return dst, &BadFrameError{Type: f.Type, Field: "type", Err: ErrUnknownFrame}
}

// The Append helpers below encode one frame type each, for senders that
// build frames on their hot path without a Frame. Unlike AppendFrame they
// do not check the length limits: protocol and target must be at most 255
// bytes (AppendError cuts a longer message).

// AppendQuery appends a QUERY.

func AppendQuery(dst []byte, id uint32, protocol, target string, datagram []byte) []byte {
	dst = append(dst, byte(FrameQuery))
	dst = binary.BigEndian.AppendUint32(dst, id)
	dst = append(dst, byte(len(protocol)))
	dst = append(dst, protocol...)
	dst = append(dst, byte(len(target)))
	dst = append(dst, target...)
	return append(dst, datagram...)
}

// AppendExchange appends an EXCHANGE, its options in byte order of their
// keys (none empty, none longer than 255 bytes, nor their values).
func AppendExchange(dst []byte, id uint32, protocol, target string, opts map[string]string) []byte {
	dst = append(dst, byte(FrameExchange))
	dst = binary.BigEndian.AppendUint32(dst, id)
	dst = append(dst, byte(len(protocol)))
	dst = append(dst, protocol...)
	dst = append(dst, byte(len(target)))
	dst = append(dst, target...)
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		dst = append(dst, byte(len(k)))
		dst = append(dst, k...)
		dst = append(dst, byte(len(opts[k])))
		dst = append(dst, opts[k]...)
	}
	return dst
}

// AppendChunk appends a CHUNK.
func AppendChunk(dst []byte, id, offset uint32, flags ReplyFlags, data []byte) []byte {
	dst = AppendIDFrame(dst, FrameChunk, id)
	dst = binary.BigEndian.AppendUint32(dst, offset)
	dst = append(dst, byte(flags))
	return append(dst, data...)
}

// ChunkHeader is CHUNK without its data.
const ChunkHeader = 1 + 4 + 4 + 1

// AppendIDFrame appends a frame whose payload is only its id or nonce:
// PING, CANCEL, RELEASE or PONG.
func AppendIDFrame(dst []byte, t FrameType, id uint32) []byte {
	dst = append(dst, byte(t))
	return binary.BigEndian.AppendUint32(dst, id)
}

// AppendHello appends a HELLO.
func AppendHello(dst []byte, h Hello) []byte {
	dst = append(dst, byte(FrameHello), h.Version)
	dst = binary.BigEndian.AppendUint16(dst, h.MaxDatagram)
	dst = binary.BigEndian.AppendUint32(dst, h.ReplyWindowMS)
	dst = binary.BigEndian.AppendUint16(dst, h.MaxInFlight)
	return binary.BigEndian.AppendUint32(dst, h.CacheTTLMS)
}

// AppendReply appends a REPLY.
func AppendReply(dst []byte, id, rtt uint32, flags ReplyFlags, datagram []byte) []byte {
	dst = AppendIDFrame(dst, FrameReply, id)
	dst = binary.BigEndian.AppendUint32(dst, rtt)
	dst = append(dst, byte(flags))
	return append(dst, datagram...)
}

// AppendEnd appends an END.
func AppendEnd(dst []byte, id uint32, reason EndReason, replies uint16) []byte {
	dst = AppendIDFrame(dst, FrameEnd, id)
	dst = append(dst, byte(reason))
	return binary.BigEndian.AppendUint16(dst, replies)
}

// AppendError appends an ERROR, its message cut to 65535 bytes.
func AppendError(dst []byte, id uint32, code Code, msg string) []byte {
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	dst = AppendIDFrame(dst, FrameError, id)
	dst = append(dst, byte(code))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(msg)))
	return append(dst, msg...)
}

// MaxBatch bounds the bytes of one BATCH message; a frame that would take
// it past goes in the next.
const MaxBatch = 64 << 10

// AppendBatch appends to dst the BATCH message of frames (none empty, none
// of 64 KiB or more: a REPLY is at most its header and MaxDatagram).
func AppendBatch(dst []byte, frames [][]byte) []byte {
	dst = append(dst, byte(FrameBatch))
	for _, fr := range frames {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(fr)))
		dst = append(dst, fr...)
	}
	return dst
}

// SplitBatch returns the frames of BATCH message b, aliasing b. It never
// panics; an empty batch, an empty frame, a length past the message's end
// or a batch inside a batch is an error naming the byte at fault.
func SplitBatch(b []byte) ([][]byte, error) {
	bad := func(field string, off int, err error) ([][]byte, error) {
		return nil, &BadFrameError{Type: FrameBatch, Field: field, Offset: off, Err: err}
	}
	if len(b) == 0 || FrameType(b[0]) != FrameBatch {
		return bad("type", 0, ErrUnknownFrame)
	}
	if len(b) == 1 {
		return bad("frame_len", 1, ErrShortFrame)
	}
	var frames [][]byte
	for off := 1; off < len(b); {
		if len(b)-off < 2 {
			return bad("frame_len", off, ErrShortFrame)
		}
		n := int(binary.BigEndian.Uint16(b[off:]))
		switch {
		case n == 0:
			return bad("frame_len", off, ErrShortFrame)
		case n > len(b)-off-2:
			return bad("frame", off+2, ErrShortFrame)
		case FrameType(b[off+2]) == FrameBatch:
			return bad("frame", off+2, ErrUnknownFrame)
		}
		frames = append(frames, b[off+2:off+2+n:off+2+n])
		off += 2 + n
	}
	return frames, nil
}
