// Package fakeserver is a made-up query protocol ("webtest") and an
// in-memory Exchanger that plays servers of it, so the page handlers can be
// tested for every server state without sockets or real protocols.
//
// A query is "Q". A reply is "R" followed by name|map|players|max|player,…
// (text); "D" is a rate-limit refusal, "B" a ban; anything else is
// malformed. Detect knows "Q", "R", "D" and "B".
package fakeserver

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
)

// Protocol is the codec's name.
const Protocol = "webtest"

var once sync.Once

// Register adds the codec to the registry (once per process). Its
// replies list every player (codecs.Description.AllPlayers): a watch of
// joins and leaves may name it.
func Register() {
	once.Do(func() {
		codecs.Register(Codec{})
		codecs.Describe(codecs.Description{Name: Protocol, AllPlayers: true})
	})
}

// Codec implements codecs.Codec for the made-up protocol.
type Codec struct{}

func (Codec) Name() string             { return Protocol }
func (Codec) Title() string            { return "Web Test" }
func (Codec) DefaultPort() int         { return 7777 }
func (Codec) Options() []codecs.Option { return nil }

func (Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) == 0 {
		return "", codecs.NotMine
	}
	switch b[0] {
	case 'Q':
		return codecs.KindQuery, codecs.Certain
	case 'R':
		return codecs.KindResponse, codecs.Likely
	case 'D', 'B':
		return codecs.KindDenied, codecs.Likely
	}
	return "", codecs.NotMine
}

func (Codec) CheckQuery(b []byte) error {
	if !bytes.Equal(b, []byte("Q")) {
		return codecs.NewError(Protocol, "magic", 0, codecs.ErrNotQuery)
	}
	return nil
}

func (Codec) Decode(dgs [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	b := dgs[0]
	m := &codecs.Message{Protocol: Protocol}
	if opt.Spans {
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
	}
	if len(b) == 0 {
		return m, codecs.NewError(Protocol, "magic", 0, codecs.ErrShort)
	}
	switch b[0] {
	case 'Q':
		m.Kind = codecs.KindQuery
		return m, nil
	case 'D':
		m.Kind, m.Denied = codecs.KindDenied, codecs.DeniedRateLimited
		return m, nil
	case 'B':
		m.Kind, m.Denied = codecs.KindDenied, codecs.DeniedBanned
		return m, nil
	case 'R':
	default:
		return m, codecs.NewError(Protocol, "magic", 0, codecs.ErrBadMagic)
	}
	m.Kind = codecs.KindResponse
	in := &codecs.Info{}
	m.Info = in
	parts := strings.Split(string(b[1:]), "|")
	if len(parts) < 4 {
		in.Has = codecs.HasName
		in.Name = parts[0]
		return m, codecs.NewError(Protocol, "map", len(b), codecs.ErrShort)
	}
	in.Has = codecs.HasName | codecs.HasMap | codecs.HasNumPlayers | codecs.HasMaxPlayers | codecs.HasPlayers | codecs.HasRules | codecs.HasGameType
	in.Name, in.Map, in.GameType = parts[0], parts[1], "Capture the Flag"
	in.NumPlayers, _ = strconv.Atoi(parts[2])
	in.MaxPlayers, _ = strconv.Atoi(parts[3])
	in.Players = []codecs.Player{}
	if len(parts) > 4 && parts[4] != "" {
		for i, name := range strings.Split(parts[4], ",") {
			p := codecs.Player{Name: name, Score: 10 * i, Ping: 20 + i, Team: i % 2, HasTeam: true}
			if strings.HasPrefix(name, "bot:") {
				p.Name, p.Bot = strings.TrimPrefix(name, "bot:"), true
			}
			in.Players = append(in.Players, p)
		}
	}
	in.Rules = [][2]string{{"fraglimit", "20"}}
	m.Fields = codecs.Object{{Key: "name", Value: in.Name}, {Key: "country", Value: "NLD"},
		{Key: "pwads", Value: []string{"ctf-map.wad"}}, {Key: "limits", Value: codecs.Object{{Key: "timelimit", Value: 15}}}}
	return m, nil
}

func (Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	if len(opts) > 0 {
		return nil, codecs.NewError(Protocol, "options", 0, codecs.ErrUnknown)
	}
	return &query{}, nil
}

type query struct{ got [][]byte }

func (q *query) Start() [][]byte { return [][]byte{[]byte("Q")} }

func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	q.got = append(q.got, b)
	return nil, true, nil
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if len(q.got) == 0 {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}, codecs.NewError(Protocol, "reply", 0, codecs.ErrIncomplete)
	}
	return Codec{}.Decode(q.got[:1], opt)
}

// Exchanger answers by target: each entry is the reply datagram, or nil
// for a server that stays silent until the context ends. Targets in Refuse
// get a relay refusal with that code.
type Exchanger struct {
	Replies map[string][]byte
	Refuse  map[string]wire.Code
	mu      sync.Mutex
	Calls   int
}

// CallCount is how many exchanges were asked so far.
func (e *Exchanger) CallCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.Calls
}

func (e *Exchanger) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	e.mu.Lock()
	e.Calls++
	e.mu.Unlock()
	if code, ok := e.Refuse[target]; ok {
		return netquery.Result{}, &wire.RefusedError{ID: 1, Code: code, Message: "test: " + code.String()}
	}
	q.Start()
	reply, ok := e.Replies[target]
	if !ok || reply == nil {
		<-ctx.Done()
		return netquery.Result{Sent: 1}, nil
	}
	_, done, err := q.Feed(reply)
	if err != nil {
		return netquery.Result{Sent: 1}, errors.New("feed: " + err.Error())
	}
	return netquery.Result{RTT: 12 * time.Millisecond, Sent: 1, Received: 1, Done: done}, nil
}

// APIFixture is the fake servers the JSON API's tests ask (web/api and
// web/api/openapitest), by target: one online with players, one silent,
// one rate-limiting, one banning, one whose reply does not decode, and two
// the relay refuses (denied, rate-limited).
func APIFixture() *Exchanger {
	return &Exchanger{
		Replies: map[string][]byte{
			"10.0.0.1:7777": []byte("R\x1cdCTF \x1cgNight|MAP01|3|8|alice,\x1cabob,bot:crash"),
			"10.0.0.2:7777": nil, // silent
			"10.0.0.3:7777": []byte("D"),
			"10.0.0.4:7777": []byte("B"),
			"10.0.0.5:7777": []byte("Rhalf a reply"),
		},
		Refuse: map[string]wire.Code{"10.0.0.7:7777": wire.CodeDenied, "10.0.0.8:7777": wire.CodeRateLimited},
	}
}
