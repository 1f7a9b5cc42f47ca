package deliver

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
)

const (
	token  = "S3CRETt0ken_qwertyuiop-ZXCV"
	secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
)

// clock is a fake clock: Sleep advances it at once and records the wait.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.sleeps = append(c.sleeps, d)
	return ctx.Err()
}

func (c *clock) total() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t time.Duration
	for _, d := range c.sleeps {
		t += d
	}
	return t
}

// rig is a Sender pointed at loopback fakes through the real dialer, the
// loopback ranges opened by WebhookAllow, and a record of everything it
// said (errors and log lines) to search for secrets.
type rig struct {
	t     *testing.T
	s     *Sender
	clk   *clock
	mu    sync.Mutex
	said  []string
	dials atomic.Int32
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func newRig(t *testing.T, ts *httptest.Server, edit func(*Config)) *rig {
	t.Helper()
	r := &rig{t: t, clk: &clock{now: time.Unix(1_800_000_000, 0)}}
	cfg := Config{
		WebhookAllow: loopback,
		Now:          r.clk.Now,
		Sleep:        r.clk.Sleep,
		Jitter:       func() float64 { return 0.5 },
		Logf: func(format string, args ...any) {
			r.mu.Lock()
			r.said = append(r.said, fmt.Sprintf(format, args...))
			r.mu.Unlock()
		},
	}
	d := &net.Dialer{}
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		r.dials.Add(1)
		if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() {
			t.Errorf("dial of a non-loopback address %s", addr)
			return nil, errors.New("test: not loopback")
		}
		return d.DialContext(ctx, network, addr)
	}
	if ts != nil {
		cfg.TestHosts = []string{ts.Listener.Addr().String()}
		if ts.TLS != nil {
			pool := x509.NewCertPool()
			pool.AddCert(ts.Certificate())
			cfg.RootCAs = pool
		} else {
			cfg.AllowHTTP = true
		}
	}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, line := range r.said {
			noSecret(t, line)
		}
	})
	r.s = s
	return r
}

// noSecret fails when s carries the token or the signing secret.
func noSecret(t *testing.T, s string) {
	t.Helper()
	for _, x := range []string{token, secret, strings.TrimPrefix(secret, "whsec_"), "qwertyuiop"} {
		if strings.Contains(s, x) {
			t.Errorf("a secret leaks: %s", s)
		}
	}
}

func (r *rig) send(d alerts.Destination, body string) (Result, error) {
	res, err := r.s.Send(context.Background(), d, alerts.Message{ID: "msg_1", Kind: d.Kind, Body: []byte(body)})
	if err != nil {
		r.mu.Lock()
		r.said = append(r.said, err.Error(), fmt.Sprintf("%v %+v %#v", err, err, err))
		r.mu.Unlock()
		for e := err; e != nil; e = errors.Unwrap(e) {
			noSecret(r.t, e.Error())
		}
		var de *Error
		if errors.As(err, &de) && de.Err != nil {
			noSecret(r.t, de.Err.Error())
		}
	}
	return res, err
}

func discordTo(ts *httptest.Server) alerts.Destination {
	return alerts.Destination{Name: "ops", Kind: alerts.DestDiscord, URL: ts.URL + "/api/webhooks/123/" + token}
}

func webhookTo(ts *httptest.Server) alerts.Destination {
	return alerts.Destination{Name: "hook", Kind: alerts.DestWebhook, URL: ts.URL + "/hooks/" + token + "?k=" + token, Secret: secret}
}

type request struct {
	method, path, query string
	header              http.Header
	body                string
}

// fake answers with the answers in turn (the last one repeats) and
// records the requests.
type fake struct {
	mu      sync.Mutex
	reqs    []request
	answers []func(w http.ResponseWriter, r *http.Request)
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(b)})
	a := f.answers[min(n, len(f.answers)-1)]
	f.mu.Unlock()
	a(w, r)
}

func (f *fake) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.reqs...)
}

