package zandronum

import (
	"errors"

	"github.com/querylens/querylens/codecs"
)

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
}

// description is what the generic code knows of Zandronum beyond its
// codec (codecs.Description).
var description = codecs.Description{
	Name: Protocol,
	// SQF_PLAYERDATA lists every client.
	AllPlayers: true,
	// The server keeps the list (package masters): one request, a list
	// in a few packets, and the master answers an address once per 10 s
	// (docs/protocols/zandronum.md 3.3), so one list serves every visitor.
	Master: &codecs.MasterDescription{Options: map[string]string{"master": "true"},
		Default: "master.zandronum.com:15300", Port: DefaultMasterPort, Kept: true,
		NewList: newMasterList},
	// Doomseeker registers zds:// and reads the game from the suffix.
	Join: "zds://{addr}/za",
	// A server answers one address once per 10 s and ignores it in
	// between (sv_queryignoretime; docs/protocols/zandronum.md).
	MinAskMs: 10_000,
	// Every datagram is its payload Huffman-coded (package huffman).
	Wrapped: map[string]string{"payload": "huffman"},
	// Team numbers without a team list name the defaults (spec 2.6).
	Teams: []string{"Blue", "Red", "Green", "Gold"},
}

// masterList is the codecs.MasterList of a Zandronum master: one request,
// whose answer is the whole list in numbered packets. The master takes no
// filter.
type masterList struct {
	q     *query
	ended bool
}

func newMasterList(filter string) (codecs.MasterList, error) {
	if filter != "" {
		return nil, errors.New(Protocol + " masters take no filter")
	}
	return &masterList{}, nil
}

func (l *masterList) Next() codecs.Query {
	if l.ended {
		return nil
	}
	l.q = &query{master: true}
	return l.q
}

// Page reads the list once its packets came: a refusal (asked too soon,
// banned, wrong version) is an error that names it; nothing at all asks
// again; some packets but not all end the list short.
func (l *masterList) Page(done bool) ([]string, bool, error) {
	if l.q == nil || !done && len(l.q.parts) == 0 {
		return nil, false, nil // nothing came: the same request again
	}
	l.ended = true
	msg, err := l.q.Result(codecs.DecodeOptions{NoFields: true})
	var addrs []string
	if msg != nil {
		if msg.Kind == codecs.KindMasterDenied {
			return nil, false, errors.New("the master refused the request: " + msg.Denied)
		}
		addrs = msg.Servers
	}
	switch {
	case err != nil && done:
		return addrs, false, err
	case !done:
		return addrs, false, errors.New("the list did not end: packets are missing")
	}
	return addrs, true, nil
}
