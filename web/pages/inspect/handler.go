// Package inspect serves the packet inspector (/inspect): build a query
// and see its bytes, send it through the relay, and read every datagram as
// a hex dump linked to its decoded field tree (static/inspect.js).
package inspect

import (
	"net/http"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/layout"
)

// Handler serves GET /inspect. The query string may preset the form:
// ?protocol=zandronum&target=host:port&opt.flags=0x1. Packets to decode on load travel in
// the fragment, which never reaches the server: #p=protocol&t=host:port&q=query&h=dg,dg&d=what,
// where d says what the h datagrams were ("received" from t, the default
// with a t; "sent" to it; "pasted", the default without), and the page's
// list says so.
//
// The query string is read as the status page reads its options
// (server.ParseQuery): a parameter given twice, or one that does not
// parse, is a 400.
type Handler struct {
	Assets    layout.Assets
	RelayPath string
	Base      func(r *http.Request) string
	// Error renders the site's error page.
	Error func(w http.ResponseWriter, r *http.Request, status int, heading, detail string)
}

// Config is what the page's script receives.
type Config struct {
	Relay    string            `json:"relay"`
	Protocol string            `json:"protocol"`
	Target   string            `json:"target"`
	Options  map[string]string `json:"options,omitempty"` // from ?opt.NAME=VALUE
	// DefaultProtocol is chosen when neither the link nor the fragment
	// names one (server.DefaultProtocol).
	DefaultProtocol string `json:"defaultProtocol"`
	// Wrapped are the protocols' coded inner layers and their codings,
	// by protocol and layer (codecs.Description.Wrapped), for the editor.
	Wrapped map[string]map[string]string `json:"wrapped,omitempty"`
	// TCPMasters are the options that ask a protocol's master the relay
	// does not hold, by protocol: a master spoken to over TCP while the
	// protocol's servers are asked over UDP, which speaks first with a
	// challenge (GameSpy v1's; codecs.MasterDescription.Transport). The
	// page says so instead of sending; the server keeps their lists.
	TCPMasters map[string]map[string]string `json:"tcpMasters,omitempty"`
}

type protocol struct{ Name, Title string }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q, err := server.ParseQuery(r.URL.RawQuery)
	if err != nil {
		h.Error(w, r, http.StatusBadRequest, "Bad query", err.Error())
		return
	}
	cfg := Config{Relay: h.RelayPath, Protocol: q["protocol"], Target: q["target"],
		DefaultProtocol: server.DefaultProtocol}
	for _, p := range server.Protocols() {
		if w := p.Description().Wrapped; len(w) > 0 {
			if cfg.Wrapped == nil {
				cfg.Wrapped = map[string]map[string]string{}
			}
			cfg.Wrapped[p.Name] = w
		}
		if d := p.Description(); d.Transport != codecs.TCP && d.Master != nil && d.Master.Transport == codecs.TCP && len(d.Master.Options) > 0 {
			if cfg.TCPMasters == nil {
				cfg.TCPMasters = map[string]map[string]string{}
			}
			cfg.TCPMasters[p.Name] = d.Master.Options
		}
	}
	for k, v := range q {
		if name, ok := strings.CutPrefix(k, "opt."); ok {
			if cfg.Options == nil {
				cfg.Options = map[string]string{}
			}
			cfg.Options[name] = v
		}
	}
	var ps []protocol
	for _, c := range codecs.Protocols() {
		ps = append(ps, protocol{c.Name(), c.Title()})
	}
	if _, err := codecs.Lookup(cfg.Protocol); err != nil {
		cfg.Protocol = ""
	}
	p := layout.Page{
		Head: layout.Head{
			Title:       "querylens · packet inspector",
			Description: "Build, send and dissect game-server query packets: hex dump, field tree, Huffman layer, pcapng export.",
			URL:         h.Base(r) + "/inspect",
		},
		Nav:    "inspect",
		Script: "inspect.js",
		WASM:   true,
		Config: cfg,
		Assets: h.Assets,
	}
	w.Header().Set("Cache-Control", "no-cache")
	layout.RenderPage(w, r, http.StatusOK, p, Page(p, cfg, ps))
}
