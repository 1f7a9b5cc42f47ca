package worker

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/alerts/deliver"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/history/sqlite"
)

const (
	token  = "S3CRETt0ken_qwertyuiop-ZXCV"
	secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
)

var t0 = time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)

// clock is a fake clock; Sleep advances it at once (the Sender's pace).
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	c.advance(d)
	return ctx.Err()
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// receiver is a loopback Discord, Slack or generic webhook: it records
// each request's webhook-id (or body) and answers with answer.
type receiver struct {
	ts *httptest.Server

	mu     sync.Mutex
	got    []string // webhook-id, or the body when there is none
	answer func(w http.ResponseWriter, r *http.Request)
	seen   chan struct{} // one value per request, when set
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{answer: ok}
	rc.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id := r.Header.Get("webhook-id")
		if id == "" {
			id = string(b)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, id)
		answer, seen := rc.answer, rc.seen
		rc.mu.Unlock()
		if seen != nil {
			seen <- struct{}{}
		}
		answer(w, r)
	}))
	t.Cleanup(rc.ts.Close)
	return rc
}

func ok(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/webhooks/") {
		io.WriteString(w, `{"id":"5550001"}`)
		return
	}
	io.WriteString(w, "ok")
}

func (rc *receiver) set(answer func(w http.ResponseWriter, r *http.Request)) {
	rc.mu.Lock()
	rc.answer = answer
	rc.mu.Unlock()
}

func (rc *receiver) ids() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.got...)
}

// rig is a store, receivers of the three kinds, their destinations and
// a Sender reaching them through deliver's real dialer (loopback opened
// by WebhookAllow), all on one fake clock.
type rig struct {
	t                    *testing.T
	clk                  *clock
	store                outbox.Store
	sender               *deliver.Sender
	discord, slack, hook *receiver
	dests                map[string]alerts.Destination
	watch                alerts.Watch
	logMu                sync.Mutex
	logs                 []string
}

