package probe_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/internal/fakeserver"
	"github.com/querylens/querylens/web/probe"
)

// fakes plays one server in each state.
func fakes() *fakeserver.Exchanger {
	return &fakeserver.Exchanger{
		Replies: map[string][]byte{
			"10.0.0.1:7777": []byte("RThe \"Best\" \\ Server\n|map01|3|16|alice,bob,bot:carl"),
			"10.0.0.2:7777": []byte("D"),
			"10.0.0.3:7777": []byte("B"),
			"10.0.0.4:7777": []byte("Xjunk"),
			"10.0.0.5:7777": nil, // silent
		},
		Refuse: map[string]wire.Code{"10.0.0.6:7777": wire.CodeDenied},
	}
}

func fakeHandler() *probe.Handler {
	return &probe.Handler{Exchanger: fakes(), Timeout: 50 * time.Millisecond, Logger: discard,
		Base: func(*http.Request) string { return "https://ql.example.org" }}
}

// parse reads a text exposition as Prometheus does, failing the test on
// any error of the format.
func parse(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("expfmt: %v\n%s", err, body)
	}
	return fams
}

// gauge is the value of the family's only sample, and false without one.
func gauge(fams map[string]*dto.MetricFamily, name string) (float64, bool) {
	f, ok := fams[name]
	if !ok || len(f.GetMetric()) != 1 {
		return 0, false
	}
	return f.GetMetric()[0].GetGauge().GetValue(), true
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// TestProbeExposition checks the answer for a server in every state that
// the fake protocol can produce: it parses with Prometheus's own parser,
// every family has HELP and TYPE gauge, exactly the state found is 1, and
// the numbers are present only where the server answered.
func TestProbeExposition(t *testing.T) {
	h := routes(fakeHandler())
	for _, tc := range []struct {
		name, target string
		state        server.State
		success      float64
		players      bool
	}{
		{"online", "10.0.0.1:7777", server.Online, 1, true},
		{"rate-limited", "10.0.0.2:7777", server.RateLimited, 0, false},
		{"banned", "10.0.0.3:7777", server.Banned, 0, false},
		{"malformed", "10.0.0.4:7777", server.Malformed, 0, false},
		{"offline", "10.0.0.5:7777", server.Offline, 0, false},
		{"refused", "10.0.0.6:7777", server.Refused, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(h, "/probe?protocol=webtest&target="+tc.target, "192.0.2.1:5000")
			if rec.Code != 200 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != probe.ContentType {
				t.Errorf("Content-Type %q", ct)
			}
			for _, line := range strings.Split(rec.Body.String(), "\n") {
				if name, ok := strings.CutPrefix(line, "# TYPE "); ok && !strings.HasSuffix(name, " gauge") {
					t.Errorf("not a gauge: %s", line)
				}
			}
			fams := parse(t, rec.Body.Bytes())
			for name, f := range fams {
				if f.GetHelp() == "" || f.GetType() != dto.MetricType_GAUGE {
					t.Errorf("%s: help %q, type %v", name, f.GetHelp(), f.GetType())
				}
			}
			if v, ok := gauge(fams, "querylens_probe_success"); !ok || v != tc.success {
				t.Errorf("success %v (present %v), want %v", v, ok, tc.success)
			}
			st := fams["querylens_probe_state"]
			if got := len(st.GetMetric()); got != len(server.States()) {
				t.Fatalf("%d state series, want one per state (%d)", got, len(server.States()))
			}
			for _, m := range st.GetMetric() {
				name := labels(m)["state"]
				want := 0.0
				if name == tc.state.String() {
					want = 1
				}
				if m.GetGauge().GetValue() != want {
					t.Errorf("state %q = %v, want %v", name, m.GetGauge().GetValue(), want)
				}
			}
			_, hasPlayers := fams["querylens_probe_players"]
			if hasPlayers != tc.players {
				t.Errorf("players present %v, want %v", hasPlayers, tc.players)
			}
			info := fams["querylens_probe_info"]
			if len(info.GetMetric()) != 1 {
				t.Fatalf("info: %v", info)
			}
			l := labels(info.GetMetric()[0])
			if l["protocol"] != "webtest" || l["address"] != tc.target {
				t.Errorf("info labels %v", l)
			}
			if !tc.players {
				return
			}
			for name, want := range map[string]float64{
				"querylens_probe_players": 3, "querylens_probe_max_players": 16, "querylens_probe_bots": 1,
				"querylens_probe_rtt_seconds": 0.012, "querylens_probe_cached": 0,
			} {
				if v, ok := gauge(fams, name); !ok || v != want {
					t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
				}
			}
			// Quotes and backslashes in a name survive the escaping
			// (control characters are stripped before).
			if l["name"] != "The \"Best\" \\ Server" || l["map"] != "map01" || l["game"] != "Capture the Flag" {
				t.Errorf("info labels %q", l)
			}
		})
	}
}

