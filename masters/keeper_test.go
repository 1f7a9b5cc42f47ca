package masters

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/quake3"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/server"
)

const (
	steamAddr = "127.0.0.1:27011"
	q3Addr    = "127.0.0.1:27950"
)

func spec(t testing.TB, s string) server.MasterSpec {
	t.Helper()
	m, err := server.ParseMasterSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newKeeper returns a Keeper on a fake clock and network, its masters
// given as --master specs.
func newKeeper(t testing.TB, fn *fakeNet, mod func(*Config), specs ...string) *Keeper {
	t.Helper()
	cfg := Config{Exchanger: fn, Clock: fn.clock.now, Sleep: fn.clock.sleep, Logger: slog.New(slog.DiscardHandler)}
	for _, s := range specs {
		cfg.Masters = append(cfg.Masters, spec(t, s))
	}
	if mod != nil {
		mod(&cfg)
	}
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func listOf(t testing.TB, k *Keeper, protocol, addr string, filter *string) server.MasterList {
	t.Helper()
	// The first request starts the fetch; the second reads what it kept.
	if _, err := k.List(context.Background(), protocol, addr, filter); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, k)
	ml, err := k.List(context.Background(), protocol, addr, filter)
	if err != nil {
		t.Fatal(err)
	}
	return ml
}

func TestSteamPaging(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		pages int
	}{
		{"empty", 0, 1},
		{"one page", 5, 1},
		{"exactly one page", a2s.MasterPageSize, 1}, // the end marker fits after 231 entries (1398 bytes)
		{"five pages", 1000, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn := newFakeNet(newFakeClock())
			fn.handlers[steamAddr] = demo.NewA2SMaster(addrs(tc.n), demo.Normal)
			k := newKeeper(t, fn, nil, "a2s="+steamAddr+`?filter=\appid\440`)
			ml := listOf(t, k, "a2s", steamAddr, nil)
			if len(ml.Servers) != tc.n || !ml.Complete || ml.Pages != tc.pages || ml.Error != "" {
				t.Fatalf("%d servers, complete %v, %d pages, error %q; want %d, true, %d, none", len(ml.Servers), ml.Complete, ml.Pages, ml.Error, tc.n, tc.pages)
			}
			for i, s := range ml.Servers {
				if want := addrs(tc.n)[i].String(); s.Address != want || s.State != 0 || s.Protocol != "a2s" {
					t.Fatalf("server %d = %+v, want %s unknown", i, s, want)
				}
			}
			// One request per page, at least DefaultInterval apart.
			reqs := fn.requests(steamAddr)
			if len(reqs) != tc.pages {
				t.Fatalf("%d requests, want %d", len(reqs), tc.pages)
			}
			for i := 1; i < len(reqs); i++ {
				if gap := reqs[i].Sub(reqs[i-1]); gap < DefaultInterval {
					t.Errorf("requests %d and %d %v apart, want at least %v", i-1, i, gap, DefaultInterval)
				}
			}
			sent, received, ok := k.Datagrams("a2s", steamAddr, `\appid\440`)
			if !ok || len(sent) != tc.pages || len(received) != tc.pages {
				t.Errorf("datagrams kept: %d sent, %d received, want %d each", len(sent), len(received), tc.pages)
			}
			if len(sent) > 0 {
				if q, err := a2s.DecodeMasterRequest(sent[0]); err != nil || q.Filter != `\appid\440` || !q.Seed.IsZero() {
					t.Errorf("first request %+v, %v", q, err)
				}
			}
		})
	}
}

func TestRefresh(t *testing.T) {
	clock := newFakeClock()
	fn := newFakeNet(clock)
	fn.handlers[steamAddr] = demo.NewA2SMaster(addrs(10), demo.Normal)
	k := newKeeper(t, fn, nil, "a2s="+steamAddr)
	first := listOf(t, k, "a2s", steamAddr, nil)
	if n := len(fn.requests(steamAddr)); n != 1 {
		t.Fatalf("%d requests after the first list, want 1", n)
	}
	if !first.Fetched.Equal(epoch) || !first.Next.Equal(epoch.Add(DefaultRefresh)) {
		t.Errorf("fetched %v next %v, want %v and %v", first.Fetched, first.Next, epoch, epoch.Add(DefaultRefresh))
	}
	clock.advance(DefaultRefresh - time.Second)
	listOf(t, k, "a2s", steamAddr, nil)
	if n := len(fn.requests(steamAddr)); n != 1 {
		t.Fatalf("%d requests before the refresh interval, want 1", n)
	}
	clock.advance(time.Second)
	listOf(t, k, "a2s", steamAddr, nil)
	if n := len(fn.requests(steamAddr)); n != 2 {
		t.Fatalf("%d requests after the refresh interval, want 2", n)
	}
}

