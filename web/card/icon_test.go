package card

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"testing"
)

// TestIcon: a server's icon is drawn at the right of the name; one larger
// than IconSize is not drawn at all.
func TestIcon(t *testing.T) {
	red := image.NewRGBA(image.Rect(0, 0, 64, 64))
	draw.Draw(red, red.Bounds(), image.NewUniform(color.RGBA{R: 255, A: 255}), image.Point{}, draw.Src)
	big := image.NewRGBA(image.Rect(0, 0, 128, 128))
	draw.Draw(big, big.Bounds(), image.NewUniform(color.RGBA{R: 255, A: 255}), image.Point{}, draw.Src)
	at := image.Point{Width - margin - 32, 84 + 32} // the icon's middle
	for _, tc := range []struct {
		name  string
		icon  image.Image
		drawn bool
	}{{"64×64", red, true}, {"none", nil, false}, {"128×128", big, false}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Render(Card{Name: "A Minecraft server", State: "online", Online: true, Protocol: "Minecraft Java", Address: "127.0.0.1:25565", Icon: tc.icon})
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			r, g, _, _ := img.At(at.X, at.Y).RGBA()
			if got := r > 0xc000 && g < 0x4000; got != tc.drawn {
				t.Errorf("red at the icon's place: %v, want %v", got, tc.drawn)
			}
		})
	}
}
