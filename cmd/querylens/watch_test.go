package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/alerts/deliver"
)

// receiver is a loopback webhook endpoint that keeps what it is sent.
type receiver struct {
	ts     *httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	status int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{status: http.StatusNoContent}
	r.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		b, _ := io.ReadAll(q.Body)
		r.mu.Lock()
		r.bodies, r.heads = append(r.bodies, b), append(r.heads, q.Header.Clone())
		status := r.status
		r.mu.Unlock()
		if strings.Contains(q.URL.Path, "/api/webhooks/") && status < 300 {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"1"}`)
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.ts.Close)
	return r
}

func (r *receiver) got() ([][]byte, []http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies, r.heads
}

const (
	testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	hookToken  = "tok3n-s3cr3t-in-the-path"
)

// noLeak fails when a secret is in s.
func noLeak(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{hookToken, testSecret, strings.TrimPrefix(testSecret, "whsec_")} {
		if strings.Contains(s, secret) {
			t.Errorf("%s carries a secret: %s", what, s)
		}
	}
}

func TestWatchCLI(t *testing.T) {
	rec := newReceiver(t)
	hook := rec.ts.URL + "/hooks/" + hookToken
	data := t.TempDir()
	db := []string{"--data", data}
	loop := []string{"--webhook-allow", "127.0.0.0/8", "--allow-http-webhooks"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{"list before any", cat([]string{"watch", "list"}, db), exitFail, "", "no history database"},
		{"add webhook", cat([]string{"watch", "add", "--id", "duel", "--down", "--up", "--players", "4", "--full",
			"--join", "--player", "[EU]*", "--resend", "10m", "--mute", "2026-12-24T20:00:00Z/2026-12-25T08:00:00Z",
			"--webhook", hook, "--secret", testSecret}, db, loop, []string{"zandronum/127.0.0.1:10666"}), exitOK,
			"watch duel added: zandronum/127.0.0.1:10666 tells down, up, still down every 10m0s, players ≥ 4, full, joins ([EU]*)", ""},
		{"add the same id", cat([]string{"watch", "add", "--id", "duel", "--down", "--webhook", hook, "--secret", testSecret},
			db, loop, []string{"zandronum/127.0.0.1:10666"}), exitFail, "", "a watch with this id exists"},
		{"add a second", cat([]string{"watch", "add", "--id", "ctf", "--map", "--name", "--empty", "--every", "1m",
			"--webhook", hook, "--secret", testSecret}, db, loop, []string{"quake3/127.0.0.1:27960"}), exitOK, "empty, map, name, sampled every 1m0s to webhook", ""},
		{"add a board without discord", cat([]string{"watch", "add", "--board", "--webhook", hook, "--secret", testSecret},
			db, loop, []string{"quake3/127.0.0.1:27961"}), exitFail, "", "a live status message is Discord's only"},
		{"add a negative every", cat([]string{"watch", "add", "--down", "--every", "-1s", "--webhook", hook, "--secret", testSecret},
			db, loop, []string{"quake3/127.0.0.1:27961"}), exitFail, "", "negative"},
		{"add beyond the cap", cat([]string{"watch", "add", "--watch-max", "2", "--down", "--webhook", hook, "--secret", testSecret},
			db, loop, []string{"quake3/127.0.0.1:27961"}), exitFail, "", "too many watches"},
		{"add http without the flag", cat([]string{"watch", "add", "--down", "--webhook", hook, "--secret", testSecret},
			db, []string{"zandronum/127.0.0.1:10667"}), exitFail, "", "http is not allowed"},
		{"add discord elsewhere", cat([]string{"watch", "add", "--down", "--discord", "https://example.com/api/webhooks/1/" + hookToken},
			db, []string{"zandronum/127.0.0.1:10667"}), exitFail, "", "a Discord webhook is at https://discord.com/api/webhooks/"},
		{"add webhook without secret", cat([]string{"watch", "add", "--down", "--webhook", hook}, db, loop,
			[]string{"zandronum/127.0.0.1:10667"}), exitFail, "", "bad destination"},
		{"add two destinations", cat([]string{"watch", "add", "--down", "--webhook", hook, "--slack", "https://hooks.slack.com/services/T1/" + hookToken},
			db, []string{"zandronum/127.0.0.1:10667"}), exitUsage, "", "one destination per watch"},
		{"add no destination", cat([]string{"watch", "add", "--down"}, db, []string{"zandronum/127.0.0.1:10667"}), exitUsage, "", "want a destination"},
		{"add telling nothing", cat([]string{"watch", "add", "--webhook", hook, "--secret", testSecret}, db, loop,
			[]string{"zandronum/127.0.0.1:10667"}), exitFail, "", "tells nothing"},
		{"add up without down", cat([]string{"watch", "add", "--up", "--webhook", hook, "--secret", testSecret}, db, loop,
			[]string{"zandronum/127.0.0.1:10667"}), exitFail, "", "up given without down"},
		{"add joins of an unknown protocol", cat([]string{"watch", "add", "--join", "--webhook", hook, "--secret", testSecret}, db, loop,
			[]string{"nosuchgame/127.0.0.1:25565"}), exitUsage, "", ""},
		{"add joins of a protocol that lists some players", cat([]string{"watch", "add", "--join", "--webhook", hook, "--secret", testSecret}, db, loop,
			[]string{"minecraft/127.0.0.1:25565"}), exitFail, "", "lists only some players"},
		{"add bad server", cat([]string{"watch", "add", "--down", "--webhook", hook, "--secret", testSecret}, db, loop,
			[]string{"zandronum:127.0.0.1"}), exitUsage, "", "PROTOCOL/HOST:PORT"},
		{"add bad mute", cat([]string{"watch", "add", "--down", "--mute", "tomorrow", "--webhook", hook, "--secret", testSecret}, db, loop,
			[]string{"zandronum/127.0.0.1:10667"}), exitUsage, "", "START/END"},
		{"add bad id", cat([]string{"watch", "add", "--id", "a b", "--down", "--webhook", hook, "--secret", testSecret}, db, loop,
			[]string{"zandronum/127.0.0.1:10667"}), exitFail, "", "a watch id is"},
		{"list", cat([]string{"watch", "list"}, db), exitOK, "duel  cli  zandronum/127.0.0.1:10666", ""},
		{"test", cat([]string{"watch", "test", "duel"}, db, loop), exitOK, "  players-more: sent", ""},
		{"test without the loopback range", cat([]string{"watch", "test", "duel"}, db, []string{"--allow-http-webhooks"}), exitFail,
			"the address is not allowed", ""},
		{"test unknown", cat([]string{"watch", "test", "nope"}, db, loop), exitFail, "", "no such watch"},
		{"rm", cat([]string{"watch", "rm", "ctf"}, db), exitOK, "watch ctf removed", ""},
		{"rm again", cat([]string{"watch", "rm", "ctf"}, db), exitFail, "", "no such watch"},
		{"no subcommand", []string{"watch"}, exitUsage, "", "querylens watch add"},
		{"unknown subcommand", []string{"watch", "frob"}, exitUsage, "", "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errb, code := runCLI(t, "", tc.args...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errb, tc.err) {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s\nwant %q in stdout, %q in stderr", code, tc.code, out, errb, tc.out, tc.err)
			}
			noLeak(t, "stdout", out)
			noLeak(t, "stderr", errb)
		})
	}

	// The list, as JSON: masked destinations, the rules.
	out, _, code := runCLI(t, "", cat([]string{"watch", "list", "--json"}, db)...)
	var list []watchJSON
	if err := json.Unmarshal([]byte(out), &list); code != exitOK || err != nil {
		t.Fatalf("list --json: %d %v\n%s", code, err, out)
	}
	if len(list) != 1 || list[0].ID != "duel" || len(list[0].To) != 1 || list[0].To[0].URL != rec.ts.URL+"/***" || !list[0].To[0].Signed {
		t.Fatalf("list --json = %+v", list)
	}

	// test sent one message of each kind, signed, under distinct ids.
	bodies, heads := rec.got()
	if len(bodies) != len(alerts.Kinds()) {
		t.Fatalf("the receiver got %d messages, want %d", len(bodies), len(alerts.Kinds()))
	}
	ids := map[string]bool{}
	for i, b := range bodies {
		var p alerts.WebhookPayload
		if err := json.Unmarshal(b, &p); err != nil || p.Type != "server."+string(alerts.Kinds()[i]) || p.Data.Watch != "duel" {
			t.Errorf("message %d: %v %+v", i, err, p)
		}
		h := heads[i]
		id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
		sec, _ := strconv.ParseInt(ts, 10, 64)
		want, err := alerts.Sign(testSecret, id, time.Unix(sec, 0), b)
		if err != nil || h.Get("webhook-signature") != want || ids[id] {
			t.Errorf("message %d: signature %q, want %q (%v); id %q", i, h.Get("webhook-signature"), want, err, id)
		}
		ids[id] = true
	}
}

// A destination whose name resolves to a private address is refused
// before any connection: the resolver is a fake, and the dialer only
// counts (and would fail) what it is asked to dial.
func TestWatchTestPrivateAddress(t *testing.T) {
	data := t.TempDir()
	out, errb, code := runCLI(t, "", "watch", "add", "--data", data, "--id", "lan", "--down",
		"--webhook", "https://hooks.internal.example/in/"+hookToken, "--secret", testSecret, "zandronum/127.0.0.1:10666")
	if code != exitOK {
		t.Fatalf("add: %d\n%s%s", code, out, errb)
	}
	var mu sync.Mutex
	var dialed []string
	old := watchSender
	t.Cleanup(func() { watchSender = old })
	watchSender = func(cfg deliver.Config) (*deliver.Sender, error) {
		cfg.Resolver = fakeResolver{"hooks.internal.example": {netip.MustParseAddr("10.1.2.3")}}
		cfg.Dial = func(_ context.Context, _, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			return nil, errors.New("no dialing in this test")
		}
		return deliver.New(cfg)
	}
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"default rule", nil},
		{"loopback opened only", []string{"--webhook-allow", "127.0.0.0/8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"watch", "test", "--data", data}, tc.flags...)
			out, errb, code := runCLI(t, "", append(args, "lan")...)
			if code != exitFail || !strings.Contains(out, "resolves to 10.1.2.3, which the address rule refuses") {
				t.Fatalf("exit %d\n%s%s", code, out, errb)
			}
			if n := strings.Count(out, "refuses"); n != 1 {
				t.Errorf("tried %d times, want once (the other kinds would fail alike)", n)
			}
			noLeak(t, "stdout", out)
			noLeak(t, "stderr", errb)
		})
	}
	if len(dialed) != 0 {
		t.Fatalf("dialed %v", dialed)
	}
}

// fakeResolver answers from a table; it never asks DNS.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// Discord and Slack destinations at loopback fakes, which stand for
// their hosts when --webhook-allow opens their address (as serve takes
// them), through the same address rule.
func TestWatchDiscordSlack(t *testing.T) {
	t.Parallel()
	rec := newReceiver(t)
	data := t.TempDir()
	// Without the range opened, the fake is not Discord.
	out, errb, code := runCLI(t, "", "watch", "add", "--data", data, "--down", "--allow-http-webhooks",
		"--discord", rec.ts.URL+"/api/webhooks/123/"+hookToken, "zandronum/127.0.0.1:10666")
	if code != exitFail || !strings.Contains(errb, "https://discord.com/api/webhooks/") {
		t.Fatalf("a loopback Discord without --webhook-allow: %d\n%s%s", code, out, errb)
	}
	noLeak(t, "stderr", errb)
	loop := []string{"--data", data, "--webhook-allow", "127.0.0.0/8", "--allow-http-webhooks"}
	for _, tc := range []struct {
		name, flag, url, masked string
		send                    bool // Slack is paced at one message a second: its test is below, failing at once
	}{
		{"discord", "--discord", rec.ts.URL + "/api/webhooks/123/" + hookToken, rec.ts.URL + "/api/webhooks/123/***", true},
		{"slack", "--slack", rec.ts.URL + "/services/T1/B2/" + hookToken, rec.ts.URL + "/services/T1/***", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errb, code := runCLI(t, "", append([]string{"watch", "add", "--id", tc.name, "--down", "--up", tc.flag, tc.url, "zandronum/127.0.0.1:10666"}, loop...)...)
			if code != exitOK || !strings.Contains(out, tc.masked) {
				t.Fatalf("add: %d\n%s%s", code, out, errb)
			}
			if !tc.send {
				return
			}
			before, _ := rec.got()
			out, errb, code = runCLI(t, "", append([]string{"watch", "test", tc.name}, loop...)...)
			after, _ := rec.got()
			if code != exitOK || len(after)-len(before) != len(alerts.Kinds()) {
				t.Fatalf("test: %d, %d messages\n%s%s", code, len(after)-len(before), out, errb)
			}
			for _, b := range after[len(before):] {
				if !json.Valid(b) {
					t.Fatalf("not JSON: %s", b)
				}
			}
			noLeak(t, "stdout", out)
			noLeak(t, "stderr", errb)
		})
	}
	// The fake answers 500 from now on: every failure is printed, masked.
	rec.mu.Lock()
	rec.status = http.StatusInternalServerError
	rec.mu.Unlock()
	out, errb, code = runCLI(t, "", append([]string{"watch", "test", "slack"}, loop...)...)
	if code != exitFail || !strings.Contains(out, "status 500") {
		t.Fatalf("test against a failing fake: %d\n%s%s", code, out, errb)
	}
	noLeak(t, "stdout", out)
	noLeak(t, "stderr", errb)
}
