// Package card draws the preview image chat apps show for a shared status
// link: a 1200×630 PNG (the size OpenGraph and Twitter's large card use)
// with the server's name, state, map, mode, players, protocol, address
// and, when there is history, its player count over the last 24 hours.
//
// It is pure Go: the Go fonts are compiled in, text is rasterised with
// golang.org/x/image/font/opentype and the chart with x/image/vector.
// Text from game servers is hostile: Render drops control and
// bidirectional-override characters, replaces characters the font lacks
// with U+FFFD, and cuts every line to its box with an ellipsis, so that no
// name can push another element out of place (right-to-left text is drawn
// in logical order, left to right, inside its box).
package card

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// Size of every card.
const (
	Width  = 1200
	Height = 630
)

// Card is what one card shows. Strings may be anything a server sent.
type Card struct {
	Name     string
	State    string // "online", "offline", ...
	Online   bool
	Warn     bool // a state worth a warning colour (rate-limited, malformed)
	Map      string
	Mode     string
	Players  int
	Max      int  // 0: unknown
	Counts   bool // Players/Max are known
	Protocol string
	Address  string
	// Chart is the player count per period over the last 24 hours, oldest
	// first; NaN marks a period without an online sample. Empty: no history.
	Chart     []float64
	ChartMax  int  // the chart's top (at least the largest value)
	Synthetic bool // the history is made up (the demo), say so
	// Icon is the server's own icon (a Minecraft server's favicon, at
	// most IconSize a side, checked by the caller), drawn beside the
	// name; nil: none.
	Icon image.Image
}

// IconSize is the largest icon a card draws (a side, in pixels); a larger
// one is not drawn.
const IconSize = 64

var (
	fontsOnce               sync.Once
	fontsErr                error
	regular, bold, monoFont *opentype.Font
)

func loadFonts() {
	fontsOnce.Do(func() {
		if regular, fontsErr = opentype.Parse(goregular.TTF); fontsErr != nil {
			return
		}
		if bold, fontsErr = opentype.Parse(gobold.TTF); fontsErr != nil {
			return
		}
		monoFont, fontsErr = opentype.Parse(gomono.TTF)
	})
}

// Colours of the card.
var (
	bg       = color.RGBA{0x11, 0x18, 0x27, 0xff}
	panel    = color.RGBA{0x1f, 0x29, 0x37, 0xff}
	fg       = color.RGBA{0xf9, 0xfa, 0xfb, 0xff}
	muted    = color.RGBA{0x9c, 0xa3, 0xaf, 0xff}
	green    = color.RGBA{0x22, 0xc5, 0x5e, 0xff}
	orange   = color.RGBA{0xf9, 0x73, 0x16, 0xff}
	grey     = color.RGBA{0x6b, 0x72, 0x80, 0xff}
	chartFil = color.RGBA{0x16, 0x65, 0x34, 0xff}
	chartTop = color.RGBA{0x4a, 0xde, 0x80, 0xff}
	synth    = color.RGBA{0xfa, 0xcc, 0x15, 0xff}
)

const margin = 48

// Render draws c and encodes it as PNG.
func Render(c Card) ([]byte, error) {
	img := rgbaPool.Get().(*image.RGBA)
	defer rgbaPool.Put(img)
	if err := drawInto(img, c); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(64 << 10)
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: encPool{}}
	pm := quantize(img)
	defer palPool.Put(&pm.Pix)
	if err := enc.Encode(&buf, pm); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Draw draws c.
func Draw(c Card) (*image.RGBA, error) {
	img := image.NewRGBA(image.Rect(0, 0, Width, Height))
	if err := drawInto(img, c); err != nil {
		return nil, err
	}
	return img, nil
}

// The pixel buffers of a render (3 MB and 0.75 MB) are reused: cards are
// rendered in bursts, and garbage of that size is most of a render's cost
// in the collector.
var (
	rgbaPool = sync.Pool{New: func() any { return image.NewRGBA(image.Rect(0, 0, Width, Height)) }}
	palPool  = sync.Pool{New: func() any { b := make([]uint8, Width*Height); return &b }}
)

