package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/relay/client"
	"github.com/querylens/querylens/server"
)

// TestServeDemo starts `querylens serve --demo` in-process on a free
// loopback port and checks the pages, the relay (through the CLI's own
// --relay path), the metrics, and a clean shutdown.
func TestServeDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() {
		done <- e.runServe(sctx, serveOptions{addr: "127.0.0.1:0", demo: true, demoServers: 5, demoA2S: 2, demoA2SList: 300, metrics: true}, ready)
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("serve ended: %v\n%s", err, errb.String())
	case <-ctx.Done():
		t.Fatal("serve did not start")
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"", 200, "querylens"},
		{"inspect", 200, "querylens"},
		{"healthz", 200, ""},
		{"metrics", 200, "querylens_"},
		{"s/quake9/127.0.0.1:1", 404, ""},
	} {
		resp, err := http.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("GET /%s: %d, want %d containing %q", tc.path, resp.StatusCode, tc.code, tc.want)
		}
	}

	// The demo master, through the relay, with the CLI's --relay path.
	master := strings.Fields(strings.SplitN(out.String(), "\n", 2)[0])[2]
	relayURL := "ws" + strings.TrimPrefix(base, "http") + "relay"
	// Each query ends when its answer (or refusal) arrives: the 10 s bound
	// is never waited for, and a loaded -race run cannot outlast it as it
	// could the default 2 s.
	stdout, stderr, code := runCLI(t, "", "master", "--timeout", "10s", "--relay", relayURL, master)
	if code != 0 {
		t.Fatalf("master via relay: exit %d: %s %s", code, stdout, stderr)
	}
	var list struct {
		Kind    string   `json:"kind"`
		Servers []string `json:"servers"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil || list.Kind != "master-list" || len(list.Servers) != 5 {
		t.Fatalf("master list: %v %+v", err, list)
	}
	stdout, _, code = runCLI(t, "", "query", "-p", "zandronum", "--timeout", "10s", "--relay", relayURL, list.Servers[0])
	if code != 0 || !strings.Contains(stdout, `"kind":"response"`) && !strings.Contains(stdout, `"kind":"denied"`) {
		t.Fatalf("query via relay: exit %d %s", code, stdout)
	}
	// A loopback address the demo does not serve is refused by policy.
	stdout, _, code = runCLI(t, "", "query", "-p", "zandronum", "--timeout", "10s", "--relay", relayURL, "127.0.0.9:10666")
	if code != exitFail || !strings.Contains(stdout, "denied") {
		t.Fatalf("refused target: exit %d %s", code, stdout)
	}

	// Nor is another port of the demo's own address.
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	stdout, _, code = runCLI(t, "", "query", "-p", "zandronum", "--timeout", "10s", "--relay", relayURL, pc.LocalAddr().String())
	if code != exitFail || !strings.Contains(stdout, "loopback") {
		t.Fatalf("demo address on another port: exit %d %s", code, stdout)
	}
	// The kept lists of the demo's Steam-like and Quake III masters.
	a2sMaster, q3Master := demoListMasters(t, out.String())
	steam := waitList(t, base+"api/v1/masters/a2s/"+a2sMaster)
	if len(steam.Servers) != 300 || steam.Pages != 2 || steam.Master.Label != "demo Steam" {
		t.Errorf("Steam-like master's list: %d servers in %d pages, master %+v", len(steam.Servers), steam.Pages, steam.Master)
	}
	if q3 := waitList(t, base+"api/v1/masters/quake3/"+q3Master); len(q3.Servers) < 4 || !q3.Complete {
		t.Errorf("Quake III master's list: %d servers (complete %v), want the demo's (at least 4)", len(q3.Servers), q3.Complete)
	}
	// The GameSpy v1 master's list, kept over TCP, and asked by the CLI.
	gs1Master := demoLine(t, out.String(), "demo GameSpy v1 master (TCP) ")
	if gs1 := waitList(t, base+"api/v1/masters/gamespy1/"+gs1Master); len(gs1.Servers) < 2 || !gs1.Complete {
		t.Errorf("GameSpy v1 master's list: %d servers (complete %v, error %q), want the demo's (at least 2)", len(gs1.Servers), gs1.Complete, gs1.Error)
	}
	stdout, stderr, code = runCLI(t, "", "master", "-p", "gamespy1", "--game", "ut", gs1Master)
	if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil || len(list.Servers) < 2 {
		t.Errorf("querylens master -p gamespy1 --game ut: exit %d, %d servers, %v %s", code, len(list.Servers), err, stderr)
	}
	// The CLI pages through the Steam-like master itself.
	stdout, stderr, code = runCLI(t, "", "master", "-p", "a2s", "--filter", `\appid\440`, "--page-interval", "0", "--timeout", "10s", a2sMaster)
	if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil || len(list.Servers) != 300 {
		t.Errorf("querylens master -p a2s: exit %d, %d servers, %v %s", code, len(list.Servers), err, stderr)
	}

	// This client is on loopback: it gets the demo's larger limits.
	rc, err := client.Dial(ctx, relayURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h := rc.Hello(); int(h.MaxInFlight) != demoLoopback.MaxInFlight {
		t.Errorf("loopback client: %d queries in flight, want %d", h.MaxInFlight, demoLoopback.MaxInFlight)
	}
	rc.Close()

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

// demoListMasters reads the Steam-like and Quake III masters' addresses
// from serve's second line of output.
func demoListMasters(t *testing.T, out string) (steam, q3 string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "demo Steam-like master "); ok {
			steam, rest, _ = strings.Cut(rest, ", Quake III master ")
			return steam, rest
		}
	}
	t.Fatalf("no demo list masters in %q", out)
	return "", ""
}

// demoLine reads the rest of serve's output line that starts with prefix.
func demoLine(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return rest
		}
	}
	t.Fatalf("no %q line in %q", prefix, out)
	return ""
}

// waitList reads a kept list until its fetch ends (each read answers at
// once after the first; the server pages at its own pace).
func waitList(t *testing.T, url string) server.MasterList {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		var ml server.MasterList
		err = json.NewDecoder(resp.Body).Decode(&ml)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("GET %s: %d %v %v", url, resp.StatusCode, err, resp.Header)
		}
		if ml.Complete || ml.Error != "" || time.Now().After(deadline) {
			return ml
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestMasterFlag(t *testing.T) {
	var m masterFlag
	for _, s := range []string{"127.0.0.1:15300", `a2s=127.0.0.1:27011?filter=\appid\440&label=Steam`, "quake3=127.0.0.1:27950?filter=Xonotic+3"} {
		if err := m.Set(s); err != nil {
			t.Fatalf("Set(%q): %v", s, err)
		}
	}
	want := []server.MasterSpec{
		{Protocol: "zandronum", Addr: "127.0.0.1:15300", Kept: true},
		{Protocol: "a2s", Addr: "127.0.0.1:27011", Filter: `\appid\440`, Label: "Steam", Kept: true},
		{Protocol: "quake3", Addr: "127.0.0.1:27950", Filter: "Xonotic 3", Kept: true},
	}
	if len(m) != len(want) {
		t.Fatalf("%+v", m)
	}
	for i := range want {
		if m[i] != want[i] {
			t.Errorf("--master %d = %+v, want %+v", i, m[i], want[i])
		}
	}
}

func TestServeBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--allow-target", "not-a-cidr"},
		{"serve", "--server", "quake9=1.2.3.4:5"},
		{"serve", "--server", "gamespy2"},
		{"serve", "--server", "ogp=127.0.0.1:1?version=9"},
		{"serve", "--server", "ogp=127.0.0.1:1?nosuch=1"},
		{"serve", "--server", "ogp=127.0.0.1:1?info=1&info=0"}, // a repeated option
		{"serve", "extra"},
		{"serve", "--sample-every", "5s"},
		{"serve", "--track-max", "0"},
		{"serve", "--track-idle", "-1h"},
		{"serve", "--sample-budget", "0"},
		{"serve", "--sample-budget", "NaN"},
		{"serve", "--data", ""},
		{"serve", "--probe-allow", "not-a-cidr"},
		{"serve", "--metrics-servers", "--history=false"},
		{"serve", "--metrics-servers", "--metrics=false"},
		{"demo", "extra"},
		{"serve", "--master", "gamespy2=127.0.0.1:28900"}, // no master protocol
		{"serve", "--master", "a2s=nohostport"},
		{"serve", "--master", "a2s=127.0.0.1:27011?colour=red"},
		{"serve", "--demo-a2s-list", "20001"},
		{"serve", "--demo-a2s-servers", "-1"},
		{"serve", "--tcp-per-client", "0"},
		{"serve", "--tcp-per-target", "-1"},
		{"serve", "--tcp-max", "0"},
		{"serve", "--tcp-deadline", "10ms"},
		{"serve", "--demo-only", "ase"}, // without --demo
		{"serve", "--demo", "--demo-only", "ase,no-such-protocol"},
	} {
		if _, _, code := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	// The fleets' bounds: the error names the flag and its range.
	for _, args := range [][]string{
		{"serve", "--demo-quake3-servers", "-1"},
		{"serve", "--demo-quake3-servers", "5001"},
		{"serve", "--demo-gamespy1-servers", "-1"},
		{"serve", "--demo-gamespy1-servers", "5001"},
	} {
		_, stderr, code := runCLI(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, args[1]+" must be between 0 and 5000") {
			t.Errorf("%v: exit %d, want %d and the flag's range in %q", args, code, exitUsage, stderr)
		}
	}
	// --demo-more: a known protocol and a count in range.
	for _, args := range [][]string{
		{"serve", "--demo-more", "ase=-1"},
		{"serve", "--demo-more", "ase=5001"},
		{"serve", "--demo-more", "ase"},
		{"serve", "--demo-more", "no-such-protocol=1"},
	} {
		_, stderr, code := runCLI(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, "-demo-more") {
			t.Errorf("%v: exit %d, want %d and the flag in %q", args, code, exitUsage, stderr)
		}
	}
}

// TestServeFleets runs serve --demo with small Quake III and GameSpy v1
// fleets: the Quake III master's kept list has the fleet, the browser
// page's configuration lists every GameSpy v1 fleet server serve printed,
// and one of them answers through the relay.
func TestServeFleets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		done <- e.runServe(sctx, serveOptions{addr: "127.0.0.1:0", demo: true, demoServers: 1, demoQuake3: 6, demoGameSpy1: 5}, ready)
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("serve ended: %v\n%s", err, errb.String())
	case <-ctx.Done():
		t.Fatal("serve did not start")
	}
	var gs1 []string
	for _, line := range strings.Split(out.String(), "\n") {
		if a, ok := strings.CutPrefix(line, "demo gamespy1 "); ok {
			gs1 = append(gs1, a)
		}
	}
	for _, want := range []string{"demo fleet: 6 Quake III servers listed by the Quake III master", "demo fleet: 5 GameSpy v1 servers listed as configured servers"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve's output lacks %q:\n%s", want, out.String())
		}
	}
	if len(gs1) != 5 {
		t.Fatalf("serve printed %d GameSpy v1 fleet servers, want 5:\n%s", len(gs1), out.String())
	}
	_, q3Master := demoListMasters(t, out.String())
	// The demo's own five Quake III servers (a hostile one too) and the
	// fleet's six.
	if q3 := waitList(t, base+"api/v1/masters/quake3/"+q3Master); len(q3.Servers) != 11 || !q3.Complete {
		t.Errorf("Quake III master's list: %d servers (complete %v), want 11", len(q3.Servers), q3.Complete)
	}
	resp, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, a := range gs1 {
		if !strings.Contains(string(page), `"protocol":"gamespy1","addr":"`+a+`"`) {
			t.Errorf("the browser page does not list GameSpy v1 fleet server %s", a)
		}
	}
	relayURL := "ws" + strings.TrimPrefix(base, "http") + "relay"
	// The first fleet server is a normal one (demo.fleetBehavior).
	stdout, stderr, code := runCLI(t, "", "query", "-p", "gamespy1", "--timeout", "10s", "--relay", relayURL, gs1[0])
	if code != 0 || !strings.Contains(stdout, `"kind":"response"`) {
		t.Errorf("GameSpy v1 fleet server via relay: exit %d %s %s", code, stdout, stderr)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

// TestServeDemoOnly runs serve --demo --demo-only: the browser page lists
// the demo's servers of those protocols alone, no master of another, and
// preloads their family's module, not the combined one.
func TestServeDemoOnly(t *testing.T) {
	t.Parallel()
	base, _, stop := serveFor(t, serveOptions{addr: "127.0.0.1:0", demo: true, demoServers: 1, demoOnly: []string{"ase"},
		demoMore: moreFlag{{protocol: "ase", n: 3}}})
	defer stop()
	_, page := fetch(t, base)
	_, cfg, ok := strings.Cut(string(page), `id="ql-config"`)
	_, cfg, _ = strings.Cut(cfg, ">")
	cfg, _, _ = strings.Cut(cfg, "</script>")
	var c struct {
		Masters []struct{ Protocol string } `json:"masters"`
		Servers []struct{ Protocol string } `json:"servers"`
	}
	if !ok || json.Unmarshal([]byte(cfg), &c) != nil {
		t.Fatalf("no page configuration in %.300q", page)
	}
	if len(c.Masters) != 0 {
		t.Errorf("the page lists %d masters, want none", len(c.Masters))
	}
	if len(c.Servers) < 4 { // the demo's own and the three more
		t.Errorf("the page lists %d servers, want the demo's ASE servers", len(c.Servers))
	}
	for _, s := range c.Servers {
		if s.Protocol != "ase" {
			t.Errorf("the page lists a %s server", s.Protocol)
		}
	}
	if !regexp.MustCompile(`&#34;wasm&#34;:&#34;[^&]*querylens-ase\.`).Match(page) {
		t.Errorf("the page does not start with the ASE family's module")
	}
}

