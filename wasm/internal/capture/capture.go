// Package capture turns a capture file, fed in chunks, into the compact
// rows of the inspector's datagram list (web/static/capture-worker.js runs
// it in a worker through wasm/capture.go). It reads the file with
// pcapng.Decoder and adds what a list of game-server traffic needs: which
// protocol each datagram speaks (by its ports, then by its content), what
// kind of message it is, which conversation it is part of, the query a
// reply answers, and the group of datagrams that answer one query. Pure Go,
// so it is tested and fuzzed natively too.
//
// The rows keep no payload: each says where its payload lies in the file,
// so the page re-reads those bytes (Blob.slice) when the datagram is
// selected and the list of a 100 MB capture stays a few MB. A payload that
// is not one run of the file's bytes (an IP datagram put back together
// from fragments, a TCP turn) is kept here instead, up to MaxStored bytes
// in all.
//
// A TCP turn (the bytes one side of a connection sent before the other
// answered; see tcp.go) is a row too, flagged FlagTCP: its frame and time
// are its first segment's, conv is its stream's own conversation, and the
// rows of the turns still open when the file ends come from Next after
// End.
//
// Each row is RowSize bytes, little-endian:
//
//	0  f64 micros    capture time, µs since the Unix epoch
//	8  f64 offset    file offset of the UDP payload; -1: ask Payload(row) (always for TCP)
//	16 u32 frame     1-based frame number (tshark's)
//	20 u32 src       endpoint id (Session.Endpoints: "a.b.c.d:port", "[v6]:port")
//	24 u32 dst       endpoint id
//	28 u32 length    UDP payload bytes (a TCP turn's bytes)
//	32 i32 query     row of the query this datagram answers, -1 for none
//	                 (a TCP reply turn: its request turn's row)
//	36 u32 group     datagrams with the same group answer one query (or are one query)
//	40 u8  protocol  index in codecs.Protocols(), 255 unknown
//	41 u8  kind      kind id (Session.Kinds), 255 unknown
//	42 u8  flags     FlagStored, FlagLost, FlagTCP, FlagCut, FlagGap
//	43 u8  (zero)
//	44 u32 conv      conversation id (1, 2, …): the pair of endpoints, either
//	                 way; for TCP, the stream
package capture

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/pcapng"
)

// RowSize is the bytes of one row.
const RowSize = 48

// Row flags.
const (
	FlagStored = 1 << 0 // the payload is kept here (Payload), not at a file offset
	FlagLost   = 1 << 1 // the payload is neither: MaxStored was reached
	FlagTCP    = 1 << 2 // a TCP turn, not a UDP datagram
	FlagCut    = 1 << 3 // a TCP turn longer than the reader keeps (512 KiB): the rest was dropped
	FlagGap    = 1 << 4 // a TCP turn next to bytes never captured (it stops before them or starts after them)
)

// Unknown is the protocol or kind byte of a datagram no codec claims.
const Unknown = 255

// Bounds that keep a hostile or huge file from taking unbounded memory.
const (
	// MaxStored bounds the payloads kept for rows whose payload is not a
	// run of the file's bytes.
	MaxStored = 32 << 20
	// maxConvs bounds the conversations followed for pairing; past it the
	// table starts over (pairs across the restart are lost, rows are not).
	maxConvs = 1 << 20
	// maxEndpoints bounds the endpoint table; past it new endpoints share
	// the id of the last one and are reported as "…" (see Endpoints).
	maxEndpoints = 1 << 22
	// search bounds how far past a block's start its UDP header may be:
	// the block or record header, link headers with VLAN tags and an IPv6
	// header with extension headers all fit.
	search = 1024
	// keep is what Next keeps of the chunks when it needs more bytes: the
	// largest block holding a UDP datagram that is not a fragment fits.
	keep = search + 8 + 0xffff
)

type chunk struct {
	base int64
	b    []byte
}

type conv struct {
	proto     uint8  // the protocol the conversation was seen to speak, or Unknown
	lastQuery int32  // row of the last query, -1 for none
	querier   uint32 // endpoint that sent it
	group     uint32 // group of the last query and its answers
	lastFrom  uint32 // sender of the last datagram, for groups without a query
	id        uint32 // the conversation's id in the rows
}

// Session reads one capture file.
type Session struct {
	dec *pcapng.Decoder
	// The chunks fed from the one holding the start of the last block
	// read on, with their file offsets: the next datagram's block starts in
	// one of them, so its payload's offset is found there. Blocks come in
	// file order, so a chunk that ends before a block's start is dropped.
	chunks []chunk
	fed    int64

	endpoints    map[pcapng.Endpoint]uint32
	newEndpoints []string
	kinds        map[codecs.Kind]uint8
	newKinds     []string
	convs        map[[2]uint32]*conv
	convIDs      uint32 // conversations begun, TCP streams included
	streams      map[int]*tcpStream

	codecs []codecs.Codec
	rows   int
	groups uint32

	stored      map[int][]byte
	storedBytes int
	scratch     []byte
}

