package status

import (
	"html"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/server"
)

// view is a Report made ready for the templates: display strings computed
// once, in Go, so that the templates only lay them out.
type view struct {
	server.Report
	Protocol    codecs.Codec
	Target      string // host:port, canonical
	Name        string // colour codes stripped; the target when the server gave none
	Description string // one line, for meta description and og:description
	Map         string
	GameType    string
	Version     string
	Country     string
	Password    bool
	HasPassword bool
	Players     []player
	Counts      string // "12 / 16" or ""
	Bots        int
	Spectators  int
	Teams       []team
	Rules       [][2]string
	Mods        []string      // PWADs and other add-ons the server loads
	Extra       codecs.Object // every other decoded field
	Favicon     string        // the server's icon, a data:image/png URI checked by favicon, or ""
	JoinURL     string        // a URL scheme that starts the game, or ""
	PageURL     string        // absolute
	BadgeURL    string        // absolute
	BadgePath   string        // the badge from this site, for the page's own preview
	CardURL     string        // absolute, the PNG preview
	EmbedURL    string        // absolute, the widget for an iframe
	ShieldsURL  string        // absolute, shields.io's endpoint badge of shields.json
	APIURL      string        // absolute, the JSON API's view of this server
	ProbeURL    string        // absolute, the Prometheus probe of this server
	HistoryURL  string        // relative, history.json
	FragmentURL string        // relative, history.html (the live refresh)
	// HistoryScript is static/history.js, which refreshes the charts.
	HistoryScript string
	History       *history.Summary // nil without a history store
	InspectURL    string           // relative, carries the packets in the fragment
	Watched       *watched         // nil when no alert watches the server
}

// embedSnippet is the HTML that puts the live card of v's server in another
// page, sized for the card.
func embedSnippet(v view) string {
	return `<iframe src="` + html.EscapeString(v.EmbedURL) + `" width="320" height="110" style="border:0" loading="lazy" title="` +
		html.EscapeString(v.Name) + `"></iframe>`
}

type player struct {
	Name      string
	Score     int
	Ping      int
	Team      string // team name, or "" when on no team
	TeamIndex int    // -1 when on no team
	Spectator bool
	Bot       bool
}

type team struct {
	Name    string
	Score   int
	Players int
}

func newView(rep server.Report, base string) view {
	v := view{Report: rep, Protocol: rep.Codec, Target: rep.Ref.Addr, Name: rep.Ref.Addr}
	path := rep.Ref.PathBase()
	q := server.QueryString(rep.Ref.Options)
	v.PageURL = base + path + q
	v.BadgePath = path + "/badge.svg" + q
	v.BadgeURL = base + v.BadgePath
	v.CardURL = base + path + "/card.png" + q
	v.EmbedURL = base + path + "/embed" + q
	v.ShieldsURL = "https://img.shields.io/endpoint?url=" + url.QueryEscape(base+path+"/shields.json"+q)
	v.APIURL = base + "/api/v1/servers/" + rep.Ref.Protocol + "/" + rep.Ref.Addr + q
	pq := url.Values{"protocol": {rep.Ref.Protocol}, "target": {rep.Ref.Addr}}
	for k, val := range rep.Ref.Options {
		pq.Set(k, val)
	}
	v.ProbeURL = base + "/probe?" + pq.Encode()
	v.HistoryURL = path + "/history.json" + q
	v.FragmentURL = path + "/history.html" + q
	v.InspectURL = inspectURL(rep)
	if p, ok := server.LookupProtocol(rep.Ref.Protocol); ok {
		v.JoinURL = p.JoinURL(rep.Ref.Addr)
	}
	if rep.Msg != nil && rep.Msg.Info != nil {
		fill(&v, rep.Msg)
	}
	v.Description = describe(v)
	return v
}

func fill(v *view, m *codecs.Message) {
	in := m.Info
	if in.Has&codecs.HasName != 0 && StripColors(in.Name) != "" {
		v.Name = StripColors(in.Name)
	}
	v.Map, v.GameType, v.Version = StripColors(in.Map), StripColors(in.GameType), in.Version
	v.Password, v.HasPassword = in.Password, in.Has&codecs.HasPassword != 0
	for _, t := range in.Teams {
		v.Teams = append(v.Teams, team{Name: StripColors(t.Name), Score: t.Score})
	}
	base := teamBase(in)
	// The protocol's team names by index, for team numbers without names.
	p, _ := server.LookupProtocol(v.Protocol.Name())
	teamNames := p.Teams()
	if in.Has&codecs.HasPlayers != 0 {
		v.Players = []player{} // an empty server shows "Nobody is playing"
	}
	for _, p := range in.Players {
		pl := player{Name: StripColors(p.Name), Score: p.Score, Ping: p.Ping, Spectator: p.Spectator, Bot: p.Bot, TeamIndex: -1}
		if p.HasTeam {
			t := p.Team - base
			pl.TeamIndex = t
			switch {
			case t >= 0 && t < len(v.Teams):
				pl.Team = v.Teams[t].Name
				v.Teams[t].Players++
			case t >= 0 && t < len(teamNames):
				pl.Team = teamNames[t]
			default:
				pl.Team = "team " + strconv.Itoa(p.Team)
			}
		}
		if p.Bot {
			v.Bots++
		}
		if p.Spectator {
			v.Spectators++
		}
		v.Players = append(v.Players, pl)
	}
	if in.Has&codecs.HasNumBots != 0 {
		v.Bots = server.CountsOf(in).Bots // the server's own count (A2S)
	}
	if in.Has&(codecs.HasNumPlayers|codecs.HasPlayers) != 0 {
		n := in.NumPlayers
		if in.Has&codecs.HasNumPlayers == 0 {
			n = len(in.Players)
		}
		v.Counts = strconv.Itoa(n)
		if max := server.MaxPlayers(in); max > 0 {
			v.Counts += " / " + strconv.Itoa(max)
		}
	}
	v.Rules = in.Rules
	covered := map[string]bool{"name": true, "map": true, "mapname": true, "players": true, "teams": true, "rules": true, "version": true}
	for _, kv := range m.Fields {
		switch kv.Key {
		case "country":
			if s, ok := kv.Value.(string); ok {
				v.Country = s
				continue
			}
		case "favicon":
			// Shown as the server's icon, never as text.
			v.Favicon = favicon(kv.Value)
			continue
		case "pwads", "mods", "addons":
			if mods := stringList(kv.Value); mods != nil {
				v.Mods = append(v.Mods, mods...)
				continue
			}
		}
		if covered[kv.Key] {
			continue
		}
		v.Extra = append(v.Extra, kv)
	}
}