func answer(status int, header map[string]string, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func serve(t *testing.T, tls bool, answers ...func(http.ResponseWriter, *http.Request)) (*httptest.Server, *fake) {
	f := &fake{answers: answers}
	ts := httptest.NewUnstartedServer(f)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the TLS failures are the test's
	if tls {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return ts, f
}

func TestSendDiscord(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1") // never used
	ts, f := serve(t, true, answer(200, nil, `{"id":"5550001","channel_id":"1"}`))
	r := newRig(t, ts, nil)
	d := discordTo(ts)
	d.ThreadID = "777"
	body := alerts.DiscordEvent(alerts.Event{Kind: alerts.KindDown, Name: "srv"}).JSON()
	res, err := r.send(d, string(body))
	if err != nil {
		t.Fatal(err)
	}
	if res.MessageID != "5550001" || res.Attempts != 1 || res.Status != 200 {
		t.Errorf("result %+v", res)
	}
	got := f.requests()[0]
	if got.method != "POST" || got.path != "/api/webhooks/123/"+token || got.query != "thread_id=777&wait=true" ||
		got.header.Get("Content-Type") != "application/json" || got.body != string(body) {
		t.Errorf("request %+v", got)
	}
}

func TestSendRetryAfterBody(t *testing.T) {
	ts, f := serve(t, true,
		answer(429, map[string]string{"Content-Type": "application/json"}, `{"message":"You are being rate limited.","retry_after":1.5,"global":false}`),
		answer(429, map[string]string{"Retry-After": "3"}, `{"retry_after":0.25}`),
		answer(200, nil, `{"id":"1"}`))
	r := newRig(t, ts, nil)
	res, err := r.send(discordTo(ts), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 3 || len(f.requests()) != 3 {
		t.Fatalf("attempts %d, requests %d", res.Attempts, len(f.requests()))
	}
	// The body's retry_after wins over the header, plus a tenth of jitter at most.
	want := []time.Duration{1500*time.Millisecond + 75*time.Millisecond, 250*time.Millisecond + 12500*time.Microsecond}
	if got := r.clk.sleeps; len(got) < 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("waits %v, want %v", got, want)
	}
}

func TestSendRetryAfterHeader(t *testing.T) {
	ts, _ := serve(t, true, answer(503, map[string]string{"Retry-After": "7"}, "busy"), answer(204, nil, ""))
	r := newRig(t, ts, nil)
	if _, err := r.send(webhookTo(ts), `{}`); err != nil {
		t.Fatal(err)
	}
	if got := r.clk.sleeps; len(got) != 1 || got[0] != 7*time.Second+350*time.Millisecond {
		t.Errorf("waits %v", got)
	}
}

func TestSendGivesUp(t *testing.T) {
	ts, f := serve(t, true, answer(500, nil, `{"message":"`+token+`"}`))
	r := newRig(t, ts, func(c *Config) { c.MaxAttempts = 4 })
	_, err := r.send(discordTo(ts), `{}`)
	var de *Error
	if !errors.Is(err, ErrGaveUp) || !errors.As(err, &de) || de.Status != 500 || de.Attempts != 4 || len(f.requests()) != 4 {
		t.Fatalf("err %v, %d requests", err, len(f.requests()))
	}
	// Exponential: 1 s, 2 s, 4 s, each between half and all (the jitter is 0.5).
	want := []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second}
	if fmt.Sprint(r.clk.sleeps) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", r.clk.sleeps, want)
	}
	if !strings.Contains(err.Error(), "https://127.0.0.1") || !strings.Contains(err.Error(), "/api/webhooks/123/***") {
		t.Errorf("the error does not name the destination: %v", err)
	}
}