// New starts a session.
func New() *Session {
	return &Session{
		dec:       pcapng.NewDecoder(),
		endpoints: map[pcapng.Endpoint]uint32{},
		kinds:     map[codecs.Kind]uint8{},
		convs:     map[[2]uint32]*conv{},
		codecs:    codecs.Protocols(),
		stored:    map[int][]byte{},
	}
}

// Feed gives the session the next bytes of the file; it keeps b (the
// caller must not change it) until the rows read past it.
func (s *Session) Feed(b []byte) {
	if len(b) == 0 {
		return
	}
	s.chunks = append(s.chunks, chunk{s.fed, b})
	s.fed += int64(len(b))
	s.dec.Feed(b)
}

// ErrMore is Next's error when the bytes fed so far hold no further row.
var ErrMore = pcapng.ErrMore

// Next appends up to max rows to dst. It returns the rows and ErrMore
// when it stopped for want of bytes, nil when it stopped at max, or the
// decoder's *pcapng.FormatError (final).
func (s *Session) Next(dst []byte, max int) ([]byte, error) {
	for n := 0; n < max; n++ {
		dg, err := s.dec.Next()
		if err == ErrMore {
			// Every whole block fed is read: what the decoder keeps is
			// the start of one block, which holds a UDP datagram's
			// bytes in its first keep bytes if it holds one.
			s.window(s.fed-keep, s.fed-keep)
		}
		if err != nil {
			return dst, err
		}
		if dg.TCP {
			dst = s.turnRow(dst, dg)
			continue
		}
		dst = s.row(dst, dg)
	}
	return dst, nil
}

// End says the file is over: nil, or the *pcapng.FormatError of a cut
// last block. The TCP turns still open are over too: Next returns their
// rows after End (then ErrMore).
func (s *Session) End() error { return s.dec.End() }

// Stats are the decoder's counts.
func (s *Session) Stats() pcapng.Stats { return s.dec.Stats() }

// Rows is the number of rows made so far.
func (s *Session) Rows() int { return s.rows }

// Endpoints returns the endpoints first seen since the last call, in id
// order (the first call's first is id 0).
func (s *Session) Endpoints() []string {
	e := s.newEndpoints
	s.newEndpoints = nil
	return e
}

// Kinds returns the kinds first seen since the last call, in id order.
func (s *Session) Kinds() []string {
	k := s.newKinds
	s.newKinds = nil
	return k
}

// Payload returns the payload kept for row (FlagStored).
func (s *Session) Payload(row int) ([]byte, bool) {
	b, ok := s.stored[row]
	return b, ok
}

func (s *Session) endpoint(e pcapng.Endpoint) uint32 {
	if id, ok := s.endpoints[e]; ok {
		return id
	}
	if len(s.endpoints) >= maxEndpoints {
		return maxEndpoints - 1
	}
	id := uint32(len(s.endpoints))
	s.endpoints[e] = id
	name := e.String()
	if id == maxEndpoints-1 {
		name = "…"
	}
	s.newEndpoints = append(s.newEndpoints, name)
	return id
}

func (s *Session) kind(k codecs.Kind) uint8 {
	if k == "" {
		return Unknown
	}
	if id, ok := s.kinds[k]; ok {
		return id
	}
	if len(s.kinds) >= Unknown {
		return Unknown
	}
	id := uint8(len(s.kinds))
	s.kinds[k] = id
	s.newKinds = append(s.newKinds, string(k))
	return id
}

// isQuery reports whether kind is what a client sends.
func isQuery(k codecs.Kind) bool { return k == codecs.KindQuery || k == codecs.KindMasterQuery }

// guess names the protocol and kind of b: the conversation's protocol if
// it claims b; else the most confident codec whose usual port is one of
// the datagram's; else the most confident of all; else the port's codec
// with the kind unknown.
func (s *Session) guess(c *conv, sp, dp uint16, b []byte) (uint8, codecs.Kind) {
	if c.proto != Unknown {
		if k, conf := s.codecs[c.proto].Detect(b); conf > codecs.NotMine {
			return c.proto, k
		}
	}
	best, bestKind, bestConf, portMatch := Unknown, codecs.Kind(""), codecs.NotMine, Unknown
	for i, cd := range s.codecs {
		p := cd.DefaultPort()
		if p == 0 || (p != int(sp) && p != int(dp)) {
			continue
		}
		portMatch = i
		if k, conf := cd.Detect(b); conf > bestConf {
			best, bestKind, bestConf = i, k, conf
		}
	}
	if best != Unknown {
		return uint8(best), bestKind
	}
	for i, cd := range s.codecs {
		if k, conf := cd.Detect(b); conf > bestConf {
			best, bestKind, bestConf = i, k, conf
		}
	}
	if best != Unknown {
		return uint8(best), bestKind
	}
	return uint8(portMatch), ""
}

