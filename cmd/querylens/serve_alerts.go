package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/alerts/deliver"
	"github.com/querylens/querylens/alerts/manage"
	"github.com/querylens/querylens/alerts/worker"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
)

// alertOptions are serve's alert flags.
type alertOptions struct {
	watches      string     // --watches FILE
	webhookAllow prefixFlag // ranges a webhook may reach although not public
	allowHTTP    bool       // plain http:// webhooks
	max          int        // most watches

	sync time.Duration // how often the stored watches are read again (tests: shorter)
}

// DefaultWatchMax bounds the watches serve keeps.
const DefaultWatchMax = 1000

// alertLease is how long the outbox worker holds a row it claimed: after
// a crash during a send, the row is sent again (under the same id) once
// it ends.
const alertLease = 30 * time.Second

func (a *alertOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.watches, "watches", "", "alert on the servers the watches `FILE` names (TOML: destinations and watches; see\n"+
		"alerts/testdata/watches.example.toml): Discord, Slack or signed webhooks told when a server goes down,\n"+
		"comes back, fills up or a player joins. Reloaded on SIGHUP; an invalid file keeps the running watches. Needs the history")
	fs.Var(&a.webhookAllow, "webhook-allow", "let alert webhooks reach this `CIDR` although it is not public (a receiver on your own network;\n"+
		"a Discord or Slack fake on a loopback ip:port inside it is taken for the real one); repeatable")
	fs.BoolVar(&a.allowHTTP, "allow-http-webhooks", false, "let alert webhooks use plain http:// (https only otherwise; never to discord.com or hooks.slack.com)")
	fs.IntVar(&a.max, "watch-max", DefaultWatchMax, "most watches kept, `N` (the watches file's, querylens watch add's and the API's together)")
}

func (a *alertOptions) check(historyOn bool) error {
	switch {
	case a.watches != "" && !historyOn:
		return errors.New("--watches needs the history (--history=false turns it off): watches keep their state and outbox there")
	case a.max <= 0:
		return errors.New("--watch-max must be at least 1, got " + strconv.Itoa(a.max))
	}
	return nil
}

// completePlayers reports whether protocol's replies list every player:
// what a watch of joins and leaves needs (codecs.Description.AllPlayers).
// The watches file, querylens watch add and /api/v1/watches all check
// with it.
var completePlayers = manage.AllPlayers

// watchOptions are what querylens watch add and /api/v1/watches check a
// new watch with, as serve samples and sends it: the cap, the protocols
// that list every player, and a destination's URL for its kind made
// with --webhook-allow and --allow-http-webhooks (a Discord or Slack
// fake on a loopback ip:port inside --webhook-allow stands for the real
// host).
func (a *alertOptions) watchOptions() manage.Options {
	return manage.Options{Max: a.max, Complete: completePlayers, Check: a.checkDest}
}

// checkDest checks d's URL as the Sender that would send to it does.
func (a *alertOptions) checkDest(d alerts.Destination) error {
	var test []string
	if h, ok := a.testHost(d); ok {
		test = []string{h}
	}
	s, err := deliver.New(deliver.Config{Allow: webhookRule(), WebhookAllow: a.webhookAllow, AllowHTTP: a.allowHTTP, TestHosts: test})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Check(d)
	return err
}

// webhookRule is the relay's address rule for a webhook's address: the
// default policy's address rules (not its port rules: the port given is
// one they pass), without the relay's --allow-target ranges, which open
// game servers, not webhooks (--webhook-allow does).
func webhookRule() func(netip.Addr) bool {
	p := relay.NewPolicy(nil, nil)
	return func(a netip.Addr) bool { return p.Check(netip.AddrPortFrom(a, 1024)) == nil }
}

