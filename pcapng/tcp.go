package pcapng

// TCP: the decoder follows each TCP connection of a capture by its
// addresses and ports, puts each direction's bytes back in sequence order,
// and returns them as turns: a turn is what one side sent before the other
// side sent any data, or before the connection ended (FIN, RST, or the end
// of the file). The protocols querylens reads over TCP are conversations
// of such turns (a query, then its reply).
//
// Sequence numbers: a direction starts at its SYN's ISN + 1 when the SYN is
// in the capture, else at the first segment's sequence number (bytes before
// it are not looked for). Bytes that arrive again (retransmissions,
// overlaps) are dropped: the first bytes taken win, as in Wireshark's
// "Follow TCP Stream". A segment ahead of the next byte expected is held
// until the bytes before it come; the reader stops waiting, and marks the
// turn Gap, when the other side sends data (it was answered, so what is
// missing was sent and never captured), when the connection ends, when
// the file ends, or when the held segments reach their bounds.
//
// Stream numbers: a connection gets the next number when its first segment
// (of any kind) appears, and a SYN on a known 4-tuple starts a new one when
// it carries another ISN than the SYN seen before from that side (or, with
// no SYN seen before, when the connection was closed by FIN or RST), as
// tshark's tcp.stream does (a SYN with the same ISN is a retransmission). An evicted connection that shows up again is a new
// stream (tshark's numbers differ from there on: only past maxStreams
// connections at once).
//
// What is not read: TCP in IP fragments and segments the snap length cut
// (both counted in Stats.Skipped; the bytes they lose become a Gap), TCP
// checksums (not checked, as by tshark by default), urgent data (taken as
// data).

// Bounds of TCP reassembly, so a hostile file cannot take unbounded memory.
const (
	// maxStreams bounds the connections followed at once; a new one
	// evicts the least recently active, a closed one first (its open turn
	// comes out first; Stats.Evicted counts them).
	maxStreams = 256
	// maxTurn bounds the bytes of one turn: a turn reaching it comes out
	// at once with Cut set, and the rest of it is dropped.
	maxTurn = 512 << 10
	// maxOpenBytes bounds the bytes of all open turns: past it the turn
	// growing is cut as at maxTurn.
	maxOpenBytes = 32 << 20
	// maxHeldSegments bounds the out-of-order segments held for one
	// direction, and maxHeldBytes their bytes in all directions: past
	// either, the reader stops waiting for the missing bytes (a Gap).
	maxHeldSegments = 64
	maxHeldBytes    = 8 << 20
	// maxFree bounds the turn buffers kept for reuse, and maxFreeCap the
	// size of one.
	maxFree    = 8
	maxFreeCap = 64 << 10
)

// TCP header flags.
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpPSH = 0x08
	tcpACK = 0x10
)

// tcpKey is a connection's 4-tuple, its two ends in a fixed order.
type tcpKey struct{ a, b Endpoint }

func keyOf(src, dst Endpoint) tcpKey {
	if less(dst, src) {
		return tcpKey{dst, src}
	}
	return tcpKey{src, dst}
}

func less(x, y Endpoint) bool {
	if x.IP != y.IP {
		for i := range x.IP {
			if x.IP[i] != y.IP[i] {
				return x.IP[i] < y.IP[i]
			}
		}
	}
	if x.V4 != y.V4 {
		return x.V4
	}
	return x.Port < y.Port
}

// segMeta is where a segment came from, for the turn it starts.
type segMeta struct {
	frame  int
	micros int64
	off    int64
	iface  int
}

// heldSeg is an out-of-order segment waiting for the bytes before it.
type heldSeg struct {
	seq  uint32
	data []byte // a copy
	fin  bool
	meta segMeta
}

