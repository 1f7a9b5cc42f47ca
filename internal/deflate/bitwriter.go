package deflate

// bitWriter appends bits to a byte slice least significant bit first, as
// DEFLATE packs them. Up to 64 bits are held in acc before they are flushed.
type bitWriter struct {
	out  []byte
	acc  uint64
	nacc uint // bits held in acc, always < 8 between calls
}

// writeBits appends the low n bits of v (n <= 56).
func (w *bitWriter) writeBits(v uint64, n uint) {
	w.acc |= v << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// alignByte pads with zero bits to the next byte boundary.
func (w *bitWriter) alignByte() {
	if w.nacc > 0 {
		w.writeBits(0, 8-w.nacc)
	}
}

// bitLen reports how many bits have been written so far.
func (w *bitWriter) bitLen() int { return len(w.out)*8 + int(w.nacc) }

// finish flushes the last partial byte and returns the bytes.
func (w *bitWriter) finish() []byte {
	w.alignByte()
	return w.out
}