// alertsRun is the alerts side of serve: the watches (the file's and the
// stored ones), the sampler's hand-off to the outbox, the worker that
// sends it, and the live boards.
type alertsRun struct {
	o       alertOptions
	store   outbox.Store
	tracker *history.Tracker
	logger  *slog.Logger
	holder  *worker.Holder
	worker  *worker.Worker
	now     func() time.Time

	sender senderBox
	stored outbox.Destinations // the destinations of querylens watch add's and the API's watches; nil: none kept

	mu      sync.RWMutex
	dests   map[string]alerts.Destination // the file's, by name
	owned   map[string]alerts.Destination // the stored ones (outbox.DestName), as last read with the watches
	watches map[string]outbox.Watch       // stored, by id
	byKey   map[history.Key][]string      // watch ids by server
	rows    map[string]alerts.BoardRow    // each watch's board row, as last sampled
	boards  map[string]bool               // watches whose board is to update
	boardC  chan struct{}
	events  map[alerts.Kind]uint64 // told, by kind
	mb      boardsRun              // the boards of several servers (serve_boards.go)

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// senderBox holds the current Sender: a reload that names new test
// hosts makes a new one.
type senderBox struct {
	mu    sync.RWMutex
	s     *deliver.Sender
	hosts []string // its test hosts, sorted
}

func (b *senderBox) get() *deliver.Sender {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.s
}

func (b *senderBox) Send(ctx context.Context, d alerts.Destination, m alerts.Message) (deliver.Result, error) {
	return b.get().Send(ctx, d, m)
}

// newAlerts makes the alerts' side of serve on store (the history
// database), before the tracker exists (the sampler calls observe).
func newAlerts(o alertOptions, store outbox.Store, holderName string, logger *slog.Logger) (*alertsRun, error) {
	if o.sync <= 0 {
		o.sync = 30 * time.Second
	}
	if o.max <= 0 {
		o.max = DefaultWatchMax
	}
	a := &alertsRun{o: o, store: store, logger: logger, now: time.Now,
		dests: map[string]alerts.Destination{}, owned: map[string]alerts.Destination{}, watches: map[string]outbox.Watch{}, byKey: map[history.Key][]string{},
		rows: map[string]alerts.BoardRow{}, boards: map[string]bool{}, boardC: make(chan struct{}, 1),
		events: map[alerts.Kind]uint64{}}
	s, err := a.newSender(nil)
	if err != nil {
		return nil, err
	}
	a.sender.s = s
	a.stored, _ = store.(outbox.Destinations)
	logf := func(format string, args ...any) { logger.Warn(fmt.Sprintf(format, args...)) }
	// A send is one attempt of at most deliver.DefaultAttemptTimeout
	// (5 s) after the destination's pace: eight rows, four at once, end
	// well inside three quarters of a 30 s lease, and a row whose
	// instance died during its send goes again 30 s later.
	// The holder keeps samples while the database does not answer; the
	// worker flushes it before each claim.
	a.holder = &worker.Holder{Store: store}
	w, err := worker.New(worker.Config{Store: store, Sender: &a.sender, Dest: a.dest, Holder: holderName, Logf: logf,
		Held: a.holder, Batch: 8, Concurrency: 4, Lease: alertLease})
	if err != nil {
		return nil, err
	}
	a.worker = w
	a.holder.Wake = w.Wake
	return a, nil
}

func (a *alertsRun) newSender(testHosts []string) (*deliver.Sender, error) {
	return deliver.New(deliver.Config{
		Allow:        webhookRule(),
		WebhookAllow: a.o.webhookAllow,
		AllowHTTP:    a.o.allowHTTP,
		TestHosts:    testHosts,
		MaxAttempts:  1, // the outbox retries, across restarts
		Logf:         func(format string, args ...any) { a.logger.Warn(fmt.Sprintf(format, args...)) },
	})
}

// dest is the worker's lookup of a destination by name: the watches
// file's, else the stored ones, read again at each lookup, so that a
// destination deleted with its watch (querylens watch rm, DELETE
// /api/v1/watches/{id}) is never used, even before the next sync. When
// the database does not answer, the one last read stands (a row is
// claimed from that database: it answered a moment ago).
func (a *alertsRun) dest(name string) (alerts.Destination, bool) {
	a.mu.RLock()
	d, ok := a.dests[name]
	cached, cok := a.owned[name]
	a.mu.RUnlock()
	if ok || a.stored == nil {
		return d, ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds, err := a.stored.Destinations(ctx)
	if err != nil {
		a.logger.Warn("alerts: reading the stored destinations", "err", err)
		return cached, cok
	}
	for _, d := range ds {
		if d.Name == name {
			return d, true
		}
	}
	return alerts.Destination{}, false
}

// start loads the watches and runs the worker, the boards, SIGHUP's
// reloads (hup) and the periodic reading of the stored watches (those of
// querylens watch add and the API) until stop.
func (a *alertsRun) start(ctx context.Context, tracker *history.Tracker, hup <-chan os.Signal) error {
	a.tracker = tracker
	if err := a.reload(ctx); err != nil && a.o.watches != "" {
		return err // at start, an invalid file is an error: there is no running configuration to keep
	}
	rctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.wg.Go(func() { a.worker.Run(rctx) })
	a.wg.Go(func() { a.boardLoop(rctx) })
	a.wg.Go(func() { a.boardsLoop(rctx) })
	a.wg.Go(func() {
		t := time.NewTicker(a.o.sync)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-hup:
				a.reload(rctx)
			case <-t.C:
				if err := a.sync(rctx); err != nil {
					a.logger.Warn("alerts: reading the stored watches", "err", err)
				}
			}
		}
	})
	return nil
}

