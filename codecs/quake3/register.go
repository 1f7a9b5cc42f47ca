package quake3

import (
	"errors"
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
)

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
	codecs.Register(&FiveMCodec{})
	codecs.Describe(fivemDescription)
}

// fivemDescription is FiveM's and RedM's (fivem.go): getinfo fills the
// name, map, game type and the counts (and the search text they make);
// the players and the rest are over HTTP, not queried, so the row has no
// player names to search, and no password or bot column.
var fivemDescription = codecs.Description{
	Name: ProtocolFiveM,
	// The Cfx.re client registers fivem:// (RedM's redm://); connect/
	// joins the server at the address after it.
	Join: "fivem://connect/{addr}",
	Row:  []string{"name", "map", "mode", "players", "max", "hay"},
}

// description is what the generic code knows of Quake III beyond its
// codec (codecs.Description).
var description = codecs.Description{
	Name: Protocol,
	// getstatus lists every client, one line each.
	AllPlayers: true,
	// ioquake3's own master (its sv_master2; sv_master1 is id's); other
	// games' masters take a game name and protocol number (MasterOptions).
	// The querylens server keeps the lists: one request brings a list in
	// as many datagrams as it needs.
	Master: &codecs.MasterDescription{Options: map[string]string{"master": "true"},
		Default: "master.ioquake3.org:27950", Port: 27950, Kept: true,
		Filter: MasterOptions, NewList: newMasterList},
}

// MasterOptions turns a Quake III master's filter, the arguments of its
// getservers request as a master's log shows them ("[GAME] PROTOCOL
// [FILTER…]", e.g. "Xonotic 3 empty full"; the word "ext" asks with
// getserversExt, which lists IPv6 servers too), into NewQuery's master
// options. An empty filter is Quake III 1.32's own query, "68 empty full".
func MasterOptions(filter string) (map[string]string, error) {
	words := strings.Fields(filter)
	opts := map[string]string{"master": "true"}
	if len(words) == 0 {
		return opts, nil
	}
	var filters []string
	for _, w := range words {
		if w == "ext" {
			opts["ext"] = "true"
			continue
		}
		filters = append(filters, w)
	}
	words = filters
	if len(words) > 0 {
		if _, err := strconv.ParseUint(words[0], 10, 16); err != nil {
			opts["game"] = words[0]
			words = words[1:]
		}
	}
	if len(words) == 0 {
		return nil, errors.New(Protocol + " master filter " + strconv.Quote(filter) + ": want [GAME] PROTOCOL [FILTER…], e.g. \"Xonotic 3 empty full\"")
	}
	if _, err := strconv.ParseUint(words[0], 10, 16); err != nil {
		return nil, errors.New(Protocol + " master filter " + strconv.Quote(filter) + ": the protocol number " + strconv.Quote(words[0]) + " is not a number")
	}
	opts["protocol"] = words[0]
	opts["filters"] = strings.Join(words[1:], " ")
	if _, err := (&Codec{}).NewQuery(opts); err != nil {
		return nil, errors.New(Protocol + " master filter " + strconv.Quote(filter) + ": " + err.Error())
	}
	return opts, nil
}

// masterList asks a master once: its list comes in as many datagrams as
// it needs, ending with EOT (or, from a master that sends no end marker,
// when the asker stops waiting).
type masterList struct {
	opts  map[string]string
	q     codecs.Query
	ended bool
}

func newMasterList(filter string) (codecs.MasterList, error) {
	opts, err := MasterOptions(filter)
	if err != nil {
		return nil, err
	}
	return &masterList{opts: opts}, nil
}

func (l *masterList) Next() codecs.Query {
	if l.ended {
		return nil
	}
	l.q, _ = (&Codec{}).NewQuery(l.opts) // checked by MasterOptions
	return l.q
}

func (l *masterList) Page(done bool) ([]string, bool, error) {
	if l.q == nil {
		return nil, false, nil
	}
	msg, err := l.q.Result(codecs.DecodeOptions{NoFields: true})
	var addrs []string
	if msg != nil {
		addrs = msg.Servers
	}
	if !done && len(addrs) == 0 {
		return nil, false, nil // nothing came: the same request again
	}
	l.ended = true
	switch {
	case done:
		return addrs, true, nil
	case err != nil:
		return addrs, false, errors.New("the list did not end: " + err.Error())
	}
	return addrs, false, nil
}
