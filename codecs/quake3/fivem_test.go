package quake3_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/quake3"
)

func fivemGoldens(t testing.TB) []golden {
	t.Helper()
	paths, err := filepath.Glob("testdata/fivem/*.hex")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden packets: %v", err)
	}
	var gs []golden
	for _, p := range paths {
		b, source := codectest.ReadHex(t, p)
		gs = append(gs, golden{name: strings.TrimSuffix(filepath.Base(p), ".hex"), source: source, b: b})
	}
	return gs
}

// TestFiveMGolden: the FiveM goldens (testdata/fivem) decode as
// testdata/fivem/*.golden say, their spans tiling them; the row's
// version is iv, the text UTF-8, and every reply says what it leaves
// to HTTP.
func TestFiveMGolden(t *testing.T) {
	c := &quake3.FiveMCodec{}
	for _, g := range fivemGoldens(t) {
		t.Run(g.name, func(t *testing.T) {
			m, err := c.Decode([][]byte{g.b}, codecs.DecodeOptions{Spans: true})
			if err != nil {
				t.Fatal(err)
			}
			out := codecs.AppendDump([]byte("# "+g.source+"\n"), m)
			out = append(m.AppendJSON(append(out, "json: "...)), '\n')
			codectest.Golden(t, filepath.Join("testdata/fivem", g.name+".golden"), out)
			codectest.SpansTile(t, m, 0)
			if k, conf := c.Detect(g.b); k != m.Kind || conf == codecs.NotMine {
				t.Errorf("Detect = %q %d", k, conf)
			}
			if m.Kind == codecs.KindResponse {
				if got, _, _ := codecs.Detect(g.b); got == nil || got.Name() != quake3.ProtocolFiveM {
					t.Errorf("the registry detects %v", got)
				}
				if n, _ := m.Fields.Get("not_queried"); m.Info.Version == "" || len(m.Warnings) != 0 || n != quake3.NotQueried {
					t.Errorf("info %+v, warnings %q, not_queried %v", m.Info, m.Warnings, n)
				}
			}
			codectest.Prefixes(t, g.b, func(p []byte) error {
				_, err := c.Decode([][]byte{p}, codecs.DecodeOptions{Spans: true})
				return err
			}, nil)
		})
	}
	m, _ := c.Decode([][]byte{packet(t, "fivem/info")}, codecs.DecodeOptions{})
	if m.Info.Name != "Los Santos ★ RP" || m.Info.NumPlayers != 7 || m.Info.MaxPlayers != 48 || m.Info.Version != "7290" {
		t.Errorf("info %+v", m.Info)
	}
}

// TestFiveMQuery: GameDig's question, the reply it waits for.
func TestFiveMQuery(t *testing.T) {
	c := &quake3.FiveMCodec{}
	q, err := c.NewQuery(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := q.Start(); string(s[0]) != "\xff\xff\xff\xffgetinfo xxx" || c.CheckQuery(s[0]) != nil {
		t.Fatalf("Start = %q", s)
	}
	if c.CheckQuery([]byte("\xff\xff\xff\xffgetstatus")) == nil {
		t.Error("CheckQuery accepts getstatus")
	}
	if _, done, err := q.Feed(packet(t, "status-ioq3")); done || err == nil {
		t.Errorf("Feed(statusResponse) = %v, %v", done, err)
	}
	if _, done, err := q.Feed(packet(t, "info-ioq3")); done || err == nil {
		t.Errorf("Feed(ioquake3's infoResponse) = %v, %v", done, err)
	}
	if _, done, err := q.Feed(packet(t, "fivem/info")); !done || err != nil {
		t.Fatalf("Feed = %v, %v", done, err)
	}
	if m, err := q.Result(codecs.DecodeOptions{}); err != nil || m.Info.Name == "" {
		t.Fatalf("Result = %+v, %v", m, err)
	}
	if _, err := c.NewQuery(map[string]string{"challenge": "a b"}); err == nil {
		t.Error("a challenge with a space is accepted")
	}
}

// FuzzDecodeFiveM: never panics; a reply that decodes re-encodes to the
// same bytes' meaning (Decode → Append → Decode).
func FuzzDecodeFiveM(f *testing.F) {
	for _, g := range fivemGoldens(f) {
		f.Add(g.b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, _ := (&quake3.FiveMCodec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true}); m == nil {
			t.Fatal("nil message")
		}
		r, err := quake3.DecodeFiveMResponse(b)
		if err != nil {
			var e *codecs.Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) || e.Protocol != quake3.ProtocolFiveM {
				t.Fatalf("err = %v", err)
			}
			return
		}
		enc, err := quake3.AppendFiveMResponse(nil, r.Vars)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := quake3.DecodeFiveMResponse(enc)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip: %v\n %+v\n %+v", err, r, r2)
		}
		if enc2, _ := quake3.AppendFiveMResponse(nil, r2.Vars); !bytes.Equal(enc, enc2) {
			t.Fatal("encoding is not stable")
		}
	})
}