func TestSendMaxWait(t *testing.T) {
	ts, f := serve(t, true, answer(429, nil, `{"retry_after": 3600}`))
	r := newRig(t, ts, func(c *Config) { c.MaxWait = time.Minute })
	_, err := r.send(discordTo(ts), `{}`)
	if !errors.Is(err, ErrGaveUp) || len(f.requests()) != 1 || len(r.clk.sleeps) != 0 {
		t.Fatalf("err %v, %d requests, waits %v", err, len(f.requests()), r.clk.sleeps)
	}
	// The wait asked for goes to the caller, who may try later.
	if e, ok := err.(*Error); !ok || e.RetryAfter != time.Hour {
		t.Errorf("RetryAfter of %#v, want an hour", err)
	}
}

func TestSendRefusedStatus(t *testing.T) {
	ts, f := serve(t, true, answer(401, nil, `{"message": "Invalid Webhook Token `+token+`", "code": 50027}`))
	r := newRig(t, ts, nil)
	_, err := r.send(discordTo(ts), `{}`)
	if !errors.Is(err, ErrStatus) || len(f.requests()) != 1 || !strings.Contains(err.Error(), "Invalid Webhook Token") {
		t.Fatalf("err %v, %d requests", err, len(f.requests()))
	}
}

func TestSendNoRedirect(t *testing.T) {
	other, of := serve(t, true, answer(200, nil, `{"id":"1"}`))
	ts, _ := serve(t, true, answer(307, map[string]string{"Location": other.URL + "/api/webhooks/1/x"}, ""))
	r := newRig(t, ts, nil)
	if _, err := r.send(discordTo(ts), `{}`); !errors.Is(err, ErrStatus) {
		t.Fatalf("err %v", err)
	}
	if len(of.requests()) != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestSendConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := newRig(t, nil, func(c *Config) { c.TestHosts = []string{addr}; c.MaxAttempts = 3 })
	_, err = r.send(alerts.Destination{Kind: alerts.DestDiscord, URL: "https://" + addr + "/api/webhooks/123/" + token}, `{}`)
	var ue interface{ Timeout() bool }
	if !errors.Is(err, ErrGaveUp) || !errors.As(err, &ue) {
		t.Fatalf("err %v", err)
	}
	if r.dials.Load() != 3 {
		t.Errorf("%d dials", r.dials.Load())
	}
}

func TestSendTLSFailure(t *testing.T) {
	ts, f := serve(t, true, answer(200, nil, `{"id":"1"}`))
	r := newRig(t, ts, func(c *Config) { c.RootCAs = x509.NewCertPool(); c.MaxAttempts = 2 })
	_, err := r.send(discordTo(ts), `{}`)
	if !errors.Is(err, ErrGaveUp) || !strings.Contains(err.Error(), "certificate") || len(f.requests()) != 0 {
		t.Fatalf("err %v", err)
	}
}

