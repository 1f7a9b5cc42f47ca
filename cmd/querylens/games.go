package main

import (
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/server/games"
)

// games prints the game table (package games): every game GameDig knows,
// by its id, with the protocol that answers it, its query port and
// whether this binary serves it, or why not.
func (e *env) games(args []string) int {
	fs := newFlagSet(e, "games", "[--json] [--pretty] [--served | --not-served] [ID...]")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	pretty := fs.Bool("pretty", false, "with --json, indent the JSON")
	served := fs.Bool("served", false, "only the games this binary serves")
	notServed := fs.Bool("not-served", false, "only the games this binary does not serve")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if *served && *notServed {
		return e.usageErr(fs, "--served and --not-served exclude each other")
	}
	list := games.All()
	if len(pos) > 0 {
		list = nil
		for _, id := range pos {
			g, ok := games.Lookup(id)
			if !ok {
				return e.usageErr(fs, "unknown game "+strconv.Quote(id)+" (querylens games lists them)")
			}
			list = append(list, g)
		}
	}
	list = slices.DeleteFunc(slices.Clone(list), func(g games.Game) bool {
		return (*served && !g.Served()) || (*notServed && g.Served())
	})
	n, all := games.Counts()
	if *asJSON {
		out := []codecs.Object{}
		for _, g := range list {
			o := codecs.Object{}.Add("id", g.ID)
			if len(g.OldIDs) > 0 {
				o = o.Add("old_ids", g.OldIDs)
			}
			o = o.Add("name", g.Name).Add("gamedig", g.GameDig).Add("protocol", g.Protocol)
			if len(g.Options) > 0 {
				var kv codecs.Object
				for _, k := range slices.Sorted(maps.Keys(g.Options)) {
					kv = kv.Add(k, g.Options[k])
				}
				o = o.Add("options", kv)
			}
			if g.Port != 0 {
				o = o.Add("port", g.Port)
			}
			if p := g.DefaultQueryPort(); p != 0 {
				o = o.Add("query_port", p)
			}
			if len(g.Offsets) > 0 {
				o = o.Add("query_port_offsets", g.Offsets)
			}
			if g.Master != "" {
				o = o.Add("master", g.Master)
				if g.MasterAddr != "" {
					o = o.Add("master_addr", g.MasterAddr)
				}
				o = o.Add("filter", g.Filter)
			}
			o = o.Add("served", g.Served())
			if w := g.WhyNot(); w != "" {
				o = o.Add("why_not", w)
			}
			if g.Note != "" {
				o = o.Add("note", g.Note)
			}
			out = append(out, o)
		}
		e.writeJSON(codecs.Object{}.Add("gamedig", games.GameDigVersion).Add("served", n).Add("games_known", all).Add("games", out), *pretty)
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 8, 2, ' ', 0)
	io.WriteString(tw, "ID\tNAME\tPROTOCOL\tQUERY PORT\tSERVED\n")
	for _, g := range list {
		proto := g.Protocol
		if proto == "" {
			proto = "-"
		}
		for _, k := range slices.Sorted(maps.Keys(g.Options)) {
			proto += " " + k + "=" + g.Options[k]
		}
		port := g.QueryPortText()
		if port == "" {
			port = "-"
		}
		status := "yes"
		if !g.Served() {
			status = "no: " + g.WhyNot()
		} else if g.Note != "" {
			status = "yes (" + g.Note + ")"
		}
		io.WriteString(tw, g.ID+"\t"+g.Name+"\t"+proto+"\t"+port+"\t"+status+"\n")
	}
	tw.Flush()
	io.WriteString(e.stdout, strconv.Itoa(n)+" of the "+strconv.Itoa(all)+" games of GameDig "+games.GameDigVersion+" served (docs/games.md)\n")
	return exitOK
}

// gameTarget is where -g GAME asks for target, HOST or HOST:PORT: the
// game's query port for a bare host, else the query port of the game port
// given (package games, Game.QueryPortFor); moved says the port is not
// the one given.
func gameTarget(g games.Game, target string) (addr string, moved bool, err error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		// A bare host (an IPv6 one with or without brackets).
		host = strings.TrimSuffix(strings.TrimPrefix(target, "["), "]")
		if host == "" || strings.ContainsAny(host, "[]") || (strings.Contains(host, ":") && net.ParseIP(host) == nil) {
			return "", false, errBadTarget
		}
		p := g.DefaultQueryPort()
		if p == 0 {
			return "", false, errNoPort
		}
		return net.JoinHostPort(host, strconv.Itoa(p)), true, nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n <= 0 || n > 65535 || host == "" {
		return "", false, errBadTarget
	}
	q := g.QueryPortFor(n)
	if q <= 0 || q > 65535 {
		return "", false, errBadTarget
	}
	return net.JoinHostPort(host, strconv.Itoa(q)), q != n, nil
}

// bareSRV says target is a bare name of a protocol whose servers an SRV
// record may name (Minecraft's): it is looked up there before the
// protocol's default port, so -g leaves it bare.
func bareSRV(d codecs.Description, target string) bool {
	_, _, err := net.SplitHostPort(target)
	return err != nil && d.SRV != "" && net.ParseIP(strings.Trim(target, "[]")) == nil
}

type targetError string

func (e targetError) Error() string { return string(e) }

const (
	errBadTarget = targetError("want HOST or HOST:PORT")
	errNoPort    = targetError("GameDig gives no port for the game: give HOST:PORT")
)
