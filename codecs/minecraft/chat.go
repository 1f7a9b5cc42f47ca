package minecraft

import (
	"strconv"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
)

// colorNames are the sixteen named colours, by their § code's hex digit.
var colorNames = [16]string{"black", "dark_blue", "dark_green", "dark_aqua", "dark_red", "dark_purple", "gold", "gray",
	"dark_gray", "blue", "green", "aqua", "red", "light_purple", "yellow", "white"}

// chat flattens a chat component (a string, an object with text, colour,
// styles and extra, or an array of components) into plain text and
// formatted runs, reading § codes inside the text too. With spans, each
// text it reads gets a span in layer (the JSON text) whose value is the
// text's formatting.
type chat struct {
	d     *jdoc
	text  []byte
	runs  []Run
	spans *[]codecs.Span
	layer int
}

// walk reads component i, inheriting color and style, at path (built
// only when spans are recorded).
func (c *chat) walk(i int32, color string, style uint8, path string) {
	if i < 0 || len(c.runs) > 4096 {
		return
	}
	n := &c.d.n[i]
	switch n.kind {
	case jString, jNumber, jTrue, jFalse:
		c.add(i, n.text, color, style, path)
	case jArray:
		k := 0
		for e := n.first; e >= 0; e = c.d.n[e].next {
			c.walk(e, color, style, c.index(path, k))
			k++
		}
	case jObject:
		if s, ok := c.d.str(c.d.get(i, "color")); ok {
			color = s
		}
		for b, name := range styleNames {
			if v, ok := c.d.boolean(c.d.get(i, name)); ok {
				if v {
					style |= 1 << b
				} else {
					style &^= 1 << b
				}
			}
		}
		t := c.d.get(i, "text")
		if t < 0 {
			t = c.d.get(i, "translate") // its key, for want of the game's language files
		}
		if t >= 0 && c.d.n[t].kind != jObject && c.d.n[t].kind != jArray {
			c.add(t, c.d.n[t].text, color, style, c.field(path, c.d.n[t].key))
		}
		if x := c.d.get(i, "extra"); x >= 0 {
			c.walk(x, color, style, c.field(path, "extra"))
		}
	}
}

func (c *chat) field(path, name string) string {
	if c.spans == nil {
		return ""
	}
	return path + "." + name
}

func (c *chat) index(path string, k int) string {
	if c.spans == nil {
		return ""
	}
	return path + "[" + strconv.Itoa(k) + "]"
}

// add appends text s (node i) in color and style, applying its § codes.
func (c *chat) add(i int32, s string, color string, style uint8, path string) {
	first := len(c.runs)
	start := 0
	for j := 0; j <= len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		if j < len(s) && (r != '§' || j+size >= len(s)) {
			j += size
			continue
		}
		if j > start {
			c.text = append(c.text, s[start:j]...)
			c.runs = append(c.runs, Run{Text: s[start:j], Color: color, Style: style})
		}
		if j == len(s) {
			break
		}
		code := s[j+size] | 0x20 // lower case
		switch {
		case code >= '0' && code <= '9':
			color, style = colorNames[code-'0'], 0
		case code >= 'a' && code <= 'f':
			color, style = colorNames[code-'a'+10], 0
		case code >= 'k' && code <= 'o':
			style |= [...]uint8{StyleObfuscated, StyleBold, StyleStrikethrough, StyleUnderlined, StyleItalic}[code-'k']
		case code == 'r':
			color, style = "", 0
		}
		j += size + 1
		start = j
	}
	if c.spans != nil {
		n := &c.d.n[i]
		*c.spans = append(*c.spans, codecs.Span{Layer: c.layer, Start: int(n.start), End: int(n.end),
			Field: path, Kind: "chat", Value: describeRuns(c.runs[first:])})
	}
}

// describeRuns is the inspector's value of a text's runs: each run's
// formatting in brackets before its text.
func describeRuns(runs []Run) string {
	var b []byte
	for _, r := range runs {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		if f := runFormat(r); f != "" {
			b = append(b, '[')
			b = append(b, f...)
			b = append(b, "] "...)
		}
		b = append(b, '"')
		b = append(b, r.Text...)
		b = append(b, '"')
	}
	return string(b)
}

// runFormat names a run's colour and styles ("gold bold").
func runFormat(r Run) string {
	f := r.Color
	for b, name := range styleNames {
		if r.Style&(1<<b) != 0 {
			if f != "" {
				f += " "
			}
			f += name
		}
	}
	return f
}

// stripCodes removes § formatting codes from s (the legacy reply's
// text).
func stripCodes(s string) string {
	var c chat
	c.add(-1, s, "", 0, "")
	return string(c.text)
}

// oneLine collapses every run of white space in s into one space and
// trims it: a row's name.
func oneLine(s string) string {
	b := make([]byte, 0, len(s))
	space := false
	for _, r := range s {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' || r == '\f' || r == '\v' || r == 0xa0 {
			space = len(b) > 0
			continue
		}
		if r < 0x20 || r == 0x7f {
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}
