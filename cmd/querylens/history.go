package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/history/postgres"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/probe"
)

// historyOptions are serve's history flags.
type historyOptions struct {
	enabled     bool
	data        string // "" with enabled: the default directory
	dataSet     bool   // --data was given
	every       time.Duration
	idle        time.Duration
	max         int
	budget      float64
	trackMaster bool
	db          string // postgres:// URL: the history lives there instead of --data
}

func (h *historyOptions) flags(fs *flag.FlagSet) {
	fs.BoolVar(&h.enabled, "history", true, "record the history of viewed servers (charts on status pages and cards)")
	fs.Func("data", "`DIR` holding the history database (default "+defaultDataDirHelp+")", func(s string) error {
		if s == "" {
			return errors.New("empty directory")
		}
		h.data, h.dataSet = s, true
		return nil
	})
	fs.DurationVar(&h.every, "sample-every", history.DefaultSampleEvery, "how often each tracked server is sampled (at least "+history.MinSampleEvery.String()+")")
	fs.DurationVar(&h.idle, "track-idle", history.DefaultTrackIdle, "stop tracking a server not viewed for this long")
	fs.IntVar(&h.max, "track-max", history.DefaultTrackMax, "most servers tracked at once; a new one evicts the least recently viewed")
	fs.Float64Var(&h.budget, "sample-budget", history.DefaultBudget, "most sampling queries per second, across all tracked servers")
	fs.BoolVar(&h.trackMaster, "track-master", false, "also track every server the configured masters list (a kept Steam or Quake III list only fills free places of --track-max)")
	fs.Func("db", "keep the history in PostgreSQL at `URL` (postgres://user:password@host/db) instead of a file in --data; instances sharing it sample each server once between them", func(s string) error {
		if !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
			return errors.New("want a postgres:// URL")
		}
		h.db = s
		return nil
	})
}

// check reports the first flag whose value cannot work.
func (h *historyOptions) check() error {
	switch {
	case h.every < history.MinSampleEvery:
		return errors.New("--sample-every " + h.every.String() + " is shorter than " + history.MinSampleEvery.String() + ": servers answer one asker once per 10 s")
	case h.idle <= 0:
		return errors.New("--track-idle must be positive, got " + h.idle.String())
	case h.max <= 0:
		return errors.New("--track-max must be at least 1, got " + strconv.Itoa(h.max))
	case !(h.budget > 0) || h.budget > 10000:
		return errors.New("--sample-budget must be in (0, 10000] queries per second, got " + strconv.FormatFloat(h.budget, 'g', -1, 64))
	}
	return nil
}

const defaultDataDirHelp = "$XDG_DATA_HOME/querylens, else ~/.local/share/querylens, else ./querylens-data"

// defaultDataDir follows the XDG base directory rules, falling back to a
// folder in the working directory when there is no home.
func defaultDataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "querylens")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "share", "querylens")
	}
	return "querylens-data"
}

// historyRun is the history side of serve: the store, the tracker and its
// goroutines. Its zero value (history off) is usable.
type historyRun struct {
	store   history.Store
	tracker *history.Tracker
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	tmp     string         // a directory to remove at close (the demo's own)
	servers *probe.Tracked // the tracked servers' last samples, with --metrics-servers
	// With --track-master: what trackMasters starts once the kept
	// masters' lists exist.
	masters *server.MasterConfig
	mctx    context.Context
	// The alerts (history on): watches pinned in the tracker, the outbox
	// in the same database (outbox, the store under any buffer).
	alerts *alertsRun
	outbox outbox.Store
	hup    chan os.Signal
}

// trackMasters starts tracking what the masters list (with
// --track-master): the masters the page asks through the relay, and the
// kept lists given (package masters' Keeper, which serve makes after the
// history). A no-op without --track-master.
func (h *historyRun) trackMasters(kept []server.KeptList) {
	if h.masters == nil {
		return
	}
	mcfg := *h.masters
	mcfg.Kept = kept
	h.masters = nil
	h.wg.Go(func() { server.TrackMasters(h.mctx, mcfg) })
}

func (h *historyRun) stop() {
	if h.cancel != nil {
		h.cancel()
	}
	h.wg.Wait()
	if h.hup != nil {
		signal.Stop(h.hup)
	}
	h.alerts.stop() // after the sampler, which hands it samples
}

func (h *historyRun) close() {
	h.stop()
	if h.store != nil {
		h.store.Close()
	}
	if h.tmp != "" {
		os.RemoveAll(h.tmp)
	}
}

// startHistory opens the store and starts the sampler. With --demo and no
// --data, the history lives in a temporary directory removed at exit, and
// is filled with a synthetic day for every demo server.
func (e *env) startHistory(ctx context.Context, o serveOptions, rs *relay.Server, d *demo.Demo, targets []demo.Target, logger *slog.Logger) (*historyRun, error) {
	h := &historyRun{}
	ho := o.history
	if !ho.enabled {
		return h, nil
	}
	if ho.db != "" {
		return e.startHistoryIn(ctx, o, rs, d, targets, logger, h, nil)
	}
	dir := ho.data
	switch {
	case o.demo && !ho.dataSet:
		tmp, err := os.MkdirTemp("", "querylens-demo-")
		if err != nil {
			return nil, err
		}
		dir, h.tmp = tmp, tmp
	case dir == "":
		dir = defaultDataDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errors.New("history: --data: " + err.Error())
	}
	path := filepath.Join(dir, sqlite.FileName)
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		h.close()
		return nil, errors.New(err.Error() + " (the file was left as it is; pass another --data, or --history=false)")
	}
	h.store, h.outbox = store, store
	return e.startHistoryIn(ctx, o, rs, d, targets, logger, h, func() string { return path })
}

