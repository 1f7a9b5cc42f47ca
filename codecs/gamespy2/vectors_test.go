package gamespy2

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// vectorFiles are the published test vectors: a copy of the spec's
// vectors/gamespy2.json (each entry's source names the reference client
// that decoded it), kept with the tests so they need nothing outside the
// repository.
var vectorFiles = []string{"testdata/vectors.json"}

type vector struct {
	Name        string          `json:"name"`
	RequestHex  string          `json:"request_hex"`
	ResponseHex string          `json:"response_hex"`
	Exchanges   []exchange      `json:"exchanges"`
	Expected    json.RawMessage `json:"expected"`
}

type exchange struct {
	RequestHex  string `json:"request_hex"`
	ResponseHex string `json:"response_hex"`
}

func loadVectors(t *testing.T) []vector {
	var all []vector
	seen := map[string]bool{}
	for _, f := range vectorFiles {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) && f != vectorFiles[0] {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var vs []vector
		if err := json.Unmarshal(b, &vs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range vs {
			if !seen[v.Name] {
				seen[v.Name] = true
				all = append(all, v)
			}
		}
	}
	return all
}

func (v *vector) exchanges() []exchange {
	if v.ResponseHex != "" {
		return append([]exchange{{v.RequestHex, v.ResponseHex}}, v.Exchanges...)
	}
	return v.Exchanges
}

func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			var dgs [][]byte
			for _, x := range v.exchanges() {
				resp := codectest.Unhex(t, x.ResponseHex)
				if x.RequestHex == "" {
					dgs = append(dgs, resp)
					continue
				}
				reqb := codectest.Unhex(t, x.RequestHex)
				dgs = append(dgs, reqb, resp)
				checkExchange(t, reqb, resp)
			}
			m, err := (&Codec{}).Decode(dgs, codecs.DecodeOptions{})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			checkExpected(t, v.Expected, m)
		})
	}
}

// checkExchange runs one request and its reply through the typed API both
// ways: the request re-encodes to its bytes, the reply decodes with and
// without the request, and a complete reply re-encodes to its bytes.
func checkExchange(t *testing.T, reqb, resp []byte) {
	t.Helper()
	q, err := DecodeRequest(reqb)
	if err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	if b, _ := AppendRequest(nil, q); !bytes.Equal(b, reqb) {
		t.Errorf("AppendRequest = %x, want %x", b, reqb)
	}
	r, err := DecodeResponse(resp, &q)
	if err != nil {
		t.Fatalf("DecodeResponse: %v", err)
	}
	if r.Sections&^q.Sections() != 0 || (!r.Truncated && r.Sections != q.Sections()) {
		t.Errorf("sections %b, asked %b", r.Sections, q.Sections())
	}
	if !r.Truncated && r.Trailing == 0 {
		if b, err := AppendResponse(nil, r, q); err != nil || !bytes.Equal(b, resp) {
			t.Errorf("AppendResponse = %x, %v\nwant %x", b, err, resp)
		}
	}
	if len(q.Server.List)+len(q.Players.List)+len(q.Teams.List) == 0 {
		inferred, err := DecodeResponse(resp, nil)
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "decoded without the request", r, inferred)
	}
}

// checkExpected compares the decoded message with the vector's truth
// (rules, players and teams as fields and rows) and with the parts of the
// reference clients' output that they get right.
func checkExpected(t *testing.T, raw json.RawMessage, m *codecs.Message) {
	t.Helper()
	var exp struct {
		Truth   map[string]json.RawMessage `json:"truth"`
		GameDig *struct {
			Name       string `json:"name"`
			Map        string `json:"map"`
			Password   bool   `json:"password"`
			NumPlayers int    `json:"numplayers"`
			Players    []struct {
				Name string `json:"name"`
			} `json:"players"`
		} `json:"gamedig"`
		QStat []struct {
			Name       string `json:"name"`
			Map        string `json:"map"`
			NumPlayers int    `json:"numplayers"`
			MaxPlayers int    `json:"maxplayers"`
		} `json:"qstat"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(codecs.AppendJSON(nil, m.Fields), &fields); err != nil {
		t.Fatal(err)
	}
	for key, want := range exp.Truth {
		var w any
		json.Unmarshal(want, &w)
		switch key {
		case "rules":
			equal(t, key, w, fields[key])
		case "players", "teams":
			got, _ := fields[key].(map[string]any)
			wm, _ := w.(map[string]any)
			for _, k := range []string{"fields", "rows"} {
				if !reflect.DeepEqual(wm[k], got[k]) {
					t.Errorf("%s.%s: want %v, got %v", key, k, wm[k], got[k])
				}
			}
		case "truncated":
			if truncated := contains(m.Warnings, codecs.WarnTruncated); w != truncated {
				t.Errorf("truncated: want %v, warnings %v", w, m.Warnings)
			}
		default:
			t.Logf("truth key %q not checked", key)
		}
	}
	in := m.Info
	if g := exp.GameDig; g != nil {
		if in.Name != g.Name || in.Map != g.Map || in.Password != g.Password || in.NumPlayers != g.NumPlayers || len(in.Players) != len(g.Players) {
			t.Errorf("gamedig saw %+v, info %+v", g, in)
		}
		for i := range g.Players {
			if i < len(in.Players) && in.Players[i].Name != g.Players[i].Name {
				t.Errorf("player %d: gamedig %q, info %q", i, g.Players[i].Name, in.Players[i].Name)
			}
		}
	}
	for _, q := range exp.QStat {
		if in.Name != q.Name || in.Map != q.Map || in.NumPlayers != q.NumPlayers || in.MaxPlayers != q.MaxPlayers {
			t.Errorf("qstat saw %+v, info %+v", q, in)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