// tcpSide is one direction of a connection.
type tcpSide struct {
	next    uint32 // the next sequence number expected
	known   bool   // next is set
	syn     bool   // its SYN was seen, with ISN isn
	isn     uint32
	fin     bool      // its FIN was taken in sequence
	held    []heldSeg // sorted by sequence number
	gapNext bool      // its next turn starts after bytes that never came
}

// tcpStream is one connection.
type tcpStream struct {
	id    int
	ends  [2]Endpoint // ends[0] sent the first segment seen
	side  [2]tcpSide
	rst   bool
	last  int // frame of its last segment
	turns int // turns begun

	who     int  // the side whose turn it is, -1 before any data
	open    bool // turn holds that side's turn being built
	cutting bool // that side's turn came out cut: drop its bytes until the other side sends
	turn    Datagram
}

func (s *tcpStream) closed() bool { return s.rst || s.side[0].fin || s.side[1].fin }

// tcpState is the decoder's TCP reassembly.
type tcpState struct {
	streams   map[tcpKey]*tcpStream
	order     []*tcpStream // creation order, for eviction and the end of the file
	ready     []Datagram   // turns to return, oldest first
	head      int          // ready[head:] are not returned yet
	out       []byte       // the payload Next returned last, reused from the next call
	free      [][]byte
	heldBytes int
	openBytes int
	next      int // the next stream number
}

// segment takes one TCP segment: dg has its endpoints and where it came
// from; st counts streams and evictions.
func (t *tcpState) segment(st *Stats, dg *Datagram, seq uint32, flags byte, data []byte) {
	key := keyOf(dg.Src, dg.Dst)
	s := t.streams[key]
	meta := segMeta{frame: dg.Frame, micros: dg.Micros, off: dg.Offset, iface: dg.Interface}
	if s != nil && flags&(tcpSYN|tcpACK) == tcpSYN {
		x := s.sideOf(dg.Src)
		if sd := &s.side[x]; sd.syn && sd.isn != seq || !sd.syn && s.closed() {
			t.finish(s)
			t.remove(s)
			s = nil
		}
	}
	if s == nil {
		if t.streams == nil {
			t.streams = map[tcpKey]*tcpStream{}
		}
		if len(t.streams) >= maxStreams {
			t.evict()
			st.Evicted++
		}
		s = &tcpStream{id: t.next, ends: [2]Endpoint{dg.Src, dg.Dst}, who: -1}
		t.next++
		st.Streams++
		t.streams[key] = s
		t.order = append(t.order, s)
	}
	s.last = dg.Frame
	x := s.sideOf(dg.Src)
	sd := &s.side[x]
	if flags&tcpSYN != 0 {
		if !sd.known {
			sd.syn, sd.isn, sd.next, sd.known = true, seq, seq+1, true
		}
		seq++ // the SYN takes one sequence number; data follow it
	}
	if !sd.known {
		sd.next, sd.known = seq, true
	}
	t.take(s, x, seq, data, flags&tcpFIN != 0, meta)
	if flags&tcpRST != 0 {
		t.finish(s)
		s.rst = true
	}
}

func (s *tcpStream) sideOf(src Endpoint) int {
	if src == s.ends[0] {
		return 0
	}
	return 1
}

// take is a segment's bytes (and FIN) at sequence number seq for side x.
func (t *tcpState) take(s *tcpStream, x int, seq uint32, data []byte, fin bool, meta segMeta) {
	sd := &s.side[x]
	if len(data) == 0 && !fin {
		return // an ACK, a window update, a keep-alive
	}
	if ahead := int32(seq - sd.next); ahead > 0 {
		if len(sd.held) >= maxHeldSegments {
			t.gap(s, x)
		}
		for t.heldBytes+len(data) > maxHeldBytes && t.dropHeld(s, x) {
		}
		if ahead = int32(seq - sd.next); ahead > 0 {
			t.hold(sd, heldSeg{seq: seq, data: append([]byte(nil), data...), fin: fin, meta: meta})
			return
		}
	}
	// Drop what was already taken (a retransmission, an overlap).
	behind := int(sd.next - seq)
	end := int32(seq + uint32(len(data)) - sd.next)
	if end < 0 || end == 0 && (!fin || sd.fin) {
		return
	}
	if behind > len(data) { // only the FIN is new
		behind = len(data)
	}
	data = data[behind:]
	if o := &s.side[1-x]; len(data) > 0 && len(o.held) > 0 {
		t.gap(s, 1-x) // this side answers: the other's missing bytes will not come
	}
	t.deliver(s, x, data, fin, meta)
	t.drain(s, x)
}

