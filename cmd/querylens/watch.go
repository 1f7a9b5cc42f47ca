package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/alerts/deliver"
	"github.com/querylens/querylens/alerts/manage"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/history/postgres"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/server"
)

const watchUsage = `usage:
  querylens watch add  [--data DIR | --db URL] RULES DESTINATION PROTOCOL/HOST:PORT[?OPTIONS]
  querylens watch list [--data DIR | --db URL] [--json]
  querylens watch rm   [--data DIR | --db URL] ID...
  querylens watch test [--data DIR | --db URL] [--webhook-allow CIDR]... [--allow-http-webhooks] ID

Watches tell a server's admins, in Discord, Slack or their own webhook, when
the server goes down, comes back, fills up, empties, changes map or name, or
when a player joins or leaves. They live in the history database that
querylens serve uses (the same --data or --db); serve samples each one.
Run "querylens watch add -h" for the rules and destinations.
`

// watchSender makes what watch add checks with and watch test sends
// with; tests replace its resolver and dialer.
var watchSender = func(cfg deliver.Config) (*deliver.Sender, error) { return deliver.New(cfg) }

// watchDB are the history database's flags, spelt as serve's.
type watchDB struct {
	data string
	db   string
}

func (w *watchDB) flags(fs *flag.FlagSet) {
	fs.StringVar(&w.data, "data", "", "`DIR` holding the history database (default "+defaultDataDirHelp+")")
	// Checked when opened, not here: the flag package would print the
	// value, which may hold a password.
	fs.StringVar(&w.db, "db", "", "the history in PostgreSQL at `URL` (postgres://user:password@host/db) instead of a file in --data")
}

// watchStore is the history database's watches and destinations.
type watchStore interface {
	manage.Store
	Close() error
}

// open opens the history database; create says whether a missing SQLite
// file may be made (add), or is an error (the others).
func (w *watchDB) open(ctx context.Context, create bool) (watchStore, error) {
	if w.db != "" {
		if !strings.HasPrefix(w.db, "postgres://") && !strings.HasPrefix(w.db, "postgresql://") {
			return nil, errors.New("--db: want a postgres:// URL")
		}
		return postgres.Open(ctx, w.db)
	}
	dir := w.data
	if dir == "" {
		dir = defaultDataDir()
	}
	path := filepath.Join(dir, sqlite.FileName)
	if !create {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("no history database at " + path + " (pass --data DIR or --db URL)")
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errors.New("--data: " + err.Error())
	}
	return sqlite.Open(ctx, path)
}

// webhookFlags are serve's flags for the addresses webhooks may go to.
type webhookFlags struct {
	allow     []netip.Prefix
	allowHTTP bool
}

func (f *webhookFlags) flags(fs *flag.FlagSet) {
	fs.Func("webhook-allow", "let webhooks go to `CIDR` although it is not public (a receiver on your own network;\n"+
		"a Discord or Slack fake on a loopback ip:port inside it is taken for the real one), as serve's flag; repeatable", func(s string) error {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return errors.New("want a CIDR range such as 192.168.1.0/24")
		}
		f.allow = append(f.allow, p.Masked())
		return nil
	})
	fs.BoolVar(&f.allowHTTP, "allow-http-webhooks", false, "let webhooks use plain http:// (https only otherwise; never to discord.com or hooks.slack.com), as serve's flag")
}

// testHosts are the hosts of ds that stand for discord.com or
// hooks.slack.com, as serve takes them: a loopback ip:port inside one of
// the --webhook-allow ranges (a fake receiver, such as the demo's).
func (f *webhookFlags) testHosts(ds ...alerts.Destination) []string {
	var out []string
	for _, d := range ds {
		u, err := url.Parse(d.URL)
		if err != nil {
			continue
		}
		ap, err := netip.ParseAddrPort(u.Host)
		if err != nil || !ap.Addr().IsLoopback() {
			continue
		}
		for _, p := range f.allow {
			if p.Contains(ap.Addr()) {
				out = append(out, u.Host)
				break
			}
		}
	}
	return out
}

func (e *env) watch(args []string) int {
	if len(args) == 0 {
		io.WriteString(e.stderr, watchUsage)
		return exitUsage
	}
	switch args[0] {
	case "add":
		return e.watchAdd(args[1:])
	case "list", "ls":
		return e.watchList(args[1:])
	case "rm", "remove":
		return e.watchRm(args[1:])
	case "test":
		return e.watchTest(args[1:])
	case "help", "-h", "--help":
		io.WriteString(e.stdout, watchUsage)
		return exitOK
	}
	io.WriteString(e.stderr, "querylens watch: unknown command "+strconv.Quote(args[0])+"\n\n"+watchUsage)
	return exitUsage
}

