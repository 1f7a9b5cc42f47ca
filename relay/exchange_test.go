package relay

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
)

// challengeResponder answers a plain query with a challenge and a query
// carrying the answer with parts data datagrams.
func challengeResponder(t testing.TB, parts int) *responder {
	return newResponder(t, func(d []byte) [][]byte {
		if !bytes.Contains(d, []byte("+")) {
			return [][]byte{[]byte("RC42")}
		}
		out := make([][]byte, parts)
		for i := range out {
			out[i] = []byte("RA" + strconv.Itoa(i) + string(d[2:]))
		}
		return out
	})
}

// exchangers returns the two Exchanger implementations over one relay.
func exchangers(t *testing.T, ctx context.Context, cfg Config) (*relayFixture, map[string]netquery.Exchanger) {
	f := newRelay(t, cfg)
	c := dialClient(t, ctx, f.url)
	return f, map[string]netquery.Exchanger{"server": f.srv, "client": c}
}

func TestExchange(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 200 * time.Millisecond
	f, ex := exchangers(t, ctx, cfg)
	plain := newResponder(t, echoReply)
	chal := challengeResponder(t, 3)
	silent := newResponder(t, nil)
	for name, x := range ex {
		t.Run(name, func(t *testing.T) {
			q := &testQuery{tag: name + "a", parts: 1}
			res, err := x.Exchange(ctx, testProto, plain.addr, q)
			if err != nil || !res.Done || res.Sent != 1 || res.Received != 1 || res.RTT <= 0 || res.FromCache {
				t.Fatalf("first: %+v %v", res, err)
			}
			if string(q.got[0]) != "RA"+name+"a" {
				t.Fatalf("fed %q", q.got[0])
			}
			// Once the first exchange has settled in the cache (it stops
			// early when its only asker is done), the same question is a hit.
			f.settled(ctx)
			res, err = x.Exchange(ctx, testProto, plain.addr, &testQuery{tag: name + "a", parts: 1})
			if err != nil || !res.Done || !res.FromCache {
				t.Fatalf("second: %+v %v", res, err)
			}
			// The challenge's follow-up is sent as the conversation asks.
			q = &testQuery{tag: name + "c", parts: 3}
			res, err = x.Exchange(ctx, testProto, chal.addr, q)
			if err != nil || !res.Done || res.Sent != 2 || res.Received != 4 {
				t.Fatalf("challenge: %+v %v", res, err)
			}
			// Fewer parts than expected: the window closes, no error, not done.
			q = &testQuery{tag: name + "p", parts: 5}
			res, err = x.Exchange(ctx, testProto, plain.addr, q)
			if err != nil || res.Done || res.Received != 1 {
				t.Fatalf("partial: %+v %v", res, err)
			}
			// No reply at all: the same.
			res, err = x.Exchange(ctx, testProto, silent.addr, &testQuery{tag: name + "s"})
			if err != nil || res.Done || res.Received != 0 || res.Sent != 1 {
				t.Fatalf("silent: %+v %v", res, err)
			}
			// Refusals are typed and name their rule.
			_, err = x.Exchange(ctx, testProto, "127.0.0.1:80", &testQuery{tag: name})
			var re *wire.RefusedError
			if !errors.As(err, &re) || re.Code != wire.CodeDenied || re.Rule() != wire.RuleWellKnownPort {
				t.Fatalf("refusal: %v", err)
			}
			_, err = x.Exchange(ctx, "nope", plain.addr, &testQuery{tag: name})
			if !errors.As(err, &re) || re.Code != wire.CodeUnknownProtocol {
				t.Fatalf("unknown protocol: %v", err)
			}
			// The caller's context bounds the exchange.
			cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			_, err = x.Exchange(cctx, testProto, silent.addr, &testQuery{tag: name + "ctx"})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("context: %v", err)
			}
		})
	}
}

func TestClientConcurrentExchanges(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.MaxInFlight = 4
	f := newRelay(t, cfg)
	r := newResponder(t, echoReply)
	c := dialClient(t, ctx, f.url)
	if c.Hello().MaxInFlight != 4 {
		t.Fatal("hello")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			q := &testQuery{tag: "cc" + strconv.Itoa(i), parts: 1}
			res, err := c.Exchange(ctx, testProto, r.addr, q)
			if err == nil && !res.Done {
				err = errors.New("not done")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Go(func() {
		if _, err := c.Ping(ctx); err != nil {
			errs <- err
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := r.count.Load(); got != 50 {
		t.Fatalf("responder saw %d", got)
	}
}

func TestClientAfterRelayCloses(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	cfg := testConfig()
	cfg.IdleTimeout = 100 * time.Millisecond
	f := newRelay(t, cfg)
	c := dialClient(t, ctx, f.url)
	<-c.done
	_, err := c.Exchange(ctx, testProto, "127.0.0.1:1024", &testQuery{})
	var re *wire.RefusedError
	if err == nil || errors.As(err, &re) && re.Rule() != wire.RuleIdle {
		t.Fatalf("exchange on a closed client: %v", err)
	}
	if _, err := c.Ping(ctx); err == nil {
		t.Fatal("ping on a closed client")
	}
}

func TestMetricsExposition(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	f := newRelay(t, testConfig())
	r := newResponder(t, echoReply)
	c := dialRaw(t, ctx, f.url)
	c.query(ctx, 1, r.addr, "RQm")
	c.collect(ctx, 1)
	c.query(ctx, 2, "127.0.0.1:22", "RQm")
	c.collect(ctx, 2)
	rec := httptest.NewRecorder()
	f.srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("content type %q", ct)
	}
	for _, want := range []string{
		"# TYPE querylens_relay_connections gauge\nquerylens_relay_connections 1\n",
		`querylens_relay_frames_in_total{type="query"} 2`,
		`querylens_relay_frames_out_total{type="hello"} 1`,
		`querylens_relay_frames_out_total{type="reply"} 1`,
		`querylens_relay_refusals_total{rule="well-known-port"} 1`,
		"querylens_relay_queries_forwarded_total 1\n",
		"querylens_relay_cache_misses_total 1\n",
		"querylens_relay_cache_entries 1\n",
		"querylens_relay_reply_bytes_total 3\n",
		"# TYPE querylens_relay_upstream_rtt_seconds histogram\n",
		`querylens_relay_upstream_rtt_seconds_bucket{le="+Inf"} 1`,
		"querylens_relay_upstream_rtt_seconds_count 1\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// Every line is a comment or "name[{labels}] value".
	for line := range strings.SplitSeq(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if _, err := strconv.ParseFloat(value, 64); !ok || err != nil || !strings.HasPrefix(name, "querylens_relay_") {
			t.Errorf("bad sample line %q", line)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}
