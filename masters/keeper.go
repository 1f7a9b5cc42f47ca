package masters

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/internal/ctxsleep"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/server"
)

// Defaults of Config.
const (
	DefaultRefresh     = 5 * time.Minute
	DefaultMaxEntries  = 100_000
	DefaultPageTimeout = 2 * time.Second
	DefaultFirstWait   = 3 * time.Second
	DefaultPageWait    = 100 * time.Millisecond
	DefaultMaxRawBytes = 256 << 10
	// DefaultMaxFilters bounds the lists kept per master with filters
	// other than its configured one (asked with ?filter=).
	DefaultMaxFilters = 8
)

// Config configures a Keeper.
type Config struct {
	// Masters are the configured masters; those not Kept are not kept
	// (the page asks them through the relay).
	Masters []server.MasterSpec
	// Exchanger sends the requests: the relay's in-process Exchange, so
	// that its policy and limits apply. Required.
	Exchanger netquery.Exchanger
	// Allow is the relay's policy (relay.Server.CheckTarget): a listed
	// address it refuses is listed with the state "refused".
	Allow func(netip.AddrPort) error
	// States gives the listed servers' last known states (the relay's
	// cache, the history). Nil: every entry is "unknown".
	States StateSource
	// Pacer spaces the requests to each master address; nil: a
	// LocalPacer of DefaultInterval on Clock.
	Pacer Pacer
	// Clock and Sleep are the time the refreshes and the pacing run on.
	// Defaults: time.Now and a timer.
	Clock func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Refresh is the least time between two fetches of one list
	// (DefaultRefresh).
	Refresh time.Duration
	// MaxEntries caps one list (DefaultMaxEntries).
	MaxEntries int
	// PageTimeout bounds the wait for one page (DefaultPageTimeout).
	PageTimeout time.Duration
	// StreamTimeout bounds one conversation with a master spoken to over
	// TCP, the connection included (DefaultStreamTimeout); Resolver
	// resolves such a master's name (nil: net.DefaultResolver). Allow
	// judges every address it resolves to (tcp.go).
	StreamTimeout time.Duration
	Resolver      *net.Resolver
	// FirstWait is how long a request for a list never fetched waits for
	// the first fetch before answering with what came (DefaultFirstWait).
	FirstWait time.Duration
	// PageWait is how long Current waits for the first fetch it starts
	// (DefaultPageWait; negative: not at all): the first visitor's page
	// comes with the list when the master answers at once (a demo's on
	// loopback, one nearby), and otherwise reads it once it came.
	PageWait time.Duration
	// MaxRawBytes bounds the datagrams of the last fetch kept for the
	// inspector, per list (DefaultMaxRawBytes).
	MaxRawBytes int
	// MaxFilters bounds the lists per master asked with another filter
	// than the configured one (DefaultMaxFilters).
	MaxFilters int
	// SteamWebAPIKey, if set, makes Steam masters' lists come from the
	// Steam Web API (IGameServersService/GetServerList). Never logged.
	SteamWebAPIKey string
	HTTPClient     *http.Client  // for the Web API; default a client with WebAPITimeout
	WebAPITimeout  time.Duration // default 20 s
	Logger         *slog.Logger

	steamWebAPI string // the Web API's base URL; tests point it at a fake
}

// StateSource gives the last known state of listed servers without asking
// them: from the relay's cache or the history only.
type StateSource interface {
	// States returns a summary for each ref it knows, by Ref.Key().String().
	States(ctx context.Context, refs []server.Ref) map[string]server.Summary
}

// Keeper keeps the lists of the configured Kept masters, fetched on the
// first request for each and refreshed on request at most every
// Config.Refresh.
type Keeper struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	masters map[string][]server.MasterSpec // by protocol/addr, Kept only; one address may be configured with several filters
	lists   map[listKey]*list
}

type listKey struct{ protocol, addr, filter string }

// list is one master's list with one filter.
type list struct {
	spec     server.MasterSpec
	fetching bool
	done     chan struct{} // closed when the fetch in flight ends
	started  time.Time     // when the last fetch started
	asked    time.Time     // the last request for it
	cur      server.MasterList
	entries  []entry
	sent     [][]byte
	received [][]byte
}

