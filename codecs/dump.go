package codecs

import "strconv"

// AppendDump appends the annotated dump of a message decoded with spans:
// for each layer a heading, then one row per span with its byte range (hex
// offsets, end exclusive), the
// bytes in hex (cut after 16), the field path, the kind and the value. It is
// the text form of the inspector and the format of the golden files.
//
//	layer 1 payload (from 0, 12 bytes)
//	  0000-0004  c7000000          challenge  u32le  "199"
func AppendDump(dst []byte, m *Message) []byte {
	dst = append(dst, "protocol "...)
	dst = append(dst, m.Protocol...)
	dst = append(dst, ", kind "...)
	dst = append(dst, m.Kind...)
	if m.Denied != "" {
		dst = append(dst, ", denied "...)
		dst = append(dst, m.Denied...)
	}
	dst = append(dst, '\n')
	for _, w := range m.Warnings {
		dst = append(dst, "warning: "...)
		dst = append(dst, w...)
		dst = append(dst, '\n')
	}
	for li, l := range m.Layers {
		dst = append(dst, "layer "...)
		dst = strconv.AppendInt(dst, int64(li), 10)
		dst = append(dst, ' ')
		dst = append(dst, l.Name...)
		dst = append(dst, " ("...)
		if l.Parent >= 0 {
			dst = append(dst, "from "...)
			dst = strconv.AppendInt(dst, int64(l.Parent), 10)
			dst = append(dst, ", "...)
		}
		dst = strconv.AppendInt(dst, int64(len(l.Bytes)), 10)
		dst = append(dst, " bytes)\n"...)
		for _, s := range m.Spans {
			if s.Layer != li {
				continue
			}
			dst = append(dst, "  "...)
			dst = appendPad(dst, strconv.FormatInt(int64(s.Start), 16), 4)
			dst = append(dst, '-')
			dst = appendPad(dst, strconv.FormatInt(int64(s.End), 16), 4)
			dst = append(dst, "  "...)
			var hx []byte
			if s.Start >= 0 && s.End <= len(l.Bytes) && s.Start <= s.End {
				b := l.Bytes[s.Start:s.End]
				if len(b) > 16 {
					hx = AppendHex(hx, b[:16])
					hx = append(hx, "…"...)
				} else {
					hx = AppendHex(hx, b)
				}
			}
			dst = append(dst, hx...)
			for n := len(hx); n < 34; n++ {
				dst = append(dst, ' ')
			}
			dst = append(dst, "  "...)
			dst = append(dst, s.Field...)
			dst = append(dst, "  "...)
			dst = append(dst, s.Kind...)
			dst = append(dst, "  "...)
			dst = AppendJSONString(dst, s.Value)
			dst = append(dst, '\n')
		}
	}
	return dst
}

func appendPad(dst []byte, s string, w int) []byte {
	for i := len(s); i < w; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
