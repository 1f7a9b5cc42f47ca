// Package browse serves the server browser (/): a table the page fills
// itself, querying the masters and servers through the relay and decoding
// the replies with the wasm module (static/browse.js).
package browse

import (
	"bytes"
	"context"
	"encoding/hex"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/server/games"
	"github.com/querylens/querylens/web/layout"
)

// Protocol is one entry of the protocol filter and the add-server form:
// the protocol table's entry (server.Protocol) as the page reads it.
type Protocol struct {
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	DefaultPort int            `json:"default_port"`
	Master      *server.Master `json:"master,omitempty"`
	Join        string         `json:"join,omitempty"`
	Row         []string       `json:"row"`
	// List are the options a row without its own is asked with
	// (server.Protocol.List).
	List map[string]string `json:"list,omitempty"`
	// MinAskMs is the least time between two asks of one server (and of
	// one of the protocol's masters), in ms (server.Protocol.MinAskMs).
	MinAskMs int `json:"minAskMs,omitempty"`
	// AntiCheat labels a row's anti-cheat tag (server.Protocol.AntiCheat).
	AntiCheat string `json:"antiCheat,omitempty"`
}

// Config is what the page's script receives.
type Config struct {
	Relay     string     `json:"relay"`
	Masters   []Master   `json:"masters"` // a Kept one's list is at /api/v1/masters/{protocol}/{addr}
	Games     []Game     `json:"games"`
	Servers   []Server   `json:"servers"` // listed without asking a master
	Protocols []Protocol `json:"protocols"`
	// DefaultProtocol is the protocol of a master or row that names none
	// (server.DefaultProtocol).
	DefaultProtocol string `json:"defaultProtocol"`
	// Sparks adds a 24-hour sparkline to the rows of tracked servers
	// (static/spark.js), when the site records history.
	Sparks bool `json:"sparks,omitempty"`
}

// Master is a master whose list the page loads: from the server when it
// keeps the list (Kept: /api/v1/masters/{protocol}/{addr}), else through
// the relay, with Query.
type Master struct {
	server.MasterSpec
	// Query is the first request of the list asked through the relay, as
	// hex datagrams: what the master's codec starts with for the
	// protocol's master options (codecs.Codec.NewQuery, Query.Start), so
	// exactly what the page's decoder would send. The page sends it the
	// moment the relay's HELLO arrives, before its decoder is ready, and
	// its decoder takes the replies over once it is (static/worker.js).
	Query []string `json:"query,omitempty"`
	// List is the first part of a Kept master's list as the server has it
	// when the page is served (at most KeptFirst servers; Total says how
	// many the whole list holds), absent before the server has fetched it:
	// the page shows these rows at once and reads the rest from
	// /api/v1/masters/…
	List *KeptList `json:"list,omitempty"`
}

// KeptList is the first part of a kept list as the page comes with it:
// the API's server.MasterList less what the page does not read, since a
// list of a thousand servers is most of the page's bytes and of its
// parse before its first rows.
type KeptList struct {
	Total    int          `json:"total"`
	Complete bool         `json:"complete,omitempty"`
	Error    string       `json:"error,omitempty"`
	Servers  []KeptServer `json:"servers"`
}

// KeptServer is a server.Summary as the page reads it (browse-rows.js's
// fromSummary): no history key, join link, time or source, which the
// page does not show; the protocol only when it is not the master's;
// zero counts and an unknown state left out; the round trip to the
// hundredth of a millisecond (the page shows tenths).
type KeptServer struct {
	Protocol   string            `json:"protocol,omitempty"`
	Address    string            `json:"address"`
	Options    map[string]string `json:"options,omitempty"`
	State      server.State      `json:"state,omitempty"`
	Detail     string            `json:"detail,omitempty"`
	Name       string            `json:"name,omitempty"`
	Map        string            `json:"map,omitempty"`
	Game       string            `json:"game,omitempty"`
	Players    int               `json:"players,omitempty"`
	Bots       int               `json:"bots,omitempty"`
	MaxPlayers int               `json:"max_players,omitempty"`
	Password   *bool             `json:"password,omitempty"`
	RTTSeconds float64           `json:"rtt_seconds,omitempty"`
	Status     string            `json:"status,omitempty"`
}