func newRig(t *testing.T, store outbox.Store) *rig {
	r := &rig{t: t, clk: &clock{now: t0}, store: store}
	r.discord, r.slack, r.hook = newReceiver(t), newReceiver(t), newReceiver(t)
	r.dests = map[string]alerts.Destination{
		"ops":  {Name: "ops", Kind: alerts.DestDiscord, URL: r.discord.ts.URL + "/api/webhooks/123/" + token},
		"team": {Name: "team", Kind: alerts.DestSlack, URL: r.slack.ts.URL + "/services/T1/B2/" + token},
		"hook": {Name: "hook", Kind: alerts.DestWebhook, URL: r.hook.ts.URL + "/hook/" + token, Secret: secret},
	}
	var hosts []string
	for _, rc := range []*receiver{r.discord, r.slack} {
		hosts = append(hosts, rc.ts.Listener.Addr().String())
	}
	s, err := deliver.New(deliver.Config{
		WebhookAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		AllowHTTP:    true,
		TestHosts:    hosts,
		MaxAttempts:  1,
		Now:          r.clk.Now,
		Sleep:        r.clk.Sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	r.sender = s
	r.watch = alerts.Watch{ID: "w1", Server: alerts.Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"},
		Down: true, Up: true, To: []string{"ops", "team", "hook"}}
	r.put(r.watch)
	return r
}

func openSQLite(t *testing.T) outbox.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func (r *rig) put(w alerts.Watch) {
	r.t.Helper()
	if err := r.store.PutWatch(context.Background(), w, outbox.OriginFile, r.clk.Now()); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) to(w alerts.Watch) []alerts.Destination {
	var out []alerts.Destination
	for _, n := range w.To {
		out = append(out, r.dests[n])
	}
	return out
}

// down applies the samples that take w down and returns the event.
func (r *rig) down(w alerts.Watch) alerts.Event {
	r.t.Helper()
	var events []alerts.Event
	for range 3 {
		r.clk.advance(time.Second)
		ev, err := r.store.Apply(context.Background(), w.ID, alerts.Sample{Time: r.clk.Now(), State: alerts.StateOffline}, r.to(w), r.clk.Now())
		if err != nil {
			r.t.Fatal(err)
		}
		events = append(events, ev...)
	}
	if len(events) != 1 || events[0].Kind != alerts.KindDown {
		r.t.Fatalf("events %+v", events)
	}
	return events[0]
}

func (r *rig) worker(holder string, edit func(*Config)) *Worker {
	r.t.Helper()
	cfg := Config{
		Store: r.store, Sender: r.sender, Holder: holder,
		Dest: func(name string) (alerts.Destination, bool) {
			d, ok := r.dests[name]
			return d, ok
		},
		Now: r.clk.Now,
		Logf: func(f string, args ...any) {
			r.logMu.Lock()
			r.logs = append(r.logs, f)
			r.logMu.Unlock()
		},
	}
	if edit != nil {
		edit(&cfg)
	}
	w, err := New(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	return w
}

func runOnce(t *testing.T, w *Worker, want int) {
	t.Helper()
	n, err := w.RunOnce(context.Background())
	if err != nil || n != want {
		t.Fatalf("RunOnce: %d rows, %v; want %d", n, err, want)
	}
}

func (r *rig) depth() int {
	r.t.Helper()
	st, err := r.store.Stats(context.Background(), r.clk.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	return st.Depth
}

// TestDelivered: one down, three destinations, each told once; the
// generic webhook under the event's id.
func TestDelivered(t *testing.T) {
	r := newRig(t, openSQLite(t))
	ev := r.down(r.watch)
	w := r.worker("a", nil)
	if m := w.Metrics(context.Background()); m.Depth != 3 || m.OldestDue != 0 {
		t.Errorf("before: %+v", m)
	}
	r.clk.advance(time.Minute)
	if m := w.Metrics(context.Background()); m.OldestDue != time.Minute {
		t.Errorf("oldest due %v, want a minute", m.OldestDue)
	}
	runOnce(t, w, 3)
	if got := r.hook.ids(); len(got) != 1 || got[0] != ev.ID() {
		t.Errorf("webhook ids %v, want %s", got, ev.ID())
	}
	if d, s := r.discord.ids(), r.slack.ids(); len(d) != 1 || len(s) != 1 || !strings.Contains(d[0], "embeds") || !strings.Contains(s[0], "blocks") {
		t.Errorf("discord %v, slack %v", d, s)
	}
	m := w.Metrics(context.Background())
	for _, k := range []alerts.DestKind{alerts.DestDiscord, alerts.DestSlack, alerts.DestWebhook} {
		if m.Deliveries[k][Delivered] != 1 {
			t.Errorf("%s delivered %d", k, m.Deliveries[k][Delivered])
		}
	}
	if m.Depth != 0 || m.StoreErrors != 0 {
		t.Errorf("after: %+v", m)
	}
	runOnce(t, w, 0)
}

func onlyHook(r *rig) alerts.Watch {
	w := r.watch
	w.ID, w.To = "hooked", []string{"hook"}
	r.put(w)
	return w
}

// Test429: the receiver asks for 30 s; the row waits that long (more
// than BaseDelay), then goes again under the same id.
func Test429(t *testing.T) {
	r := newRig(t, openSQLite(t))
	w := onlyHook(r)
	ev := r.down(w)
	first := true
	r.hook.set(func(rw http.ResponseWriter, rq *http.Request) {
		if first {
			first = false
			rw.Header().Set("Retry-After", "30")
			rw.WriteHeader(http.StatusTooManyRequests)
			return
		}
		ok(rw, rq)
	})
	wk := r.worker("a", nil)
	runOnce(t, wk, 1)
	r.clk.advance(29 * time.Second)
	runOnce(t, wk, 0)
	r.clk.advance(time.Second)
	runOnce(t, wk, 1)
	if got := r.hook.ids(); len(got) != 2 || got[0] != ev.ID() || got[1] != ev.ID() {
		t.Errorf("ids %v, want %s twice", got, ev.ID())
	}
	m := wk.Metrics(context.Background())
	if m.Deliveries[alerts.DestWebhook][Retried] != 1 || m.Deliveries[alerts.DestWebhook][Delivered] != 1 || m.Depth != 0 {
		t.Errorf("metrics %+v", m)
	}
}

// TestReceiverDown: nothing listens at the receiver's address; the row
// backs off (BaseDelay, then twice that), and is delivered once a
// receiver listens there again.
func TestReceiverDown(t *testing.T) {
	r := newRig(t, openSQLite(t))
	w := onlyHook(r)
	ev := r.down(w)
	addr := r.hook.ts.Listener.Addr().String()
	r.hook.ts.Close()
	wk := r.worker("a", nil)
	runOnce(t, wk, 1)
	r.clk.advance(10 * time.Second)
	runOnce(t, wk, 1)
	r.clk.advance(19 * time.Second)
	runOnce(t, wk, 0)
	r.clk.advance(time.Second)

	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen again at %s: %v", addr, err)
	}
	back := newReceiver(t)
	back.ts.Close()
	back.ts = httptest.NewUnstartedServer(back.ts.Config.Handler)
	back.ts.Listener.Close()
	back.ts.Listener = l
	back.ts.Start()
	defer back.ts.Close()
	runOnce(t, wk, 1)
	if got := back.ids(); len(got) != 1 || got[0] != ev.ID() {
		t.Errorf("ids %v", got)
	}
	if r.depth() != 0 {
		t.Error("the row is still there")
	}
	failed, _ := r.store.Failed(context.Background(), 10)
	if len(failed) != 0 {
		t.Errorf("failed rows %+v", failed)
	}
}

// TestRefusedFails: a 404 will not change: the row fails at once and
// stays, its error masked.
func TestRefusedFails(t *testing.T) {
	r := newRig(t, openSQLite(t))
	w := onlyHook(r)
	r.down(w)
	r.hook.set(func(rw http.ResponseWriter, _ *http.Request) {
		rw.WriteHeader(http.StatusNotFound)
		io.WriteString(rw, `{"message":"no hook `+token+`"}`)
	})
	wk := r.worker("a", nil)
	runOnce(t, wk, 1)
	r.clk.advance(time.Hour)
	runOnce(t, wk, 0)
	failed, err := r.store.Failed(context.Background(), 10)
	if err != nil || len(failed) != 1 {
		t.Fatalf("failed %+v %v", failed, err)
	}
	if e := failed[0].LastError; !strings.Contains(e, "404") || strings.Contains(e, token) || strings.Contains(e, secret) {
		t.Errorf("last error %q", e)
	}
}

// TestAttemptsBound: a receiver that always answers 503 gets
// MaxAttempts tries, then the row fails.
func TestAttemptsBound(t *testing.T) {
	r := newRig(t, openSQLite(t))
	w := onlyHook(r)
	r.down(w)
	r.hook.set(func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(http.StatusServiceUnavailable) })
	wk := r.worker("a", func(c *Config) { c.MaxAttempts = 3 })
	for range 3 {
		runOnce(t, wk, 1)
		r.clk.advance(time.Hour)
	}
	runOnce(t, wk, 0)
	if n := len(r.hook.ids()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if failed, _ := r.store.Failed(context.Background(), 10); len(failed) != 1 || failed[0].Attempts != 3 {
		t.Errorf("failed %+v", failed)
	}
}

// TestRestartMidDelivery: the worker stops while the receiver holds
// the request (the post went through, the answer never came back); a
// new worker sends it again, under the same id, once Release passed.
func TestRestartMidDelivery(t *testing.T) {
	r := newRig(t, openSQLite(t))
	w := onlyHook(r)
	ev := r.down(w)
	seen := make(chan struct{}, 1)
	hold := make(chan struct{})
	r.hook.mu.Lock()
	r.hook.seen = seen
	r.hook.mu.Unlock()
	r.hook.set(func(rw http.ResponseWriter, rq *http.Request) {
		select {
		case <-hold:
		case <-rq.Context().Done():
		}
	})
	first := r.worker("a", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := first.RunOnce(ctx)
		done <- err
	}()
	<-seen
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(hold)
	if m := first.Metrics(context.Background()); m.Deliveries[alerts.DestWebhook][Interrupted] != 1 || m.Depth != 1 {
		t.Fatalf("after the stop: %+v", m)
	}
	r.hook.set(ok)
	second := r.worker("b", nil)
	runOnce(t, second, 0) // released for later, not at once
	r.clk.advance(5 * time.Second)
	runOnce(t, second, 1)
	<-seen
	if got := r.hook.ids(); len(got) != 2 || got[0] != ev.ID() || got[1] != ev.ID() {
		t.Errorf("ids %v, want %s twice", got, ev.ID())
	}
	if r.depth() != 0 {
		t.Error("the row is still there")
	}
}

// TestGoneDestination: a row whose destination left the file fails.
func TestGoneDestination(t *testing.T) {
	r := newRig(t, openSQLite(t))
	w := onlyHook(r)
	r.down(w)
	delete(r.dests, "hook")
	runOnce(t, r.worker("a", nil), 1)
	if failed, _ := r.store.Failed(context.Background(), 10); len(failed) != 1 || !strings.Contains(failed[0].LastError, "gone") {
		t.Errorf("failed %+v", failed)
	}
}

// flaky is a store whose Apply fails while down.
type flaky struct {
	outbox.Store
	mu   sync.Mutex
	down bool
}

func (f *flaky) Apply(ctx context.Context, id string, s alerts.Sample, to []alerts.Destination, now time.Time) ([]alerts.Event, error) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		return nil, errors.New("connection refused")
	}
	return f.Store.Apply(ctx, id, s, to, now)
}

// TestHolder: while the database fails, samples are held (the oldest
// dropped past HoldMax and counted); once it answers they are applied
// in order and the down is told once.
func TestHolder(t *testing.T) {
	r := newRig(t, openSQLite(t))
	w := onlyHook(r)
	fl := &flaky{Store: r.store, down: true}
	woken := 0
	h := &Holder{Store: fl, HoldMax: 4, Wake: func() { woken++ }}
	ctx := context.Background()
	for i := 1; i <= 6; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		if ev, err := h.Apply(ctx, w.ID, alerts.Sample{Time: at, State: alerts.StateOffline}, r.to(w), at); err != nil || len(ev) != 0 {
			t.Fatalf("sample %d: %v %v", i, ev, err)
		}
	}
	if held, lost := h.Held(); held != 4 || lost != 2 {
		t.Fatalf("held %d, lost %d", held, lost)
	}
	fl.mu.Lock()
	fl.down = false
	fl.mu.Unlock()
	ev, err := h.Flush(ctx)
	if err != nil || len(ev) != 1 || ev[0].Kind != alerts.KindDown || !ev[0].Time.Equal(t0.Add(5*time.Second)) || woken != 1 {
		t.Fatalf("flush: %+v %v (woken %d)", ev, err, woken)
	}
	if held, _ := h.Held(); held != 0 || r.depth() != 1 {
		t.Errorf("held %d, depth %d", held, r.depth())
	}
	if _, err := h.Apply(ctx, "nope", alerts.Sample{Time: t0.Add(time.Hour)}, nil, t0); !errors.Is(err, outbox.ErrNoWatch) {
		t.Errorf("unknown watch: %v", err)
	}
}