// TestServeProbe runs serve --demo with --metrics-servers and a probe
// token: the tracked demo servers show on /metrics once sampled, and
// GET /probe answers for one of them, beyond the limit per visitor with
// the token.
func TestServeProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	o := serveOptions{addr: "127.0.0.1:0", demo: true, demoServers: 3, metrics: true,
		history: historyOptions{enabled: true, every: history.DefaultSampleEvery, idle: history.DefaultTrackIdle, max: 100, budget: history.DefaultBudget},
		probe:   probeOptions{token: "tok", metricsServers: true}}
	go func() { done <- e.runServe(sctx, o, ready) }()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		done <- err
		t.Fatalf("serve ended: %v\n%s", err, errb.String())
	}
	fetch := func(path string, hdr ...string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// The demo servers are tracked at start and due at once: wait for the
	// sampler's first samples to show.
	var metrics string
	for {
		_, metrics = fetch("metrics")
		if strings.Contains(metrics, `querylens_server_up{protocol="zandronum"`) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no tracked server on /metrics:\n%s", metrics)
		case <-time.After(100 * time.Millisecond):
		}
	}
	line := metrics[strings.Index(metrics, `querylens_server_up{protocol="zandronum"`):]
	addr := line[strings.Index(line, `address="`)+9:]
	addr = addr[:strings.IndexByte(addr, '"')]
	for range 40 { // beyond the default limit per visitor (burst 30)
		code, body := fetch("probe?protocol=zandronum&target="+addr, "Authorization", "Bearer tok")
		if code != 200 || !strings.Contains(body, "querylens_probe_success") {
			t.Fatalf("GET /probe: %d %s", code, body)
		}
	}
	if code, body := fetch("probe?protocol=zandronum"); code != 400 || !strings.Contains(body, "parameter target") {
		t.Errorf("GET /probe without a target: %d %s", code, body)
	}
}
