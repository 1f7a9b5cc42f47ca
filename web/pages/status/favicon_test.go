package status

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
	"github.com/querylens/querylens/server"
)

func pngOf(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestFavicon: a Minecraft server's favicon shows on its status page as an
// image, after image.DecodeConfig agrees it is a PNG of at most 64×64,
// and never as a field's text; anything else shows nothing.
func TestFavicon(t *testing.T) {
	small := pngOf(t, 64, 64)
	for _, tc := range []struct {
		name, b64 string
		ok        bool
	}{
		{"64×64 PNG", small, true},
		{"wrapped every 76 characters", small[:76] + "\n" + small[76:], true},
		{"128×128 PNG", pngOf(t, 128, 128), false},
		{"not base64", "!!!!", false},
		{"a GIF", base64.StdEncoding.EncodeToString([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")), false},
		// A header that says 16×16 and then stops: the codec's check by
		// hand passes it; image.DecodeConfig reads the same header.
		{"a PNG cut after its header", small[:44], true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := favicon(codecs.Object{{Key: "ok", Value: true}, {Key: "png_base64", Value: tc.b64}})
			if (got != "") != tc.ok {
				t.Fatalf("favicon = %.60q, want shown %v", got, tc.ok)
			}
		})
	}

	js := `{"description":"Icon","players":{"online":1,"max":2},"version":{"name":"1.21","protocol":767},"favicon":"data:image/png;base64,` + small + `"}`
	m, err := (&minecraft.Codec{}).Decode([][]byte{minecraft.AppendStatusResponse(nil, []byte(js))}, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := server.New(minecraft.Protocol, "127.0.0.1:25565", nil)
	if err != nil {
		t.Fatal(err)
	}
	v := newView(server.Report{Ref: ref, Codec: &minecraft.Codec{}, State: server.Online, Msg: m}, "http://x")
	if v.Favicon == "" {
		t.Fatal("no favicon in the view")
	}
	for _, kv := range v.Extra {
		if kv.Key == "favicon" {
			t.Error("the favicon is among the fields shown as text")
		}
	}
	if c := (&Handler{}).cardOf(v, nil); c.Icon == nil || c.Icon.Bounds().Dx() != 64 {
		t.Error("the card has no icon")
	}
	var out bytes.Buffer
	if err := Article(v, "t").Render(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `src="data:image/png;base64,`+small[:20]) || !strings.Contains(out.String(), `data-testid="server-favicon"`) {
		t.Errorf("the page has no favicon image: %.300s", out.String())
	}
}
