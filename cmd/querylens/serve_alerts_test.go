package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/postgres"
	"github.com/querylens/querylens/internal/testpg"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
)

// freeUDP is a loopback UDP port free a moment ago (for a flapping
// server a watches file names before it starts). It is chosen outside
// the kernel's ephemeral range, so that no socket bound to port 0 in the
// meantime (the demo's own servers, another package's tests running at
// the same time) can take it before serve binds it, and never twice in
// one test binary.
func freeUDP(t *testing.T) string {
	t.Helper()
	lo, hi := fixedPortRange()
	freeMu.Lock()
	defer freeMu.Unlock()
	for range 200 {
		port := lo + freeRand.IntN(hi-lo)
		if freeGiven[port] {
			continue
		}
		c, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		addr := c.LocalAddr().String()
		c.Close()
		freeGiven[port] = true
		return addr
	}
	t.Fatalf("no free loopback UDP port in [%d, %d)", lo, hi)
	return ""
}

var (
	freeMu    sync.Mutex
	freeGiven = map[int]bool{}
	freeRand  = rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
)

// fixedPortRange is a range of ports the kernel does not hand out to
// sockets bound to port 0: below its ephemeral range (Linux's
// ip_local_port_range, 32768-60999 by default), or above it where that
// range starts too low to leave room.
func fixedPortRange() (lo, hi int) {
	elo, ehi := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			a, errA := strconv.Atoi(f[0])
			z, errZ := strconv.Atoi(f[1])
			if errA == nil && errZ == nil && a <= z {
				elo, ehi = a, z
			}
		}
	}
	if elo >= 12000 {
		return 10000, elo
	}
	if ehi < 64000 {
		return ehi + 1, 65536
	}
	return 10000, 12000 // no room outside it: a short range, still checked free
}

// flapWatches is a watches file: the flapping server at flap told to the
// Discord-shaped receiver at hook, sampled as fast as the test's relay
// lets it, down after one silent sample (an unanswered probe takes the
// probe's whole timeout).
func flapWatches(hook, flap string) string {
	return `
[[destination]]
name = "fake"
kind = "discord"
url = "` + hook + `/api/webhooks/42/s3cret-token"

[[watch]]
id = "flap"
to = ["fake"]
server = { protocol = "quake3", addr = "` + flap + `" }
every = "200ms"
down = true
up = true
full = true
joins = true
leaves = true
board = true
down_samples = 1
player_cap = 1000
`
}

// alertServeOptions are serve's options for the alert tests: the demo
// (one Zandronum server) with a flapping server on a schedule of
// seconds, the history in dir, the receiver's loopback opened.
//
// The server is silent for 4 s of every 10: a probe waits
// statusTimeout (2 s) for an answer, so only a probe begun in the first
// 2 s of the silence finds the server offline; one begun later is
// answered once the server is back. With 3/10 of an 8 s period (2.4 s)
// that window was 0.4 s, which a loaded machine's probes could miss for
// every period of a test's 90 s.
func alertServeOptions(dir, watches, flap string) serveOptions {
	o := serveOptions{addr: "127.0.0.1:0", demo: true, demoServers: 1, metrics: true,
		demoFlap: 10 * time.Second, demoFlapDown: 4 * time.Second, demoFlapAddr: flap, cacheTTL: 100 * time.Millisecond}
	o.history = historyOptions{enabled: true, data: dir, dataSet: true, every: time.Minute, idle: time.Hour, max: 100, budget: 50}
	o.alerts = alertOptions{watches: watches, webhookAllow: prefixFlag{netip.MustParsePrefix("127.0.0.0/8")}, allowHTTP: true}
	return o
}

// titled reports whether one of got, posted (not an edit of the live
// board), has a title containing s.
func titled(got []demo.Received, s string) bool {
	for _, r := range got {
		if r.Method == http.MethodPost && strings.Contains(r.Content(), s) && !isBoard(r) {
			return true
		}
	}
	return false
}

// isBoard reports whether r is the live status message (its footer
// numbers its pages).
func isBoard(r demo.Received) bool { return bytes.Contains(r.Body, []byte(" · page 1 of ")) }

