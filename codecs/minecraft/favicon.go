package minecraft

import "encoding/binary"

// faviconPrefix starts every favicon the game shows.
const faviconPrefix = "data:image/png;base64,"

// pngSignature starts every PNG file; its IHDR chunk follows at once.
const pngSignature = "\x89PNG\r\n\x1a\n"

// checkFavicon reads a favicon's data URI far enough to know what it is:
// the base64 text's first 33 bytes are the PNG signature and the IHDR
// chunk's length, type, width and height, read here by hand (the browser
// module has no image/png). Nothing else of the image is decoded.
func checkFavicon(uri string) *Favicon {
	f := &Favicon{}
	if len(uri) < len(faviconPrefix) || uri[:len(faviconPrefix)] != faviconPrefix {
		f.Problem = "not a data:image/png;base64 URI"
		return f
	}
	f.Data = uri[len(faviconPrefix):]
	head := unbase64(f.Data, 8+8+8)
	switch {
	case len(head) < 24:
		f.Problem = "too short for a PNG header"
	case string(head[:8]) != pngSignature:
		f.Problem = "not a PNG (no PNG signature)"
	case binary.BigEndian.Uint32(head[8:]) != 13 || string(head[12:16]) != "IHDR":
		f.Problem = "not a PNG (no IHDR chunk first)"
	default:
		w, h := binary.BigEndian.Uint32(head[16:]), binary.BigEndian.Uint32(head[20:])
		if w <= 1<<20 && h <= 1<<20 {
			f.Width, f.Height = int(w), int(h)
		}
		switch {
		case w == 0 || h == 0:
			f.Problem = "an empty image"
		case w > MaxFaviconSide || h > MaxFaviconSide:
			f.Problem = "larger than 64×64"
		default:
			f.OK = true
		}
	}
	if !f.OK {
		f.Data = ""
	}
	return f
}

// unbase64 decodes standard base64 from s until it has max bytes, skipping
// white space (servers of old wrapped the text every 76 characters with
// "\n") and stopping at the first other byte that is not of the alphabet.
func unbase64(s string, max int) []byte {
	out := make([]byte, 0, max+3)
	var acc uint32
	n := 0
	for i := 0; i < len(s) && len(out) < max; i++ {
		c := s[i]
		var v byte
		switch {
		case c >= 'A' && c <= 'Z':
			v = c - 'A'
		case c >= 'a' && c <= 'z':
			v = c - 'a' + 26
		case c >= '0' && c <= '9':
			v = c - '0' + 52
		case c == '+':
			v = 62
		case c == '/':
			v = 63
		case c == '\n' || c == '\r' || c == ' ':
			continue
		default:
			i = len(s)
			continue
		}
		acc = acc<<6 | uint32(v)
		n++
		if n == 4 {
			out = append(out, byte(acc>>16), byte(acc>>8), byte(acc))
			acc, n = 0, 0
		}
	}
	return out
}