func TestSendSlow(t *testing.T) {
	// The fake answers only when the test ends: each attempt must end by
	// its own deadline. (Answering when the request's context ends would
	// race the client's own cancellation.)
	release := make(chan struct{})
	ts, _ := serve(t, true, func(w http.ResponseWriter, r *http.Request) { <-release })
	t.Cleanup(func() { close(release) }) // before ts.Close, which waits for the handlers
	r := newRig(t, ts, func(c *Config) { c.AttemptTimeout = 50 * time.Millisecond; c.MaxAttempts = 2 })
	res, err := r.send(discordTo(ts), `{}`)
	var de *Error
	if !errors.As(err, &de) || de.Reason != ErrGaveUp || de.Attempts != 2 {
		t.Fatalf("res %+v err %v", res, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v does not say it timed out", err)
	}
}

func TestSendLargeAnswer(t *testing.T) {
	ts, _ := serve(t, true, answer(200, nil, strings.Repeat("x", 4<<20)))
	r := newRig(t, ts, nil)
	if _, err := r.send(webhookTo(ts), `{}`); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookSigned(t *testing.T) {
	ts, f := serve(t, true, answer(502, map[string]string{"Retry-After": "2"}, ""), answer(200, nil, ""))
	r := newRig(t, ts, nil)
	body := `{"type":"server.down"}`
	if _, err := r.send(webhookTo(ts), body); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, q := range reqs {
		id, ts := q.header.Get("webhook-id"), q.header.Get("webhook-timestamp")
		var secs int64
		fmt.Sscan(ts, &secs)
		want, _ := alerts.Sign(secret, "msg_1", time.Unix(secs, 0), []byte(body))
		if id != "msg_1" || q.header.Get("webhook-signature") != want || q.body != body {
			t.Errorf("attempt %d: id %q timestamp %q signature %q", i, id, ts, q.header.Get("webhook-signature"))
		}
	}
	if reqs[0].header.Get("webhook-timestamp") == reqs[1].header.Get("webhook-timestamp") {
		t.Error("the retry was not signed anew")
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

func TestAddressPolicy(t *testing.T) {
	ts, f := serve(t, false, answer(200, nil, ""))
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	res := fakeResolver{
		"private.example":  {netip.MustParseAddr("10.1.2.3")},
		"mixed.example":    {netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("192.168.1.1")},
		"mapped.example":   {netip.MustParseAddr("::ffff:169.254.169.254")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
		"loop.example":     {netip.MustParseAddr("127.0.0.1")},
	}
	// Without WebhookAllow, loopback is refused like any private range.
	strict := newRig(t, nil, func(c *Config) { c.WebhookAllow = nil; c.Resolver = res; c.AllowHTTP = true })
	open := newRig(t, nil, func(c *Config) { c.Resolver = res; c.AllowHTTP = true })
	for _, tc := range []struct {
		r    *rig
		host string
		ok   bool
	}{
		{strict, "private.example", false},
		{strict, "mixed.example", false},
		{strict, "mapped.example", false},
		{strict, "metadata.example", false},
		{strict, "loop.example", false},
		{strict, "127.0.0.1", false},
		{strict, "[::1]", false},
		{strict, "[::ffff:127.0.0.1]", false},
		{open, "private.example", false},
		{open, "loop.example", true}, // resolved once, checked, and dialled at the address checked
		{open, "127.0.0.1", true},
	} {
		before, sent := tc.r.dials.Load(), len(f.requests())
		d := alerts.Destination{Kind: alerts.DestWebhook, URL: "http://" + tc.host + ":" + port + "/hook/" + token, Secret: secret}
		_, err := tc.r.send(d, `{}`)
		if tc.ok != (err == nil) {
			t.Errorf("%s: err %v", tc.host, err)
		}
		if !tc.ok {
			if !errors.Is(err, ErrAddress) {
				t.Errorf("%s: err %v, want ErrAddress", tc.host, err)
			}
			if tc.r.dials.Load() != before || len(f.requests()) != sent {
				t.Errorf("%s: dialled or sent though refused", tc.host)
			}
		}
	}
}

func TestPublicAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"8.8.8.8", true}, {"162.159.135.232", true}, {"2606:4700::6810:84e5", true},
		{"127.0.0.1", false}, {"10.0.0.1", false}, {"172.16.0.1", false}, {"192.168.0.1", false},
		{"169.254.169.254", false}, {"100.64.0.1", false}, {"0.0.0.0", false}, {"255.255.255.255", false},
		{"224.0.0.1", false}, {"192.0.2.1", false}, {"198.51.100.1", false}, {"203.0.113.1", false}, {"198.18.0.1", false},
		{"::", false}, {"::1", false}, {"fe80::1", false}, {"fc00::1", false}, {"ff02::1", false}, {"2001:db8::1", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false}, {"::ffff:8.8.8.8", true}, {"::127.0.0.1", false},
		{"64:ff9b::a00:1", false}, {"2002:a00:1::", false}, {"2001::1", false}, {"fe80::1%eth0", false},
	} {
		if got := PublicAddr(netip.MustParseAddr(tc.addr)); got != tc.ok {
			t.Errorf("PublicAddr(%s) = %v", tc.addr, got)
		}
	}
}

func TestCheck(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	lax, err := New(Config{AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []alerts.Destination{
		{Kind: alerts.DestDiscord, URL: "http://discord.com/api/webhooks/123/" + token},
		{Kind: alerts.DestSlack, URL: "http://hooks.slack.com/services/T0/B1/" + token},
	} {
		if _, err := lax.Check(d); !errors.Is(err, ErrURL) {
			t.Errorf("AllowHTTP let %s through: %v", d, err)
		}
	}
	if _, err := lax.Check(alerts.Destination{Kind: alerts.DestWebhook, URL: "http://example.com/hook", Secret: secret}); err != nil {
		t.Errorf("AllowHTTP: %v", err)
	}
	for _, tc := range []struct {
		d  alerts.Destination
		ok bool
	}{
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/123/" + token}, true},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://discordapp.com/api/v10/webhooks/123/" + token}, true},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/123/" + token, ThreadID: "42"}, true},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/123/" + token, ThreadID: "4&x=2"}, false},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "http://discord.com/api/webhooks/123/" + token}, false},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://discord.com.evil.example/api/webhooks/123/" + token}, false},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://discord.com:8443/api/webhooks/123/" + token}, false},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://u:p@discord.com/api/webhooks/123/" + token}, false},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/abc/" + token}, false},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://discord.com/api/webhooks/123/" + token + "?wait=false"}, false},
		{alerts.Destination{Kind: alerts.DestDiscord, URL: "https://127.0.0.1:9/api/webhooks/123/" + token}, false},
		{alerts.Destination{Kind: alerts.DestSlack, URL: "https://hooks.slack.com/services/T0/B1/" + token}, true},
		{alerts.Destination{Kind: alerts.DestSlack, URL: "https://hooks.slack.example/services/T0/B1/" + token}, false},
		{alerts.Destination{Kind: alerts.DestWebhook, URL: "https://example.com/hook", Secret: secret}, true},
		{alerts.Destination{Kind: alerts.DestWebhook, URL: "https://example.com/hook"}, false},
		{alerts.Destination{Kind: alerts.DestWebhook, URL: "ftp://example.com/hook", Secret: secret}, false},
		{alerts.Destination{Kind: "pager", URL: "https://example.com/hook"}, false},
	} {
		_, err := s.Check(tc.d)
		if tc.ok != (err == nil) {
			t.Errorf("%s: %v", tc.d, err)
		}
		if err != nil {
			noSecret(t, err.Error())
			if !errors.Is(err, ErrURL) {
				t.Errorf("%s: %v is not ErrURL", tc.d, err)
			}
		}
	}
	if _, err := New(Config{TestHosts: []string{"10.0.0.1:80"}}); err == nil {
		t.Error("a non-loopback test host is taken")
	}
}