func TestMasterStopsMidList(t *testing.T) {
	fn := newFakeNet(newFakeClock())
	fn.handlers[steamAddr] = demo.NewA2SMaster(addrs(1000), demo.Normal)
	fn.answer = func(_ string, n int) bool { return n < 2 } // two pages, then silence
	k := newKeeper(t, fn, nil, "a2s="+steamAddr)
	ml := listOf(t, k, "a2s", steamAddr, nil)
	if len(ml.Servers) != 2*a2s.MasterPageSize || ml.Complete || ml.Pages != 2 {
		t.Fatalf("%d servers, complete %v, %d pages; want %d, false, 2", len(ml.Servers), ml.Complete, ml.Pages, 2*a2s.MasterPageSize)
	}
	if !strings.Contains(ml.Error, "stopped answering after 2 pages") {
		t.Errorf("error %q", ml.Error)
	}
	// The page that did not come was asked 1+maxMisses times, paced.
	if n := len(fn.requests(steamAddr)); n != 2+1+maxMisses {
		t.Errorf("%d requests, want %d", n, 2+1+maxMisses)
	}
}

func TestMasterSilent(t *testing.T) {
	fn := newFakeNet(newFakeClock())
	k := newKeeper(t, fn, nil, "a2s="+steamAddr, "quake3="+q3Addr)
	for _, p := range []struct{ protocol, addr string }{{"a2s", steamAddr}, {"quake3", q3Addr}} {
		ml := listOf(t, k, p.protocol, p.addr, nil)
		if len(ml.Servers) != 0 || ml.Complete || !strings.Contains(ml.Error, "did not answer") {
			t.Errorf("%s: %d servers, complete %v, error %q", p.protocol, len(ml.Servers), ml.Complete, ml.Error)
		}
	}
}

// loopMaster answers every query with the same page, whatever its seed.
type loopMaster struct{}

func (loopMaster) Respond([]byte, netip.AddrPort, time.Time) [][]byte {
	return [][]byte{a2s.AppendMasterReply(nil, addrs(3), false)}
}

// hostileMaster lists what no server can be, and a repeat.
type hostileMaster struct{}

func (hostileMaster) Respond([]byte, netip.AddrPort, time.Time) [][]byte {
	list := []a2s.Addr{
		{IP: [4]byte{0, 0, 0, 0}, Port: 5},         // unspecified
		{IP: [4]byte{203, 0, 113, 1}, Port: 0},     // port 0
		{IP: [4]byte{224, 0, 0, 1}, Port: 27015},   // multicast
		{IP: [4]byte{255, 255, 255, 255}, Port: 1}, // broadcast
		{IP: [4]byte{203, 0, 113, 2}, Port: 27015}, // fine
		{IP: [4]byte{203, 0, 113, 2}, Port: 27015}, // repeat
		{IP: [4]byte{10, 1, 2, 3}, Port: 27015},    // refused by the policy
		{IP: [4]byte{203, 0, 113, 3}, Port: 27016}, // fine
	}
	return [][]byte{a2s.AppendMasterReply(nil, list, true)}
}

func TestHostileMasters(t *testing.T) {
	t.Run("loop", func(t *testing.T) {
		fn := newFakeNet(newFakeClock())
		fn.handlers[steamAddr] = loopMaster{}
		k := newKeeper(t, fn, nil, "a2s="+steamAddr)
		ml := listOf(t, k, "a2s", steamAddr, nil)
		if len(ml.Servers) != 3 || ml.Complete || !strings.Contains(ml.Error, "went back") || len(fn.requests(steamAddr)) != 2 {
			t.Errorf("%d servers, complete %v, error %q, %d requests", len(ml.Servers), ml.Complete, ml.Error, len(fn.requests(steamAddr)))
		}
	})
	t.Run("entries", func(t *testing.T) {
		fn := newFakeNet(newFakeClock())
		fn.handlers[steamAddr] = hostileMaster{}
		policy := func(ap netip.AddrPort) error {
			if ap.Addr().IsPrivate() {
				return errors.New("private")
			}
			return nil
		}
		k := newKeeper(t, fn, func(c *Config) { c.Allow = policy }, "a2s="+steamAddr)
		ml := listOf(t, k, "a2s", steamAddr, nil)
		var got []string
		for _, s := range ml.Servers {
			got = append(got, s.Address+" "+stateName(s.State))
		}
		want := "203.0.113.2:27015 unknown,10.1.2.3:27015 refused,203.0.113.3:27016 unknown"
		if strings.Join(got, ",") != want || !ml.Complete {
			t.Errorf("listed %q (complete %v), want %q", strings.Join(got, ","), ml.Complete, want)
		}
	})
}