// watchFail prints err (never a URL: the errors of manage and deliver
// mask them) and returns exitFail.
func (e *env) watchFail(cmd string, err error) int {
	io.WriteString(e.stderr, "querylens watch "+cmd+": "+strings.ReplaceAll(err.Error(), "\n", "; ")+"\n")
	return exitFail
}

// parseWindow reads --mute START/END, RFC 3339 times.
func parseWindow(s string) (alerts.Window, error) {
	a, b, ok := strings.Cut(s, "/")
	start, err1 := time.Parse(time.RFC3339, a)
	end, err2 := time.Parse(time.RFC3339, b)
	if !ok || err1 != nil || err2 != nil {
		return alerts.Window{}, errors.New("want START/END, RFC 3339 times (2026-12-24T20:00:00Z/2026-12-25T08:00:00Z)")
	}
	if !end.After(start) {
		return alerts.Window{}, errors.New("the window ends before it starts")
	}
	return alerts.Window{Start: start.UTC(), End: end.UTC()}, nil
}

func (e *env) watchAdd(args []string) int {
	fs := newFlagSet(e, "watch add", "[flags] PROTOCOL/HOST:PORT[?OPTION=VALUE&...]")
	var db watchDB
	db.flags(fs)
	var hooks webhookFlags
	hooks.flags(fs)
	var w alerts.Watch
	fs.StringVar(&w.ID, "id", "", "the watch's `ID` (letters, digits, - _ .); default: a random one")
	fs.BoolVar(&w.Down, "down", false, "tell when the server goes down (no answer for --down-samples samples in a row)")
	fs.BoolVar(&w.Up, "up", false, "tell when it answers again after a down was told (with --down)")
	fs.BoolVar(&w.Malformed, "malformed", false, "tell when it answers with replies that do not decode")
	fs.IntVar(&w.AtLeast, "players", 0, "tell when the player count reaches `N`")
	fs.BoolVar(&w.Full, "full", false, "tell when it fills up")
	fs.BoolVar(&w.Empty, "empty", false, "tell when the last player leaves")
	fs.BoolVar(&w.MapChange, "map", false, "tell when the map changes")
	fs.BoolVar(&w.NameChange, "name", false, "tell when the server's name changes")
	fs.BoolVar(&w.Joins, "join", false, "tell when a player joins (protocols that list every player)")
	fs.BoolVar(&w.Leaves, "leave", false, "tell when a player leaves")
	fs.Func("player", "joins and leaves of names matching `PATTERN` only (* matches any run of characters, case-insensitive); repeatable", func(s string) error {
		w.Players = append(w.Players, s)
		return nil
	})
	fs.DurationVar(&w.Resend, "resend", 0, "while down, tell again every `DURATION` (with --down)")
	fs.IntVar(&w.DownSamples, "down-samples", 0, "down after `N` lost samples in a row (default 3)")
	fs.DurationVar(&w.DownAfter, "down-after", 0, "or down after lost samples lasting `DURATION` (instead of counting)")
	fs.DurationVar(&w.Every, "every", 0, "sample the server every `DURATION` (default 30s; never more often than the relay's per-target limits allow)")
	fs.BoolVar(&w.Board, "board", false, "keep a live status message in the Discord channel, edited in place as the server changes (with --discord)")
	fs.Func("mute", "tell nothing from START to END (`START/END`, RFC 3339 times); repeatable", func(s string) error {
		win, err := parseWindow(s)
		if err == nil {
			w.Mute = append(w.Mute, win)
		}
		return err
	})
	// The destination flags never fail: the flag package would print
	// the value, a URL that is a credential.
	var d alerts.Destination
	dests := 0
	dest := func(k alerts.DestKind) func(string) error {
		return func(s string) error {
			dests++
			d.Kind, d.URL = k, s
			return nil
		}
	}
	fs.Func("discord", "tell the Discord webhook at `URL` (https://discord.com/api/webhooks/ID/TOKEN)", dest(alerts.DestDiscord))
	fs.Func("slack", "tell the Slack incoming webhook at `URL` (https://hooks.slack.com/services/...)", dest(alerts.DestSlack))
	fs.Func("webhook", "post signed JSON to `URL` (Standard Webhooks; needs --secret)", dest(alerts.DestWebhook))
	fs.StringVar(&d.Secret, "secret", "", "the generic webhook's signing secret (`whsec_BASE64`, 24 to 64 bytes)")
	fs.StringVar(&d.ThreadID, "thread", "", "post in the Discord thread `ID`")
	maxWatches := fs.Int("watch-max", outbox.DefaultMaxWatches, "refuse to store more than `N` watches in all (serve's --watch-max)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		return e.usageErr(fs, "want one server, PROTOCOL/HOST:PORT[?OPTION=VALUE&...]")
	}
	if dests > 1 {
		return e.usageErr(fs, "one destination per watch (--discord, --slack or --webhook)")
	}
	if d.Kind == "" {
		return e.usageErr(fs, "want a destination: --discord URL, --slack URL or --webhook URL --secret SECRET")
	}
	ref, err := server.Parse(pos[0])
	if err != nil {
		return e.usageErr(fs, err.Error())
	}
	w.Server = alerts.Ref{Protocol: ref.Protocol, Addr: ref.Addr, Options: ref.Options}
	sender, err := watchSender(deliver.Config{AllowHTTP: hooks.allowHTTP, WebhookAllow: hooks.allow, TestHosts: hooks.testHosts(d)})
	if err != nil {
		return e.watchFail("add", err)
	}
	defer sender.Close()
	ctx := context.Background()
	st, err := db.open(ctx, true)
	if err != nil {
		return e.watchFail("add", err)
	}
	defer st.Close()
	w, err = manage.Add(ctx, st, w, d, outbox.OriginCLI, manage.Options{
		Max:      *maxWatches,
		Complete: completePlayers,
		Check:    func(d alerts.Destination) error { _, err := sender.Check(d); return err },
	})
	if err != nil {
		return e.watchFail("add", err)
	}
	d.Name = outbox.DestName(w.ID)
	io.WriteString(e.stdout, "watch "+w.ID+" added: "+ref.String()+" tells "+rules(w)+" to "+describeDest(manage.Mask(d))+"\n")
	return exitOK
}