func (s *Session) row(dst []byte, dg pcapng.Datagram) []byte {
	row := s.rows
	s.rows++
	src, dstID := s.endpoint(dg.Src), s.endpoint(dg.Dst)
	key := [2]uint32{src, dstID}
	if key[0] > key[1] {
		key[0], key[1] = key[1], key[0]
	}
	c := s.convs[key]
	if c == nil {
		if len(s.convs) >= maxConvs {
			s.convs = map[[2]uint32]*conv{}
		}
		s.convIDs++
		c = &conv{proto: Unknown, lastQuery: -1, lastFrom: math.MaxUint32, id: s.convIDs}
		s.convs[key] = c
	}
	proto, k := s.guess(c, dg.Src.Port, dg.Dst.Port, dg.Payload)
	if proto != Unknown && k != "" {
		c.proto = proto
	}
	query := int32(-1)
	switch {
	case isQuery(k):
		s.groups++
		c.group, c.lastQuery, c.querier = s.groups, int32(row), src
	case c.lastQuery >= 0 && src != c.querier:
		query = c.lastQuery // an answer: grouped with its query
	case c.lastFrom != src || c.group == 0:
		s.groups++ // datagrams of one sender without a query: one group a run
		c.group, c.lastQuery = s.groups, -1
	}
	c.lastFrom = src

	var flags uint8
	off := s.locate(dg)
	if off < 0 {
		if s.storedBytes+len(dg.Payload) <= MaxStored {
			s.stored[row] = bytes.Clone(dg.Payload)
			s.storedBytes += len(dg.Payload)
			flags |= FlagStored
		} else {
			flags |= FlagLost
		}
	}
	return s.appendRow(dst, dg, off, query, c.group, proto, s.kind(k), flags, c.id)
}

// appendRow appends one row of the layout above.
func (s *Session) appendRow(dst []byte, dg pcapng.Datagram, off int64, query int32, group uint32, proto, kind, flags uint8, conv uint32) []byte {
	var r [RowSize]byte
	le := binary.LittleEndian
	le.PutUint64(r[0:], math.Float64bits(float64(dg.Micros)))
	le.PutUint64(r[8:], math.Float64bits(float64(off)))
	le.PutUint32(r[16:], uint32(dg.Frame))
	le.PutUint32(r[20:], s.endpoint(dg.Src))
	le.PutUint32(r[24:], s.endpoint(dg.Dst))
	le.PutUint32(r[28:], uint32(len(dg.Payload)))
	le.PutUint32(r[32:], uint32(query))
	le.PutUint32(r[36:], group)
	r[40] = proto
	r[41] = kind
	r[42] = flags
	le.PutUint32(r[44:], conv)
	return append(dst, r[:]...)
}

// locate finds the file offset of dg's payload: right after its UDP
// header, which follows the block's start within search bytes. It returns
// -1 when the payload is not a run of the file's bytes there (a
// reassembled datagram) or the block is no longer in the chunks kept.
func (s *Session) locate(dg pcapng.Datagram) int64 {
	n := len(dg.Payload)
	if n+8 > 0xffff {
		return -1
	}
	b := s.window(dg.Offset, dg.Offset+search+8+int64(n))
	if b == nil {
		return -1
	}
	hdr := [6]byte{byte(dg.Src.Port >> 8), byte(dg.Src.Port), byte(dg.Dst.Port >> 8), byte(dg.Dst.Port), byte((n + 8) >> 8), byte(n + 8)}
	for at := 0; ; {
		i := bytes.Index(b[at:], hdr[:])
		if i < 0 {
			return -1
		}
		p := at + i + 8
		if p+n <= len(b) && bytes.Equal(b[p:p+n], dg.Payload) {
			return dg.Offset + int64(p)
		}
		at += i + 1
	}
}

// window returns the file's bytes [from, to) (to cut at what was fed)
// from the chunks kept, or nil when from is before them. It drops the
// chunks that end before from.
func (s *Session) window(from, to int64) []byte {
	k := 0
	for k < len(s.chunks) && s.chunks[k].base+int64(len(s.chunks[k].b)) <= from {
		s.chunks[k] = chunk{}
		k++
	}
	s.chunks = s.chunks[k:]
	if to > s.fed {
		to = s.fed
	}
	if from >= to || len(s.chunks) == 0 || from < s.chunks[0].base {
		return nil
	}
	c := s.chunks[0]
	if to <= c.base+int64(len(c.b)) {
		return c.b[from-c.base : to-c.base]
	}
	s.scratch = s.scratch[:0]
	for _, c := range s.chunks {
		lo, hi := max(from, c.base), min(to, c.base+int64(len(c.b)))
		if lo < hi {
			s.scratch = append(s.scratch, c.b[lo-c.base:hi-c.base]...)
		}
	}
	return s.scratch
}
