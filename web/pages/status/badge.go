package status

import (
	"strconv"
	"unicode/utf8"

	"github.com/querylens/querylens/server"
)

// badge is the content of the SVG badge.
type badge struct {
	Label, Message, Color string
}

// Badge colours, as shields.io uses them.
const (
	colorGreen  = "#4c1"
	colorGrey   = "#9f9f9f"
	colorOrange = "#fe7d37"
	colorRed    = "#e05d44"
)

const (
	badgePad     = 6  // horizontal padding on each side of a text
	maxBadgeText = 40 // characters, before an ellipsis
)

func newBadge(v view) badge {
	b := badge{Label: clip(v.Protocol.Name() + "/" + v.Name)}
	switch v.State {
	case server.Online:
		b.Color = colorGreen
		b.Message = v.Counts
		if b.Message == "" {
			b.Message = "online"
		} else {
			b.Message = compactCounts(v)
		}
		if v.Map != "" {
			b.Message += " " + v.Map
		}
	case server.RateLimited:
		b.Color, b.Message = colorOrange, "rate-limited"
	case server.Malformed:
		b.Color, b.Message = colorRed, "malformed reply"
	case server.Banned, server.Refused, server.Limited:
		b.Color, b.Message = colorGrey, v.State.String()
	default:
		b.Color, b.Message = colorGrey, "offline"
	}
	b.Message = clip(b.Message)
	return b
}

// compactCounts is "12/16" (the page shows "12 / 16").
func compactCounts(v view) string {
	out := make([]byte, 0, len(v.Counts))
	for i := 0; i < len(v.Counts); i++ {
		if v.Counts[i] != ' ' {
			out = append(out, v.Counts[i])
		}
	}
	return string(out)
}

// clip shortens s to maxBadgeText characters and removes what XML cannot
// carry (colour escapes and other control characters).
func clip(s string) string {
	s = StripColors(s)
	if utf8.RuneCountInString(s) <= maxBadgeText {
		return s
	}
	n := 0
	for i := range s {
		if n == maxBadgeText-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// textWidth estimates the width in pixels of s in 11px Verdana, the badge
// font: a few classes of glyph widths are close enough, because textLength
// then makes the renderer fit the text to exactly this width.
func textWidth(s string) int {
	w := 0.0
	for _, r := range s {
		switch {
		case r == ' ':
			w += 3.9
		case r == 'i' || r == 'l' || r == 'j' || r == '.' || r == ',' || r == ':' || r == ';' || r == '|' || r == '!' || r == '\'':
			w += 3.4
		case r == 'f' || r == 't' || r == 'r' || r == 'I' || r == '/' || r == '(' || r == ')' || r == '-':
			w += 4.9
		case r == 'm' || r == 'w' || r == 'M' || r == 'W' || r == '@' || r == '%':
			w += 10.7
		case r >= 'A' && r <= 'Z':
			w += 7.7
		case r >= '0' && r <= '9':
			w += 7.0
		case r < 128:
			w += 6.6
		default:
			w += 7.5
		}
	}
	return int(w + 0.5)
}

func (b badge) labelText() int   { return textWidth(b.Label) }
func (b badge) messageText() int { return textWidth(b.Message) }
func (b badge) labelW() int      { return b.labelText() + 2*badgePad }
func (b badge) messageW() int    { return b.messageText() + 2*badgePad }
func (b badge) width() int       { return b.labelW() + b.messageW() }

// String is the badge's text, for logs and tests.
func (b badge) String() string {
	return b.Label + " | " + b.Message + " (" + b.Color + ", " + strconv.Itoa(b.width()) + "px)"
}