// newKeptList is the page's form of l, a list of master m.
func newKeptList(m server.MasterSpec, l server.MasterList) KeptList {
	k := KeptList{Total: l.Total, Complete: l.Complete, Error: l.Error, Servers: make([]KeptServer, len(l.Servers))}
	for i, s := range l.Servers {
		ks := KeptServer{Address: s.Address, Options: s.Options, State: s.State, Detail: s.Detail, Name: s.Name, Map: s.Map, Game: s.Game,
			Players: s.Players, Bots: s.Bots, MaxPlayers: s.MaxPlayers, Password: s.Password, RTTSeconds: math.Round(s.RTTSeconds*1e5) / 1e5, Status: s.Status}
		if s.Protocol != m.Protocol {
			ks.Protocol = s.Protocol
		}
		k.Servers[i] = ks
	}
	return k
}

// protocolOf is s's protocol on m's list.
func (s KeptServer) protocolOf(m server.MasterSpec) string {
	if s.Protocol == "" {
		return m.Protocol
	}
	return s.Protocol
}

// KeptFirst is how many servers of each kept list the browser page comes
// with: as many as one relay connection asks at once on a loopback demo
// (a thousand are ~200 KB of the page).
const KeptFirst = 1024

// NewMaster is spec as the page's configuration gives it: with its list's
// first request when the page asks the master through the relay.
func NewMaster(spec server.MasterSpec) (Master, error) {
	m := Master{MasterSpec: spec}
	p, ok := server.LookupProtocol(spec.Protocol)
	if !ok || spec.Kept || p.Master == nil || p.Master.Kept {
		return m, nil // the server keeps its list
	}
	c, err := codecs.Lookup(spec.Protocol)
	if err != nil {
		return m, err
	}
	q, err := c.NewQuery(p.Master.Options)
	if err != nil {
		return m, err
	}
	m.Query = hexDatagrams(q.Start())
	return m, nil
}

// Server is a server the page lists without asking a master: its identity
// and its status page's path, which its row links to from the start (the
// page's script builds no path: the browser module's server model does,
// once it is ready, for the rows that come without one).
type Server struct {
	server.Ref
	Status string `json:"status"` // the status page's path (server.Summary's status)
}

// Game is a game the page's game picker offers: one whose servers a
// master that picks a game by id (Master.Games: Steam's) lists with
// Filter, by GameDig's id (package games), the id GameDig's users type.
type Game struct {
	ID     string   `json:"id"`
	OldIDs []string `json:"old,omitempty"` // ids GameDig took before
	Name   string   `json:"name"`
	Master string   `json:"master"` // the protocol of the masters the filter is for
	Filter string   `json:"filter"` // the master filter that lists the game's servers (\appid\440)
	Port   int      `json:"port,omitempty"`
}

