package card

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/querylens/querylens/bench"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

func sampleChart() []float64 {
	v := make([]float64, 96)
	for i := range v {
		v[i] = 8 + 6*math.Sin(float64(i)/10)
		if i > 40 && i < 48 {
			v[i] = math.NaN()
		}
	}
	return v
}

// TestRenderDecodes checks the PNG: decodes, 1200×630, not blank (many
// colours, the chart drawn in its panel), for cases with and without history.
func TestRenderDecodes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     Card
		chart bool
	}{
		{"online with history", Card{Name: "Doom Deathmatch 24/7", State: "online", Online: true, Map: "MAP01", Mode: "Deathmatch",
			Players: 7, Max: 16, Counts: true, Protocol: "zandronum", Address: "203.0.113.7:10666", Chart: sampleChart(), ChartMax: 16}, true},
		{"offline without history", Card{State: "offline", Protocol: "ogp", Address: "[2001:db8::1]:27015"}, false},
		{"synthetic", Card{Name: "demo", State: "online", Online: true, Protocol: "gamespy2", Address: "127.0.0.1:29900",
			Chart: sampleChart(), Synthetic: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Render(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if img.Bounds() != image.Rect(0, 0, Width, Height) {
				t.Fatalf("size %v", img.Bounds())
			}
			if n := colours(img, img.Bounds()); n < 20 {
				t.Errorf("only %d colours: blank", n)
			}
			chartArea := image.Rect(margin+120, 440, Width-margin-40, Height-margin-20)
			if n := colours(img, chartArea); (n > 2) != tc.chart {
				t.Errorf("chart area has %d colours; chart drawn = %v", n, tc.chart)
			}
		})
	}
}

func colours(img image.Image, r image.Rectangle) int {
	seen := map[[4]uint32]bool{}
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			r, g, b, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, b, a}] = true
		}
	}
	return len(seen)
}

