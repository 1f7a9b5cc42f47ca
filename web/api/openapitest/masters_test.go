package openapitest

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/masters"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// TestMasterListsMatchOpenAPI validates the answers of the masters
// handler (package masters, mounted by web.New) against openapi.yaml:
// the demo's Steam-like, Quake III and Zandronum masters on loopback, through a real
// relay, listed by the site as serve builds it, and its errors.
func TestMasterListsMatchOpenAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := demo.Start(ctx, demo.Config{Servers: 1, A2SServers: 2, A2SList: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	logger := slog.New(slog.DiscardHandler)
	rs := relay.New(relay.Config{AllowTargets: d.Prefixes(), CacheKey: codecs.QueryKey}, logger)
	defer rs.Shutdown(context.Background())
	specs := []server.MasterSpec{
		{Protocol: "a2s", Addr: d.A2SMaster(), Filter: `\appid\440`, Label: "Steam", Kept: true},
		{Protocol: "quake3", Addr: d.Quake3Master(), Kept: true},
		{Protocol: "zandronum", Addr: d.Master(), Kept: true},
		{Protocol: "quakeworld", Addr: "127.0.0.1:27000"}, // never asked: the page would ask it
	}
	k, err := masters.New(masters.Config{Masters: specs, Exchanger: rs, Allow: rs.CheckTarget, Logger: logger,
		States: &masters.CacheStates{Relay: rs}, Pacer: masters.NewLocalPacer(10*time.Millisecond, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h, err := web.New(web.Config{Exchanger: rs, StatusTimeout: time.Second, Masters: specs, MasterLists: k})
	if err != nil {
		t.Fatal(err)
	}
	v := newValidator(t)
	for _, tc := range []struct {
		name, path string
		status     int
		want       string
	}{
		{"steam", "/api/v1/masters/a2s/" + d.A2SMaster(), 200, `"label":"Steam"`},
		{"steam, another game", "/api/v1/masters/a2s/" + d.A2SMaster() + `?filter=%5Cappid%5C730`, 200, `\\appid\\730`},
		{"quake3", "/api/v1/masters/quake3/" + d.Quake3Master(), 200, `"protocol":"quake3"`},
		{"zandronum", "/api/v1/masters/zandronum/" + d.Master(), 200, `"protocol":"zandronum"`},
		{"quakeworld is asked by the page", "/api/v1/masters/quakeworld/127.0.0.1:27000", 404, "relay"},
		{"not configured", "/api/v1/masters/a2s/127.0.0.1:9", 404, "not configured"},
		{"bad filter", "/api/v1/masters/quake3/" + d.Quake3Master() + "?filter=%01", 400, "filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := roundTrip(t, h, "GET", tc.path, "")
			if x.resp.StatusCode != tc.status || !strings.Contains(string(x.body), tc.want) {
				t.Fatalf("status %d, want %d with %s: %s", x.resp.StatusCode, tc.status, tc.want, x.body)
			}
			for _, e := range x.validate(v) {
				t.Errorf("%s", e)
			}
		})
	}
}
