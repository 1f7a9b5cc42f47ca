package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/internal/health"
	"github.com/querylens/querylens/masters"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/redisstore"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// DefaultMaster is the public master of server.DefaultProtocol, from its
// description.
var DefaultMaster = defaultMaster(server.DefaultProtocol)

// pageAsksMaster reports whether protocol has a master the page asks
// itself, through the relay (not one the server keeps).
func pageAsksMaster(protocol string) bool {
	p, _ := server.LookupProtocol(protocol)
	return p.Master != nil && !p.Master.Kept
}

func defaultMaster(protocol string) string {
	if p, ok := server.LookupProtocol(protocol); ok && p.Master != nil {
		return p.Master.Default
	}
	return ""
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// prefixFlag collects repeatable CIDR (or single address) flags.
type prefixFlag []netip.Prefix

func (p *prefixFlag) String() string { return "" }
func (p *prefixFlag) Set(s string) error {
	if pfx, err := netip.ParsePrefix(s); err == nil {
		*p = append(*p, pfx.Masked())
		return nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return errors.New("want a CIDR range or an address, got " + strconv.Quote(s))
	}
	*p = append(*p, netip.PrefixFrom(a, a.BitLen()))
	return nil
}

// masterFlag collects repeatable --master PROTOCOL=HOST:PORT[?filter=…&label=…] flags.
type masterFlag []server.MasterSpec

func (m *masterFlag) String() string { return "" }
func (m *masterFlag) Set(v string) error {
	spec, err := server.ParseMasterSpec(v)
	if err != nil {
		return err
	}
	*m = append(*m, spec)
	return nil
}

// serverFlag collects repeatable PROTOCOL=HOST:PORT[?OPTIONS] flags.
type serverFlag []server.Ref

func (s *serverFlag) String() string { return "" }
func (s *serverFlag) Set(v string) error {
	ref, err := server.ParseFlag(v)
	if err != nil {
		return err
	}
	*s = append(*s, ref)
	return nil
}

// moreFlag is --demo-more: PROTOCOL=N, repeatable; a protocol named twice
// adds up.
type moreFlag []moreCount

type moreCount struct {
	protocol string
	n        int
}

func (m *moreFlag) String() string {
	var parts []string
	for _, c := range *m {
		parts = append(parts, c.protocol+"="+strconv.Itoa(c.n))
	}
	return strings.Join(parts, ",")
}

func (m *moreFlag) Set(s string) error {
	p, v, ok := strings.Cut(s, "=")
	n, err := strconv.Atoi(v)
	if !ok || p == "" || err != nil || n < 0 || n > demo.MaxServers {
		return errors.New("want PROTOCOL=N, N from 0 to " + strconv.Itoa(demo.MaxServers))
	}
	if _, known := server.LookupProtocol(p); !known {
		return errors.New("unknown protocol " + strconv.Quote(p))
	}
	*m = append(*m, moreCount{p, n})
	return nil
}

// counts is the flag as demo.Config.More takes it.
func (m moreFlag) counts() map[string]int {
	if len(m) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, c := range m {
		out[c.protocol] += c.n
	}
	return out
}

type serveOptions struct {
	addr         string
	allowTargets prefixFlag
	allowOrigins listFlag
	trusted      prefixFlag
	masters      masterFlag
	servers      serverFlag
	publicURL    string
	demo         bool
	demoServers  int
	demoMaster   string
	demoA2SList  int
	demoA2S      int
	demoQuake3   int
	demoGameSpy1 int
	demoMore     moreFlag
	steamKey     string
	adminToken   string // --admin-token or $QUERYLENS_ADMIN_TOKEN: the admin API (web/api)
	metrics      bool
	logJSON      bool
	ipRate       float64
	cacheTTL     time.Duration
	tcp          tcpOptions
	redis        string
	redisTimeout time.Duration
	history      historyOptions
	alerts       alertOptions
	demoFlap     time.Duration // the flapping server's period
	demoFlapDown time.Duration // how long of it the server is silent (0: 3/10 of it; the tests' schedules)
	demoFlapAddr string
	demoReceiver string   // a Discord-shaped receiver's address
	demoOnly     []string // the protocols the page lists of the demo's (none: all)
	modules      string   // --modules: browser modules of protocols built in from outside this repository

	probe probeOptions
	// pinFloor is the shortest sampling interval of a watched server
	// (runServe sets it from the relay's limits).
	pinFloor func(history.Key) time.Duration
}

// probeOptions are serve's flags for monitoring systems (package web/probe).
type probeOptions struct {
	allow          prefixFlag // scrapers that skip the limit per visitor
	token          string     // bearer token that does the same ($QUERYLENS_PROBE_TOKEN)
	metricsServers bool       // the tracked servers' numbers on /metrics
}

// probeTokenEnv is the environment variable --probe-token defaults to,
// so that the token need not show in the process list.
const probeTokenEnv = "QUERYLENS_PROBE_TOKEN"

// adminTokenEnv is the environment variable --admin-token defaults to
// (read after parsing, so that it never shows in the help).
const adminTokenEnv = "QUERYLENS_ADMIN_TOKEN"

func (p *probeOptions) flags(fs *flag.FlagSet) {
	fs.Var(&p.allow, "probe-allow", "let scrapers from this `CIDR` ask /probe, shields.json and embeds beyond the limit per visitor (never beyond the per-target limits); repeatable")
	// The environment is read after parsing (probeOptions.resolve), so
	// that the token never shows in the help's defaults.
	fs.StringVar(&p.token, "probe-token", "", "let requests with Authorization: Bearer `TOKEN` do the same (default $"+probeTokenEnv+")")
	fs.BoolVar(&p.metricsServers, "metrics-servers", false, "also serve each tracked server's players, state and round trip on /metrics (at most --track-max servers)")
}

func (e *env) serve(args []string) int {
	var o serveOptions
	fs := newFlagSet(e, "serve", "[--addr HOST:PORT] [--allow-target CIDR]... [--allow-origin ORIGIN]... [--demo]")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "where to serve the pages (/) and the relay (/relay)")
	fs.Var(&o.allowTargets, "allow-target", "let the relay reach this `CIDR` although policy refuses it (private, loopback); repeatable")
	fs.Var(&o.allowOrigins, "allow-origin", "let pages from this `ORIGIN` (https://host or a host pattern) use the relay; repeatable")
	fs.Var(&o.trusted, "trusted-proxy", "believe X-Forwarded-For from this reverse proxy `CIDR`; repeatable")
	fs.Var(&o.masters, "master", "a master the browser page lists, as `PROTOCOL=HOST:PORT[?filter=…&label=…]` (a bare HOST:PORT is Zandronum;\n"+
		"the server keeps Steam's (a2s) and Quake III's lists, the page asks the others through the relay); repeatable.\n"+
		"Default: Zandronum's, QZandronum's and ioquake3's masters")
	fs.Var(&o.servers, "server", "also list `PROTOCOL=HOST:PORT[?OPTION=VALUE&...]` on the browser page (options as in querylens protocols); repeatable")
	fs.StringVar(&o.publicURL, "public-url", "", "the site's absolute `URL`, for the links chat apps unfurl (default http://ADDR, never a request's Host header)")
	fs.BoolVar(&o.demo, "demo", false, "also run the demo servers on loopback and browse them. The relay may then query exactly\n"+
		"the demo's servers (their address and port, no other loopback port), without per-target limits; clients\n"+
		"on loopback (127.0.0.0/8, ::1) get 10,000 queries/s per connection and per address, 1,024 queries in\n"+
		"flight per connection, a 1 MiB send queue and 256 TCP exchanges in progress, and the relay 2,048 upstream exchanges\n"+
		"in all; other clients keep the default limits. Behind a reverse\n"+
		"proxy on this machine, pass it as --trusted-proxy, or every client counts as loopback")
	fs.IntVar(&o.demoServers, "demo-servers", demo.DefaultServers, "with --demo: how many Zandronum servers the demo master lists")
	fs.StringVar(&o.demoMaster, "demo-master-addr", "", "with --demo: where the demo master listens (default a free loopback port)")
	fs.IntVar(&o.demoA2S, "demo-a2s-servers", 0, "with --demo: how many more A2S servers the demo's Steam-like master lists (up to "+strconv.Itoa(demo.MaxServers)+")")
	fs.IntVar(&o.demoQuake3, "demo-quake3-servers", 0, "with --demo: how many more Quake III servers the demo's Quake III master lists (up to "+strconv.Itoa(demo.MaxServers)+")")
	fs.IntVar(&o.demoGameSpy1, "demo-gamespy1-servers", 0, "with --demo: how many more GameSpy v1 servers the browser page lists (up to "+strconv.Itoa(demo.MaxServers)+";\n"+
		"GameSpy v1 has no UDP master: they are listed as --server would list them)")
	fs.Var(&o.demoMore, "demo-more", "with --demo: `PROTOCOL=N` more servers of that protocol, of any the demo has a server of ("+demo.MoreProtocols()+"), up to\n"+
		strconv.Itoa(demo.MaxServers)+" each; a2s, quake3 and gamespy1 add to their --demo-*-servers; the others, on no master, are listed as --server\n"+
		"would list them; repeatable")
	fs.IntVar(&o.demoA2SList, "demo-a2s-list", 0, "with --demo: how many addresses the Steam-like master lists in all, the A2S servers among silent\n"+
		"loopback ones (up to "+strconv.Itoa(demo.MaxA2SList)+"; 0: just the A2S servers)")
	fs.Func("demo-only", "with --demo: the browser page lists only the demo's masters and servers of these `PROTOCOLS` (comma-separated,\n"+
		"e.g. minecraft or a2s,quake3), and so loads only their families' browser modules; the relay still reaches every demo server", func(s string) error {
		only := strings.Split(s, ",")
		for _, p := range only {
			if _, known := server.LookupProtocol(p); !known {
				return errors.New("unknown protocol " + strconv.Quote(p))
			}
		}
		o.demoOnly = only
		return nil
	})
	fs.DurationVar(&o.demoFlap, "demo-flapping-period", 10*time.Minute, "with --demo: the flapping server (Quake III, for trying alerts) is down for 3/10 of every `PERIOD`;\n"+
		"each time it is up, players join until it is full, stay a while, then leave (a player every 21 s at 10 minutes)")
	fs.StringVar(&o.demoFlapAddr, "demo-flapping-addr", "", "with --demo: where the flapping server listens, a loopback `HOST:PORT` (default a free port;\n"+
		"alerts/testdata/watches.demo.toml names 127.0.0.1:27960)")
	fs.StringVar(&o.demoReceiver, "demo-discord-receiver", "", "with --demo: also run a Discord-shaped webhook receiver at this loopback `HOST:PORT`, printing what\n"+
		"it is sent (alerts/testdata/watches.demo.toml tells 127.0.0.1:8081)")
	fs.StringVar(&o.steamKey, "steam-web-api-key", "", "list Steam masters through the Steam Web API (IGameServersService/GetServerList) with this `KEY`\n"+
		"instead of the UDP master (default $QUERYLENS_STEAM_WEB_API_KEY); never shown to pages or logs")
	fs.StringVar(&o.modules, "modules", "", "also serve the browser modules in `DIR`: modules for protocols built into this binary outside this repository\n"+
		"(bash scripts/build-wasm.sh --family IMPORTPATH --out DIR); a module of a protocol this binary does not know is refused")
	fs.BoolVar(&o.metrics, "metrics", true, "serve Prometheus metrics at /metrics")
	fs.BoolVar(&o.logJSON, "log-json", false, "log JSON lines instead of text")
	fs.StringVar(&o.adminToken, "admin-token", "", "serve /api/v1/watches and the failed alerts to requests with Authorization: Bearer `TOKEN` (default $"+adminTokenEnv+"; without one that API does not exist)")
	fs.Float64Var(&o.ipRate, "ip-rate", 0, "queries per second one client address may send through the relay (0: the relay's default, 40; with --demo, also for loopback clients)")
	fs.DurationVar(&o.cacheTTL, "cache-ttl", 0, "how long the relay shares a server's reply (0: the relay's default)")
	fs.DurationVar(&o.redisTimeout, "redis-timeout", 0, "with --redis: a call to Redis slower than this counts as Redis being down (0: 250ms)")
	fs.StringVar(&o.redis, "redis", "", "share the reply cache, coalescing and rate limits with the other instances using this Redis or Valkey `URL` (redis://[:password@]host:port/db)")
	o.tcp.flags(fs)
	o.history.flags(fs)
	o.alerts.flags(fs)
	o.probe.flags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 0 {
		return e.usageErr(fs, "unexpected argument "+strconv.Quote(pos[0]))
	}
	if o.demoOnly != nil && !o.demo {
		return e.usageErr(fs, "--demo-only needs --demo")
	}
	if o.demoA2S < 0 || o.demoA2S > demo.MaxServers {
		return e.usageErr(fs, "--demo-a2s-servers must be between 0 and "+strconv.Itoa(demo.MaxServers))
	}
	if o.demoQuake3 < 0 || o.demoQuake3 > demo.MaxServers {
		return e.usageErr(fs, "--demo-quake3-servers must be between 0 and "+strconv.Itoa(demo.MaxServers))
	}
	if o.demoGameSpy1 < 0 || o.demoGameSpy1 > demo.MaxServers {
		return e.usageErr(fs, "--demo-gamespy1-servers must be between 0 and "+strconv.Itoa(demo.MaxServers))
	}
	if o.demoA2SList < 0 || o.demoA2SList > demo.MaxA2SList {
		return e.usageErr(fs, "--demo-a2s-list must be between 0 and "+strconv.Itoa(demo.MaxA2SList))
	}
	if o.steamKey == "" {
		o.steamKey = os.Getenv("QUERYLENS_STEAM_WEB_API_KEY")
	}
	if o.probe.token == "" {
		o.probe.token = os.Getenv(probeTokenEnv)
	}
	if o.adminToken == "" {
		o.adminToken = os.Getenv(adminTokenEnv)
	}
	if o.probe.metricsServers && (!o.history.enabled || !o.metrics) {
		return e.usageErr(fs, "--metrics-servers needs --history and --metrics: it shows the tracked servers' last samples")
	}
	if o.history.enabled {
		if err := o.history.check(); err != nil {
			return e.usageErr(fs, err.Error())
		}
	}
	if err := o.alerts.check(o.history.enabled); err != nil {
		return e.usageErr(fs, err.Error())
	}
	if err := o.tcp.check(); err != nil {
		return e.usageErr(fs, err.Error())
	}
	if o.demoFlap < time.Second {
		return e.usageErr(fs, "--demo-flapping-period must be at least 1s")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := e.runServe(ctx, o, nil); err != nil {
		io.WriteString(e.stderr, "querylens serve: "+err.Error()+"\n")
		return exitFail
	}
	return exitOK
}

// runServe serves until ctx ends. ready, if not nil, receives the URL once
// the listener is open (tests use it).
func (e *env) runServe(ctx context.Context, o serveOptions, ready chan<- string) error {
	// Refuse before starting anything: pages without the browser module
	// cannot decode (the error says how to build it).
	if _, err := web.Module(); err != nil {
		return err
	}
	var logger *slog.Logger
	if o.logJSON {
		logger = slog.New(slog.NewJSONHandler(e.stderr, nil))
	} else {
		logger = slog.New(slog.NewTextHandler(e.stderr, nil))
	}
	rcfg := relay.Config{
		AllowTargets:   o.allowTargets,
		OriginPatterns: o.allowOrigins,
		TrustedProxies: o.trusted,
		CacheTTL:       o.cacheTTL,
		CacheKey:       codecs.QueryKey,
	}
	if o.ipRate > 0 {
		rcfg.IPRate = shared.Rate{PerSecond: o.ipRate, Burst: int(o.ipRate * 5)}
	}
	o.tcp.apply(&rcfg)
	wcfg := web.Config{Masters: o.masters, Servers: o.servers, PublicURL: o.publicURL, Logger: logger}
	wcfg.ProbeScrapers, wcfg.ProbeToken = o.probe.allow, o.probe.token
	wcfg.AdminToken = o.adminToken
	wcfg.WatchOptions = o.alerts.watchOptions()
	wcfg.ModulesDir = o.modules

	var d *demo.Demo
	var demoTargets []demo.Target
	if o.demo {
		var err error
		d, err = demo.Start(ctx, demo.Config{MasterAddr: o.demoMaster, Servers: o.demoServers, A2SServers: o.demoA2S, A2SList: o.demoA2SList,
			Quake3Servers: o.demoQuake3, GameSpy1Servers: o.demoGameSpy1, More: o.demoMore.counts(),
			Flapping: &demo.FlapSchedule{Period: o.demoFlap, Down: o.demoFlapDown}, FlappingAddr: o.demoFlapAddr})
		if err != nil {
			return err
		}
		defer d.Close()
		if o.demoReceiver != "" {
			stop, addr, err := e.discordReceiver(o.demoReceiver)
			if err != nil {
				return errors.New("--demo-discord-receiver: " + err.Error())
			}
			defer stop()
			io.WriteString(e.stdout, "demo discord receiver http://"+addr+"/api/webhooks/1/demo\n")
		}
		// The relay may reach exactly the demo's servers (address and
		// port), with no per-target limit since they are our own.
		own, err := demoAddrs(d)
		if err != nil {
			return err
		}
		rcfg.AllowAddrs = append(rcfg.AllowAddrs, own...)
		// The Steam-like master's silent addresses: nothing listens there,
		// so their rows show offline, as dead servers on a real list do.
		if o.demoA2SList > 0 {
			rcfg.AllowTargets = append(rcfg.AllowTargets, demo.SilentPrefix)
		}
		// A page on this machine may ask every demo server at once (silent
		// ones hold an id for the whole reply window); clients from
		// elsewhere keep the default limits.
		lim := demoLoopback
		rcfg.Loopback = &lim
		// One client's share of the relay's upstream exchanges is what is
		// left of MaxUpstream less the sixteenth kept for light clients:
		// twice the in-flight limit lets one page have all of its queries
		// out at once.
		rcfg.MaxUpstream = 2 * lim.MaxInFlight
		if o.ipRate > 0 {
			rcfg.Loopback.IPRate = rcfg.IPRate
		}
		// The demo's own masters replace the defaults: no public master
		// is ever asked for a demo.
		wcfg.Masters = append(demoMasters(d), wcfg.Masters...)
		// The TCP servers (Minecraft Java) are configured servers like
		// the others without a master.
		demoTargets = append(d.Targets(), d.StreamTargets()...)
		// The servers of a protocol whose master the demo runs are on
		// that master's list, which the page asks itself or the server
		// keeps and the page comes with (listing them again as configured
		// servers doubled a 1,000-server page's bytes of them); the others
		// (a protocol whose master the demo does not run, as Quake II's)
		// are configured servers.
		listed := map[string]bool{}
		for _, m := range demoMasters(d) {
			listed[m.Protocol] = true
		}
		for _, t := range demoTargets {
			if !listed[t.Protocol] {
				wcfg.Servers = append(wcfg.Servers, t.Ref())
			}
		}
		// The fleets no demo master lists (GameSpy v1's, whose masters
		// speak TCP, and --demo-more's) are listed as configured servers
		// (the other fleets are on their masters' lists).
		for _, t := range d.Unlisted() {
			wcfg.Servers = append(wcfg.Servers, t.Ref())
		}
		if t, ok := d.Flapping(); ok {
			wcfg.Servers = append(wcfg.Servers, t.Ref())
		}
		if o.demoOnly != nil {
			wcfg.Masters = slices.DeleteFunc(wcfg.Masters, func(m server.MasterSpec) bool { return !slices.Contains(o.demoOnly, m.Protocol) })
			wcfg.Servers = slices.DeleteFunc(wcfg.Servers, func(s server.Ref) bool { return !slices.Contains(o.demoOnly, s.Protocol) })
		}
	} else if len(wcfg.Masters) == 0 {
		wcfg.Masters = server.DefaultMasters()
	}
	if o.redis != "" {
		redisstore.SetLogger(logger)
		st, err := redisstore.Open(o.redis, redisstore.Options{})
		if err != nil {
			return err
		}
		defer st.Close()
		rcfg.SharedCache, rcfg.SharedLimiter = st, st
		rcfg.SharedTimeout = o.redisTimeout
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if err := st.Ping(pctx); err != nil {
			// Not fatal: the relay serves with its local state and
			// shares as soon as Redis answers.
			logger.Warn("redis does not answer yet; serving with the local cache and limits until it does", "err", err)
		}
		cancel()
	}
	if err := rcfg.Validate(); err != nil {
		return err
	}
	o.pinFloor = pinFloor(rcfg)
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	rs := relay.New(rcfg, logger)
	wcfg.Exchanger = rs
	wcfg.Addr = ln.Addr().String()
	wcfg.CardTTL = rcfg.CacheTTL
	if wcfg.CardTTL <= 0 {
		wcfg.CardTTL = relay.DefaultCacheTTL
	}
	hist, err := e.startHistory(ctx, o, rs, d, demoTargets, logger)
	if err != nil {
		return err
	}
	defer hist.close()
	wcfg.History, wcfg.Tracker = hist.store, hist.tracker
	mcfg := masters.Config{Masters: wcfg.Masters, Exchanger: rs, Allow: rs.CheckTarget, SteamWebAPIKey: o.steamKey, Logger: logger}
	// A listed server's state: the relay's cached answer, else the
	// history's last sample; listing never asks a server.
	states := masters.FirstOf{&masters.CacheStates{Relay: rs}}
	if hist.store != nil {
		states = append(states, &masters.HistoryStates{Store: hist.store})
	}
	mcfg.States = states
	if lim := rcfg.SharedLimiter; lim != nil {
		mcfg.Pacer = &masters.SharedPacer{Local: masters.NewLocalPacer(0, nil), Limiter: lim, Timeout: o.redisTimeout, Logger: logger}
	}
	keeper, err := masters.New(mcfg)
	if err != nil {
		return err
	}
	defer keeper.Close()
	wcfg.MasterLists = keeper
	hist.trackMasters(keptLists(keeper, wcfg.Masters))
	wh, err := web.New(wcfg)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/relay", rs)
	checks := health.New(rs.ShuttingDown)
	for _, st := range rs.Stores() {
		checks.Add(st)
	}
	if r, ok := hist.store.(health.Reporter); ok { // PostgreSQL, buffered
		checks.Add(r)
	}
	mux.Handle("GET /healthz", checks.Healthz())
	mux.Handle("GET /readyz", checks.Readyz())
	if o.metrics {
		var relayMetrics http.Handler = rs.MetricsHandler()
		if hist.servers != nil {
			relayMetrics = hist.servers.Metrics(relayMetrics)
		}
		if hist.alerts != nil {
			relayMetrics = health.Extend(relayMetrics, hist.alerts.appendMetrics)
		}
		mux.Handle("/metrics", checks.Metrics(relayMetrics))
	}
	mux.Handle("/", wh)

	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	url := "http://" + ln.Addr().String() + "/"
	logger.Info("querylens serving", "url", url, "relay", "ws://"+ln.Addr().String()+"/relay", "demo", o.demo)
	if d != nil {
		io.WriteString(e.stdout, "demo master "+d.Master()+" listing "+strconv.Itoa(o.demoServers)+" Zandronum servers\n")
		io.WriteString(e.stdout, "demo Steam-like master "+d.A2SMaster()+", Quake III master "+d.Quake3Master()+"\n")
		io.WriteString(e.stdout, "demo GameSpy v1 master (TCP) "+d.GameSpy1Master()+"\n")
		io.WriteString(e.stdout, fleetLines(d, o))
		if t, ok := d.Flapping(); ok {
			sched := demo.FlapSchedule{Period: o.demoFlap, Down: o.demoFlapDown}.Defaults()
			io.WriteString(e.stdout, "demo flapping server quake3 "+t.Addr+" (down "+sched.Down.String()+" of every "+sched.Period.String()+")\n")
		}
	}
	io.WriteString(e.stdout, "querylens is serving at "+url+"\n")
	if ready != nil {
		ready <- url
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hist.stop()               // the sampler first: it queries through the relay
	keeper.Close()            // and the masters' fetches
	rerr := rs.Shutdown(sctx) // tells WebSocket clients first; they are hijacked, so srv.Shutdown would not
	herr := srv.Shutdown(sctx)
	return errors.Join(rerr, herr)
}

// fleetLines is what serve prints of the demo's fleets: how many servers
// each master lists beside the demo's own, and every GameSpy v1 fleet
// server's address (the page lists them as configured servers; a script
// can ask the same ones).
func fleetLines(d *demo.Demo, o serveOptions) string {
	var b strings.Builder
	if o.demoA2S > 0 {
		b.WriteString("demo fleet: " + strconv.Itoa(o.demoA2S) + " A2S servers listed by the Steam-like master\n")
	}
	if o.demoQuake3 > 0 {
		b.WriteString("demo fleet: " + strconv.Itoa(o.demoQuake3) + " Quake III servers listed by the Quake III master\n")
	}
	if o.demoGameSpy1 > 0 {
		b.WriteString("demo fleet: " + strconv.Itoa(o.demoGameSpy1) + " GameSpy v1 servers listed as configured servers\n")
	}
	for _, m := range o.demoMore {
		b.WriteString("demo fleet: " + strconv.Itoa(m.n) + " more " + m.protocol + " servers\n")
	}
	for _, t := range d.Unlisted() {
		b.WriteString("demo " + t.Protocol + " " + t.Addr + "\n")
	}
	return b.String()
}

// demoLoopback are the limits --demo gives clients on loopback: enough
// for one page to ask a thousand demo servers at once, with a send queue
// still bounded (1 MiB per connection, and MaxQueuedBytes in all).
var demoLoopback = relay.ClientLimits{
	ConnRate:    shared.Rate{PerSecond: 10000, Burst: 10000},
	IPRate:      shared.Rate{PerSecond: 10000, Burst: 10000},
	MaxInFlight: 1024,
	QueueFrames: 4096,
	QueueBytes:  1 << 20,
	MaxStreams:  256,
}

// demoMasters are the demo's masters, as --master would give them: the
// Zandronum master, the Steam-like one, the Quake III one and the GameSpy
// v1 one (whose lists the server keeps).
func demoMasters(d *demo.Demo) []server.MasterSpec {
	var out []server.MasterSpec
	for _, s := range d.MasterSpecs() {
		m, err := server.ParseMasterSpec(s)
		if err == nil {
			out = append(out, m)
		}
	}
	return out
}

// demoAddrs lists the address and port of the demo's masters and of every
// demo server.
func demoAddrs(d *demo.Demo) ([]netip.AddrPort, error) {
	addrs := d.Masters()
	for _, t := range append(append(d.Targets(), d.Fleet()...), d.StreamTargets()...) {
		addrs = append(addrs, t.Addr)
	}
	if t, ok := d.Flapping(); ok {
		addrs = append(addrs, t.Addr)
	}
	out := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			return nil, errors.New("demo address " + strconv.Quote(a) + ": " + err.Error())
		}
		out = append(out, ap)
	}
	return out, nil
}