// hold keeps an out-of-order segment, sorted by sequence number after the
// segments with the same one (the first taken wins).
func (t *tcpState) hold(sd *tcpSide, h heldSeg) {
	i := len(sd.held)
	for i > 0 && int32(sd.held[i-1].seq-h.seq) > 0 {
		i--
	}
	sd.held = append(sd.held, heldSeg{})
	copy(sd.held[i+1:], sd.held[i:])
	sd.held[i] = h
	t.heldBytes += len(h.data)
}

// dropHeld makes room in the held bytes by giving up on the missing bytes
// of one direction: x of s first, then the other streams' in order. It
// says whether it found a direction holding segments.
func (t *tcpState) dropHeld(s *tcpStream, x int) bool {
	if len(s.side[x].held) > 0 {
		t.gap(s, x)
		return true
	}
	for _, o := range t.order {
		for y := range o.side {
			if len(o.side[y].held) > 0 {
				t.gap(o, y)
				return true
			}
		}
	}
	return false
}

// deliver adds in-order bytes (and a FIN) of side x to its turn.
func (t *tcpState) deliver(s *tcpStream, x int, data []byte, fin bool, meta segMeta) {
	sd := &s.side[x]
	if len(data) > 0 {
		sd.next += uint32(len(data))
		if s.who != x {
			if s.open {
				t.emit(s)
			}
			s.who, s.cutting = x, false
		}
		if !s.cutting {
			if !s.open {
				t.begin(s, x, meta)
			}
			n := len(data)
			room := min(maxTurn-len(s.turn.Payload), maxOpenBytes-t.openBytes)
			if n > room {
				n = max(room, 0)
			}
			s.turn.Payload = append(s.turn.Payload, data[:n]...)
			t.openBytes += n
			if n < len(data) {
				s.turn.Cut = true
				t.emit(s)
				s.cutting = true
			}
		}
	}
	if fin && !sd.fin {
		sd.next++
		sd.fin = true
		if s.who == x {
			if s.open {
				t.emit(s)
			}
			s.who, s.cutting = -1, false
		}
	}
}

// begin starts side x's turn with the segment meta.
func (t *tcpState) begin(s *tcpStream, x int, meta segMeta) {
	s.turns++
	var buf []byte
	if n := len(t.free); n > 0 {
		buf, t.free = t.free[n-1][:0], t.free[:n-1]
	}
	s.turn = Datagram{Frame: meta.frame, Micros: meta.micros, Offset: meta.off, Interface: meta.iface,
		Src: s.ends[x], Dst: s.ends[1-x], Payload: buf, TCP: true, Stream: s.id, Turn: s.turns, Gap: s.side[x].gapNext}
	s.side[x].gapNext = false
	s.open = true
}

// drain delivers the held segments of side x that are now in order.
func (t *tcpState) drain(s *tcpStream, x int) {
	sd := &s.side[x]
	for len(sd.held) > 0 && int32(sd.held[0].seq-sd.next) <= 0 {
		h := sd.held[0]
		copy(sd.held, sd.held[1:])
		sd.held[len(sd.held)-1] = heldSeg{}
		sd.held = sd.held[:len(sd.held)-1]
		t.heldBytes -= len(h.data)
		behind := int(sd.next - h.seq)
		end := int32(h.seq + uint32(len(h.data)) - sd.next)
		if end < 0 || end == 0 && (!h.fin || sd.fin) {
			continue
		}
		t.deliver(s, x, h.data[min(behind, len(h.data)):], h.fin, h.meta)
	}
}