// encPool lets image/png reuse its compressor and row buffers.
type encPool struct{}

var encBuffers sync.Pool

func (encPool) Get() *png.EncoderBuffer {
	b, _ := encBuffers.Get().(*png.EncoderBuffer)
	return b
}

func (encPool) Put(b *png.EncoderBuffer) { encBuffers.Put(b) }

// drawInto draws c over the whole of img (Width×Height).
func drawInto(img *image.RGBA, c Card) error {
	loadFonts()
	if fontsErr != nil {
		return fontsErr
	}
	draw.Draw(img, img.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)

	accent := grey
	switch {
	case c.Online:
		accent = green
	case c.Warn:
		accent = orange
	}
	fill(img, image.Rect(0, 0, Width, 12), accent)

	f := faces{}
	defer f.close()
	small, err := f.get(regular, 28)
	if err != nil {
		return err
	}
	title, err := f.get(bold, 64)
	if err != nil {
		return err
	}
	big, err := f.get(bold, 44)
	if err != nil {
		return err
	}
	body, err := f.get(regular, 34)
	if err != nil {
		return err
	}
	code, err := f.get(monoFont, 28)
	if err != nil {
		return err
	}

	inner := Width - 2*margin
	// Top line: site and protocol.
	text(img, small, margin, 62, inner/2, "querylens", muted)
	proto := Clean(c.Protocol)
	pw := measure(small, fit(small, proto, inner/2))
	text(img, small, Width-margin-pw, 62, inner/2, proto, muted)

	// Name.
	name := Clean(c.Name)
	if name == "" {
		name = Clean(c.Address)
	}
	nameWidth := inner
	if c.Icon != nil && c.Icon.Bounds().Dx() <= IconSize && c.Icon.Bounds().Dy() <= IconSize {
		// At the right of the name, under the protocol.
		b := c.Icon.Bounds()
		r := image.Rect(Width-margin-b.Dx(), 84, Width-margin, 84+b.Dy())
		draw.Draw(img, r, c.Icon, b.Min, draw.Over)
		nameWidth -= IconSize + 20
	}
	text(img, title, margin, 150, nameWidth, name, fg)

	// State pill and players.
	state := strings.ToUpper(Clean(c.State))
	sw := measure(small, fit(small, state, 300))
	fill(img, image.Rect(margin, 180, margin+sw+32, 226), accent)
	text(img, small, margin+16, 213, 300, state, bg)
	x := margin + sw + 32 + 28
	if c.Counts {
		players := strconv.Itoa(c.Players)
		if c.Max > 0 {
			players += " / " + strconv.Itoa(c.Max)
		}
		players += " players"
		text(img, big, x, 220, Width-margin-x, players, fg)
	}

	// Map and mode.
	var parts []string
	if m := Clean(c.Map); m != "" {
		parts = append(parts, m)
	}
	if m := Clean(c.Mode); m != "" {
		parts = append(parts, m)
	}
	if len(parts) > 0 {
		text(img, body, margin, 284, inner, strings.Join(parts, " · "), fg)
	}
	// Address.
	text(img, code, margin, 332, inner, Clean(c.Address), muted)

	// Chart panel.
	top, bottom := 368, Height-margin
	fill(img, image.Rect(margin, top, Width-margin, bottom), panel)
	label := "players, last 24 hours"
	if len(c.Chart) == 0 {
		label = "no history yet"
	}
	text(img, small, margin+20, top+40, inner/2, label, muted)
	if c.Synthetic {
		s := "synthetic demo history"
		w := measure(small, s)
		text(img, small, Width-margin-20-w, top+40, inner/2, s, synth)
	}
	if len(c.Chart) > 0 {
		chart(img, image.Rect(margin+20, top+60, Width-margin-20, bottom-16), c.Chart, c.ChartMax, small)
	}
	return nil
}