// teamBase is 1 when the players' team numbers count from 1 (GameSpy v2
// numbers teams 1..n against its team list), else 0: every team number is
// then within 1..len(teams) and none is 0.
func teamBase(in *codecs.Info) int {
	if len(in.Teams) == 0 {
		return 0
	}
	seen := false
	for _, p := range in.Players {
		if !p.HasTeam {
			continue
		}
		if p.Team < 1 || p.Team > len(in.Teams) {
			return 0
		}
		seen = true
	}
	if seen {
		return 1
	}
	return 0
}

// pingText shows a round trip; loopback and LAN answers take under 1 ms.
func pingText(d time.Duration) string {
	if d < time.Millisecond {
		return "<1 ms"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
}

// stringList reads a list of names: strings, or objects with a "name".
func stringList(v any) []string {
	var out []string
	switch l := v.(type) {
	case []string:
		return append(out, l...)
	case []any:
		for _, x := range l {
			switch x := x.(type) {
			case string:
				out = append(out, x)
			case codecs.Object:
				if n, ok := x.Get("name"); ok {
					if s, ok := n.(string); ok {
						out = append(out, s)
					}
				}
			}
		}
	case []codecs.Object:
		for _, x := range l {
			if n, ok := x.Get("name"); ok {
				if s, ok := n.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// describe is the one-line summary chat apps show under the title.
func describe(v view) string {
	title := v.Protocol.Title()
	switch v.State {
	case server.Online:
		var parts []string
		if v.Map != "" {
			parts = append(parts, v.Map)
		}
		if v.Counts != "" {
			s := v.Counts + " players"
			if v.Bots > 0 {
				s += " (" + strconv.Itoa(v.Bots) + " bots)"
			}
			parts = append(parts, s)
		}
		if v.GameType != "" {
			parts = append(parts, v.GameType)
		}
		parts = append(parts, title+" server at "+v.Target)
		return strings.Join(parts, " · ")
	case server.Offline:
		return "Offline: no answer from the " + title + " server at " + v.Target + "."
	}
	return v.State.Label() + ": " + v.Target + " (" + title + "). " + v.Detail
}

// inspectURL opens the inspector on this server with the exact packets of
// this query, in the inspector's permalink form.
func inspectURL(rep server.Report) string {
	q := url.Values{"protocol": {rep.Ref.Protocol}, "target": {rep.Ref.Addr}}
	for k, v := range rep.Ref.Options {
		q.Set("opt."+k, v)
	}
	u := "/inspect?" + q.Encode()
	if len(rep.Received) == 0 {
		return u
	}
	var b []byte
	b = append(b, "#p="...)
	b = append(b, rep.Ref.Protocol...)
	b = append(b, "&t="...)
	b = append(b, url.QueryEscape(rep.Ref.Addr)...)
	if len(rep.Sent) > 0 {
		b = append(b, "&q="...)
		b = codecs.AppendHex(b, rep.Sent[len(rep.Sent)-1])
	}
	b = append(b, "&h="...)
	for i, d := range rep.Received {
		if i > 0 {
			b = append(b, ',')
		}
		b = codecs.AppendHex(b, d)
	}
	return u + string(b)
}

// StripColors is codecs.StripColors: the page, its badge and the browser's
// server list show names the same way.
func StripColors(s string) string { return codecs.StripColors(s) }

// fieldText shows a scalar field value as text.
func fieldText(v any) string {
	switch v := v.(type) {
	case nil:
		return "—"
	case string:
		return StripColors(v)
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case codecs.Hex:
		return string(codecs.AppendHex(nil, v))
	}
	b := codecs.AppendJSON(nil, v)
	return string(b)
}

// isScalar reports whether a field value is shown inline.
func isScalar(v any) bool {
	switch v.(type) {
	case codecs.Object, []codecs.Object, []any, []string, []int:
		return false
	}
	return true
}

// children lists a composite field's entries as key/value pairs, with list
// indexes as keys.
func children(v any) codecs.Object {
	switch v := v.(type) {
	case codecs.Object:
		return v
	case []codecs.Object:
		return indexed(v)
	case []any:
		return indexed(v)
	case []string:
		return indexed(v)
	case []int:
		return indexed(v)
	}
	return nil
}

func indexed[T any](list []T) codecs.Object {
	o := make(codecs.Object, len(list))
	for i, x := range list {
		o[i] = codecs.KV{Key: strconv.Itoa(i), Value: x}
	}
	return o
}

func humanKey(k string) string { return strings.ReplaceAll(k, "_", " ") }