// TestExpositionEscapes checks label values the text format must escape,
// and invalid UTF-8, which it cannot carry.
func TestExpositionEscapes(t *testing.T) {
	for _, name := range []string{"a\nb", "line\nfeed", `q"uo\te`, "bad\xffutf8", ""} {
		b := probe.AppendExposition(nil, server.Summary{Protocol: "webtest", Address: "10.0.0.1:7777", Name: name, State: server.Online})
		fams := parse(t, b)
		got := labels(fams["querylens_probe_info"].GetMetric()[0])["name"]
		if want := strings.ToValidUTF8(name, "\uFFFD"); got != want {
			t.Errorf("name %q came back %q", want, got)
		}
	}
}

// TestProbeJSON checks ?format=json: the server.Summary every JSON view
// shares.
func TestProbeJSON(t *testing.T) {
	h := routes(fakeHandler())
	rec := get(h, "/probe?protocol=webtest&target=10.0.0.1:7777&format=json", "192.0.2.1:5000")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var s server.Summary
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.State != server.Online || s.Players != 3 || s.MaxPlayers != 16 || s.Map != "map01" || s.Address != "10.0.0.1:7777" {
		t.Errorf("summary %+v", s)
	}
	if !strings.Contains(rec.Body.String(), `"state":"online"`) {
		t.Errorf("state not by name: %s", rec.Body)
	}
}

// TestProbeBadParameters checks that every bad request is a 400 whose
// text names the parameter, and that none asks a server.
func TestProbeBadParameters(t *testing.T) {
	ex := fakes()
	h := routes(&probe.Handler{Exchanger: ex, Timeout: 50 * time.Millisecond, Logger: discard})
	for _, tc := range []struct{ name, query, want string }{
		{"no protocol", "target=10.0.0.1:7777", "parameter protocol is missing"},
		{"no target", "protocol=webtest", "parameter target is missing"},
		{"unknown protocol", "protocol=nosuch&target=10.0.0.1:7777", "parameter protocol"},
		{"target without port", "protocol=webtest&target=10.0.0.1", "parameter target"},
		{"target port 0", "protocol=webtest&target=10.0.0.1:0", "parameter target"},
		{"two targets", "protocol=webtest&target=10.0.0.1:7777&target=10.0.0.2:7777", "parameter target given more than once"},
		{"two protocols", "protocol=webtest&protocol=webtest&target=10.0.0.1:7777", "parameter protocol given more than once"},
		{"bad format", "protocol=webtest&target=10.0.0.1:7777&format=xml", "parameter format"},
		{"unknown option", "protocol=webtest&target=10.0.0.1:7777&colour=red", "query option"},
		{"repeated option", "protocol=webtest&target=10.0.0.1:7777&x=1&x=2", "parameter x given more than once"},
		{"bad escape", "protocol=webtest&target=%zz", "query string does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(h, "/probe?"+tc.query, "192.0.2.1:5000")
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", rec.Code, rec.Body)
			}
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("body %q, want it to contain %q", rec.Body, tc.want)
			}
		})
	}
	if n := ex.CallCount(); n != 0 {
		t.Errorf("bad requests asked %d servers", n)
	}
}