func (a *alertsRun) stop() {
	if a == nil || a.cancel == nil {
		return
	}
	a.cancel()
	a.wg.Wait()
	a.sender.get().Close()
}

// errNoFile is reload's when there is no watches file.
var errNoFile = errors.New("no watches file")

// reload reads the watches file (when there is one) and, when it is
// valid, stores its watches (origin file, their state kept by id),
// deletes the file's watches no longer in it and takes its
// destinations; an invalid file keeps the running configuration and
// says why. Then it pins the stored watches' servers (sync).
func (a *alertsRun) reload(ctx context.Context) error {
	err := errNoFile
	if a.o.watches != "" {
		err = a.loadFile(ctx)
		if err != nil {
			a.logger.Error("alerts: the watches file is not taken; the running watches are kept", "file", a.o.watches, "err", err)
		} else {
			a.logger.Info("alerts: watches file loaded", "file", a.o.watches)
		}
	}
	if serr := a.sync(ctx); serr != nil {
		a.logger.Warn("alerts: reading the stored watches", "err", serr)
		if err == nil || err == errNoFile {
			err = serr
		}
	}
	if err == errNoFile {
		return nil
	}
	return err
}

func (a *alertsRun) loadFile(ctx context.Context) error {
	data, err := os.ReadFile(a.o.watches)
	if err != nil {
		return err
	}
	f, err := alerts.ParseFile(data, completePlayers)
	if err != nil {
		return err
	}
	if len(f.Watches) > a.o.max {
		return errors.New("the file has " + strconv.Itoa(len(f.Watches)) + " watches, more than --watch-max " + strconv.Itoa(a.o.max))
	}
	for i, w := range f.Watches {
		if _, err := server.New(w.Server.Protocol, w.Server.Addr, w.Server.Options); err != nil {
			return errors.New("watch " + strconv.Itoa(i+1) + " (" + strconv.Quote(alerts.Truncate(w.ID, 64)) + "): " + err.Error())
		}
	}
	if err := checkBoardServers(f, a.o.max); err != nil {
		return err
	}
	// A Discord or Slack fake on a loopback ip:port the operator opened
	// (--webhook-allow) stands for the real host; the address rule still
	// applies when connecting.
	a.mu.RLock()
	test := a.testHosts(f.Destinations, a.owned)
	a.mu.RUnlock()
	s, err := a.newSender(test)
	if err != nil {
		return err
	}
	for _, d := range f.Destinations {
		if _, err := s.Check(d); err != nil {
			s.Close()
			return err // masked: names the destination, never its URL
		}
	}
	now := a.now()
	for _, w := range f.Watches {
		if err := a.store.PutWatch(ctx, w, outbox.OriginFile, now); err != nil {
			s.Close()
			return err
		}
	}
	stored, err := a.store.Watches(ctx)
	if err != nil {
		s.Close()
		return err
	}
	keep := map[string]bool{}
	for _, w := range f.Watches {
		keep[w.ID] = true
	}
	for _, w := range stored {
		if w.Origin == outbox.OriginFile && !keep[w.Watch.ID] {
			if err := a.store.DeleteWatch(ctx, w.Watch.ID); err != nil {
				s.Close()
				return err
			}
		}
	}
	dests := make(map[string]alerts.Destination, len(f.Destinations))
	for _, d := range f.Destinations {
		dests[d.Name] = d
	}
	a.mu.Lock()
	a.dests = dests
	a.mu.Unlock()
	a.setSender(s, test)
	a.setBoards(ctx, f.Boards)
	return nil
}