// Games are the games the page's game picker offers: the games of the
// table (games.All) whose master picks a game by id, by name.
func Games() []Game {
	gs := []Game{}
	for _, g := range games.All() {
		if g.Master == "" || g.MasterAddr != "" {
			continue
		}
		if p, ok := server.LookupProtocol(g.Master); !ok || p.Master == nil || !p.Master.Games {
			continue
		}
		gs = append(gs, Game{ID: g.ID, OldIDs: g.OldIDs, Name: g.Name, Master: g.Master, Filter: g.Filter, Port: g.DefaultQueryPort()})
	}
	slices.SortFunc(gs, func(a, b Game) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return gs
}

// gameOption is a game as the game picker lists it: "Name (id)", which
// browse-picker.js reads back (a person may also type the id alone, an
// old id, the name or a Steam app ID).
func gameOption(g Game) string { return g.Name + " (" + g.ID + ")" }

// Handler serves GET /.
type Handler struct {
	Assets  layout.Assets
	Config  Config
	Base    func(r *http.Request) string
	Version string
	// Kept, if set, says a kept master's list as it stands, without
	// waiting (its first limit servers), false when the server has none yet
	// (web.KeptLister).
	Kept func(ctx context.Context, protocol, addr string, limit int) (server.MasterList, bool)
}

// Protocols lists the protocol table for Config.Protocols.
func Protocols() []Protocol {
	var ps []Protocol
	for _, p := range server.Protocols() {
		port := 0
		if len(p.Ports) > 0 {
			port = p.Ports[0]
		}
		ps = append(ps, Protocol{Name: p.Name, Title: p.Title, DefaultPort: port, Master: p.Master, Join: p.Join, Row: p.Row, List: p.List,
			MinAskMs: p.MinAskMs, AntiCheat: p.AntiCheat})
	}
	return ps
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cfg := h.withLists(r.Context())
	p := layout.Page{
		Head: layout.Head{
			Title:       "querylens · game servers",
			Description: "Browse game servers live (Steam, Quake III, Minecraft, SA-MP, Zandronum and more), decoded in your browser.",
			URL:         h.Base(r) + "/",
		},
		Nav:       "browse",
		Script:    "browse.js",
		WASM:      true,
		Worker:    true,
		View:      true,
		Boot:      boot(cfg),
		Protocols: h.protocols(),
		Config:    cfg,
		Assets:    h.Assets,
	}
	w.Header().Set("Cache-Control", "no-cache")
	layout.RenderPage(w, r, http.StatusOK, p, Page(p, cfg))
}

// withLists is the page's configuration with the first servers of each
// kept master's list the server has (Handler.Kept).
func (h *Handler) withLists(ctx context.Context) Config {
	cfg := h.Config
	if h.Kept == nil {
		return cfg
	}
	cfg.Masters = slices.Clone(cfg.Masters)
	for i, m := range cfg.Masters {
		if !m.Kept {
			continue
		}
		ml, ok := h.Kept(ctx, m.Protocol, m.Addr, KeptFirst)
		if !ok {
			continue
		}
		kl := newKeptList(m.MasterSpec, ml)
		cfg.Masters[i].List = &kl
	}
	return cfg
}

// MasterKey is the key of the page's ask of master m, as browse.js's
// masterKey makes it: "master:" and the address for a DefaultProtocol
// master, with the protocol for the others.
func MasterKey(m server.MasterSpec) string {
	if m.Protocol == server.DefaultProtocol {
		return "master:" + m.Addr
	}
	return "master:" + m.Protocol + "/" + m.Addr
}

// protocols are the protocols the page decodes first: its configured
// masters' and servers' (each once, in order). The page preloads the
// browser module that holds them (layout.Page.Protocols).
func (h *Handler) protocols() []string {
	var ps []string
	add := func(p string) {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	for _, m := range h.Config.Masters {
		add(m.Protocol)
	}
	for _, s := range h.Config.Servers {
		add(s.Protocol)
	}
	return ps
}

// boot is what the page's worker asks at once: every master's list and the
// configured servers, as static/browse.js asks them when it starts (the same
// keys, options and timeouts, the relay's reply window being unknown until
// its HELLO: 2 s, plus browse.js's margins). A master's ask carries its
// first request (Master.Query), and so do the servers of a protocol whose
// first request is the same for every conversation (firstRequest): the
// worker sends them as the relay's HELLO arrives, before its decoder is
// ready. The servers go in lists, one per run of servers asked alike. The
// subprotocols are those the page's relay client offers, in its order
// (web/static/relay-client.js): the worker opens the relay's socket with
// them as its script starts, before that client is in.
func boot(cfg Config) layout.Boot {
	b := layout.Boot{Relay: cfg.Relay}
	if b.Relay != "" {
		b.Subprotocols = []string{wire.SubprotocolStream, wire.SubprotocolBatch, wire.Subprotocol}
	}
	for _, m := range cfg.Masters {
		if m.Query == nil {
			continue // the server keeps its list
		}
		p, _ := server.LookupProtocol(m.Protocol)
		b.Asks = append(b.Asks, layout.BootAsk{Key: MasterKey(m.MasterSpec), Protocol: m.Protocol, Target: m.Addr,
			Options: p.Master.Options, TimeoutMs: 2000 + 2000, Query: m.Query})
	}
	// Each server once (the worker's ask key, protocol/address): a kept
	// list may list a configured server again (the demo's, a master's own
	// servers), and the page has one row, asked once.
	seen := map[string]bool{}
	// A run's first request, built once per way of asking (runs of one
	// protocol and options recur when the configured servers and a kept
	// list interleave protocols).
	type asked struct {
		protocol string
		opts     map[string]string
		query    []string
	}
	var queries []asked
	queryOf := func(protocol string, opts map[string]string) []string {
		for _, q := range queries {
			if q.protocol == protocol && maps.Equal(q.opts, opts) {
				return q.query
			}
		}
		q := firstRequest(protocol, opts)
		queries = append(queries, asked{protocol, opts, q})
		return q
	}
	add := func(protocol, addr string, opts map[string]string) {
		key := protocol + "/" + addr
		if seen[key] {
			return
		}
		seen[key] = true
		if len(opts) == 0 { // none of its own: the list's, as browse.js asks
			p, _ := server.LookupProtocol(protocol)
			opts = p.List
		}
		if n := len(b.Lists); n > 0 && b.Lists[n-1].Protocol == protocol && maps.Equal(b.Lists[n-1].Options, opts) {
			b.Lists[n-1].Targets = append(b.Lists[n-1].Targets, addr)
			return
		}
		b.Lists = append(b.Lists, layout.BootList{Protocol: protocol, Options: opts, TimeoutMs: 2000 + 1500,
			Query: queryOf(protocol, opts), Targets: []string{addr}})
	}
	for _, s := range cfg.Servers {
		add(s.Protocol, s.Addr, s.Options)
	}
	// The kept lists' servers, as browse-masters.js asks them when the
	// page starts with them.
	for _, m := range cfg.Masters {
		if m.List == nil {
			continue
		}
		for _, s := range m.List.Servers {
			if s.State != server.Refused { // the page shows no row the relay will not ask
				add(s.protocolOf(m.MasterSpec), s.Address, s.Options)
			}
		}
	}
	return b
}

// firstRequest is the first request (hex datagrams) of a conversation the
// page's decoder opens with protocol and opts (codecs.NewConversation, as
// the browser module's batch OPEN does), when it is the same bytes every
// time: the worker sends it ahead, and the conversation takes over what it
// sent only when its own first request is byte for byte the same. Nil for
// a stream protocol (the relay writes its own request) and for a request
// that differs from one conversation to the next (a codec that numbers its
// queries; none of the built-in ones does).
func firstRequest(protocol string, opts map[string]string) []string {
	c, err := codecs.Lookup(protocol)
	if err != nil {
		return nil
	}
	var dgs [2][][]byte
	for i := range dgs {
		q, stream, err := codecs.NewConversation(c, opts)
		if err != nil || stream {
			return nil
		}
		dgs[i] = q.Start()
	}
	if len(dgs[0]) == 0 || !slices.EqualFunc(dgs[0], dgs[1], bytes.Equal) {
		return nil
	}
	return hexDatagrams(dgs[0])
}

// hexDatagrams is dgs as the page's configuration spells them, in hex (nil
// for none).
func hexDatagrams(dgs [][]byte) []string {
	if len(dgs) == 0 {
		return nil
	}
	out := make([]string, len(dgs))
	for i, dg := range dgs {
		out[i] = hex.EncodeToString(dg)
	}
	return out
}
