package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
)

// queryOut is the part of query's JSON the tests read.
type queryOut struct {
	Protocol string `json:"protocol"`
	Kind     string `json:"kind"`
	Target   string `json:"target"`
	Detected bool   `json:"detected"`
	Info     struct {
		Name string `json:"name"`
	} `json:"info"`
	Error struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"error"`
}

func runWith(t *testing.T, ex netquery.Exchanger, args ...string) (queryOut, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, exchanger: ex}
	code := e.run(args)
	var v queryOut
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("%v: output %q: %v", args, out.String(), err)
		}
	}
	return v, errb.String(), code
}

// TestQueryProbe queries every demo server on loopback without -p: the
// probe must name the protocol each one speaks, and a silent server must
// end in an error listing what every protocol got.
func TestQueryProbe(t *testing.T) {
	t.Parallel()
	// A bound, not an expectation: the demo stops when it passes, and a
	// parallel test may wait minutes for its turn on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	d, err := demo.Start(ctx, demo.Config{Servers: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	seen := map[string]bool{}
	// One server after another: subtests marked parallel would wait for
	// the package's parallel slots (GOMAXPROCS, 2 in CI) behind its other
	// waiting tests.
	for _, tgt := range append(d.Targets(), d.StreamTargets()...) {
		t.Run(tgt.Protocol+"-"+tgt.Behavior.String()+"-"+tgt.Addr, func(t *testing.T) {
			// A server that answers gets the retries a user's query has
			// and a bound it never waits for (a complete reply returns at
			// once): under a loaded -race run a split reply's second
			// datagram, or a slow server's answer, can take seconds. Only
			// a silent server waits out its timeout, and no reply can be
			// late there.
			args := []string{"query", "--timeout", "10s", tgt.Addr}
			if tgt.Behavior == demo.Silent {
				args = []string{"query", "--timeout", "300ms", "--retries", "0", tgt.Addr}
			}
			// A hostile server answers at once, but a GameSpy reply that
			// never completes is only given up on at the timeout: long
			// enough that a loaded -race run still hears the answers that
			// do come (A2S's challenge and its reply took more than 1 s at
			// load 9), short enough not to hold the test. It keeps the
			// user's resend: under load a datagram can be lost on
			// loopback too, and a reply that came in part is never
			// asked again.
			if tgt.Behavior.Hostile() {
				args = []string{"query", "--timeout", "4s", tgt.Addr}
			}
			for k, v := range tgt.Options {
				args = append(args, "-o", k+"="+v) // options narrow the probe to the protocols that take them
			}
			got, stderr, code := runWith(t, nil, args...)
			if tgt.Behavior == demo.Silent {
				if code != exitFail || got.Error.Field != "probe" {
					t.Fatalf("silent server: exit %d, %+v", code, got)
				}
				for _, c := range codecs.Protocols() {
					// A TCP protocol finds no listener on a UDP server's
					// port: it says so.
					want := c.Name() + ": no reply"
					if codecs.DescriptionOf(c).Transport == codecs.TCP {
						want = c.Name() + ": dial tcp"
					}
					if !strings.Contains(got.Error.Message, want) {
						t.Errorf("error %q does not say what %s got", got.Error.Message, c.Name())
					}
				}
				return
			}
			if tgt.Behavior.Hostile() && code == exitFail && got.Error.Field == "probe" {
				// Never complete: the probe says what its protocol got.
				if !strings.Contains(got.Error.Message, tgt.Protocol+": reply incomplete") {
					t.Errorf("hostile %s: the probe error %q does not name it", tgt.Protocol, got.Error.Message)
				}
				seen[tgt.Protocol] = true
				return
			}
			if (tgt.Behavior == demo.Truncated || tgt.Behavior.Hostile()) && code == exitFail && got.Error.Field != "probe" {
				// Detected, and its reply reported as what does not decode.
				if !strings.Contains(stderr, "(-p "+tgt.Protocol+")") {
					if foreignListener(tgt) {
						t.Skipf("another process listens on TCP %s, the number of this UDP server's port, and a TCP protocol's probe heard it: %q", tgt.Addr, stderr)
					}
					t.Errorf("stderr %q does not say which protocol answered (exit %d, %+v)", stderr, code, got.Error)
				}
				seen[tgt.Protocol] = true
				return
			}
			if code != exitOK {
				t.Fatalf("exit %d: %+v %s", code, got, stderr)
			}
			if got.Protocol != tgt.Protocol || !got.Detected || got.Target != tgt.Addr {
				t.Errorf("detected %q (detected=%v, target %q), want %q", got.Protocol, got.Detected, got.Target, tgt.Protocol)
			}
			if got.Kind != "response" && got.Kind != "denied" {
				t.Errorf("kind %q", got.Kind)
			}
			if got.Kind == "response" && got.Info.Name != tgt.Name {
				t.Errorf("name %q, want %q", got.Info.Name, tgt.Name)
			}
			if !strings.Contains(stderr, "(-p "+tgt.Protocol+")") {
				t.Errorf("stderr %q does not say which protocol answered", stderr)
			}
			seen[tgt.Protocol] = true
		})
	}
	for _, c := range codecs.Protocols() {
		if !seen[c.Name()] {
			t.Errorf("no demo server of %s was detected", c.Name())
		}
	}
	t.Run("a port given a protocol is not probed", func(t *testing.T) {
		rec := &recorder{}
		runWith(t, rec, "query", "127.0.0.1:10666")
		if got := rec.protocols(); !slices.Equal(got, []string{"zandronum"}) {
			t.Errorf("asked %v", got)
		}
	})
	t.Run("options no protocol takes", func(t *testing.T) {
		rec := &recorder{}
		got, _, code := runWith(t, rec, "query", "-o", "nosuchoption=1", "127.0.0.1:1")
		if code != exitFail || got.Error.Field != "options" || !strings.Contains(got.Error.Message, "nosuchoption") || len(rec.protocols()) != 0 {
			t.Errorf("exit %d, %+v, asked %v", code, got, rec.protocols())
		}
	})
}

// recorder is an Exchanger that sends nothing: it records what it was
// asked and answers as a server that never replies. Probing through it
// shows what a probe asks; the losers of a probe see their ctx cancelled.
type recorder struct {
	mu    sync.Mutex
	calls []call
	// answer, when set, makes protocol answer at once with these datagrams.
	answer map[string][][]byte
	// fail, when set, is every exchange's error (a resolver's, a relay's).
	fail map[string]error
}

type call struct {
	protocol, target string
	start            [][]byte
	cancelled        bool
}

func (r *recorder) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	start := q.Start()
	r.mu.Lock()
	i := len(r.calls)
	r.calls = append(r.calls, call{protocol: protocol, target: target, start: start})
	ans := r.answer[protocol]
	fail := r.fail[protocol]
	r.mu.Unlock()
	res := netquery.Result{Sent: len(start)}
	if fail != nil {
		return netquery.Result{}, fail
	}
	if ans != nil {
		for _, a := range ans {
			res.Received++
			if _, done, _ := q.Feed(a); done {
				res.Done = true
			}
		}
		return res, nil
	}
	if r.answer == nil {
		return res, nil // nothing came back
	}
	<-ctx.Done() // waits like a real exchange until the probe is over
	r.mu.Lock()
	r.calls[i].cancelled = errors.Is(ctx.Err(), context.Canceled)
	r.mu.Unlock()
	return res, ctx.Err()
}

func (r *recorder) protocols() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		out = append(out, c.protocol)
	}
	slices.Sort(out)
	return out
}

func TestProbeAsksEveryProtocolOnce(t *testing.T) {
	// A Bloodmasters reply, from the codec's own golden packet, answers
	// the probe; the other protocols are still waiting and get cancelled.
	c, _ := codecs.Lookup("bloodmasters")
	reply := bloodmastersReply(t)
	rec := &recorder{answer: map[string][][]byte{"bloodmasters": {reply}}}
	got, _, code := runWith(t, rec, "query", "127.0.0.1:5555")
	if code != exitOK || got.Protocol != "bloodmasters" || !got.Detected {
		t.Fatalf("exit %d: %+v", code, got)
	}
	var want []string
	for _, c := range codecs.Protocols() {
		want = append(want, c.Name())
	}
	if gotp := rec.protocols(); !slices.Equal(gotp, want) {
		t.Errorf("asked %v, want each of %v once", gotp, want)
	}
	for _, cl := range rec.calls {
		if cl.target != "127.0.0.1:5555" {
			t.Errorf("%s asked %s", cl.protocol, cl.target)
		}
		p, _ := codecs.Lookup(cl.protocol)
		for _, d := range cl.start {
			if err := p.CheckQuery(d); err != nil {
				t.Errorf("%s probe is not its own query: %v", cl.protocol, err)
			}
		}
		if cl.protocol != c.Name() && !cl.cancelled {
			t.Errorf("%s was not cancelled once bloodmasters answered", cl.protocol)
		}
	}
}

// bloodmastersReply asks a demo Bloodmasters server, in memory, for its
// reply to the codec's default query.
func bloodmastersReply(t *testing.T) []byte {
	t.Helper()
	c, err := codecs.Lookup("bloodmasters")
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.NewQuery(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := demo.NewBloodmasters(1, demo.Normal)
	replies := h.Respond(q.Start()[0], netip.MustParseAddrPort("127.0.0.1:40000"), time.Now())
	if len(replies) == 0 {
		t.Fatal("the demo server did not answer")
	}
	return replies[0]
}

// TestProbeErrors: what each protocol got, said once when it is the same.
func TestProbeErrors(t *testing.T) {
	noHost := errors.New("lookup nosuch.example: no such host")
	all := func(err error) map[string]error {
		m := map[string]error{}
		for _, c := range codecs.Protocols() {
			m[c.Name()] = err
		}
		return m
	}
	mixed := all(noHost)
	mixed["ogp"] = errors.New("connection refused")
	// Every registered protocol is asked, in the registry's order.
	var noReply []string
	for _, c := range codecs.Protocols() {
		noReply = append(noReply, c.Name()+": no reply")
	}
	for _, tc := range []struct {
		name     string
		rec      *recorder
		field    string
		message  string
		mentions []string
		notTwice string
	}{
		{"no reply anywhere", &recorder{}, "probe", "no protocol answered 127.0.0.1:5555: " + strings.Join(noReply, "; "), nil, ""},
		{"the same error everywhere", &recorder{fail: all(noHost)}, "target", noHost.Error(), nil, ""},
		{"different errors", &recorder{fail: mixed}, "probe", "", []string{"ogp: connection refused", "zandronum: " + noHost.Error()}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, code := runWith(t, tc.rec, "query", "127.0.0.1:5555")
			if code != exitFail || got.Error.Field != tc.field {
				t.Fatalf("exit %d, %+v", code, got)
			}
			if tc.message != "" && got.Error.Message != tc.message {
				t.Errorf("message %q, want %q", got.Error.Message, tc.message)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(got.Error.Message, m) {
					t.Errorf("message %q lacks %q", got.Error.Message, m)
				}
			}
		})
	}
}

func TestMasterDefaultAddress(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		target string // "" when nothing may be asked
	}{
		{"no address", []string{"master"}, exitFail, DefaultMaster},
		{"no address, zandronum", []string{"master", "-p", "zandronum"}, exitFail, DefaultMaster},
		{"an address", []string{"master", "127.0.0.1:15301"}, exitFail, "127.0.0.1:15301"},
		{"no master protocol", []string{"master", "-p", "gamespy2"}, exitUsage, ""},
		{"two addresses", []string{"master", "127.0.0.1:1", "127.0.0.1:2"}, exitUsage, ""},
		{"bad address", []string{"master", "nohostport"}, exitUsage, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			got, stderr, code := runWith(t, rec, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %+v %s", code, tc.code, got, stderr)
			}
			if tc.target == "" {
				if len(rec.calls) != 0 {
					t.Errorf("asked %+v", rec.calls)
				}
				return
			}
			if len(rec.calls) != 1 || rec.calls[0].target != tc.target || rec.calls[0].protocol != "zandronum" {
				t.Fatalf("asked %+v, want one zandronum exchange with %s", rec.calls, tc.target)
			}
			zan, _ := codecs.Lookup("zandronum")
			for _, d := range rec.calls[0].start {
				if k, _ := zan.Detect(d); k != codecs.KindMasterQuery {
					t.Errorf("sent a %q, want a master query", k)
				}
			}
			if got.Error.Field != "reply" || !strings.Contains(got.Error.Message, "no reply from "+tc.target) {
				t.Errorf("error %+v", got.Error)
			}
		})
	}
	if !strings.Contains(DefaultMaster, "master.zandronum.com") {
		t.Errorf("DefaultMaster = %q", DefaultMaster)
	}
}

// TestProbeThroughRelay probes demo servers through a relay (one WebSocket
// carrying every protocol's conversation at once), and a target the
// relay's policy refuses: that refusal, the same for every protocol, is the
// error, and nothing is sent to the target (the relay decides before any
// socket is opened).
func TestProbeThroughRelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := demo.Start(ctx, demo.Config{Servers: 1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Every demo server shares one address, 127.0.0.1, which real
	// servers do not: the per-host budget is raised to hold a probe of
	// every protocol to each of them. One asker probes them all, one
	// after the other, each probe a query of every protocol (two or three
	// of some): the asker's own budgets are raised alike, or the probes
	// at the end of the list are refused as the protocols grow.
	fast := shared.Rate{PerSecond: 400, Burst: 800}
	rs := relay.New(relay.Config{AllowTargets: d.Prefixes(), CacheKey: codecs.QueryKey,
		TargetHostRate: fast, IPRate: fast, ConnRate: fast}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ts := httptest.NewServer(rs)
	defer ts.Close()
	defer rs.Shutdown(context.Background())
	url := "ws" + strings.TrimPrefix(ts.URL, "http")
	for _, tg := range d.Targets() {
		if tg.Behavior != demo.Normal || tg.Options != nil {
			continue
		}
		got, stderr, code := runWith(t, nil, "query", "--relay", url, "--timeout", "10s", tg.Addr)
		if code != exitOK || got.Protocol != tg.Protocol || !got.Detected {
			t.Errorf("%s %s through the relay: exit %d, %+v %s", tg.Protocol, tg.Addr, code, got, stderr)
		}
	}
	// The refusal ends the query when it arrives; the timeout only bounds it.
	got, _, code := runWith(t, nil, "query", "--relay", url, "--timeout", "10s", "127.0.0.9:27960")
	if code != exitFail || !strings.HasPrefix(got.Error.Field, "relay.") {
		t.Errorf("refused target: exit %d, %+v", code, got)
	}
}

// TestQueryGame: -g takes GameDig's game ids (package games): the game's
// protocol, options and query port (a port given is the game port, moved
// by the game's offset), and for master its master's filter; a game this
// binary does not serve, or an unknown one, is a usage error that asks
// nothing.
func TestQueryGame(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		protocol string
		target   string // "" when nothing may be asked
		sent     string // a part of the first datagram sent
		stderr   string
	}{
		{"the query port", []string{"query", "-g", "rust", "127.0.0.1"}, exitFail, "a2s", "127.0.0.1:28015", "Source Engine Query", ""},
		{"a game port moved by the offset", []string{"query", "-g", "valheim", "127.0.0.1:2500"}, exitFail, "a2s", "127.0.0.1:2501", "", "answers queries on 127.0.0.1:2501"},
		{"an old id, IPv6", []string{"query", "--game", "7d2d", "::1"}, exitFail, "a2s", "[::1]:26901", "", ""},
		{"a fixed query port", []string{"query", "-g", "ase", "127.0.0.1:7777"}, exitFail, "a2s", "127.0.0.1:27015", "", ""},
		{"another protocol", []string{"query", "-g", "battlefield2", "127.0.0.1"}, exitFail, "gamespy3", "127.0.0.1:29900", "", ""},
		{"negative offset", []string{"query", "-g", "unrealtournament3", "127.0.0.1:7777"}, exitFail, "gamespy3", "127.0.0.1:6500", "", ""},
		{"not served", []string{"query", "-g", "discord", "127.0.0.1"}, exitUsage, "", "", "", "is not served: HTTP only"},
		{"unknown", []string{"query", "-g", "nosuchgame", "127.0.0.1"}, exitUsage, "", "", "", "unknown game"},
		{"-p and -g", []string{"query", "-g", "rust", "-p", "a2s", "127.0.0.1"}, exitUsage, "", "", "", "not both"},
		{"no port known", []string{"query", "-g", "brink", "127.0.0.1"}, exitUsage, "", "", "", "no port"},
		{"a master's filter", []string{"master", "-g", "rust", "127.0.0.1:27011", "--page-interval", "0"}, exitFail, "a2s", "127.0.0.1:27011", `\appid\252490`, ""},
		{"a master's address", []string{"master", "-g", "xonotic"}, exitFail, "quake3", "dpmaster.deathmask.net:27950", "getserversExt Xonotic 3", ""},
		{"no master", []string{"master", "-g", "battlefield2"}, exitUsage, "", "", "", "no master"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			got, stderr, code := runWith(t, rec, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %+v %s", code, tc.code, got, stderr)
			}
			if tc.stderr != "" && !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
			if tc.target == "" {
				if len(rec.calls) != 0 {
					t.Errorf("asked %+v", rec.calls)
				}
				return
			}
			if len(rec.calls) != 1 || rec.calls[0].target != tc.target || rec.calls[0].protocol != tc.protocol {
				t.Fatalf("asked %+v, want one %s exchange with %s", rec.calls, tc.protocol, tc.target)
			}
			if tc.sent != "" && (len(rec.calls[0].start) == 0 || !strings.Contains(string(rec.calls[0].start[0]), tc.sent)) {
				t.Errorf("sent %q, want %q in it", rec.calls[0].start, tc.sent)
			}
		})
	}
}

// TestGames: querylens games lists every game with what this binary
// serves; --json says the same; IDs pick games.
func TestGames(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	if code := e.run([]string{"games"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+358+1 || !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[len(lines)-1], "of the 358 games of GameDig 5.3.3 served") {
		t.Errorf("%d lines: %q … %q", len(lines), lines[0], lines[len(lines)-1])
	}
	out.Reset()
	if code := e.run([]string{"games", "--json", "rust", "discord"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var v struct {
		Served int `json:"served"`
		Games  []struct {
			ID        string `json:"id"`
			Protocol  string `json:"protocol"`
			QueryPort int    `json:"query_port"`
			Filter    string `json:"filter"`
			Served    bool   `json:"served"`
			WhyNot    string `json:"why_not"`
		} `json:"games"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Served < 264 || len(v.Games) != 2 || v.Games[0].ID != "rust" || !v.Games[0].Served || v.Games[0].QueryPort != 28015 ||
		v.Games[0].Filter != `\appid\252490` || v.Games[1].Served || !strings.HasPrefix(v.Games[1].WhyNot, "HTTP only") {
		t.Errorf("%s", out.Bytes())
	}
	if code := e.run([]string{"games", "nosuchgame"}); code != exitUsage {
		t.Errorf("an unknown game: exit %d", code)
	}
}

