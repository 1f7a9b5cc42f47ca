package layout_test

import (
	"testing"

	"github.com/querylens/querylens/web/layout"
)

func TestAcceptedCodings(t *testing.T) {
	for _, tc := range []struct {
		header string
		br, gz float64
	}{
		{"", 0, 0},
		{"gzip", 0, 1},
		{"deflate, gzip;q=1.0", 0, 1},
		{"gzip;q=0", 0, 0},
		{"gzip; q=0, deflate", 0, 0},
		{"br, GZIP", 1, 1},
		{"gzip, deflate, br, zstd", 1, 1},
		{"br;q=0.5, gzip;q=0.8", 0.5, 0.8},
		{"br;q=0", 0, 0},
		{"*", 1, 1},
		{"*;q=0.3, br;q=0", 0, 0.3},
		{"identity", 0, 0},
		{"x-gzip", 0, 1},
		{"br;q=2, gzip;q=abc", 0, 0}, // out of range, malformed
		{"br;q=NaN, gzip;q=-0.5", 0, 0},
		{" BR ; Q=0.7 ", 0.7, 0},
		{"br;level=5", 1, 0}, // other parameters are ignored
	} {
		br, gz := layout.AcceptedCodings(tc.header)
		if br != tc.br || gz != tc.gz {
			t.Errorf("layout.AcceptedCodings(%q) = br %v, gzip %v; want %v, %v", tc.header, br, gz, tc.br, tc.gz)
		}
	}
}

// FuzzAcceptedCodings: any Accept-Encoding header gives quality values in
// [0, 1], and the choice never panics. Seeds: a browser's header, q-values,
// wildcards, malformed parameters.
func FuzzAcceptedCodings(f *testing.F) {
	for _, s := range []string{"gzip, deflate, br, zstd", "br;q=0.5, gzip;q=0.8", "*;q=0", "gzip;q=", "br;;q=1;q=0", ",,;", "x-gzip;q=1e400", "br;q=NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		br, gz := layout.AcceptedCodings(h)
		if !(br >= 0 && br <= 1 && gz >= 0 && gz <= 1) {
			t.Errorf("layout.AcceptedCodings(%q) = %v, %v", h, br, gz)
		}
	})
}
