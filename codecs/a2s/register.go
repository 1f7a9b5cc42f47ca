package a2s

import (
	"errors"
	"strconv"

	"github.com/querylens/querylens/codecs"
)

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
}

// description is what the generic code knows of A2S beyond its codec
// (codecs.Description).
var description = codecs.Description{
	Name: Protocol,
	// PLAYER lists everyone in the game (those still connecting are
	// counted, not listed).
	AllPlayers: true,
	// The Steam master (Valve Developer Community, "Master Server Query
	// Protocol"); its list is paged, each page a request of its own, and
	// the master answers a few a minute per address: the querylens server
	// keeps the lists. See docs/protocols/a2s.md.
	Master: &codecs.MasterDescription{Options: map[string]string{"master": "true"},
		Default: "hl2master.steampowered.com:27011", Port: 27011, Kept: true,
		Games: true, Pages: MaxMasterPages,
		Filter:  func(f string) (map[string]string, error) { return map[string]string{"filter": f}, nil },
		NewList: newMasterList},
	// The Steam client's own link: it starts the game the server runs.
	Join: "steam://connect/{addr}",
	// A row shows INFO and the player names (the search reads them);
	// RULES, up to 64 datagrams on a big server, is the status page's.
	// Steam's own browser asks its list the same way.
	List:      map[string]string{"rules": "false"},
	AntiCheat: "VAC",
	// Rules of a modded server run to tens of KiB, split over many
	// datagrams: the relay lets through as much as the codec reads.
	ReplyCap: codecs.ReplyCap{Bytes: MaxBytes, Datagrams: MaxDatagrams},
}

// masterList pages through a Steam master's list: each page asked with
// the last address of the one before (0.0.0.0:0 first), until a page
// ends with 0.0.0.0:0 or repeats a seed.
type masterList struct {
	req   MasterRequest
	seeds map[Addr]bool
	pages int
	q     *pageQuery
	ended bool
}

func newMasterList(filter string) (codecs.MasterList, error) {
	l := &masterList{req: MasterRequest{Region: RegionAll, Filter: filter}, seeds: map[Addr]bool{{}: true}}
	if _, err := AppendMasterRequest(nil, l.req); err != nil {
		return nil, errors.New("the filter cannot be sent: " + err.Error())
	}
	return l, nil
}

func (l *masterList) Next() codecs.Query {
	if l.ended {
		return nil
	}
	b, _ := AppendMasterRequest(nil, l.req) // checked by newMasterList
	l.q = &pageQuery{req: b}
	return l.q
}

func (l *masterList) Page(bool) ([]string, bool, error) {
	if l.q == nil || l.q.page == nil {
		return nil, false, nil // nothing came: the same page again
	}
	p := l.q.page
	l.q = nil
	l.pages++
	addrs := make([]string, len(p.Servers))
	for i, s := range p.Servers {
		addrs[i] = s.String()
	}
	if p.End || len(p.Servers) == 0 {
		l.ended = true
		return addrs, true, nil
	}
	last := p.Servers[len(p.Servers)-1]
	if l.seeds[last] {
		l.ended = true
		return addrs, false, errors.New("the master went back to an address it had listed; the list stops there")
	}
	l.seeds[last] = true
	l.req.Seed = last
	if l.pages >= MaxMasterPages {
		l.ended = true
		return addrs, false, errors.New("the list took more than " + strconv.Itoa(MaxMasterPages) + " pages")
	}
	return addrs, false, nil
}

// pageQuery is the conversation of one page: the request, and the first
// reply that decodes as a page.
type pageQuery struct {
	req  []byte
	page *MasterReplyPage
	raw  []byte // the page's datagram
}

func (q *pageQuery) Start() [][]byte { return [][]byte{q.req} }

func (q *pageQuery) Feed(b []byte) ([][]byte, bool, error) {
	if q.page != nil {
		return nil, true, nil
	}
	p, err := DecodeMasterReply(b)
	if err != nil {
		return nil, false, err
	}
	q.page, q.raw = &p, append([]byte(nil), b...)
	return nil, true, nil
}

// Result decodes the page, once it came.
func (q *pageQuery) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if q.raw == nil {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			newDetail("reply", 0, "", codecs.ErrIncomplete, "no page received")
	}
	return (&Codec{}).Decode([][]byte{q.raw}, opt)
}
