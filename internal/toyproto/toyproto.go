// Package toyproto is a made-up protocol that proves adding a protocol
// touches nothing outside its package: tests register it (Register) and
// find it in every part of querylens, and a browser module built for it
// alone (scripts/build-wasm.sh --family; its import is package module)
// decodes it on the browse page. No command links it: it is not in
// codecs/all.
//
// The query is "TOYQ", the reply "TOYR" and a server name; a master's query
// is "TOYM", its list "TOYL" and addresses separated by white space. It is
// added the way the checklist in codecs/doc.go says: a codec, its
// description (a master list it keeps, a reply cap, a join link, its own
// row fields) and a demo server (Server).
package toyproto

import (
	"bytes"
	"net/netip"
	"strings"
	"time"

	"github.com/querylens/querylens/codecs"
)

// Protocol is the toy's registered name.
const Protocol = "toy"

// ServerName is the name a toy Server answers with.
const ServerName = "Toy Box"

// MasterListed is the one address a toy master lists.
const MasterListed = "127.0.0.1:27998"

// Cap is the toy's reply cap, which the relay reads.
var Cap = codecs.ReplyCap{Bytes: 1234, Datagrams: 3}

// Register registers the codec and its description. Call it once, before
// anything reads the registry.
func Register() {
	codecs.Register(Codec{})
	codecs.Describe(codecs.Description{Name: Protocol, Ports: []int{27999, 27998}, Join: "toy://{addr}",
		Row: []string{"name", "players", "max", "hay"}, ReplyCap: Cap, MinAskMs: 1500,
		Master: &codecs.MasterDescription{Options: map[string]string{"master": "true"}, Port: 27997, Kept: true,
			NewList: func(filter string) (codecs.MasterList, error) { return &masterList{}, nil }}})
}

// Codec is the toy's codecs.Codec.
type Codec struct{}

func (Codec) Name() string     { return Protocol }
func (Codec) Title() string    { return "Toy Protocol" }
func (Codec) DefaultPort() int { return 27999 }
func (Codec) Options() []codecs.Option {
	return []codecs.Option{{Name: "master", Kind: codecs.OptionBool, Default: "false", Help: "ask a toy master for its list"}}
}

func (Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	switch {
	case string(b) == "TOYQ", string(b) == "TOYM":
		return codecs.KindQuery, codecs.Certain
	case bytes.HasPrefix(b, []byte("TOYR")):
		return codecs.KindResponse, codecs.Certain
	}
	return "", codecs.NotMine
}

func (Codec) CheckQuery(b []byte) error {
	if string(b) != "TOYQ" && string(b) != "TOYM" {
		return codecs.NewError(Protocol, "magic", 0, codecs.ErrNotQuery)
	}
	return nil
}

func (Codec) Decode(dgs [][]byte, _ codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol}
	if len(dgs) > 0 && bytes.HasPrefix(dgs[0], []byte("TOYL")) {
		m.Kind = codecs.KindMasterList
		m.Servers = strings.Fields(string(dgs[0][4:]))
		return m, nil
	}
	if len(dgs) == 0 || !bytes.HasPrefix(dgs[0], []byte("TOYR")) {
		return m, codecs.NewError(Protocol, "magic", 0, codecs.ErrBadMagic)
	}
	m.Kind = codecs.KindResponse
	m.Info = &codecs.Info{Has: codecs.HasName | codecs.HasNumPlayers | codecs.HasMaxPlayers, Name: string(dgs[0][4:]), NumPlayers: 2, MaxPlayers: 8}
	return m, nil
}

func (c Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(Protocol, c.Options(), opts)
	q := &query{master: r.Bool("master")}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return q, nil
}

type query struct {
	master bool
	got    [][]byte
}

func (q *query) Start() [][]byte {
	if q.master {
		return [][]byte{[]byte("TOYM")}
	}
	return [][]byte{[]byte("TOYQ")}
}

func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if !bytes.HasPrefix(b, []byte("TOYR")) && !bytes.HasPrefix(b, []byte("TOYL")) {
		return nil, false, codecs.NewError(Protocol, "magic", 0, codecs.ErrBadMagic)
	}
	q.got = append(q.got, b)
	return nil, true, nil
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	return Codec{}.Decode(q.got, opt)
}

// masterList is the toy master's conversation: one request, one list.
type masterList struct {
	q     *query
	ended bool
}

func (l *masterList) Next() codecs.Query {
	if l.ended {
		return nil
	}
	l.q = &query{master: true}
	return l.q
}

func (l *masterList) Page(done bool) ([]string, bool, error) {
	if !done {
		return nil, false, nil
	}
	l.ended = true
	m, err := l.q.Result(codecs.DecodeOptions{})
	return m.Servers, true, err
}

// Server is an emulated toy server (a demo.Handler), which is also a toy
// master listing MasterListed.
type Server struct{}

func (Server) Respond(q []byte, _ netip.AddrPort, _ time.Time) [][]byte {
	switch string(q) {
	case "TOYQ":
		return [][]byte{[]byte("TOYR" + ServerName)}
	case "TOYM":
		return [][]byte{[]byte("TOYL" + MasterListed)}
	}
	return nil
}