// rules names what w tells, for people.
func rules(w alerts.Watch) string {
	var out []string
	add := func(on bool, s string) {
		if on {
			out = append(out, s)
		}
	}
	add(w.Down, "down")
	add(w.Up, "up")
	add(w.Resend > 0, "still down every "+w.Resend.String())
	add(w.Malformed, "malformed")
	add(w.AtLeast > 0, "players ≥ "+strconv.Itoa(w.AtLeast))
	add(w.Full, "full")
	add(w.Empty, "empty")
	add(w.MapChange, "map")
	add(w.NameChange, "name")
	who := ""
	if len(w.Players) > 0 {
		who = " (" + strings.Join(w.Players, ", ") + ")"
	}
	add(w.Joins, "joins"+who)
	add(w.Leaves, "leaves"+who)
	add(len(w.Mute) > 0, "muted "+strconv.Itoa(len(w.Mute))+"×")
	add(w.Board, "a live status message")
	add(w.Every > 0, "sampled every "+w.Every.String())
	return strings.Join(out, ", ")
}

func describeDest(d manage.Dest) string {
	s := string(d.Kind) + " " + d.URL
	if d.ThreadID != "" {
		s += " thread " + d.ThreadID
	}
	if d.Signed {
		s += " (signed)"
	}
	return s
}

// watchJSON is a watch as watch list --json prints it: every URL masked,
// no secret.
type watchJSON struct {
	ID     string        `json:"id"`
	Origin outbox.Origin `json:"origin"`
	Server string        `json:"server"`
	Tells  string        `json:"tells"`
	To     []manage.Dest `json:"to"`
	FileTo []string      `json:"file_to,omitempty"` // a watches file's watch: the file's destinations, by name
	Last   alerts.Kind   `json:"last,omitempty"`
	LastAt time.Time     `json:"last_at,omitzero"`
}

func refString(r alerts.Ref) string {
	if ref, err := server.New(r.Protocol, r.Addr, r.Options); err == nil {
		return ref.String()
	}
	return r.String()
}