// chart draws an area chart of v in r, gaps where v is NaN.
func chart(img *image.RGBA, r image.Rectangle, in []float64, top int, lab font.Face) {
	// Infinities become gaps, negatives zero; at most one point per pixel.
	if len(in) > r.Dx() {
		in = in[len(in)-r.Dx():]
	}
	v := make([]float64, len(in))
	peak := 0.0
	for i, x := range in {
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			x = math.NaN()
		case x < 0:
			x = 0
		case x > peak:
			peak = x
		}
		v[i] = x
	}
	top = min(max(top, 0), 1<<20)
	hi := math.Max(float64(top), peak)
	if hi < 1 {
		hi = 1
	}
	// Scale label on the left.
	lw := measure(lab, strconv.Itoa(int(math.Ceil(hi))))
	text(img, lab, r.Min.X, r.Min.Y+24, 100, strconv.Itoa(int(math.Ceil(hi))), muted)
	text(img, lab, r.Min.X+lw-measure(lab, "0"), r.Max.Y, 100, "0", muted)
	r.Min.X += lw + 16
	fill(img, image.Rect(r.Min.X, r.Max.Y, r.Max.X, r.Max.Y+2), grey)

	w, h := float32(r.Dx()), float32(r.Dy())
	n := len(v)
	step := w / float32(max(n, 1))
	// Runs of consecutive periods with data, each [i, j).
	var runs [][2]int
	for i := 0; i < n; {
		if math.IsNaN(v[i]) {
			i++
			continue
		}
		j := i
		for j < n && !math.IsNaN(v[j]) {
			j++
		}
		runs = append(runs, [2]int{i, j})
		i = j
	}
	y := func(k int) float32 { return h - float32(v[k]/hi)*h }
	// One rasterizer (its buffer is the chart's size), used twice: the
	// area of each run down to the baseline, then a 3 px top edge.
	ras := rasPool.Get().(*vector.Rasterizer)
	defer rasPool.Put(ras)
	ras.Reset(r.Dx(), r.Dy())
	for _, run := range runs {
		ras.MoveTo(float32(run[0])*step, h)
		for k := run[0]; k < run[1]; k++ {
			ras.LineTo(float32(k)*step, y(k))
			ras.LineTo(float32(k+1)*step, y(k))
		}
		ras.LineTo(float32(run[1])*step, h)
		ras.ClosePath()
	}
	ras.Draw(img, r, image.NewUniform(chartFil), image.Point{})
	ras.Reset(r.Dx(), r.Dy())
	for _, run := range runs {
		for k := run[0]; k < run[1]; k++ {
			ras.MoveTo(float32(k)*step, y(k)-1.5)
			ras.LineTo(float32(k+1)*step, y(k)-1.5)
			ras.LineTo(float32(k+1)*step, y(k)+1.5)
			ras.LineTo(float32(k)*step, y(k)+1.5)
			ras.ClosePath()
		}
	}
	ras.Draw(img, r, image.NewUniform(chartTop), image.Point{})
}

var rasPool = sync.Pool{New: func() any { return vector.NewRasterizer(0, 0) }}

