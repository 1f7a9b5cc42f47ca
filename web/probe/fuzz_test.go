package probe_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/probe"
)

// instant answers every query at once with one fixed reply of the fake
// protocol, whatever the target, so that fuzzing never waits.
type instant struct{}

func (instant) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	q.Start()
	_, done, err := q.Feed([]byte("Rfuzz|map|1|2|a"))
	return netquery.Result{Sent: 1, Received: 1, Done: done}, err
}

// FuzzProbeQuery sends any query string to GET /probe: the answer is a
// 200 exposition that parses, or a 400 whose text says what was wrong;
// never a panic or another status.
func FuzzProbeQuery(f *testing.F) {
	for _, seed := range []string{
		"protocol=webtest&target=10.0.0.1:7777",             // a good probe
		"protocol=webtest&target=10.0.0.1:7777&format=json", // as JSON
		"protocol=webtest",                                  // no target
		"protocol=webtest&target=%zz",                       // a bad escape
		"protocol=webtest&target=[::1]:7777&x=1&x=2",        // a repeated option
		"protocol=zandronum&target=203.0.113.7:10666&version=0.04",
		";;&&==",
	} {
		f.Add(seed)
	}
	h := routes(&probe.Handler{Exchanger: instant{}, Logger: discard})
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseRequestURI("/probe?" + raw); err != nil || strings.ContainsAny(raw, "# ") {
			return // not a query string a request line can carry
		}
		rec := get(h, "/probe?"+raw, "192.0.2.1:5000")
		switch rec.Code {
		case http.StatusOK:
			if rec.Header().Get("Content-Type") == probe.ContentType {
				parse(t, rec.Body.Bytes())
			}
		case http.StatusBadRequest:
			if !strings.HasPrefix(rec.Body.String(), "probe: ") {
				t.Fatalf("400 without a reason: %q", rec.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, raw, rec.Body)
		}
	})
}

// FuzzExposition puts any name, map and game in the info metric's labels:
// Prometheus's parser must read back exactly what was written (invalid
// UTF-8 replaced).
func FuzzExposition(f *testing.F) {
	f.Add("The \"Best\" \\ Server", "MAP01", "ctf")
	f.Add("line\nfeed", "\xff\xfe", "")
	f.Add("", "", "}\"{")
	f.Fuzz(func(t *testing.T, name, mapName, game string) {
		s := server.Summary{Protocol: "webtest", Address: "10.0.0.1:7777", Name: name, Map: mapName, Game: game, State: server.Online}
		fams := parse(t, probe.AppendExposition(nil, s))
		l := labels(fams["querylens_probe_info"].GetMetric()[0])
		for k, want := range map[string]string{"name": name, "map": mapName, "game": game} {
			if want = strings.ToValidUTF8(want, "\uFFFD"); l[k] != want {
				t.Fatalf("%s %q came back %q", k, want, l[k])
			}
		}
	})
}