// TestMasterGameSpy1 asks a GameSpy v1 master (the demo's, over TCP on
// loopback) from the command line: by filter, by game, in records; a
// --relay is refused before anything is dialled, and a master that
// refuses the validation is an error.
func TestMasterGameSpy1(t *testing.T) {
	m := &demo.GameSpy1Master{Servers: []netip.AddrPort{netip.MustParseAddrPort("192.0.2.1:7778"), netip.MustParseAddrPort("192.0.2.2:7791")}}
	ap, err := demo.ListenGameSpy1Master("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	addr := ap.String()
	for _, args := range [][]string{
		{"master", "-p", "gamespy1", "--filter", "deusex", addr},
		{"master", "-g", "deusex", addr},
		{"master", "-p", "gamespy1", "--game", "ut", "-o", "list=cmp", addr},
	} {
		stdout, stderr, code := runCLI(t, "", args...)
		var list struct {
			Kind    string   `json:"kind"`
			Servers []string `json:"servers"`
		}
		if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil || list.Kind != "master-list" || len(list.Servers) != 2 {
			t.Errorf("%v: exit %d, %+v %v %s", args, code, list, err, stderr)
		}
	}
	if _, stderr, code := runCLI(t, "", "master", "-p", "gamespy1", "--relay", "ws://127.0.0.1:1/relay", addr); code != exitUsage || !strings.Contains(stderr, "without --relay") {
		t.Errorf("--relay: exit %d %s", code, stderr)
	}
	if stdout, _, code := runCLI(t, "", "master", "-p", "gamespy1", "-o", "key=Wr0ngK", addr); code != exitFail || !strings.Contains(stdout, "master-denied") {
		t.Errorf("a wrong key: exit %d %s", code, stdout)
	}
	if _, _, code := runCLI(t, "", "master", "-p", "gamespy1", "--filter", "nosuchgame", addr); code != exitUsage {
		t.Errorf("an unknown game: exit %d", code)
	}
}

// foreignListener reports whether tgt, a UDP server of the demo, shares its
// port number with a TCP listener: not the demo's (it keeps its TCP and UDP
// ports apart), another process's (a test of another package running
// beside this one), which the probe's TCP protocols then reach.
func foreignListener(tgt demo.Target) bool {
	c, err := codecs.Lookup(tgt.Protocol)
	if err != nil || codecs.DescriptionOf(c).Transport == codecs.TCP {
		return false
	}
	conn, err := net.DialTimeout("tcp", tgt.Addr, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
