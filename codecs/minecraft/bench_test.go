package minecraft_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
)

// benchStatus is a vanilla status reply as a 1.21 server sends it: a
// chat component, a sample of players and a 64×64 favicon.
func benchStatus(tb testing.TB) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{R: 7, G: uint8(x * 4), B: uint8(y * 4), A: 255})
		}
	}
	var p bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		tb.Fatal(err)
	}
	js := `{"version":{"name":"1.21.4","protocol":769},"players":{"online":3,"max":20,"sample":[` +
		`{"name":"Notch","id":"00000000-0000-4000-8000-100000000000"},{"name":"jeb_","id":"00000000-0000-4000-8000-100000000001"},` +
		`{"name":"Alex","id":"00000000-0000-4000-8000-100000000002"}]},` +
		`"description":{"text":"","extra":[{"text":"querylens ","color":"gold","bold":true},{"text":"Nether Gate","color":"aqua"},{"text":"\n§7Java demo"}]},` +
		`"favicon":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(p.Bytes()) + `","enforcesSecureChat":true}`
	return minecraft.AppendStatusResponse(nil, []byte(js))
}

// BenchmarkDecodeStatus decodes a status reply with a favicon as the
// native client does (fields, no spans), as the browser's inspector does
// (spans too), and for the neutral view alone.
func BenchmarkDecodeStatus(b *testing.B) {
	reply := benchStatus(b)
	c := &minecraft.Codec{}
	for _, bc := range []struct {
		name string
		opt  codecs.DecodeOptions
	}{
		{"fields", codecs.DecodeOptions{}},
		{"spans", codecs.DecodeOptions{Spans: true}},
		{"nofields", codecs.DecodeOptions{NoFields: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				m, err := c.Decode([][]byte{reply}, bc.opt)
				if err != nil || m.Info.MaxPlayers != 20 || len(m.Warnings) != 0 {
					b.Fatalf("%v, %v", err, m.Warnings)
				}
			}
		})
	}
}