func stateName(s server.State) string {
	if s == 0 {
		return server.Unknown
	}
	return s.String()
}

func TestCap(t *testing.T) {
	fn := newFakeNet(newFakeClock())
	fn.handlers[steamAddr] = demo.NewA2SMaster(addrs(1000), demo.Normal)
	k := newKeeper(t, fn, func(c *Config) { c.MaxEntries = 300 }, "a2s="+steamAddr)
	ml := listOf(t, k, "a2s", steamAddr, nil)
	if len(ml.Servers) != 300 || ml.Complete || !strings.Contains(ml.Error, "cut at 300") || len(fn.requests(steamAddr)) != 2 {
		t.Errorf("%d servers, complete %v, error %q, %d requests", len(ml.Servers), ml.Complete, ml.Error, len(fn.requests(steamAddr)))
	}
}

func TestQuake3(t *testing.T) {
	var servers []netip.AddrPort
	for i := range 7 {
		servers = append(servers, netip.AddrPortFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(i + 1)}), 27960))
	}
	for _, tc := range []struct {
		name     string
		filter   string
		noEnd    bool
		listed   int
		complete bool
	}{
		{"default query", "", false, 7, true},
		{"game", "Xonotic 3 empty full", false, 7, true},
		{"other game", "Nexuiz 3", false, 0, true},
		{"no end marker", "", true, 7, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn := newFakeNet(newFakeClock())
			fn.handlers[q3Addr] = demo.NewQuake3Master("Xonotic", servers, 3, tc.noEnd)
			k := newKeeper(t, fn, nil, "quake3="+q3Addr+"?filter="+strings.ReplaceAll(tc.filter, " ", "+"))
			ml := listOf(t, k, "quake3", q3Addr, nil)
			if len(ml.Servers) != tc.listed || ml.Complete != tc.complete || tc.complete != (ml.Error == "") {
				t.Errorf("%d servers, complete %v, error %q; want %d, %v", len(ml.Servers), ml.Complete, ml.Error, tc.listed, tc.complete)
			}
		})
	}
}

func TestQuake3Options(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" for an error
	}{
		{"", "master=true"},
		{"68 empty full", "filters=empty full;master=true;protocol=68"},
		{"Xonotic 3", "filters=;game=Xonotic;master=true;protocol=3"},
		{"ext Xonotic 3 ipv6", "ext=true;filters=ipv6;game=Xonotic;master=true;protocol=3"},
		{"Xonotic", ""},
		{"Xonotic three", ""},
		{"ext 68", ""}, // getserversExt needs a game name
		{"Xon\x01otic 3", ""},
	} {
		got, err := quake3.MasterOptions(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("Quake3Options(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("Quake3Options(%q): %v", tc.in, err)
			continue
		}
		var kv []string
		for k, v := range got {
			kv = append(kv, k+"="+v)
		}
		slices.Sort(kv)
		if s := strings.Join(kv, ";"); s != tc.want {
			t.Errorf("Quake3Options(%q) = %s, want %s", tc.in, s, tc.want)
		}
	}
}

func TestFilters(t *testing.T) {
	fn := newFakeNet(newFakeClock())
	fn.handlers[steamAddr] = demo.NewA2SMaster(addrs(3), demo.Normal)
	k := newKeeper(t, fn, func(c *Config) { c.MaxFilters = 2 }, "a2s="+steamAddr+`?filter=\appid\440`, "quakeworld=127.0.0.1:27000")
	for i, f := range []string{`\appid\730`, `\appid\550`, `\appid\4000`} {
		ml := listOf(t, k, "a2s", steamAddr, &f)
		if ml.Master.Filter != f || len(ml.Servers) != 3 {
			t.Errorf("filter %d: master %+v, %d servers", i, ml.Master, len(ml.Servers))
		}
	}
	k.mu.Lock()
	n := len(k.lists)
	k.mu.Unlock()
	if n != 2 {
		t.Errorf("%d lists kept, want MaxFilters = 2", n)
	}
	// Two other lists, both being fetched: a third filter must wait.
	k.mu.Lock()
	for key, l := range k.lists {
		if key.filter != `\appid\440` {
			l.fetching = true
		}
	}
	k.mu.Unlock()
	busy := `\appid\10`
	if _, err := k.List(context.Background(), "a2s", steamAddr, &busy); !errors.Is(err, ErrBusy) {
		t.Errorf("a new filter while every other list is being fetched: %v, want ErrBusy", err)
	}
	k.mu.Lock()
	for _, l := range k.lists {
		l.fetching = false
	}
	k.mu.Unlock()
	bad := "\\appid\\440\x01"
	var fe *FilterError
	if _, err := k.List(context.Background(), "a2s", steamAddr, &bad); !errors.As(err, &fe) {
		t.Errorf("unprintable filter: %v, want a FilterError", err)
	}
	if _, err := k.List(context.Background(), "a2s", "127.0.0.1:1", nil); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("unconfigured master: %v", err)
	}
	if _, err := k.List(context.Background(), "quakeworld", "127.0.0.1:27000", nil); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("QuakeWorld master: %v, want ErrNotConfigured (not kept)", err)
	}
}