func TestClean(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Doom Server", "Doom Server"},
		{"controls", "a\x00b\x07c\x1bd\x7f", "abcd"},
		{"newlines collapse", "one\r\n\ttwo   three", "one two three"},
		{"leading space", "   x", "x"},
		{"bidi override", "abc\u202egnp.exe", "abcgnp.exe"},
		{"isolates and marks", "\u2067x\u2069\u200fy\u200e", "xy"},
		{"zero width", "a\u200bb\ufeffc", "abc"},
		{"invalid utf8", "a\xff\xfeb", "ab"},
		{"rtl kept", "שרת עברי", "שרת עברי"},
		{"bounded", strings.Repeat("x", 5000), strings.Repeat("x", maxText)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clean(tc.in); got != tc.want {
				t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestFit(t *testing.T) {
	loadFonts()
	face, err := opentype.NewFace(bold, &opentype.FaceOptions{Size: 64, DPI: 72})
	if err != nil {
		t.Fatal(err)
	}
	defer face.Close()
	for _, tc := range []struct {
		name, in string
		cut      bool
		replaced bool
	}{
		{"short", "Short name", false, false},
		{"long", strings.Repeat("Very long server name ", 20), true, false},
		{"wide glyphs", strings.Repeat("W", 100), true, false},
		{"missing glyphs", "服务器 サーバー", false, true},
		{"rtl", strings.Repeat("שרת ", 80), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fit(face, Clean(tc.in), 1104)
			if w := font.MeasureString(face, got); w > fixed.I(1104) {
				t.Errorf("%q measures %v > 1104 px", got, w.Ceil())
			}
			if strings.HasSuffix(got, "…") != tc.cut {
				t.Errorf("%q: ellipsis = %v, want %v", got, !tc.cut, tc.cut)
			}
			if strings.ContainsRune(got, utf8.RuneError) != tc.replaced {
				t.Errorf("%q: replacement = %v, want %v", got, !tc.replaced, tc.replaced)
			}
			if !utf8.ValidString(got) {
				t.Errorf("%q is not valid UTF-8", got)
			}
		})
	}
}

// TestHostileRender renders the worst inputs: no panic, still a card.
func TestHostileRender(t *testing.T) {
	for _, name := range []string{
		strings.Repeat("\u202e", 1000) + "evil",
		strings.Repeat("ﷺ", 300),
		"\x00\x01\x02",
		strings.Repeat("A\u0301\u0302\u0303\u0304", 200), // stacked combining marks
		string([]byte{0xff, 0xfe, 0xfd}),
	} {
		c := Card{Name: name, Map: name, Mode: name, State: name, Protocol: name, Address: name, Chart: []float64{math.NaN(), math.Inf(1), -5, 3}}
		if _, err := Render(c); err != nil {
			t.Errorf("%q: %v", name[:min(len(name), 20)], err)
		}
	}
}

// TestWriteSample writes testdata/card.png for a look by eye with -update.
func TestWriteSample(t *testing.T) {
	if os.Getenv("QUERYLENS_CARD_SAMPLE") == "" {
		t.Skip("set QUERYLENS_CARD_SAMPLE=1 to write testdata/card.png")
	}
	b, err := Render(Card{Name: "\x1c[Red]Doom\x1c- Deathmatch 24/7 · the longest running server name anyone has ever seen", State: "online", Online: true, Map: "MAP01", Mode: "Deathmatch",
		Players: 7, Max: 16, Counts: true, Protocol: "zandronum", Address: "203.0.113.7:10666", Chart: sampleChart(), ChartMax: 16, Synthetic: true})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll("testdata", 0o755)
	if err := os.WriteFile(filepath.Join("testdata", "card.png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// cpuPerOp reports the process CPU time per operation: on a shared,
// loaded machine it moves far less than wall time.
func cpuPerOp(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((bench.ProcessCPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func BenchmarkRender(b *testing.B) {
	c := Card{Name: "Doom Deathmatch 24/7", State: "online", Online: true, Map: "MAP01", Mode: "Deathmatch",
		Players: 7, Max: 16, Counts: true, Protocol: "zandronum", Address: "203.0.113.7:10666", Chart: sampleChart(), ChartMax: 16}
	b.ReportAllocs()
	defer cpuPerOp(b, bench.ProcessCPU())
	for b.Loop() {
		if _, err := Render(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDraw is Render without the PNG encoding, to tell the two apart.
func BenchmarkDraw(b *testing.B) {
	c := Card{Name: "Doom Deathmatch 24/7", State: "online", Online: true, Map: "MAP01", Mode: "Deathmatch",
		Players: 7, Max: 16, Counts: true, Protocol: "zandronum", Address: "203.0.113.7:10666", Chart: sampleChart(), ChartMax: 16}
	defer cpuPerOp(b, bench.ProcessCPU())
	for b.Loop() {
		if _, err := Draw(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderParallel is the loaded case: cards rendered on every core
// at once (many servers' cards expiring together).
func BenchmarkRenderParallel(b *testing.B) {
	c := Card{Name: "Doom Deathmatch 24/7", State: "online", Online: true, Map: "MAP01", Mode: "Deathmatch",
		Players: 7, Max: 16, Counts: true, Protocol: "zandronum", Address: "203.0.113.7:10666", Chart: sampleChart(), ChartMax: 16}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := Render(c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBaselineStdlibPNG is the baseline: the same drawing encoded as
// RGBA by image/png at its default compression, as a plain implementation
// would.
func BenchmarkBaselineStdlibPNG(b *testing.B) {
	c := Card{Name: "Doom Deathmatch 24/7", State: "online", Online: true, Map: "MAP01", Mode: "Deathmatch",
		Players: 7, Max: 16, Counts: true, Protocol: "zandronum", Address: "203.0.113.7:10666", Chart: sampleChart(), ChartMax: 16}
	defer cpuPerOp(b, bench.ProcessCPU())
	for b.Loop() {
		img, err := Draw(c)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzText renders any text in every field: no panic, and every line fits
// its box.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "Doom", "\u202eevil", "服务器", strings.Repeat("W", 300), "\xff\xfe", "a\u0301\u0302"} {
		f.Add(s)
	}
	loadFonts()
	face, err := opentype.NewFace(bold, &opentype.FaceOptions{Size: 64, DPI: 72})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := fit(face, Clean(s), 1104)
		if font.MeasureString(face, got) > fixed.I(1104) {
			t.Fatalf("%q does not fit", got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("%q is not valid UTF-8", got)
		}
	})
}