// New returns a Keeper. Close stops its fetches.
func New(cfg Config) (*Keeper, error) {
	if cfg.Exchanger == nil {
		return nil, errors.New("masters: Config.Exchanger is required (the relay's in-process Exchange)")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = ctxsleep.Sleep
	}
	if cfg.Pacer == nil {
		cfg.Pacer = NewLocalPacer(DefaultInterval, cfg.Clock)
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	if cfg.PageTimeout <= 0 {
		cfg.PageTimeout = DefaultPageTimeout
	}
	if cfg.StreamTimeout <= 0 {
		cfg.StreamTimeout = DefaultStreamTimeout
	}
	if cfg.FirstWait <= 0 {
		cfg.FirstWait = DefaultFirstWait
	}
	if cfg.PageWait == 0 {
		cfg.PageWait = DefaultPageWait
	}
	if cfg.MaxRawBytes <= 0 {
		cfg.MaxRawBytes = DefaultMaxRawBytes
	}
	if cfg.MaxFilters <= 0 {
		cfg.MaxFilters = DefaultMaxFilters
	}
	if cfg.WebAPITimeout <= 0 {
		cfg.WebAPITimeout = 20 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: cfg.WebAPITimeout}
	}
	if cfg.steamWebAPI == "" {
		cfg.steamWebAPI = SteamWebAPI
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	k := &Keeper{cfg: cfg, masters: map[string][]server.MasterSpec{}, lists: map[listKey]*list{}}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	for _, m := range cfg.Masters {
		if !m.Kept {
			continue
		}
		addr, ok := server.CanonicalAddr(m.Addr)
		if !ok {
			return nil, errors.New("masters: master " + m.String() + ": the address is not host:port")
		}
		m.Addr = addr
		if err := checkFilter(m.Protocol, m.Filter); err != nil {
			return nil, errors.New("masters: master " + m.String() + ": " + err.Error())
		}
		k.masters[m.Protocol+"/"+m.Addr] = append(k.masters[m.Protocol+"/"+m.Addr], m)
	}
	return k, nil
}

// Close stops the fetches in flight and waits for them.
func (k *Keeper) Close() error {
	k.cancel()
	k.wg.Wait()
	return nil
}

// ErrNotConfigured is returned by List for a master that is not configured.
var ErrNotConfigured = errors.New("masters: not a configured master")

// ErrNotKept is returned by List for a configured master the page asks
// itself (Quake II's and QuakeWorld's).
var ErrNotKept = errors.New("masters: the page asks this master through the relay")

// spec returns the configured master protocol/addr and whether it is one:
// of the specs configured at that address, the one with filter (when
// given and configured), else the first.
func (k *Keeper) spec(protocol, addr string, filter *string) (server.MasterSpec, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ms := k.masters[protocol+"/"+addr]
	if len(ms) == 0 {
		return server.MasterSpec{}, false
	}
	if filter != nil {
		for _, m := range ms {
			if m.Filter == *filter {
				return m, true
			}
		}
	}
	return ms[0], true
}

// List returns the list of the master protocol/addr with filter (the
// configured one when filter is nil), starting a fetch when the list was
// never fetched or is older than Config.Refresh. A list never fetched is
// waited for up to Config.FirstWait (or ctx's end); later requests answer
// at once with the last list while a refresh runs.
func (k *Keeper) List(ctx context.Context, protocol, addr string, filter *string) (server.MasterList, error) {
	return k.ListFrom(ctx, protocol, addr, filter, 0)
}

// ListFrom is List without the list's first after servers (their states
// are not even looked up): out.Offset is after, out.Total the list's
// length. When the list holds after servers or fewer and is not the one
// the caller read (a refresh replaced it, or it was cut), the whole list
// comes back with Offset 0.
func (k *Keeper) ListFrom(ctx context.Context, protocol, addr string, filter *string, after int) (server.MasterList, error) {
	return k.listFrom(ctx, protocol, addr, filter, after, -1, k.cfg.FirstWait)
}

// Current is the list of the master protocol/addr with its configured
// filter as it stands: its first limit servers (Total says how many it
// holds), and false when none was fetched yet or the master is not
// configured. Like List it starts a fetch when the list was never fetched
// or is older than Config.Refresh; it waits only for the first fetch it
// starts, and then at most Config.PageWait, so that the next reader finds
// the list if this one does not. The browser page sends the first servers
// of a kept list with itself.
func (k *Keeper) Current(ctx context.Context, protocol, addr string, limit int) (server.MasterList, bool) {
	ml, err := k.listFrom(ctx, protocol, addr, nil, 0, limit, k.cfg.PageWait)
	if err != nil || ml.Fetched.IsZero() {
		return server.MasterList{}, false
	}
	return ml, true
}

// listFrom is ListFrom with the servers cut to limit (all when negative),
// waiting up to wait (none when not positive) for a list never fetched.
func (k *Keeper) listFrom(ctx context.Context, protocol, addr string, filter *string, after, limit int, wait time.Duration) (server.MasterList, error) {
	m, ok := k.spec(protocol, addr, filter)
	if !ok {
		return server.MasterList{}, ErrNotConfigured
	}
	if filter != nil && *filter != m.Filter {
		if err := checkFilter(m.Protocol, *filter); err != nil {
			return server.MasterList{}, &FilterError{Err: err}
		}
		m.Filter = *filter
	}
	now := k.cfg.Clock()
	k.mu.Lock()
	key := listKey{m.Protocol, m.Addr, m.Filter}
	l := k.lists[key]
	if l == nil {
		if !k.evictLocked(m) {
			k.mu.Unlock()
			return server.MasterList{}, ErrBusy
		}
		l = &list{spec: m}
		l.cur = server.MasterList{Master: m, Servers: []server.Summary{}}
		k.lists[key] = l
	}
	l.asked = now
	first := l.cur.Fetched.IsZero() && !l.fetching
	if !l.fetching && (l.started.IsZero() || now.Sub(l.started) >= k.cfg.Refresh) {
		k.startLocked(l, now)
	}
	done := l.done
	k.mu.Unlock()
	if wait > 0 && first && done != nil {
		t := time.NewTimer(wait)
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	k.mu.Lock()
	out := l.cur
	entries := l.entries
	k.mu.Unlock()
	out.Total = len(entries)
	if after > len(entries) {
		after = 0 // not the list the caller read
	}
	out.Offset = after
	entries = entries[after:]
	if limit >= 0 && len(entries) > limit {
		entries = entries[:limit]
	}
	out.Servers = k.summaries(ctx, m.Protocol, entries)
	return out, nil
}

// Datagrams returns the datagrams of the last fetch of a list: the
// requests sent and the replies received, for the inspector. False when
// the list was never asked.
func (k *Keeper) Datagrams(protocol, addr, filter string) (sent, received [][]byte, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.lists[listKey{protocol, addr, filter}]
	if l == nil {
		return nil, nil, false
	}
	return l.sent, l.received, true
}

// FilterError is a filter the master's protocol cannot send.
type FilterError struct{ Err error }

func (e *FilterError) Error() string { return "masters: bad filter: " + e.Err.Error() }
func (e *FilterError) Unwrap() error { return e.Err }

// ErrBusy is returned by List for a filter never asked when the master
// already has MaxFilters other lists, every one being fetched.
var ErrBusy = errors.New("masters: every list of this master is being fetched; ask again later")

// evictLocked makes room for one more list of master m: beyond
// MaxFilters lists of one master, the least recently asked that is not
// being fetched (nor the configured filter's) goes. False when none can.
func (k *Keeper) evictLocked(m server.MasterSpec) bool {
	configured := func(filter string) bool {
		for _, c := range k.masters[m.Protocol+"/"+m.Addr] {
			if c.Filter == filter {
				return true
			}
		}
		return false
	}
	n := 0
	var oldest *listKey
	var at time.Time
	for key, l := range k.lists {
		if key.protocol != m.Protocol || key.addr != m.Addr || configured(key.filter) {
			continue
		}
		n++
		if !l.fetching && (oldest == nil || l.asked.Before(at)) {
			kk := key
			oldest, at = &kk, l.asked
		}
	}
	if n < k.cfg.MaxFilters || configured(m.Filter) {
		return true
	}
	if oldest == nil {
		return false
	}
	delete(k.lists, *oldest)
	return true
}

// startLocked starts a fetch of l.
func (k *Keeper) startLocked(l *list, now time.Time) {
	l.fetching = true
	l.started = now
	l.done = make(chan struct{})
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		k.run(l)
	}()
}

// run fetches l once and publishes the result. A list never fetched shows
// its entries as they come; a refresh replaces the list when it ends.
func (k *Keeper) run(l *list) {
	f := &fetch{seen: map[string]bool{}}
	k.mu.Lock()
	progressive := l.cur.Fetched.IsZero()
	k.mu.Unlock()
	progress := func() {
		if !progressive {
			return
		}
		now := k.cfg.Clock()
		k.mu.Lock()
		l.entries = append([]entry(nil), f.entries...)
		l.cur.Pages = f.pages
		l.cur.Fetched = now // a partial list arrived
		k.mu.Unlock()
	}
	if a := adapters[l.spec.Protocol]; a == nil || !a(k, k.ctx, l, f, progress) {
		k.fetchList(k.ctx, l, f, progress)
	}
	now := k.cfg.Clock()
	k.cfg.Logger.Info("masters: fetched", "master", l.spec.String(), "entries", len(f.entries), "pages", f.pages,
		"complete", f.complete, "dropped", f.hostile, "err", f.err)
	k.mu.Lock()
	defer k.mu.Unlock()
	// A refresh that brought nothing keeps the list it had, saying why.
	if len(f.entries) > 0 || progressive || f.complete {
		l.entries = f.entries
		l.cur.Fetched = now
		l.cur.Complete = f.complete
		l.cur.Pages = f.pages
	}
	l.cur.Error = f.err
	l.cur.Next = l.started.Add(k.cfg.Refresh)
	l.sent, l.received = f.sent, f.received
	l.fetching = false
	close(l.done)
}

// summaries turns entries into the list's servers, each with its last
// known state (never asking it).
func (k *Keeper) summaries(ctx context.Context, protocol string, entries []entry) []server.Summary {
	out := make([]server.Summary, 0, len(entries))
	refs := make([]server.Ref, 0, len(entries))
	p, _ := server.LookupProtocol(protocol)
	for _, e := range entries {
		ref := server.Ref{Protocol: protocol, Addr: e.addr}
		refs = append(refs, ref)
		s := server.Summary{Protocol: protocol, Address: e.addr, Key: ref.Key().String(), Status: ref.Path(), Join: p.JoinURL(e.addr)}
		if e.refused {
			s.State, s.Detail = server.Refused, "This relay does not query that address."
		}
		out = append(out, s)
	}
	if k.cfg.States == nil || len(refs) == 0 {
		return out
	}
	known := k.cfg.States.States(ctx, refs)
	for i := range out {
		if out[i].State == server.Refused {
			continue
		}
		if s, ok := known[out[i].Key]; ok {
			out[i] = s
		}
	}
	return out
}

// checkFilter says why filter cannot ask a master of protocol for its
// list, or nil: the protocol's master conversation takes it or not.
func checkFilter(protocol, filter string) error {
	d, err := codecs.LookupDescription(protocol)
	if err != nil || d.Master == nil || d.Master.NewList == nil {
		return nil // not kept: the list is never asked here
	}
	_, err = d.Master.NewList(filter)
	return err
}

// An adapter lists a master's addresses by means only the server has (an
// HTTP API), in place of the protocol's master conversation: it reports
// false when it does not apply (not configured), and the conversation
// runs instead. Adapters live in a file named for their protocol.
type adapter func(k *Keeper, ctx context.Context, l *list, f *fetch, progress func()) bool

// adapters are the registered adapters, by protocol.
var adapters = map[string]adapter{}

// registerAdapter adds the adapter of protocol, from its file's init.
func registerAdapter(protocol string, a adapter) {
	if adapters[protocol] != nil {
		panic("masters: registerAdapter called twice for " + protocol)
	}
	adapters[protocol] = a
}