// gap gives up on the bytes side x is missing before its first held
// segment: its open turn comes out marked Gap, and it goes on from the
// held bytes in a new turn, marked Gap too (unless its turn was cut: the
// bytes are dropped until the other side sends).
func (t *tcpState) gap(s *tcpStream, x int) {
	sd := &s.side[x]
	if len(sd.held) == 0 {
		return
	}
	if s.who == x && s.open {
		s.turn.Gap = true
		t.emit(s)
	}
	if s.who != x || !s.cutting {
		sd.gapNext = true // the bytes after the gap start a turn marked too
	}
	sd.next = sd.held[0].seq
	t.drain(s, x)
}

// emit queues the open turn for Next.
func (t *tcpState) emit(s *tcpStream) {
	t.openBytes -= len(s.turn.Payload)
	t.ready = append(t.ready, s.turn)
	s.turn = Datagram{}
	s.open = false
}

// finish gives up on the missing bytes of both sides and emits the open
// turn: the connection ended, or the file did. A side may miss bytes in
// more than one place: each gap is given up on in turn, until nothing
// is held.
func (t *tcpState) finish(s *tcpStream) {
	for x := range 2 {
		for len(s.side[x].held) > 0 {
			t.gap(s, x)
		}
	}
	if s.open {
		t.emit(s)
	}
	s.who, s.cutting = -1, false
}

// remove forgets a stream.
func (t *tcpState) remove(s *tcpStream) {
	delete(t.streams, keyOf(s.ends[0], s.ends[1]))
	for i, o := range t.order {
		if o == s {
			copy(t.order[i:], t.order[i+1:])
			t.order[len(t.order)-1] = nil
			t.order = t.order[:len(t.order)-1]
			break
		}
	}
}

// evict finishes and forgets the least recently active closed stream, or
// the least recently active one when none is closed.
func (t *tcpState) evict() {
	var victim *tcpStream
	for _, s := range t.order {
		if victim == nil || s.closed() && !victim.closed() || s.closed() == victim.closed() && s.last < victim.last {
			victim = s
		}
	}
	t.finish(victim)
	t.remove(victim)
}

// end finishes every stream, at the end of the file.
func (t *tcpState) end() {
	for _, s := range t.order {
		t.finish(s)
	}
}

// pop returns the next turn, counting it in st. The payload of the one
// it returned before is reused.
func (t *tcpState) pop(st *Stats) (Datagram, bool) {
	if t.out != nil {
		if cap(t.out) <= maxFreeCap && len(t.free) < maxFree {
			t.free = append(t.free, t.out[:0])
		}
		t.out = nil
	}
	if t.head == len(t.ready) {
		if t.head > 0 {
			clear(t.ready)
			t.ready, t.head = t.ready[:0], 0
		}
		return Datagram{}, false
	}
	dg := t.ready[t.head]
	t.ready[t.head] = Datagram{}
	t.head++
	t.out = dg.Payload
	st.Turns++
	if dg.Cut {
		st.Cut++
	}
	if dg.Gap {
		st.Gaps++
	}
	return dg, true
}

// tcp reads a TCP header and hands the segment to the reassembly.
func (d *Decoder) tcp(b []byte, dg *Datagram) verdict {
	if len(b) < 20 {
		return skipped
	}
	hl := int(b[12]>>4) * 4
	if hl < 20 || hl > len(b) {
		return skipped
	}
	dg.Src.Port = uint16(b[0])<<8 | uint16(b[1])
	dg.Dst.Port = uint16(b[2])<<8 | uint16(b[3])
	d.conns.segment(&d.stats, dg, be32(b[4:]), b[13], b[hl:])
	return gotTCP
}
