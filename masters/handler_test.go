package masters

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/server"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// knownStates knows one server, as the history would.
type knownStates struct{}

func (knownStates) States(_ context.Context, refs []server.Ref) map[string]server.Summary {
	out := map[string]server.Summary{}
	for _, r := range refs {
		if r.Addr == "203.0.113.1:27015" {
			s := server.SummaryOfSample(r, history.Sample{Key: r.Key(), At: epoch.Add(-time.Minute), State: history.StateOnline,
				Name: "Demo TF2", Map: "ctf_2fort", Players: 12, MaxPlayers: 24, RTT: 31 * time.Millisecond})
			out[r.Key().String()] = s
		}
	}
	return out
}

func newHandlerKeeper(t *testing.T) *Keeper {
	list := append(addrs(2), a2s.Addr{IP: [4]byte{10, 0, 0, 7}, Port: 27015})
	fn := newFakeNet(newFakeClock())
	fn.handlers[steamAddr] = demo.NewA2SMaster(list, demo.Normal)
	return newKeeper(t, fn, func(c *Config) {
		c.States = knownStates{}
		c.Allow = func(ap netip.AddrPort) error {
			if ap.Addr().IsPrivate() {
				return errors.New("private")
			}
			return nil
		}
	}, "a2s="+steamAddr+`?filter=\appid\440&label=Steam`, "quake3="+q3Addr, "quakeworld=127.0.0.1:27000")
}

func TestHandlerGolden(t *testing.T) {
	k := newHandlerKeeper(t)
	get := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		k.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/masters/a2s/"+steamAddr, nil))
		return rec
	}
	get()
	waitIdle(t, k)
	rec := get()
	if rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != "*" || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, headers %v", rec.Code, rec.Header())
	}
	var ml server.MasterList
	if err := json.Unmarshal(rec.Body.Bytes(), &ml); err != nil {
		t.Fatalf("the body does not decode as a MasterList: %v", err)
	}
	var indented strings.Builder
	b, _ := json.MarshalIndent(json.RawMessage(rec.Body.Bytes()), "", "  ")
	indented.Write(b)
	indented.WriteString("\n")
	path := filepath.Join("testdata", "a2s-list.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(indented.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err, " (go test ./masters -run Golden -update writes it)")
	}
	if indented.String() != string(want) {
		t.Errorf("GET /api/v1/masters/a2s/%s:\n%s\nwant (%s):\n%s", steamAddr, indented.String(), path, want)
	}
}

func TestHandlerErrors(t *testing.T) {
	k := newHandlerKeeper(t)
	for _, tc := range []struct {
		method, path string
		status       int
		err          string
	}{
		{"GET", "/api/v1/masters/a2s/127.0.0.1:1", 404, "a2s master 127.0.0.1:1 is not configured"},
		{"GET", "/api/v1/masters/quakeworld/127.0.0.1:27000", 404, "asked by the page through the relay"},
		{"GET", "/api/v1/masters/nope/127.0.0.1:1", 400, `querylens does not speak "nope"`},
		{"GET", "/api/v1/masters/gamespy2/127.0.0.1:1", 400, "has no master"},
		{"GET", "/api/v1/masters/a2s/nohostport", 400, `"nohostport" is not host:port`},
		{"GET", "/api/v1/masters/a2s", 400, "want /api/v1/masters/{protocol}/{host:port}"},
		{"GET", "/api/v1/masters/a2s/" + steamAddr + "?filter=a&filter=b", 400, "filter given more than once"},
		{"GET", "/api/v1/masters/a2s/" + steamAddr + "?filter=%01", 400, "not printable"},
		{"GET", "/api/v1/masters/quake3/" + q3Addr + "?filter=Xonotic", 400, "want [GAME] PROTOCOL"},
		{"GET", "/api/v1/masters/a2s/" + steamAddr + "/datagrams?filter=x", 404, "never asked"},
		{"POST", "/api/v1/masters/a2s/" + steamAddr, 405, "only GET"},
		{"GET", "/api/v1/masters/a2s/" + steamAddr + "?after=-1", 400, `after: want one number of servers from 0 to 100000, not "-1"`},
		{"GET", "/api/v1/masters/a2s/" + steamAddr + "?after=x", 400, `not "x"`},
		{"GET", "/api/v1/masters/a2s/" + steamAddr + "?after=1&after=2", 400, `not "1,2"`},
		{"GET", "/api/v1/masters/a2s/" + steamAddr + "?after=100001", 400, `not "100001"`},
	} {
		rec := httptest.NewRecorder()
		k.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		var body struct{ Error string }
		json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != tc.status || !strings.Contains(body.Error, tc.err) || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s, want %d with %q", tc.method, tc.path, rec.Code, rec.Body.String(), tc.status, tc.err)
		}
	}
}

func TestHandlerDatagrams(t *testing.T) {
	k := newHandlerKeeper(t)
	listOf(t, k, "a2s", steamAddr, nil)
	rec := httptest.NewRecorder()
	k.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/masters/a2s/"+steamAddr+"/datagrams", nil))
	var body struct{ Sent, Received [][]byte }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 || len(body.Sent) != 1 || len(body.Received) != 1 {
		t.Fatalf("%d %s (%v)", rec.Code, rec.Body.String(), err)
	}
	if p, err := a2s.DecodeMasterReply(body.Received[0]); err != nil || len(p.Servers) != 3 || !p.End {
		t.Errorf("the kept reply decodes as %+v, %v", p, err)
	}
}

// TestHandlerAfter: ?after=N leaves out the first N servers and says so;
// an after past the list's end (a list replaced since) gives it whole.
func TestHandlerAfter(t *testing.T) {
	k := newHandlerKeeper(t)
	whole := listOf(t, k, "a2s", steamAddr, nil)
	for _, tc := range []struct {
		after          string
		offset, listed int
	}{
		{"", 0, 3}, {"0", 0, 3}, {"1", 1, 2}, {"3", 3, 0}, {"4", 0, 3},
	} {
		rec := httptest.NewRecorder()
		path := "/api/v1/masters/a2s/" + steamAddr
		if tc.after != "" {
			path += "?after=" + tc.after
		}
		k.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		var ml server.MasterList
		if err := json.Unmarshal(rec.Body.Bytes(), &ml); rec.Code != 200 || err != nil {
			t.Fatalf("after=%s: %d %s", tc.after, rec.Code, rec.Body.String())
		}
		if ml.Offset != tc.offset || len(ml.Servers) != tc.listed || ml.Total != 3 {
			t.Errorf("after=%s: offset %d, %d servers of %d; want offset %d, %d of 3", tc.after, ml.Offset, len(ml.Servers), ml.Total, tc.offset, tc.listed)
		}
		for i, sv := range ml.Servers {
			if want := whole.Servers[tc.offset+i].Address; sv.Address != want {
				t.Errorf("after=%s: server %d is %s, want %s", tc.after, i, sv.Address, want)
			}
		}
	}
}
