package probe_test

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/web/probe"
)

// TestVisitorLimit checks that a scraper nobody named is a visitor like
// any other (the relay's limit per visitor: here 2 requests, on a clock
// that does not move), and that the token or an allowed range lifts that
// limit, and only that one: the relay's per-target limit (here 1 query
// with no refill and no cache) still applies to named scrapers.
func TestVisitorLimit(t *testing.T) {
	srv := startServers(t, 1)[0]
	c := newClock()
	rs := newRelay(t, c, relay.Config{
		VisitorRate: shared.Rate{PerSecond: 1, Burst: 2},
		TargetRate:  shared.Rate{PerSecond: 0.001, Burst: 1},
		CacheTTL:    -1,
	})
	h := routes(&probe.Handler{
		Exchanger: rs, Timeout: 2 * time.Second, Allow: rs.AllowVisitor, ClientAddr: rs.ClientAddr, Logger: discard,
		Token:    "s3cret-token",
		Scrapers: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")},
	})
	path := "/probe?protocol=webtest&target=" + srv.Addr
	for _, tc := range []struct {
		name   string
		remote string
		hdr    []string
		codes  []int // of successive requests
	}{
		{"anonymous", "192.0.2.1:5000", nil, []int{200, 200, 429, 429}},
		{"wrong token", "192.0.2.2:5000", []string{"Authorization", "Bearer s3cret-tokeN"}, []int{200, 200, 429}},
		{"not bearer", "192.0.2.3:5000", []string{"Authorization", "s3cret-token"}, []int{200, 200, 429}},
		{"token", "192.0.2.4:5000", []string{"Authorization", "Bearer s3cret-token"}, []int{200, 200, 200, 200, 200, 200}},
		{"allowed range", "198.51.100.7:5000", nil, []int{200, 200, 200, 200, 200, 200}},
		{"allowed range, IPv4-mapped", "[::ffff:198.51.100.8]:5000", nil, []int{200, 200, 200, 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.codes {
				rec := get(h, path, tc.remote, tc.hdr...)
				if rec.Code != want {
					t.Fatalf("request %d: status %d, want %d: %s", i+1, rec.Code, want, rec.Body)
				}
				if want == http.StatusTooManyRequests && (rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "too many requests")) {
					t.Errorf("429 without Retry-After or reason: %q", rec.Body)
				}
			}
		})
	}
	// Of all the requests that were let through, the game server got
	// exactly one query: the per-target limit (burst 1, no refill on a
	// still clock) refused every other, named scrapers' included.
	if n := srv.Queries(); n != 1 {
		t.Errorf("the server got %d queries, want 1 (the per-target limit)", n)
	}
	rec := get(h, path, "192.0.2.4:5000", "Authorization", "Bearer s3cret-token")
	if !strings.Contains(rec.Body.String(), `querylens_probe_state{state="relay-limited"} 1`) {
		t.Errorf("a named scraper over the per-target limit:\n%s", rec.Body)
	}
}

// TestScrapeRoundsOneQueryPerCachePeriod plays two Prometheus servers
// that scrape the same 1,000 game servers every 5 s for 30 s of the
// relay's clock (moved by hand between rounds, so nothing waits): each
// game server gets at most one query per cache period (10 s, the
// default), however many scrapes ask.
func TestScrapeRoundsOneQueryPerCachePeriod(t *testing.T) {
	const (
		servers  = 1000
		scrapers = 2
		every    = 5 * time.Second
		span     = 30 * time.Second
	)
	srvs := startServers(t, servers)
	c := newClock()
	fast := shared.Rate{PerSecond: 1e6, Burst: 1e6}
	rs := newRelay(t, c, relay.Config{
		// One machine plays every server on one address: its limit per
		// address would otherwise be the one that shows.
		TargetHostRate: fast,
		MaxUpstream:    4096,
		// The relay's default: a loaded machine (-race, 2 cores) may
		// take a while to answer, and an answer is all this test waits for.
		ReplyWindow: relay.DefaultReplyWindow,
	})
	h := routes(&probe.Handler{Exchanger: rs, Timeout: 5 * time.Second, Allow: rs.AllowVisitor, Token: "prom", Logger: discard})
	rounds := 0
	states := map[string]int{}
	var mu sync.Mutex
	for at := time.Duration(0); at < span; at += every {
		rounds++
		jobs := make(chan string)
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				for target := range jobs {
					rec := get(h, "/probe?format=json&protocol=webtest&target="+target, "10.9.9.9:9999", "Authorization", "Bearer prom")
					mu.Lock()
					if rec.Code != 200 {
						states["http "+strconv.Itoa(rec.Code)]++
					} else if i := strings.Index(rec.Body.String(), `"state":"`); i >= 0 {
						s := rec.Body.String()[i+9:]
						states[s[:strings.IndexByte(s, '"')]]++
					}
					mu.Unlock()
				}
			})
		}
		for range scrapers {
			for _, s := range srvs {
				jobs <- s.Addr
			}
		}
		close(jobs)
		wg.Wait()
		c.Add(every)
	}
	// UDP on loopback may still lose a datagram on a loaded machine: a
	// lost answer is "offline" and is asked again next round (within the
	// bound below); anything else, or many, is a bug.
	if all := rounds * scrapers * servers; states["online"]+states["offline"] != all || states["offline"] > all/100 {
		t.Errorf("answers by state %v, want all %d online (1%% offline at most)", states, all)
	}
	// A query at relay time t is cached until t+10 s: over 30 s, at most
	// one query per started cache period.
	periods := int((span + relay.DefaultCacheTTL - 1) / relay.DefaultCacheTTL)
	total := 0
	for _, s := range srvs {
		n := s.Queries()
		total += n
		if n < 1 || n > periods {
			t.Fatalf("server %s got %d queries in %d rounds of %d scrapers, want 1..%d", s.Addr, n, rounds, scrapers, periods)
		}
	}
	t.Logf("%d scrapes of %d servers over %v: %d queries (%.2f per server; at most %d per server allowed)",
		rounds*scrapers*servers, servers, span, total, float64(total)/servers, periods)
}