// setSender makes s, whose test hosts are hosts, the one sending.
func (a *alertsRun) setSender(s *deliver.Sender, hosts []string) {
	a.sender.mu.Lock()
	old := a.sender.s
	a.sender.s, a.sender.hosts = s, hosts
	a.sender.mu.Unlock()
	old.Close()
}

// testHosts are the test hosts (testHost) of file and owned, sorted.
func (a *alertsRun) testHosts(file []alerts.Destination, owned map[string]alerts.Destination) []string {
	var test []string
	add := func(d alerts.Destination) {
		if h, ok := a.o.testHost(d); ok && !slices.Contains(test, h) {
			test = append(test, h)
		}
	}
	for _, d := range file {
		add(d)
	}
	for _, d := range owned {
		add(d)
	}
	slices.Sort(test)
	return test
}

// testHost is d's host when it is a Discord or Slack destination on a
// loopback ip:port inside --webhook-allow.
func (a *alertOptions) testHost(d alerts.Destination) (string, bool) {
	if d.Kind != alerts.DestDiscord && d.Kind != alerts.DestSlack {
		return "", false
	}
	u, err := url.Parse(d.URL)
	if err != nil {
		return "", false
	}
	ap, err := netip.ParseAddrPort(u.Host)
	if err != nil || !ap.Addr().IsLoopback() {
		return "", false
	}
	for _, p := range a.webhookAllow {
		if p.Contains(ap.Addr()) {
			return u.Host, true
		}
	}
	return "", false
}

// sync reads the stored watches and their destinations, and pins their
// servers in the tracker (at most --watch-max watches, by id), unpinning
// those no longer watched. A stored Discord or Slack destination on a
// loopback ip:port inside --webhook-allow becomes one of the Sender's
// test hosts, as the file's do.
func (a *alertsRun) sync(ctx context.Context) error {
	stored, err := a.store.Watches(ctx)
	if err != nil {
		return err
	}
	owned := map[string]alerts.Destination{}
	if a.stored != nil {
		ds, err := a.stored.Destinations(ctx)
		if err != nil {
			return err
		}
		for _, d := range ds {
			owned[d.Name] = d
		}
	}
	sort.Slice(stored, func(i, j int) bool { return stored[i].Watch.ID < stored[j].Watch.ID })
	if len(stored) > a.o.max {
		a.logger.Warn("alerts: more watches stored than --watch-max; the last by id are not sampled", "stored", len(stored), "max", a.o.max)
		stored = stored[:a.o.max]
	}
	watches := make(map[string]outbox.Watch, len(stored))
	byKey := map[history.Key][]string{}
	every := map[history.Key]time.Duration{}
	for _, w := range stored {
		ref, err := server.New(w.Watch.Server.Protocol, w.Watch.Server.Addr, w.Watch.Server.Options)
		if err != nil {
			a.logger.Warn("alerts: a stored watch names no server querylens can ask", "watch", w.Watch.ID, "err", err)
			continue
		}
		k := ref.Key()
		watches[w.Watch.ID] = w
		byKey[k] = append(byKey[k], w.Watch.ID)
		e := w.Watch.Every
		if e <= 0 {
			e = history.DefaultPinEvery
		}
		if cur, ok := every[k]; !ok || e < cur {
			every[k] = e
		}
	}
	a.mu.Lock()
	old := a.byKey
	a.watches, a.byKey, a.owned = watches, byKey, owned
	for id := range a.rows {
		if _, ok := watches[id]; !ok {
			delete(a.rows, id)
		}
	}
	file := slices.Collect(maps.Values(a.dests))
	a.mu.Unlock()
	if test := a.testHosts(file, owned); !slices.Equal(test, a.senderHosts()) {
		if s, err := a.newSender(test); err != nil {
			a.logger.Warn("alerts: the webhook sender", "err", err)
		} else {
			a.setSender(s, test)
		}
	}
	a.boardPins(every, old) // the boards' servers are pinned too
	if a.tracker == nil {
		return nil
	}
	for k, e := range every { // a pin again only sets its interval
		if err := a.tracker.Pin(ctx, k, e); err != nil {
			a.logger.Warn("alerts: pin", "server", k.String(), "err", err)
		}
	}
	for k := range old {
		if _, ok := every[k]; !ok {
			a.tracker.Unpin(ctx, k)
		}
	}
	return nil
}