// TestShieldsJSON checks the shields.io endpoint for each state: the
// schema, message and colour, and the headers that let any site read and
// cache it.
func TestShieldsJSON(t *testing.T) {
	h := routes(fakeHandler())
	for _, tc := range []struct {
		name, path     string
		status         int
		message, color string
	}{
		{"online", "/s/webtest/10.0.0.1:7777/shields.json", 200, "3/16 online", "brightgreen"},
		{"rate-limited", "/s/webtest/10.0.0.2:7777/shields.json", 200, "rate-limited", "orange"},
		{"malformed", "/s/webtest/10.0.0.4:7777/shields.json", 200, "malformed reply", "red"},
		{"offline", "/s/webtest/10.0.0.5:7777/shields.json", 200, "offline", "lightgrey"},
		{"refused", "/s/webtest/10.0.0.6:7777/shields.json", 200, "refused", "lightgrey"},
		{"unknown protocol", "/s/nosuch/10.0.0.1:7777/shields.json", 404, `unknown protocol "nosuch"`, "lightgrey"},
		{"bad address", "/s/webtest/nowhere/shields.json", 400, `"nowhere" is not host:port`, "lightgrey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(h, tc.path, "192.0.2.1:5000")
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			var b probe.Shields
			if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
				t.Fatal(err)
			}
			if b.SchemaVersion != 1 || b.Message != tc.message || b.Color != tc.color || b.Label == "" {
				t.Errorf("badge %+v, want message %q colour %q", b, tc.message, tc.color)
			}
			if tc.status == 200 && b.Label != "Web Test" {
				t.Errorf("label %q, want the protocol's title", b.Label)
			}
			hdr := rec.Header()
			if hdr.Get("Access-Control-Allow-Origin") != "*" || hdr.Get("Content-Type") != "application/json" {
				t.Errorf("CORS %q, Content-Type %q", hdr.Get("Access-Control-Allow-Origin"), hdr.Get("Content-Type"))
			}
			if !strings.HasPrefix(hdr.Get("Cache-Control"), "public, max-age=") {
				t.Errorf("Cache-Control %q", hdr.Get("Cache-Control"))
			}
			if !strings.Contains(hdr.Get("Content-Security-Policy"), "frame-ancestors *") {
				t.Errorf("CSP %q", hdr.Get("Content-Security-Policy"))
			}
		})
	}
}

// TestEmbed checks the embeddable card: the server's name, players and
// map, a link to the status page that leaves the frame, and a policy that
// lets any site frame it while running no script.
func TestEmbed(t *testing.T) {
	h := routes(fakeHandler())
	rec := get(h, "/s/webtest/10.0.0.1:7777/embed", "192.0.2.1:5000")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`data-testid="embed-name">The &#34;Best&#34; \ Server`,
		`data-testid="embed-players">3/16 players`,
		`data-testid="embed-map">map01`,
		`href="https://ql.example.org/s/webtest/10.0.0.1:7777" target="_blank" rel="noopener"`,
		`http-equiv="refresh"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
	csp := rec.Header().Get("Content-Security-Policy")
	if csp != probe.EmbedPolicy || !strings.Contains(csp, "frame-ancestors *") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q", csp)
	}
	if rec.Header().Get("X-Frame-Options") != "" {
		t.Errorf("X-Frame-Options %q", rec.Header().Get("X-Frame-Options"))
	}
	off := get(h, "/s/webtest/10.0.0.5:7777/embed", "192.0.2.1:5000")
	if off.Code != 200 || !strings.Contains(off.Body.String(), `data-state="offline"`) {
		t.Errorf("offline card: %d %s", off.Code, off.Body)
	}
}
