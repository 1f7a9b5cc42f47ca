package server

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"time"
)

// MasterSpec is one configured master server, as --master spells it:
// PROTOCOL=HOST:PORT[?filter=…] (a bare HOST:PORT is a DefaultProtocol
// master).
//
// Kept says who asks it: the querylens server keeps the list of a master
// whose protocol's table entry says so (Master.Kept: Steam's and Quake
// III's masters, which answer a few requests a minute per address and list
// in many pages), and the page loads it from GET /api/v1/masters/…; the
// page asks any other master (Zandronum's, QZandronum's) through the relay
// itself.
type MasterSpec struct {
	Protocol string `json:"protocol"`
	Addr     string `json:"addr"`             // host:port as configured
	Filter   string `json:"filter,omitempty"` // the protocol's master filter (Steam: \appid\440…; Quake III: game and protocol options)
	Label    string `json:"label,omitempty"`  // a short name for people ("QZandronum"), shown in the row's "listed by"
	Kept     bool   `json:"kept"`
}

// ParseMasterSpec reads PROTOCOL=HOST:PORT[?filter=…&label=…]; a bare
// HOST:PORT[?…] is a DefaultProtocol master. The protocol must be registered and
// have a master; Kept comes from its table entry.
func ParseMasterSpec(s string) (MasterSpec, error) {
	var m MasterSpec
	rest := s
	if i := strings.IndexByte(s, '='); i >= 0 && !strings.ContainsAny(s[:i], ":?[") {
		m.Protocol, rest = s[:i], s[i+1:]
	} else {
		m.Protocol = DefaultProtocol
	}
	addr, query, _ := strings.Cut(rest, "?")
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return m, errors.New("master " + quoteArg(s) + ": want PROTOCOL=HOST:PORT[?filter=…], e.g. a2s=hl2master.steampowered.com:27011?filter=\\appid\\440")
	}
	m.Addr = addr
	if query != "" {
		v, err := url.ParseQuery(query)
		if err != nil {
			return m, errors.New("master " + quoteArg(s) + ": " + err.Error())
		}
		for k, vs := range v {
			if len(vs) != 1 {
				return m, errors.New("master " + quoteArg(s) + ": " + k + " given more than once")
			}
			switch k {
			case "filter":
				m.Filter = vs[0]
			case "label":
				m.Label = vs[0]
			default:
				return m, errors.New("master " + quoteArg(s) + ": unknown parameter " + quoteArg(k) + " (want filter or label)")
			}
		}
	}
	p, ok := LookupProtocol(m.Protocol)
	if !ok {
		return m, errors.New("master " + quoteArg(s) + ": querylens does not speak " + quoteArg(m.Protocol))
	}
	if p.Master == nil {
		return m, errors.New("master " + quoteArg(s) + ": " + m.Protocol + " has no master querylens can ask")
	}
	m.Kept = p.Master.Kept
	return m, nil
}

// String is the spec as --master takes it.
func (m MasterSpec) String() string {
	s := m.Protocol + "=" + m.Addr
	v := url.Values{}
	if m.Filter != "" {
		v.Set("filter", m.Filter)
	}
	if m.Label != "" {
		v.Set("label", m.Label)
	}
	if len(v) > 0 {
		s += "?" + v.Encode()
	}
	return s
}

// MasterList is a master's list as the server keeps it, the body of
// GET /api/v1/masters/{protocol}/{host:port}?filter=…: listing never asks a
// game server; each entry's state is the last one known from the relay's
// cache or the history (State 0, "unknown", when neither knows it).
type MasterList struct {
	Master   MasterSpec `json:"master"`
	Fetched  time.Time  `json:"fetched"`          // when the last complete or partial list arrived; zero before the first
	Complete bool       `json:"complete"`         // the master said the list ended (Steam: 0.0.0.0:0; Quake III: EOT)
	Pages    int        `json:"pages"`            // datagrams (or Web API pages) the list took
	Error    string     `json:"error,omitempty"`  // why the last fetch failed or stopped early
	Next     time.Time  `json:"next,omitzero"`    // the earliest next refresh; absent when none is planned
	Total    int        `json:"total"`            // servers in the list
	Offset   int        `json:"offset,omitempty"` // the list's servers before Servers, left out (?after=N)
	Servers  []Summary  `json:"servers"`
}

func quoteArg(s string) string { return "\"" + s + "\"" }