// observe is the sampler's hand-off: each probe of a watched server (the
// relay's refusals included) becomes an alerts.Sample applied to every
// watch of that server, in the history database's outbox (held in
// memory while it does not answer), and the worker is woken.
func (a *alertsRun) observe(k history.Key, rep server.Report) {
	a.mu.RLock()
	ids := a.byKey[k]
	var ws []outbox.Watch
	for _, id := range ids {
		ws = append(ws, a.watches[id])
	}
	a.mu.RUnlock()
	a.boardsObserve(k, rep)
	if len(ws) == 0 {
		return
	}
	s := alertSample(rep)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, w := range ws {
		to := a.to(w.Watch)
		ev, err := a.holder.Apply(ctx, w.Watch.ID, s, to, a.now())
		if err != nil && !errors.Is(err, outbox.ErrNoWatch) {
			a.logger.Warn("alerts: apply", "watch", w.Watch.ID, "err", err)
		}
		a.count(ev)
		if w.Watch.Board {
			a.boardSample(w.Watch.ID, w.Watch.Server, s)
		}
	}
}

// to is the destinations w names: the file's, else the stored ones as
// last read (sync).
func (a *alertsRun) to(w alerts.Watch) []alerts.Destination {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var out []alerts.Destination
	for _, name := range w.To {
		if d, ok := a.dests[name]; ok {
			out = append(out, d)
		} else if d, ok := a.owned[name]; ok {
			out = append(out, d)
		}
	}
	return out
}

func (a *alertsRun) senderHosts() []string {
	a.sender.mu.RLock()
	defer a.sender.mu.RUnlock()
	return a.sender.hosts
}

func (a *alertsRun) count(ev []alerts.Event) {
	if len(ev) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range ev {
		a.events[e.Kind]++
	}
}

// alertSample is what a probe found, as the alerts' machine reads it.
func alertSample(rep server.Report) alerts.Sample {
	s := alerts.Sample{Time: rep.At, State: rep.State.String(), Err: rep.Detail}
	if s.Time.IsZero() {
		s.Time = time.Now()
	}
	if rep.State != server.Online || rep.Msg == nil || rep.Msg.Info == nil {
		return s
	}
	in := rep.Msg.Info
	c := server.CountsOf(in)
	s.Name, s.NumPlayers, s.MaxPlayers = c.Name, c.Players, c.Max
	s.Map = codecs.StripColors(in.Map)
	for _, p := range in.Players {
		s.Players = append(s.Players, p.Name)
	}
	s.PlayersComplete = in.Has&codecs.HasPlayers != 0 && rep.Codec != nil && completePlayers(rep.Codec.Name())
	return s
}

