package pcapng

// Reassembly of IPv4 and IPv6 fragments (RFC 791, RFC 8200 section 4.5),
// bounded without clocks: a capture file has no "now", so instead of the
// stacks' 30-60 s timers the reassembler keeps at most maxPending datagrams
// and maxFragBytes bytes, and drops the oldest datagram (by its first
// fragment) to make room. Overlapping fragments are accepted, the later
// bytes winning, as Wireshark does by default.
const (
	maxPending   = 64
	maxFragBytes = 4 << 20
	maxPieces    = 512   // fragments of one datagram
	maxDatagram  = 65535 // an IP payload cannot be longer (IPv4: minus its header)
)

type fragKey struct {
	src, dst [16]byte
	id       uint32
	proto    byte
	v4       bool
}

type span struct{ start, end int }

type pending struct {
	key    fragKey
	data   []byte // the payload so far, as long as the furthest fragment
	have   []span // received ranges, sorted and merged
	total  int    // the payload's length, once the last fragment came; else -1
	pieces int
}

type reassembler struct {
	list  []*pending // oldest first
	bytes int
}

// add takes one fragment at byte offset off of the payload; more is the
// more-fragments flag. It returns the whole payload when this fragment
// completes it (valid until the next add), with the verdict completed;
// else fragment, or skipped when the fragment is unusable.
func (r *reassembler) add(key fragKey, off int, more bool, data []byte) ([]byte, verdict) {
	end := off + len(data)
	if len(data) == 0 || end > maxDatagram || more && len(data)%8 != 0 {
		return nil, skipped
	}
	i := r.find(key)
	if i < 0 {
		for len(r.list) >= maxPending {
			r.drop(0)
		}
		r.list = append(r.list, &pending{key: key, total: -1})
		i = len(r.list) - 1
	}
	p := r.list[i]
	bad := p.total >= 0 && end > p.total ||
		!more && (p.total >= 0 && p.total != end || len(p.data) > end)
	if p.pieces++; bad || p.pieces > maxPieces {
		r.drop(i)
		return nil, skipped
	}
	if !more {
		p.total = end
	}
	if grow := end - len(p.data); grow > 0 {
		for r.bytes+grow > maxFragBytes && len(r.list) > 1 {
			j := 0
			if r.list[0] == p {
				j = 1
			}
			r.drop(j)
		}
		if r.bytes+grow > maxFragBytes {
			r.drop(r.find(key))
			return nil, skipped
		}
		r.bytes += grow
		p.data = append(p.data, make([]byte, grow)...)
	}
	copy(p.data[off:], data)
	p.have = merge(p.have, span{off, end})
	if p.total >= 0 && len(p.have) == 1 && p.have[0] == (span{0, p.total}) {
		whole := p.data[:p.total]
		r.drop(r.find(key))
		return whole, completed
	}
	return nil, fragment
}

func (r *reassembler) find(key fragKey) int {
	for i, p := range r.list {
		if p.key == key {
			return i
		}
	}
	return -1
}

func (r *reassembler) drop(i int) {
	r.bytes -= len(r.list[i].data)
	copy(r.list[i:], r.list[i+1:])
	r.list[len(r.list)-1] = nil
	r.list = r.list[:len(r.list)-1]
}

// merge adds s to the sorted, disjoint spans have, joining the ones it
// overlaps or touches.
func merge(have []span, s span) []span {
	out := have[:0:0]
	placed := false
	for _, h := range have {
		switch {
		case h.end < s.start:
			out = append(out, h)
		case s.end < h.start:
			if !placed {
				out = append(out, s)
				placed = true
			}
			out = append(out, h)
		default:
			s.start, s.end = min(s.start, h.start), max(s.end, h.end)
		}
	}
	if !placed {
		out = append(out, s)
	}
	return out
}