func (e *env) demo(args []string) int {
	fs := newFlagSet(e, "demo", "[--master-addr HOST:PORT] [--servers N] [--seed N]")
	master := fs.String("master-addr", "127.0.0.1:15300", "where the Zandronum master listens (loopback only)")
	n := fs.Int("servers", demo.DefaultServers, "how many Zandronum servers the master lists")
	seed := fs.Int64("seed", 1, "seed for names, maps and players")
	flapAddr := fs.String("flapping-addr", "", "where the flapping server listens (default a free loopback port)")
	flap := fs.Duration("flapping-period", 10*time.Minute, "the flapping server is down for 3/10 of every `PERIOD`")
	receiver := fs.String("discord-receiver", "", "also run a Discord-shaped webhook receiver at this loopback `HOST:PORT`, printing what it is sent\n"+
		"(point a watches file's Discord destination at http://HOST:PORT/api/webhooks/1/demo; see alerts/testdata/watches.demo.toml)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 0 {
		return e.usageErr(fs, "unexpected argument "+strconv.Quote(pos[0]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *flap < time.Second {
		return e.usageErr(fs, "--flapping-period must be at least 1s")
	}
	d, err := demo.Start(ctx, demo.Config{MasterAddr: *master, Servers: *n, Seed: *seed,
		Flapping: &demo.FlapSchedule{Period: *flap}, FlappingAddr: *flapAddr})
	if err != nil {
		io.WriteString(e.stderr, "querylens demo: "+err.Error()+"\n")
		return exitFail
	}
	defer d.Close()
	if *receiver != "" {
		stop, addr, err := e.discordReceiver(*receiver)
		if err != nil {
			io.WriteString(e.stderr, "querylens demo: --discord-receiver: "+err.Error()+"\n")
			return exitFail
		}
		defer stop()
		io.WriteString(e.stdout, "discord-receiver http://"+addr+"/api/webhooks/1/demo\n")
	}
	var b strings.Builder
	b.WriteString("zandronum-master " + d.Master() + "\n")
	b.WriteString("a2s-master " + d.A2SMaster() + "\n")
	b.WriteString("quake3-master " + d.Quake3Master() + "\n")
	b.WriteString("quakeworld-master " + d.QuakeWorldMaster() + "\n")
	if t, ok := d.Flapping(); ok {
		b.WriteString("quake3 " + t.Addr + " " + strconv.Quote(t.Name) + " (flapping)\n")
	}
	// The TCP servers (Minecraft Java) are listed with the others.
	for _, t := range append(d.Targets(), d.StreamTargets()...) {
		b.WriteString(t.Protocol + " " + t.Addr + " " + strconv.Quote(t.Name))
		if t.Behavior != demo.Normal {
			b.WriteString(" (" + t.Behavior.String() + ")")
		}
		for k, v := range t.Options {
			b.WriteString(" -o " + k + "=" + v)
		}
		b.WriteString("\n")
	}
	io.WriteString(e.stdout, b.String())
	<-ctx.Done()
	return exitOK
}

// keptLists are the masters whose lists the keeper keeps, read for
// --track-master: the listed addresses the relay may ask.
func keptLists(k *masters.Keeper, specs []server.MasterSpec) []server.KeptList {
	var out []server.KeptList
	for _, m := range specs {
		if p, ok := server.LookupProtocol(m.Protocol); !ok || p.Master == nil || !p.Master.Kept {
			continue
		}
		out = append(out, server.KeptList{Protocol: m.Protocol, Master: m.String(), Read: func(ctx context.Context) ([]string, error) {
			f := m.Filter
			l, err := k.List(ctx, m.Protocol, m.Addr, &f)
			var addrs []string
			for _, s := range l.Servers {
				if s.State != server.Refused {
					addrs = append(addrs, s.Address)
				}
			}
			if err == nil && l.Error != "" && !l.Complete {
				err = errors.New(l.Error)
			}
			return addrs, err
		}})
	}
	return out
}

// pinFloor is the shortest interval at which a watched server is
// sampled: never sooner than the relay's cache would answer instead
// (CacheTTL), than the protocol's servers answer one asker
// (codecs.Description.MinAskMs), and, for a server that is not the
// operator's own (the relay limits it per target), than the relay's
// per-target limits refill a probe's burst of queries, nor
// history.MinSampleEvery.
func pinFloor(rcfg relay.Config) func(history.Key) time.Duration {
	ttl := rcfg.CacheTTL
	if ttl <= 0 {
		ttl = relay.DefaultCacheTTL
	}
	rate := rcfg.TargetRate
	if rate.PerSecond <= 0 {
		rate = relay.TargetRateDefault()
	}
	refill := time.Duration(float64(max(rate.Burst, 1)) / rate.PerSecond * float64(time.Second))
	own := map[netip.AddrPort]bool{}
	for _, ap := range rcfg.AllowAddrs {
		own[ap] = true
	}
	return func(k history.Key) time.Duration {
		floor := ttl
		if d, err := codecs.LookupDescription(k.Protocol); err == nil {
			floor = max(floor, time.Duration(d.MinAskMs)*time.Millisecond)
		}
		if ref, err := server.FromKey(k); err == nil {
			if ap, err := netip.ParseAddrPort(ref.Addr); err == nil && own[ap] {
				return floor
			}
		}
		return max(floor, refill, history.MinSampleEvery)
	}
}

// discordReceiver serves a demo.DiscordReceiver on addr (loopback only),
// printing each message it takes.
func (e *env) discordReceiver(addr string) (stop func(), bound string, err error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		return nil, "", errors.New("want a loopback HOST:PORT, got " + strconv.Quote(addr))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	var mu sync.Mutex
	r := demo.NewDiscordReceiver()
	r.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(e.stdout, fmt.Sprintf(format, args...)+"\n")
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return func() { srv.Close() }, ln.Addr().String(), nil
}