// quantize turns the card into a paletted image: a quarter of the bytes
// to compress, which is most of the time Render takes. A card has a few
// flat colours and about a thousand anti-aliasing blends at the edges of
// text and chart; the 256 most used colours are kept exactly and every
// other one maps to the nearest of them, which moves a few edge pixels by
// a shade. Every pixel is opaque (Draw paints the background first).
func quantize(img *image.RGBA) *image.Paletted {
	p := img.Pix
	// Count colours by runs: most pixels repeat their left neighbour.
	counts := make(map[uint32]int, 2048)
	run, last := 0, rgb(p, 0)
	for i := 0; i < len(p); i += 4 {
		c := rgb(p, i)
		if c != last {
			counts[last] += run
			run, last = 0, c
		}
		run++
	}
	counts[last] += run
	colours := make([]uint32, 0, len(counts))
	for c := range counts {
		colours = append(colours, c)
	}
	slices.SortFunc(colours, func(a, b uint32) int {
		if d := counts[b] - counts[a]; d != 0 {
			return d
		}
		return int(a) - int(b)
	})
	n := min(len(colours), 256)
	pal := make(color.Palette, n)
	index := make(map[uint32]uint8, len(colours))
	for i, c := range colours[:n] {
		pal[i] = color.RGBA{uint8(c >> 16), uint8(c >> 8), uint8(c), 0xff}
		index[c] = uint8(i)
	}
	for _, c := range colours[n:] {
		best, bestD := 0, int(^uint(0)>>1)
		for i, q := range colours[:n] {
			if d := dist(c, q); d < bestD {
				best, bestD = i, d
			}
		}
		index[c] = uint8(best)
	}
	out := &image.Paletted{Pix: *palPool.Get().(*[]uint8), Stride: Width, Rect: img.Bounds(), Palette: pal}
	last, li := rgb(p, 0), index[rgb(p, 0)]
	for i, j := 0, 0; i < len(p); i, j = i+4, j+1 {
		if c := rgb(p, i); c != last {
			last, li = c, index[c]
		}
		out.Pix[j] = li
	}
	return out
}

func rgb(p []byte, i int) uint32 { return uint32(p[i])<<16 | uint32(p[i+1])<<8 | uint32(p[i+2]) }

func dist(a, b uint32) int {
	dr := int(a>>16&0xff) - int(b>>16&0xff)
	dg := int(a>>8&0xff) - int(b>>8&0xff)
	db := int(a&0xff) - int(b&0xff)
	return dr*dr + dg*dg + db*db
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

// faces makes the sizes one card needs; a Face is not safe for concurrent
// use, so each render has its own.
type faces []font.Face

func (f *faces) get(ft *opentype.Font, size float64) (font.Face, error) {
	face, err := opentype.NewFace(ft, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, err
	}
	*f = append(*f, face)
	return face, nil
}

func (f faces) close() {
	for _, x := range f {
		x.Close()
	}
}

// text draws s at baseline (x, y), cut with an ellipsis to width pixels.
// Runes the face lacks are drawn as U+FFFD.
func text(img *image.RGBA, face font.Face, x, y, width int, s string, c color.Color) {
	s = fit(face, s, width)
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// fit cuts s so that it measures at most width pixels, ending it with "…"
// when it was cut, and replaces runes the face has no glyph for.
func fit(face font.Face, s string, width int) string {
	s = substitute(face, s)
	limit := fixed.I(width)
	if font.MeasureString(face, s) <= limit {
		return s
	}
	ell, _ := face.GlyphAdvance('…')
	var adv fixed.Int26_6
	prev := rune(-1)
	for i, r := range s {
		a, _ := face.GlyphAdvance(r)
		if prev >= 0 {
			adv += face.Kern(prev, r)
		}
		if adv+a+ell > limit {
			return s[:i] + "…"
		}
		adv += a
		prev = r
	}
	return s
}

func measure(face font.Face, s string) int {
	return font.MeasureString(face, substitute(face, s)).Ceil()
}

// substitute replaces the runes face lacks with U+FFFD.
func substitute(face font.Face, s string) string {
	ok := true
	for _, r := range s {
		if _, has := face.GlyphAdvance(r); !has {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if _, has := face.GlyphAdvance(r); !has {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// maxText bounds any one string before measuring: a name of a megabyte
// costs no more than one of a line.
const maxText = 200

// Clean makes server-sent text safe to lay out on one line: invalid UTF-8
// and control characters are dropped, bidirectional controls (embeddings,
// overrides, isolates, marks) removed so that no string reorders what
// follows it, runs of white space collapsed, and the result cut to
// maxText runes. Colour codes are the caller's to strip (they are
// protocol-specific).
func Clean(s string) string {
	var b strings.Builder
	n := 0
	space := false
	for _, r := range s {
		if n >= maxText {
			break
		}
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case r == utf8.RuneError, unicode.IsControl(r), isBidi(r), unicode.Is(unicode.Cf, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func isBidi(r rune) bool {
	return r == 0x200e || r == 0x200f || r == 0x061c || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