// TestServeAlertsDemo: serve --demo --watches FILE, the file naming the
// demo's flapping server and a Discord-shaped receiver on loopback
// (--webhook-allow 127.0.0.0/8 --allow-http-webhooks): the receiver is
// told the server down, back up, full and players joining, and the live
// status message is posted once and edited in place; /metrics counts
// them. Driven by what the receiver is sent, not by sleeps.
func TestServeAlertsDemo(t *testing.T) {
	t.Parallel() // waits on the flapping server's schedule, as the other end-to-end alert tests do
	rcv := demo.NewDiscordReceiver()
	ts := httptest.NewServer(rcv)
	defer ts.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "watches.toml")
	flap := freeUDP(t)
	if err := os.WriteFile(file, []byte(flapWatches(ts.URL, flap)), 0o600); err != nil {
		t.Fatal(err)
	}
	base, out, stop := serveFor(t, alertServeOptions(dir, file, flap))
	defer stop()
	if !strings.Contains(out.String(), "demo flapping server quake3 "+flap) {
		t.Errorf("stdout does not name the flapping server:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	want := []string{" is down", " is back up", " is full", " joined "}
	err := rcv.Wait(ctx, func(got []demo.Received) bool {
		for _, w := range want {
			if !titled(got, w) {
				return false
			}
		}
		for _, r := range got {
			if r.Method == http.MethodPatch {
				return true
			}
		}
		return false
	})
	got := rcv.Received()
	if err != nil {
		var b strings.Builder
		for _, r := range got {
			b.WriteString(r.Method + " " + r.MessageID + ": " + r.Content() + "\n")
		}
		t.Fatalf("%v; the receiver got:\n%s", err, b.String())
	}
	// One live message: posted once, every later change an edit of it.
	var boardID string
	for _, r := range got {
		if !isBoard(r) {
			continue
		}
		switch {
		case boardID == "" && r.Method == http.MethodPost:
			boardID = r.MessageID
		case r.Method != http.MethodPatch || r.MessageID != boardID:
			t.Errorf("the live message: %s %s after %s was posted", r.Method, r.MessageID, boardID)
		}
		if !bytes.Contains(r.Body, []byte(`"allowed_mentions":{"parse":[]}`)) {
			t.Errorf("a message without allowed_mentions: %s", r.Body)
		}
	}
	// Deleted in Discord, the live message is posted again at its next
	// change.
	rcv.Delete(boardID)
	err = rcv.Wait(ctx, func(got []demo.Received) bool {
		for _, r := range got {
			if isBoard(r) && r.Method == http.MethodPost && r.MessageID != boardID {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Errorf("the live message deleted was not posted again: %v", err)
	}
	resp, body := fetch(t, base+"metrics")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	for _, line := range []string{`querylens_alert_watches 1`, `querylens_alert_events_total{kind="down"} `, `querylens_alert_outbox_depth `,
		`querylens_alert_samples_lost_total 0`} {
		if !bytes.Contains(body, []byte(line)) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if bytes.Contains(body, []byte(`querylens_alert_deliveries_total{destination="discord",outcome="delivered"} 0`)) {
		t.Error("/metrics counts no delivery")
	}
	if bytes.Contains(body, []byte(`querylens_alert_events_total{kind="down"} 0`)) {
		t.Error("/metrics counts no down")
	}
}

// TestServeAlertsReload: SIGHUP reloads the watches file: a valid one
// replaces the file's watches (the one no longer named is deleted, and
// its server unpinned), an invalid one keeps the running watches and
// logs why, without the file's secret.
func TestServeAlertsReload(t *testing.T) {
	rcv := demo.NewDiscordReceiver()
	ts := httptest.NewServer(rcv)
	defer ts.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "watches.toml")
	flap := freeUDP(t)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	second := `
[[watch]]
id = "other"
to = ["fake"]
server = { protocol = "quake3", addr = "127.0.0.1:9" }
down = true
`
	write(flapWatches(ts.URL, flap) + second)
	o := alertServeOptions(dir, file, flap)
	o.demo = false            // no server need answer: the watches are what is reloaded
	o.alerts.sync = time.Hour // only SIGHUP reads the stored watches again
	var logs syncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &logs}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- e.runServe(ctx, o, ready) }()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("serve ended: %v\n%s", err, logs.String())
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	count := func() int {
		return strings.Count(logs.String(), "alerts: watches file loaded")
	}
	hup := func(want string) {
		t.Helper()
		n := strings.Count(logs.String(), want)
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		for strings.Count(logs.String(), want) == n {
			select {
			case <-ctx.Done():
				t.Fatalf("no %q after SIGHUP:\n%s", want, logs.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if count() != 1 {
		t.Fatalf("the file was not loaded at start:\n%s", logs.String())
	}
	_, body := fetch(t, base+"metrics")
	if !bytes.Contains(body, []byte("querylens_alert_watches 2\n")) || !bytes.Contains(body, []byte("querylens_alert_servers_pinned 2\n")) {
		t.Fatalf("at start, /metrics says:\n%s", grepLines(body, "querylens_alert_"))
	}
	if false {
		t.Fatalf("the file was not loaded at start:\n%s", logs.String())
	}
	// Invalid: an unknown key. The running watches stay; the log says
	// why and never quotes the file's URL.
	write(flapWatches(ts.URL, flap) + second + "\nbogus = 1\n")
	hup("the watches file is not taken")
	if strings.Contains(logs.String(), "s3cret-token") {
		t.Errorf("a log line carries the webhook's token:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `unknown key \"watch.bogus\"`) {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
	// Valid, without "other": it is deleted.
	write(flapWatches(ts.URL, flap))
	hup("alerts: watches file loaded")
	_, body = fetch(t, base+"metrics")
	if !bytes.Contains(body, []byte("querylens_alert_watches 1\n")) || !bytes.Contains(body, []byte("querylens_alert_servers_pinned 1\n")) {
		t.Errorf("after the reload, /metrics says:\n%s", grepLines(body, "querylens_alert_"))
	}
}

func grepLines(b []byte, prefix string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestServeWatchesNeedHistory: --watches with the history off is refused
// before anything starts, and so is an invalid watches file at start.
func TestServeWatchesNeedHistory(t *testing.T) {
	_, errs, code := runCLI(t, "", "serve", "--history=false", "--watches", "watches.toml")
	if code != exitUsage || !strings.Contains(errs, "--watches needs the history") {
		t.Errorf("serve --history=false --watches: %d %s", code, errs)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "watches.toml")
	if err := os.WriteFile(file, []byte("[[watch]]\nid = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := alertServeOptions(dir, file, "")
	o.demo = false
	var errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &errb}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.runServe(ctx, o, nil); err == nil || !strings.Contains(err.Error(), "--watches") {
		t.Errorf("serve with an invalid watches file: %v", err)
	}
	// A Discord fake on loopback without --webhook-allow is no Discord
	// webhook: refused, its token in no error.
	if err := os.WriteFile(file, []byte(flapWatches("http://127.0.0.1:9", "127.0.0.1:27960")), 0o600); err != nil {
		t.Fatal(err)
	}
	o.alerts.webhookAllow = nil
	err := e.runServe(ctx, o, nil)
	if err == nil || !strings.Contains(err.Error(), "discord.com") || strings.Contains(err.Error()+errb.String(), "s3cret-token") {
		t.Errorf("serve with a loopback Discord URL and no --webhook-allow: %v\n%s", err, errb.String())
	}
}

// alertChildEnv runs TestServeAlertsKill9 as a serve process: its value
// is serve's arguments, one a line.
const alertChildEnv = "QUERYLENS_ALERT_SERVE_CHILD"

// TestServeAlertsKill9: a serve process killed (SIGKILL) while it sends
// a signed webhook leaves the message in the outbox; the next serve on
// the same data directory sends it, after the dead one's lease, under
// the same webhook-id.
func TestServeAlertsKill9(t *testing.T) {
	if args := os.Getenv(alertChildEnv); args != "" {
		os.Exit(run(strings.Split(args, "\n"), strings.NewReader(""), os.Stdout, os.Stderr))
	}
	t.Parallel()
	var mu sync.Mutex
	var delivered []string
	hung := false
	first := make(chan string, 1)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		mu.Lock()
		if !hung {
			hung = true
			mu.Unlock()
			first <- id
			select { // the sender is killed meanwhile
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		delivered = append(delivered, id)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer ts.Close()
	defer close(release)
	dir := t.TempDir()
	file := filepath.Join(dir, "watches.toml")
	flap := freeUDP(t)
	watches := `
[[destination]]
name = "hook"
kind = "webhook"
url = "` + ts.URL + `/querylens"
secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

[[watch]]
id = "flap"
to = ["hook"]
server = { protocol = "quake3", addr = "` + flap + `" }
every = "200ms"
joins = true
leaves = true
player_cap = 1000
`
	if err := os.WriteFile(file, []byte(watches), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--demo", "--demo-servers", "1", "--demo-flapping-period", "8s",
		"--demo-flapping-addr", flap, "--data", dir, "--watches", file, "--webhook-allow", "127.0.0.0/8",
		"--allow-http-webhooks", "--cache-ttl", "100ms"}
	start := func() (*exec.Cmd, *syncBuffer) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestServeAlertsKill9$", "-test.count=1")
		cmd.Env = append(os.Environ(), alertChildEnv+"="+strings.Join(args, "\n"))
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, out := start()
	var id string
	select {
	case id = <-first:
	case <-ctx.Done():
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no delivery began:\n%s", out.String())
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL, in the middle of the send
		t.Fatal(err)
	}
	cmd.Wait()
	if id == "" {
		t.Fatal("the webhook came without webhook-id")
	}
	cmd, out = start()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	for {
		mu.Lock()
		done := slices.Contains(delivered, id)
		mu.Unlock()
		if done {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("message %s not delivered after the restart:\n%s", id, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestServeAlertsPostgres: two serve instances on one PostgreSQL history,
// the same watches file: the outbox rows of 40 events are each sent once
// between them (claims are FOR UPDATE SKIP LOCKED), under their own ids.
func TestServeAlertsPostgres(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	url := pg.FreshURL(t)
	var mu sync.Mutex
	got := map[string]int{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond) // so that sends overlap
		mu.Lock()
		got[r.Header.Get("webhook-id")]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer ts.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "watches.toml")
	hook := alerts.Destination{Name: "hook", Kind: alerts.DestWebhook, URL: ts.URL + "/querylens", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
	watches := `
[[destination]]
name = "hook"
kind = "webhook"
url = "` + hook.URL + `"
secret = "` + hook.Secret + `"

[[watch]]
id = "pg"
to = ["hook"]
server = { protocol = "quake3", addr = "127.0.0.1:9" }
joins = true
leaves = true
player_cap = 1000
`
	if err := os.WriteFile(file, []byte(watches), 0o600); err != nil {
		t.Fatal(err)
	}
	o := serveOptions{metrics: true}
	o.history = historyOptions{enabled: true, every: time.Minute, idle: time.Hour, max: 100, budget: 50, db: url}
	o.alerts = alertOptions{watches: file, webhookAllow: prefixFlag{netip.MustParsePrefix("127.0.0.0/8")}, allowHTTP: true}
	startInstances(t, 2, o)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Samples an hour ahead, so that the instances' own (the relay
	// refuses 127.0.0.1:9: nothing is learnt) come before them and are
	// ignored after: each sample one player leaves and another joins.
	const n = 40
	base := time.Now().Add(time.Hour)
	events := 0
	for i := range n + 1 {
		s := alerts.Sample{Time: base.Add(time.Duration(i) * time.Second), State: alerts.StateOnline, Name: "pg",
			Players: []string{"player" + strconv.Itoa(i)}, PlayersComplete: true, NumPlayers: 1, MaxPlayers: 8}
		ev, err := st.Apply(ctx, "pg", s, []alerts.Destination{hook}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		events += len(ev)
	}
	if events != n {
		t.Fatalf("%d events, want %d", events, n)
	}
	for {
		stats, err := st.Stats(ctx, time.Now())
		mu.Lock()
		sent := len(got)
		mu.Unlock()
		if err == nil && stats.Depth == 0 && sent == n {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("outbox %+v (%v), %d messages sent of %d", stats, err, sent, n)
		case <-time.After(100 * time.Millisecond):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for id, c := range got {
		if c != 1 {
			t.Errorf("message %s sent %d times", id, c)
		}
	}
}

// TestAlertSample: a probe's report as the alerts' machine reads it: the
// state's name, the names and counts of an online reply, and whether its
// player list is complete (the codec's word, and the list asked for).
func TestAlertSample(t *testing.T) {
	at := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	q3, err := codecs.Lookup("quake3")
	if err != nil {
		t.Fatal(err)
	}
	info := &codecs.Info{Has: codecs.HasName | codecs.HasMap | codecs.HasPlayers | codecs.HasMaxPlayers,
		Name: "^1Red ^7server", Map: "q3dm17", MaxPlayers: 8,
		Players: []codecs.Player{{Name: "^2Alice"}, {Name: "Bob"}}}
	online := server.Report{State: server.Online, At: at, Codec: q3, Msg: &codecs.Message{Info: info}}
	s := alertSample(online)
	if s.State != alerts.StateOnline || !s.Time.Equal(at) || s.Name != server.CountsOf(info).Name || s.Map != "q3dm17" ||
		s.NumPlayers != 2 || s.MaxPlayers != 8 || !slices.Equal(s.Players, []string{"^2Alice", "Bob"}) || !s.PlayersComplete {
		t.Errorf("online: %+v", s)
	}
	noList := online
	noList.Msg = &codecs.Message{Info: &codecs.Info{Has: codecs.HasName | codecs.HasNumPlayers, Name: "x", NumPlayers: 3}}
	if s := alertSample(noList); s.PlayersComplete || s.NumPlayers != 3 {
		t.Errorf("a reply without its player list: %+v", s)
	}
	for _, st := range []server.State{server.Offline, server.Refused, server.Limited, server.Malformed} {
		s := alertSample(server.Report{State: st, At: at, Detail: "why", Msg: &codecs.Message{Info: info}})
		if s.State != st.String() || s.Err != "why" || s.Name != "" || s.Players != nil {
			t.Errorf("%s: %+v", st, s)
		}
	}
}

// TestPinFloor: a watched server of the operator's own (the demo's) is
// sampled as often as the relay's cache allows, one of a protocol that
// answers an asker once per 10 s no more often, and anyone else's no
// more often than the relay's per-target limits refill a probe's burst,
// nor 10 s.
func TestPinFloor(t *testing.T) {
	own := netip.MustParseAddrPort("127.0.0.1:27960")
	// The default per-target burst holds a probe of every protocol:
	// refilled at its rate, it bounds anyone else's server.
	def := relay.TargetRateDefault()
	refill := max(history.MinSampleEvery, time.Duration(float64(def.Burst)/def.PerSecond*float64(time.Second)))
	floor := pinFloor(relay.Config{CacheTTL: 500 * time.Millisecond, AllowAddrs: []netip.AddrPort{own}})
	for _, tc := range []struct {
		key  history.Key
		want time.Duration
	}{
		{history.Key{Protocol: "quake3", Addr: own.String()}, 500 * time.Millisecond},
		{history.Key{Protocol: "zandronum", Addr: own.String()}, 10 * time.Second},
		{history.Key{Protocol: "quake3", Addr: "198.51.100.7:27960"}, refill},
	} {
		if got := floor(tc.key); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.key, got, tc.want)
		}
	}
	slow := pinFloor(relay.Config{TargetRate: shared.Rate{PerSecond: 0.5, Burst: 16}})
	if got := slow(history.Key{Protocol: "quake3", Addr: "198.51.100.7:27960"}); got != 32*time.Second {
		t.Errorf("at 0.5 queries/s, burst 16: %v, want 32s", got)
	}
}