func (e *env) watchList(args []string) int {
	fs := newFlagSet(e, "watch list", "[--data DIR | --db URL] [--json]")
	var db watchDB
	db.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON (one array)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 0 {
		return e.usageErr(fs, "list takes no arguments")
	}
	ctx := context.Background()
	st, err := db.open(ctx, false)
	if err != nil {
		return e.watchFail("list", err)
	}
	defer st.Close()
	entries, err := manage.List(ctx, st)
	if err != nil {
		return e.watchFail("list", err)
	}
	out := make([]watchJSON, 0, len(entries))
	for _, en := range entries {
		out = append(out, watchJSON{ID: en.Watch.ID, Origin: en.Origin, Server: refString(en.Watch.Server),
			Tells: rules(en.Watch), To: en.Dests, Last: en.Last, LastAt: en.LastAt})
		if en.Origin == outbox.OriginFile {
			out[len(out)-1].FileTo = en.Watch.To
		}
	}
	if *asJSON {
		b, _ := json.MarshalIndent(out, "", "  ")
		e.stdout.Write(append(b, '\n'))
		return exitOK
	}
	if len(out) == 0 {
		io.WriteString(e.stdout, "no watches\n")
		return exitOK
	}
	for _, w := range out {
		line := w.ID + "  " + string(w.Origin) + "  " + w.Server + "\n    tells " + w.Tells
		for _, d := range w.To {
			line += "\n    to " + describeDest(d)
		}
		if len(w.FileTo) > 0 {
			line += "\n    to the watches file's " + strings.Join(w.FileTo, ", ")
		}
		if w.Last != "" {
			line += "\n    last told " + string(w.Last) + " at " + w.LastAt.UTC().Format(time.RFC3339)
		}
		io.WriteString(e.stdout, line+"\n")
	}
	return exitOK
}

func (e *env) watchRm(args []string) int {
	fs := newFlagSet(e, "watch rm", "[--data DIR | --db URL] ID...")
	var db watchDB
	db.flags(fs)
	ids, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(ids) == 0 {
		return e.usageErr(fs, "want the id of a watch (querylens watch list)")
	}
	ctx := context.Background()
	st, err := db.open(ctx, false)
	if err != nil {
		return e.watchFail("rm", err)
	}
	defer st.Close()
	status := exitOK
	for _, id := range ids {
		if err := manage.Remove(ctx, st, id); err != nil {
			e.watchFail("rm", errors.Join(errors.New("watch "+strconv.Quote(id)), err))
			status = exitFail
			continue
		}
		io.WriteString(e.stdout, "watch "+id+" removed\n")
	}
	return status
}

func (e *env) watchTest(args []string) int {
	fs := newFlagSet(e, "watch test", "[--data DIR | --db URL] [--webhook-allow CIDR]... [--allow-http-webhooks] ID")
	var db watchDB
	db.flags(fs)
	var hooks webhookFlags
	hooks.flags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		return e.usageErr(fs, "want the id of one watch (querylens watch list)")
	}
	ctx := context.Background()
	st, err := db.open(ctx, false)
	if err != nil {
		return e.watchFail("test", err)
	}
	w, to, err := manage.Find(ctx, st, pos[0])
	st.Close()
	if err != nil {
		return e.watchFail("test", errors.Join(errors.New("watch "+strconv.Quote(pos[0])), err))
	}
	if len(to) == 0 {
		return e.watchFail("test", errors.New("watch "+strconv.Quote(pos[0])+" has no stored destination (a watches file's watch tells the file's)"))
	}
	sender, err := watchSender(deliver.Config{AllowHTTP: hooks.allowHTTP, WebhookAllow: hooks.allow, MaxAttempts: 2, TestHosts: hooks.testHosts(to...)})
	if err != nil {
		return e.watchFail("test", err)
	}
	defer sender.Close()
	status := exitOK
	for _, d := range to {
		io.WriteString(e.stdout, "to "+describeDest(manage.Mask(d))+":\n")
		for _, ev := range manage.Samples(w.Watch, time.Now()) {
			_, err := sender.Send(ctx, d, alerts.Render(d.Kind, ev))
			if err != nil {
				io.WriteString(e.stdout, "  "+string(ev.Kind)+": "+err.Error()+"\n")
				status = exitFail
				var de *deliver.Error
				if errors.As(err, &de) && (errors.Is(err, deliver.ErrURL) || errors.Is(err, deliver.ErrAddress) ||
					errors.Is(err, deliver.ErrGaveUp) || isDialErr(err)) {
					// Every other kind would fail alike; a refusal of
					// one message (another 4xx) is told per kind.
					io.WriteString(e.stdout, "  (the other kinds are not tried)\n")
					break
				}
				continue
			}
			io.WriteString(e.stdout, "  "+string(ev.Kind)+": sent\n")
		}
	}
	return status
}

func isDialErr(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