// boardSample records a watch's board row after a sample, and asks the
// board loop to edit the message when the row changed.
func (a *alertsRun) boardSample(id string, ref alerts.Ref, s alerts.Sample) {
	a.mu.Lock()
	defer a.mu.Unlock()
	prev, seen := a.rows[id]
	row := prev
	row.Server = ref
	if row.State != s.State || !seen {
		row.State, row.Since = s.State, s.Time
	}
	if s.State == alerts.StateOnline {
		row.Name, row.Map, row.NumPlayers, row.MaxPlayers = s.Name, s.Map, s.NumPlayers, s.MaxPlayers
	}
	if seen && sameRow(row, prev) {
		return
	}
	a.rows[id] = row
	a.boards[id] = true
	select {
	case a.boardC <- struct{}{}:
	default:
	}
}

// boardLoop keeps the live boards: each watch with Board on keeps one
// message on its first Discord destination, edited in place when its
// row changes (posted again if someone deleted it). A failed edit is
// tried again after a while.
func (a *alertsRun) boardLoop(ctx context.Context) {
	take := func() []string {
		a.mu.Lock()
		defer a.mu.Unlock()
		return takeSorted(a.boards)
	}
	again := func(id string) {
		a.mu.Lock()
		a.boards[id] = true
		a.mu.Unlock()
	}
	editLoop(ctx, a.boardC, 0, take, a.board, again, a.logger, "watch")
}

// editLoop runs live messages' edits: woken by wake, it waits settle (a
// burst of samples makes one edit), takes the ids to edit, edits each
// (edit), and hands the failed ones back (again), to be tried once more
// after 10 s. what names an id in the log ("watch", "board").
func editLoop(ctx context.Context, wake <-chan struct{}, settle time.Duration, take func() []string,
	edit func(context.Context, string) error, again func(string), logger *slog.Logger, what string) {
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-retry.C:
		}
		if settle > 0 {
			t := time.NewTimer(settle)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		failed := false
		for _, id := range take() {
			if err := edit(ctx, id); err != nil && ctx.Err() == nil {
				logger.Warn("alerts: live board", what, id, "err", err)
				again(id)
				failed = true
			}
		}
		if failed {
			retry.Reset(10 * time.Second)
		}
	}
}

// takeSorted empties set and returns its ids, sorted (the caller holds
// the set's lock).
func takeSorted(set map[string]bool) []string {
	ids := slices.Sorted(maps.Keys(set))
	clear(set)
	return ids
}

// board edits watch id's board (or posts it) and stores its message ids.
func (a *alertsRun) board(ctx context.Context, id string) error {
	a.mu.RLock()
	w, ok := a.watches[id]
	row, hasRow := a.rows[id]
	a.mu.RUnlock()
	if !ok || !hasRow || !w.Watch.Board {
		return nil
	}
	var d alerts.Destination
	for _, x := range a.to(w.Watch) {
		if x.Kind == alerts.DestDiscord {
			d = x
			break
		}
	}
	if d.Kind == "" {
		return nil // no Discord destination: nothing can be edited
	}
	// The ids stored last (another instance may have posted them).
	stored, err := a.store.Watches(ctx)
	if err != nil {
		return err
	}
	var ids []string
	for _, x := range stored {
		if x.Watch.ID == id {
			ids = x.Board
		}
	}
	title := row.Name
	if title == "" {
		title = w.Watch.Server.String()
	}
	pages := alerts.DiscordBoard(title, []alerts.BoardRow{row}, a.now())
	got, berr := a.sender.get().Board(ctx, d, ids, pages)
	if !slices.Equal(got, ids) {
		if err := a.store.SetBoard(ctx, id, got, a.now()); err != nil {
			return errors.Join(berr, err)
		}
	}
	return berr
}