func TestNewRejects(t *testing.T) {
	fn := newFakeNet(newFakeClock())
	if _, err := New(Config{}); err == nil {
		t.Error("New without an Exchanger")
	}
	if _, err := New(Config{Exchanger: fn, Masters: []server.MasterSpec{{Protocol: "quake3", Addr: q3Addr, Filter: "Xonotic", Kept: true}}}); err == nil {
		t.Error("New with a bad Quake III filter")
	}
}

// TestOneAddressSeveralFilters checks that one master address configured
// with two filters (dpmaster lists Xonotic's and OpenArena's servers)
// keeps each list with its own label, and that a request without a
// filter reads the first.
func TestOneAddressSeveralFilters(t *testing.T) {
	fn := newFakeNet(newFakeClock())
	var servers []netip.AddrPort
	for i := range 3 {
		servers = append(servers, netip.AddrPortFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(i + 1)}), 27960))
	}
	fn.handlers[q3Addr] = demo.NewQuake3Master("Xonotic", servers, 3, false)
	k := newKeeper(t, fn, nil, "quake3="+q3Addr+"?filter=Xonotic+3+empty+full&label=Xonotic", "quake3="+q3Addr+"?filter=71+empty+full&label=OpenArena")
	for _, tc := range []struct {
		filter *string
		label  string
	}{
		{nil, "Xonotic"},
		{ptr("Xonotic 3 empty full"), "Xonotic"},
		{ptr("71 empty full"), "OpenArena"},
		{ptr("Xonotic 3"), "Xonotic"}, // an unconfigured filter of that address: the first spec's label
	} {
		ml := listOf(t, k, "quake3", q3Addr, tc.filter)
		if ml.Master.Label != tc.label {
			t.Errorf("filter %v: label %q, want %q", tc.filter, ml.Master.Label, tc.label)
		}
	}
}

func ptr(s string) *string { return &s }

// TestCurrent: the list as it stands, for the browser page that comes with
// it. Before any fetch there is none (and the first Current starts one,
// without waiting for it); then the first max servers, Total counting them
// all; a master not configured has none.
func TestCurrent(t *testing.T) {
	fn := newFakeNet(newFakeClock())
	fn.handlers[steamAddr] = demo.NewA2SMaster(addrs(300), demo.Normal)
	k := newKeeper(t, fn, func(c *Config) { c.PageWait = -1 }, "a2s="+steamAddr)
	if ml, ok := k.Current(context.Background(), "a2s", steamAddr, 100); ok {
		t.Fatalf("before any fetch, not waiting: %+v, want none", ml)
	}
	waitIdle(t, k)
	if n := len(fn.requests(steamAddr)); n == 0 {
		t.Fatal("Current started no fetch")
	}
	for _, tc := range []struct{ max, want int }{{100, 100}, {300, 300}, {1024, 300}, {0, 0}} {
		ml, ok := k.Current(context.Background(), "a2s", steamAddr, tc.max)
		if !ok || len(ml.Servers) != tc.want || ml.Total != 300 || !ml.Complete || ml.Offset != 0 {
			t.Fatalf("Current(max %d) = %d servers of %d, complete %v, offset %d, %v; want %d of 300, complete", tc.max, len(ml.Servers), ml.Total, ml.Complete, ml.Offset, ok, tc.want)
		}
		for i, s := range ml.Servers {
			if want := addrs(300)[i].String(); s.Address != want {
				t.Fatalf("server %d = %s, want %s", i, s.Address, want)
			}
		}
	}
	if ml, ok := k.Current(context.Background(), "a2s", "127.0.0.1:1", 10); ok {
		t.Errorf("a master not configured: %+v", ml)
	}

	// Waiting for the first fetch it starts (a master that lists in one
	// page and answers at once), the first page comes with the list.
	fn2 := newFakeNet(newFakeClock())
	fn2.handlers[steamAddr] = demo.NewA2SMaster(addrs(100), demo.Normal)
	k2 := newKeeper(t, fn2, func(c *Config) { c.PageWait = time.Minute }, "a2s="+steamAddr)
	if ml, ok := k2.Current(context.Background(), "a2s", steamAddr, 1024); !ok || len(ml.Servers) != 100 || !ml.Complete {
		t.Errorf("the first Current, waiting: %d servers, complete %v, %v; want the whole list of 100", len(ml.Servers), ml.Complete, ok)
	}
}
