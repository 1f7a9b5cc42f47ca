package gamespy2

import (
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// AppendRequest appends the wire form of q to dst.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	start := len(dst)
	dst = append(dst, Magic0, Magic1, PacketQuery)
	dst = append(dst, q.ID[:]...)
	for _, s := range [...]struct {
		name string
		keys Keys
	}{{"server", q.Server}, {"players", q.Players}, {"teams", q.Teams}} {
		k := s.keys
		switch {
		case k.All && len(k.List) > 0:
			return dst, encodeError(s.name+".keys", len(dst)-start, codecs.Detail(codecs.ErrBadValue, "both all keys and a key list"))
		case k.All:
			dst = append(dst, KeysAll)
			continue
		case len(k.List) > MaxKeys:
			return dst, encodeError(s.name+".keys", len(dst)-start, wire.Detailf(codecs.ErrTooLong, "%d keys", int64(len(k.List))))
		}
		dst = append(dst, byte(len(k.List)))
		for i, key := range k.List {
			if key == 0 || key > MaxKeyIndex {
				return dst, encodeError(s.name+".keys["+strconv.Itoa(i)+"]", len(dst)-start, wire.Detailf(codecs.ErrBadValue, "key number %d", int64(key)))
			}
			dst = append(dst, byte(key))
		}
	}
	if q.HasExFlags {
		dst = append(dst, q.ExFlags)
	}
	return dst, nil
}

func encodeError(field string, off int, err error) error {
	return newError(field, off, "", err)
}

// AppendResponse appends what a QR2 server holding resp would send for req
// (qr2.c qr_build_partial_query_reply): the header echoing req's id, then
// each section req asks for, with names or by key number. resp.ID and
// resp.Sections are not used. Like the SDK, it stops at MaxReply bytes: the
// value being written is cut and still ends in NUL, and nothing follows.
//
// In index mode a rule or column is found by its key's name ("hostname",
// "score_"); a missing one is sent as an empty value, as the SDK does.
// Counts are 16-bit big-endian, or one byte with resp.OneByteCounts.
func AppendResponse(dst []byte, resp Response, req Request) ([]byte, error) {
	w := limited{b: dst, start: len(dst), end: len(dst) + MaxReply}
	w.b = append(w.b, PacketQuery)
	w.b = append(w.b, req.ID[:]...)
	if err := w.rules(&resp, req.Server); err != nil {
		return w.b, err
	}
	width := 2
	if resp.OneByteCounts {
		width = 1
	}
	if err := w.table("players", &resp.Players, req.Players, width); err != nil {
		return w.b, err
	}
	err := w.table("teams", &resp.Teams, req.Teams, width)
	return w.b, err
}

// limited is the SDK's 1400-byte reply buffer.
type limited struct {
	b          []byte
	start, end int
	full       bool
}

func (w *limited) off() int { return len(w.b) - w.start }

// str appends s as Latin-1 and its NUL; when it does not fit, as much as
// fits with the NUL on the buffer's last byte (qr2_buffer_add). It reports
// false, writing nothing, when s holds a NUL, which the wire cannot carry.
func (w *limited) str(s string) bool {
	if strings.IndexByte(s, 0) >= 0 {
		return false
	}
	if w.full || len(w.b) >= w.end {
		w.full = true
		return true
	}
	w.b = codecs.ToLatin1(w.b, s)
	if len(w.b) >= w.end {
		w.b = w.b[:w.end-1]
		w.full = true
	}
	w.b = append(w.b, 0)
	return true
}

// nul appends a section's closing NUL.
func (w *limited) nul() {
	if w.full || len(w.b) >= w.end {
		w.full = true
		return
	}
	w.b = append(w.b, 0)
}

// badText is the error for a name that is empty or text that holds a NUL.
func (w *limited) badText(field string, i int, sub string) error {
	if i >= 0 {
		field += wire.Msg("[%d]", int64(i))
	}
	if sub != "" {
		field += "." + sub
	}
	return encodeError(field, w.off(), codecs.Detail(codecs.ErrBadValue, "empty name or text holding a NUL"))
}

func (w *limited) rules(resp *Response, keys Keys) error {
	if keys.All {
		for i, kv := range resp.Rules {
			if kv.Key == "" || !w.str(kv.Key) {
				return w.badText("rules", i, "key")
			}
			if !w.str(kv.Value) {
				return w.badText("rules", i, "value")
			}
		}
		w.nul()
		return nil
	}
	for i, k := range keys.List {
		v, _ := resp.Rule(k.String())
		if !w.str(v) {
			return w.badText("rules", i, "value")
		}
	}
	return nil
}

func (w *limited) table(name string, t *Table, keys Keys, width int) error {
	if !keys.Wanted() {
		return nil
	}
	n := max(t.Count, len(t.Rows))
	if n > 1<<(8*width)-1 {
		return encodeError(name+".count", w.off(), wire.Detailf(codecs.ErrTooLong, "%d rows", int64(n)))
	}
	if w.full || w.end-len(w.b) < width {
		w.full = true
	} else if width == 1 {
		w.b = append(w.b, byte(n))
	} else {
		w.b = append(w.b, byte(n>>8), byte(n))
	}
	// cols maps each requested key to its column (index mode).
	var cols [MaxKeys]int
	if keys.All {
		for j, f := range t.Fields {
			if f == "" || !w.str(f) {
				return w.badText(name+".fields", j, "")
			}
		}
		w.nul()
	} else {
		for j, k := range keys.List {
			cols[j] = t.Column(k.String())
		}
	}
	for i, row := range t.Rows {
		if len(row) != len(t.Fields) {
			return encodeError(name+"["+strconv.Itoa(i)+"]", w.off(), wire.Detailf(codecs.ErrBadValue, "%d values for %d fields", int64(len(row)), int64(len(t.Fields))))
		}
		if keys.All {
			for j, v := range row {
				if !w.str(v) {
					return w.badText(name, i, t.Fields[j])
				}
			}
			continue
		}
		for j, k := range keys.List {
			var v string
			if c := cols[j]; c >= 0 {
				v = row[c]
			}
			if !w.str(v) {
				return w.badText(name, i, k.String())
			}
		}
	}
	return nil
}