// startHistoryIn starts the sampler on h's store: the SQLite file at
// path(), or with --db PostgreSQL, buffered while it is down (serve
// reports its health), and sampler leases shared with the other
// instances.
func (e *env) startHistoryIn(ctx context.Context, o serveOptions, rs *relay.Server, d *demo.Demo, targets []demo.Target, logger *slog.Logger, h *historyRun, path func() string) (*historyRun, error) {
	ho := o.history
	var leases history.Leaser
	if ho.db != "" {
		pst, err := postgres.Open(ctx, ho.db)
		if err != nil {
			h.close()
			return nil, err
		}
		b := history.NewBuffered(pst, history.BufferedConfig{Name: "postgres", Logger: logger})
		leases = postgres.NewLeases(pst, "")
		h.store, h.outbox = b, pst
		path = func() string { return "postgres" }
	}
	store := h.store
	timeout := o.statusTimeout()
	holder, _ := os.Hostname()
	holder += "/" + strconv.Itoa(os.Getpid())
	al, err := newAlerts(o.alerts, h.outbox, holder, logger)
	if err != nil {
		h.close()
		return nil, err
	}
	h.alerts = al
	sampler := watchSampler(rs, timeout, al.observe)
	if o.probe.metricsServers && o.metrics {
		h.servers = &probe.Tracked{Max: ho.max}
		sampler = h.servers.Wrap(sampler)
	}
	tracker, err := history.NewTracker(ctx, history.TrackerConfig{
		Store: store, Probe: sampler, Every: ho.every, Idle: ho.idle, Max: ho.max,
		Budget: ho.budget, Timeout: timeout + time.Second, Logger: logger, Leases: leases, PinFloor: o.pinFloor,
	})
	if err != nil {
		h.close()
		return nil, err
	}
	h.tracker = tracker
	if h.servers != nil {
		h.servers.IsTracked = tracker.IsTracked
	}
	logger.Info("history", "store", path(), "tracked", tracker.Len(), "every", tracker.Interval())
	if d != nil {
		if err := fillDemo(ctx, store, tracker, targets); err != nil {
			h.close()
			return nil, err
		}
		io.WriteString(e.stdout, "demo history: 24 h of synthetic samples for "+strconv.Itoa(len(targets))+" servers in "+path()+"\n")
	}
	h.hup = make(chan os.Signal, 1)
	signal.Notify(h.hup, syscall.SIGHUP)
	if err := al.start(ctx, tracker, h.hup); err != nil {
		h.close()
		return nil, errors.New("--watches: " + err.Error())
	}
	rctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.wg.Go(func() {
		if err := tracker.Run(rctx); err != nil {
			logger.Error(err.Error())
		}
	})
	if ho.trackMaster {
		// The masters the page asks itself: one conversation each gives
		// the list (the kept masters' lists come from package masters:
		// trackMasters).
		var masters []server.MasterSpec
		for _, m := range o.masters {
			if pageAsksMaster(m.Protocol) {
				masters = append(masters, m)
			}
		}
		if d != nil {
			for _, m := range demoMasters(d) {
				if pageAsksMaster(m.Protocol) {
					masters = append(masters, m)
				}
			}
		}
		if len(o.masters) == 0 && d == nil {
			for _, m := range server.DefaultMasters() {
				if pageAsksMaster(m.Protocol) {
					masters = append(masters, m)
				}
			}
		}
		mcfg := server.MasterConfig{Exchanger: rs, Allow: rs.CheckTarget, Tracker: tracker, Logger: logger}
		for _, m := range masters {
			p, _ := server.LookupProtocol(m.Protocol)
			ref, err := server.New(m.Protocol, m.Addr, p.Master.Options)
			if err != nil {
				h.close()
				return nil, errors.New("--track-master: " + err.Error())
			}
			mcfg.Masters = append(mcfg.Masters, ref)
		}
		h.masters, h.mctx = &mcfg, rctx
	}
	return h, nil
}

func (o serveOptions) statusTimeout() time.Duration { return 2 * time.Second }

// fillDemo tracks every demo server and records a synthetic day for each,
// ending now; real samples follow from the sampler.
func fillDemo(ctx context.Context, store history.Store, tr *history.Tracker, targets []demo.Target) error {
	now := time.Now()
	// One Record call for every server: one transaction instead of one
	// per server (53 demo servers took seconds, a minute under -race).
	var all []history.Sample
	for i, t := range targets {
		spec := history.SyntheticSpec{Key: t.Ref().Key(), Seed: uint64(i + 1), End: now.Add(-time.Minute), Capacity: 8 + 8*(i%3)}
		switch t.Behavior {
		case demo.Silent:
			spec.State = history.StateOffline
		case demo.Truncated:
			spec.State = history.StateMalformed
		}
		all = append(all, history.Synthesize(spec)...)
	}
	if err := store.Record(ctx, all); err != nil {
		return err
	}
	for _, t := range targets {
		tr.View(ctx, t.Ref().Key(), history.SourceDemo)
	}
	return nil
}