// appendMetrics adds the alerts' series to /metrics.
func (a *alertsRun) appendMetrics(b []byte) []byte {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	m := a.worker.Metrics(ctx)
	a.mu.RLock()
	events := maps.Clone(a.events)
	watches := len(a.watches)
	a.mu.RUnlock()
	line := func(name, labels string, v string) {
		b = append(b, name...)
		if labels != "" {
			b = append(b, '{')
			b = append(b, labels...)
			b = append(b, '}')
		}
		b = append(b, ' ')
		b = append(b, v...)
		b = append(b, '\n')
	}
	head := func(name, help, typ string) {
		b = append(b, "# HELP "+name+" "+help+"\n# TYPE "+name+" "+typ+"\n"...)
	}
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	head("querylens_alert_watches", "Watches sampled (the watches file's and the stored ones).", "gauge")
	line("querylens_alert_watches", "", strconv.Itoa(watches))
	if a.tracker != nil {
		head("querylens_alert_servers_pinned", "Watched servers the sampler keeps (sampled at their watches' interval, never evicted).", "gauge")
		line("querylens_alert_servers_pinned", "", strconv.Itoa(len(a.tracker.Pinned())))
	}
	head("querylens_alert_events_total", "Alert events told, by kind (each is one outbox row per destination).", "counter")
	for _, k := range alerts.Kinds() {
		line("querylens_alert_events_total", `kind="`+string(k)+`"`, u(events[k]))
	}
	head("querylens_alert_deliveries_total", "Delivery attempts of the outbox, by destination kind and outcome (delivered, retried, failed, interrupted).", "counter")
	for _, kind := range []alerts.DestKind{alerts.DestDiscord, alerts.DestSlack, alerts.DestWebhook} {
		for _, out := range []string{worker.Delivered, worker.Retried, worker.Failed, worker.Interrupted} {
			line("querylens_alert_deliveries_total", `destination="`+string(kind)+`",outcome="`+out+`"`, u(m.Deliveries[kind][out]))
		}
	}
	head("querylens_alert_outbox_depth", "Messages in the outbox still to send.", "gauge")
	line("querylens_alert_outbox_depth", "", strconv.Itoa(m.Depth))
	head("querylens_alert_outbox_failed", "Messages given up on, kept for the operator.", "gauge")
	line("querylens_alert_outbox_failed", "", strconv.Itoa(m.Failed))
	head("querylens_alert_outbox_oldest_due_seconds", "How long the oldest message due has waited since its event (0: none due).", "gauge")
	line("querylens_alert_outbox_oldest_due_seconds", "", strconv.FormatFloat(m.OldestDue.Seconds(), 'f', 3, 64))
	head("querylens_alert_samples_held", "Samples held in memory while the history database does not answer.", "gauge")
	line("querylens_alert_samples_held", "", strconv.Itoa(m.Held))
	head("querylens_alert_samples_lost_total", "Samples dropped past the bound held in memory.", "counter")
	line("querylens_alert_samples_lost_total", "", u(m.Lost))
	head("querylens_alert_store_errors_total", "Calls of the alerts' worker to the history database that failed.", "counter")
	line("querylens_alert_store_errors_total", "", u(m.StoreErrors))
	return b
}

// watchSampler is server.Sampler that also hands each probe's report to
// observe (nil: none), before the tracker records it: the alerts see the
// relay's refusals, which the history does not record, and the player
// names, which it does not keep.
func watchSampler(ex netquery.Exchanger, timeout time.Duration, observe func(history.Key, server.Report)) history.Probe {
	return func(ctx context.Context, k history.Key) history.Sample {
		ref, err := server.FromKey(k)
		if err != nil {
			return history.Sample{State: history.StateMalformed}
		}
		rep := server.Probe(ctx, ex, ref, timeout)
		if observe != nil && ctx.Err() == nil { // a probe cut short by shutdown says nothing of the server
			observe(k, rep)
		}
		s, ok := server.Sample(rep)
		if !ok {
			return history.Sample{}
		}
		return s
	}
}

// sameRow reports whether a board would show x and y alike.
func sameRow(x, y alerts.BoardRow) bool {
	return x.State == y.State && x.Since.Equal(y.Since) && x.Name == y.Name && x.Map == y.Map &&
		x.NumPlayers == y.NumPlayers && x.MaxPlayers == y.MaxPlayers && x.Server.String() == y.Server.String()
}
