package status

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png" // image.DecodeConfig reads the favicons' headers
	"strings"

	"github.com/querylens/querylens/codecs"
)

// maxFaviconBytes bounds a favicon's PNG: 64×64 RGBA uncompressed is 16
// KiB; a server's icon is far smaller.
const maxFaviconBytes = 64 << 10

// favicon returns the server's icon as a data URI to show on the page,
// from a decoded "favicon" field (a protocol's codec has checked its
// header by hand: codecs/minecraft), or "" when there is none or it is
// not a PNG of at most 64×64. The bytes are checked again here with
// image.DecodeConfig, on the server, before any browser decodes them,
// and sent as this base64 encodes them.
func favicon(v any) string {
	f, ok := v.(codecs.Object)
	if !ok {
		return ""
	}
	b64, _ := f.Get("png_base64")
	s, _ := b64.(string)
	if s == "" || len(s) > maxFaviconBytes*4/3+256 {
		return ""
	}
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' {
			return -1
		}
		return r
	}, s)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) > maxFaviconBytes {
		return ""
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil || format != "png" || cfg.Width < 1 || cfg.Height < 1 || cfg.Width > 64 || cfg.Height > 64 {
		return ""
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)
}

// faviconImage decodes a data URI that favicon returned (its size already
// checked: at most 64×64), for the card; nil for "" or anything that does
// not decode.
func faviconImage(uri string) image.Image {
	const prefix = "data:image/png;base64,"
	if !strings.HasPrefix(uri, prefix) {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(uri[len(prefix):])
	if err != nil {
		return nil
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width > 64 || cfg.Height > 64 {
		return nil
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	return img
}
