package server

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/netquery"
)

// Sampler returns the history sampler's probe: one Probe through ex (the
// relay's Exchange, so that its policy, cache and limits apply) made into
// a sample. A key that does not parse is sampled as malformed; what the
// relay refused or limited, or a name that did not resolve, gives a
// sample with State 0, which the tracker does not record.
func Sampler(ex netquery.Exchanger, timeout time.Duration) history.Probe {
	return func(ctx context.Context, k history.Key) history.Sample {
		ref, err := FromKey(k)
		if err != nil {
			return history.Sample{State: history.StateMalformed}
		}
		s, ok := Sample(Probe(ctx, ex, ref, timeout))
		if !ok {
			return history.Sample{}
		}
		return s
	}
}

// Trackable reports whether a view that found state may track the
// server: never on the relay's or the network's word; a new server only
// once it has answered (a flood of made-up addresses finds nothing that
// answers); one already tracked whatever it answered, so that its
// downtime is recorded.
func Trackable(state State, tracked bool) bool {
	if state.Answered() {
		return true
	}
	return state == Offline && tracked
}

// MasterEvery is how often TrackMasters asks each master for its list.
const MasterEvery = 10 * time.Minute

// MasterConfig configures TrackMasters.
type MasterConfig struct {
	Exchanger netquery.Exchanger // the relay's Exchange
	// Allow is the relay's policy (relay.Server.CheckTarget): a listed
	// address it refuses is not tracked.
	Allow   func(netip.AddrPort) error
	Tracker *history.Tracker
	Masters []Ref // each with the options that ask it for its list
	// Kept are the lists the server keeps (package masters: Steam's and
	// Quake III's), read instead of asked. Their servers only take free
	// places in the tracker: a Steam list alone may outnumber its Max,
	// and must not evict the servers people view.
	Kept   []KeptList
	Every  time.Duration
	Logger *slog.Logger
}

// KeptList is one master's list as another part of the server keeps it.
type KeptList struct {
	Protocol string
	Master   string // the master's label or address, for the log
	// Read returns the addresses listed now (without asking the servers).
	Read func(ctx context.Context) ([]string, error)
}

// TrackMasters tracks every server the masters list, now and every
// cfg.Every (MasterEvery when 0), until ctx ends.
func TrackMasters(ctx context.Context, cfg MasterConfig) {
	if cfg.Every <= 0 {
		cfg.Every = MasterEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	for {
		for _, m := range cfg.Masters {
			trackMaster(ctx, cfg, m)
		}
		for _, l := range cfg.Kept {
			trackKept(ctx, cfg, l)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(cfg.Every):
		}
	}
}

func trackMaster(ctx context.Context, cfg MasterConfig, m Ref) {
	logger := cfg.Logger
	c, err := codecs.Lookup(m.Protocol)
	if err != nil {
		logger.Error("track-master: " + err.Error())
		return
	}
	q, err := c.NewQuery(m.Options)
	if err != nil {
		logger.Error("track-master: " + err.Error())
		return
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, xerr := cfg.Exchanger.Exchange(qctx, c.Name(), m.Addr, q)
	cancel()
	msg, derr := q.Result(codecs.DecodeOptions{})
	if msg == nil || msg.Kind != codecs.KindMasterList {
		logger.Warn("track-master: no list", "master", m.Addr, "exchange", xerr, "decode", derr)
		return
	}
	added, refused := 0, 0
	for _, s := range msg.Servers {
		ap, err := netip.ParseAddrPort(s)
		if err != nil || cfg.Allow != nil && cfg.Allow(ap) != nil {
			refused++
			continue
		}
		ref, err := New(c.Name(), s, nil)
		if err != nil {
			refused++
			continue
		}
		if cfg.Tracker.View(ctx, ref.Key(), history.SourceMaster) {
			added++
		}
	}
	logger.Info("track-master", "master", m.Addr, "listed", len(msg.Servers), "tracked", added, "refused", refused)
}

// trackKept tracks the servers of a kept list the relay's policy allows,
// within the tracker's free places: those already tracked count as
// viewed, new ones are added while there is room, the rest are counted
// as skipped.
func trackKept(ctx context.Context, cfg MasterConfig, l KeptList) {
	addrs, err := l.Read(ctx)
	if err != nil && len(addrs) == 0 {
		cfg.Logger.Warn("track-master: no list", "master", l.Master, "err", err)
		return
	}
	added, refused, skipped := 0, 0, 0
	for _, s := range addrs {
		ap, err := netip.ParseAddrPort(s)
		if err != nil || cfg.Allow != nil && cfg.Allow(ap) != nil {
			refused++
			continue
		}
		ref, err := New(l.Protocol, s, nil)
		if err != nil {
			refused++
			continue
		}
		k := ref.Key()
		if !cfg.Tracker.IsTracked(k) && cfg.Tracker.Len() >= cfg.Tracker.Max() {
			skipped++
			continue
		}
		if cfg.Tracker.View(ctx, k, history.SourceMaster) {
			added++
		}
	}
	cfg.Logger.Info("track-master", "master", l.Master, "listed", len(addrs), "tracked", added, "refused", refused, "skipped", skipped)
}