func TestPacing(t *testing.T) {
	ts, f := serve(t, true, answer(200, nil, `{"id":"1"}`))
	r := newRig(t, ts, nil)
	for range 9 {
		if _, err := r.send(discordTo(ts), `{}`); err != nil {
			t.Fatal(err)
		}
	}
	// 5 at once, then one every 400 ms: the 9th waits 1.6 s in all.
	if got := r.clk.total(); got != 1600*time.Millisecond || len(f.requests()) != 9 {
		t.Errorf("waited %v for %d requests", got, len(f.requests()))
	}
	// Slack: one a second.
	sl := newRig(t, ts, nil)
	d := alerts.Destination{Kind: alerts.DestSlack, URL: ts.URL + "/services/T/B/" + token}
	for range 3 {
		if _, err := sl.send(d, `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if got := sl.clk.total(); got != 2*time.Second {
		t.Errorf("Slack waited %v", got)
	}
}

// discordFake keeps messages as Discord's webhook endpoints do.
type discordFake struct {
	mu     sync.Mutex
	next   int
	msgs   map[string]string
	edits  int
	posts  int
	delete int
}

func (d *discordFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, _ := io.ReadAll(r.Body)
	if r.URL.Query().Get("thread_id") != "42" {
		w.WriteHeader(400) // every request of the board names the thread
		return
	}
	base := "/api/webhooks/123/" + token
	rest, ok := strings.CutPrefix(r.URL.Path, base)
	if !ok {
		w.WriteHeader(401)
		return
	}
	id, _ := strings.CutPrefix(rest, "/messages/")
	switch {
	case r.Method == "POST" && rest == "":
		d.next++
		d.posts++
		id := fmt.Sprint(1000 + d.next)
		d.msgs[id] = string(b)
		json.NewEncoder(w).Encode(map[string]string{"id": id})
	case r.Method == "PATCH" && d.msgs[id] != "":
		d.edits++
		d.msgs[id] = string(b)
		json.NewEncoder(w).Encode(map[string]string{"id": id})
	case r.Method == "DELETE" && d.msgs[id] != "":
		d.delete++
		delete(d.msgs, id)
		w.WriteHeader(204)
	default:
		w.WriteHeader(404)
		io.WriteString(w, `{"message": "Unknown Message", "code": 10008}`)
	}
}

func TestBoard(t *testing.T) {
	fk := &discordFake{msgs: map[string]string{}}
	ts := httptest.NewTLSServer(fk)
	t.Cleanup(ts.Close)
	r := newRig(t, ts, nil)
	d := discordTo(ts)
	d.ThreadID = "42"
	ctx := context.Background()
	page := func(s string) alerts.DiscordMessage {
		return alerts.DiscordMessage{Embeds: []alerts.DiscordEmbed{{Title: s}}}
	}
	ids, err := r.s.Board(ctx, d, nil, []alerts.DiscordMessage{page("a"), page("b")})
	if err != nil || len(ids) != 2 || fk.posts != 2 {
		t.Fatalf("ids %v err %v posts %d", ids, err, fk.posts)
	}
	ids2, err := r.s.Board(ctx, d, ids, []alerts.DiscordMessage{page("a2"), page("b2")})
	if err != nil || fmt.Sprint(ids2) != fmt.Sprint(ids) || fk.edits != 2 || fk.posts != 2 || !strings.Contains(fk.msgs[ids[1]], "b2") {
		t.Fatalf("ids %v err %v edits %d", ids2, err, fk.edits)
	}
	// Someone deletes the first message: it is posted again.
	fk.mu.Lock()
	delete(fk.msgs, ids[0])
	fk.mu.Unlock()
	ids3, err := r.s.Board(ctx, d, ids2, []alerts.DiscordMessage{page("a3"), page("b3")})
	if err != nil || ids3[0] == ids[0] || ids3[1] != ids[1] || fk.posts != 3 {
		t.Fatalf("ids %v err %v posts %d", ids3, err, fk.posts)
	}
	// One page fewer: the last message goes.
	ids4, err := r.s.Board(ctx, d, ids3, []alerts.DiscordMessage{page("a4")})
	if err != nil || len(ids4) != 1 || fk.delete != 1 || len(fk.msgs) != 1 {
		t.Fatalf("ids %v err %v deleted %d left %d", ids4, err, fk.delete, len(fk.msgs))
	}
	// Slack cannot.
	_, err = r.s.Board(ctx, alerts.Destination{Kind: alerts.DestSlack, URL: ts.URL + "/services/T/B/" + token}, nil, []alerts.DiscordMessage{page("x")})
	if !errors.Is(err, alerts.ErrSlackNoEdit) || !errors.Is(err, ErrNoBoard) {
		t.Fatalf("Slack board: %v", err)
	}
	noSecret(t, err.Error())
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header, body string
		want         time.Duration
		ok           bool
	}{
		{"", `{"retry_after": 1.234}`, 1234 * time.Millisecond, true},
		{"5", `{"retry_after": 0.5}`, 500 * time.Millisecond, true},
		{"5", `{"message": "x"}`, 5 * time.Second, true},
		{"2.5", "", 2500 * time.Millisecond, true},
		{"Tue, 01 Dec 2026 20:00:30 GMT", "", 30 * time.Second, true},
		{"-1", "", 0, false},
		{"", `{"retry_after": -3}`, 0, false},
		{"", `{"retry_after": 1e300}`, 24 * time.Hour, true},
		{"NaN", "", 0, false},
		{"soon", "", 0, false},
		{"", `{"retry_after": "1"}`, 0, false},
		{"", "", 0, false},
	} {
		got, ok := RetryAfter(tc.header, []byte(tc.body), now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RetryAfter(%q, %q) = %v %v, want %v %v", tc.header, tc.body, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzRetryAfter(f *testing.F) {
	f.Add("", []byte(`{"retry_after": 1.5, "global": false}`)) // Discord's 429
	f.Add("120", []byte(nil))                                  // seconds
	f.Add("Wed, 21 Oct 2015 07:28:00 GMT", []byte(nil))        // a date
	f.Add("1e309", []byte(`{"retry_after": -0}`))              // out of range
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		d, ok := RetryAfter(header, body, now)
		if d < 0 || d > 24*time.Hour || (!ok && d != 0) {
			t.Fatalf("RetryAfter(%q, %q) = %v %v", header, body, d, ok)
		}
	})
}

func TestSendConcurrent(t *testing.T) {
	ts, f := serve(t, true, answer(200, nil, `{"id":"1"}`))
	r := newRig(t, ts, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := discordTo(ts)
			if i%2 == 1 {
				d = webhookTo(ts)
			}
			if _, err := r.send(d, `{}`); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := len(f.requests()); n != 8 {
		t.Errorf("%d requests", n)
	}
}

func TestSendCancelled(t *testing.T) {
	ts, f := serve(t, true, answer(500, nil, ""))
	r := newRig(t, ts, nil)
	ctx, cancel := context.WithCancel(context.Background())
	r.s.cfg.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	_, err := r.s.Send(ctx, discordTo(ts), alerts.Message{Kind: alerts.DestDiscord, Body: []byte(`{}`)})
	if !errors.Is(err, ErrGaveUp) || !errors.Is(err, context.Canceled) || len(f.requests()) != 1 {
		t.Fatalf("err %v, %d requests", err, len(f.requests()))
	}
	noSecret(t, err.Error())
}

func TestSendPostedWithoutID(t *testing.T) {
	ts, f := serve(t, true, answer(200, nil, `not json`))
	r := newRig(t, ts, nil)
	res, err := r.send(discordTo(ts), `{}`)
	if err != nil || res.MessageID != "" || len(f.requests()) != 1 {
		t.Fatalf("res %+v err %v, %d requests", res, err, len(f.requests()))
	}
}

func TestSendWrongMessage(t *testing.T) {
	ts, f := serve(t, true, answer(200, nil, ""))
	r := newRig(t, ts, nil)
	if _, err := r.s.Send(context.Background(), webhookTo(ts), alerts.Message{Kind: alerts.DestDiscord, ID: "msg_1"}); !errors.Is(err, ErrKind) {
		t.Errorf("a Discord message to a webhook: %v", err)
	}
	if _, err := r.s.Send(context.Background(), webhookTo(ts), alerts.Message{Kind: alerts.DestWebhook}); !errors.Is(err, ErrKind) {
		t.Errorf("a webhook message without id: %v", err)
	}
	if len(f.requests()) != 0 {
		t.Error("sent")
	}
}

func TestExponential(t *testing.T) {
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{
		{1, time.Second}, {2, 2 * time.Second}, {4, 8 * time.Second}, {7, time.Minute}, {64, time.Minute},
	} {
		if got := Exponential(time.Second, time.Minute, tc.attempt); got != tc.want {
			t.Errorf("attempt %d: %v, want %v", tc.attempt, got, tc.want)
		}
	}
}