// TestRunStops: Run sends what Wake announces and returns when its
// context ends.
func TestRunStops(t *testing.T) {
	r := newRig(t, openSQLite(t))
	seen := make(chan struct{}, 3)
	r.hook.mu.Lock()
	r.hook.seen = seen
	r.hook.mu.Unlock()
	wk := r.worker("a", func(c *Config) { c.Poll = time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- wk.Run(ctx) }()
	r.down(r.watch)
	wk.Wake()
	<-seen
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestNewRequires(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("a worker without a store")
	}
}

// sharedRun has workers on stores sharing one database send n watches'
// downs, concurrently, until none claims anything, and checks each
// message reached the receiver once.
func sharedRun(t *testing.T, stores []outbox.Store, n int) {
	r := newRig(t, stores[0])
	want := map[string]bool{}
	for i := range n {
		w := r.watch
		w.ID, w.To = "w"+strconv.Itoa(i), []string{"hook"}
		r.put(w)
		want[r.down(w).ID()] = true
	}
	var wg sync.WaitGroup
	for i, s := range stores {
		wk := r.worker("worker-"+strconv.Itoa(i), func(c *Config) { c.Store = s; c.Batch = 3; c.Concurrency = 2 })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := wk.RunOnce(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	got := r.hook.ids()
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
		if seen[id] > 1 {
			t.Errorf("%s delivered %d times", id, seen[id])
		}
		if !want[id] {
			t.Errorf("unexpected id %s", id)
		}
	}
	if len(seen) != n {
		t.Errorf("%d messages delivered, want %d", len(seen), n)
	}
}

func TestSharedSQLite(t *testing.T) {
	s := openSQLite(t)
	sharedRun(t, []outbox.Store{s, s}, 12)
}
