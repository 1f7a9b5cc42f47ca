package a2s_test

import (
	"fmt"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
)

// The three queries, as a client sends them before it knows a challenge:
// INFO without one, PLAYER and RULES asking for one with FF FF FF FF.
func ExampleAppendRequest() {
	for _, t := range []a2s.Type{a2s.TypeInfoRequest, a2s.TypePlayerRequest, a2s.TypeRulesRequest} {
		b, _ := a2s.AppendRequest(nil, a2s.Request{Type: t})
		fmt.Printf("%q\n", b)
	}
	// Output:
	// "\xff\xff\xff\xffTSource Engine Query\x00"
	// "\xff\xff\xff\xffU\xff\xff\xff\xff"
	// "\xff\xff\xff\xffV\xff\xff\xff\xff"
}

// A Source info reply with extra data: the keywords follow the flag byte.
func ExampleDecodeResponse() {
	b, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfo, Info: &a2s.Info{
		Name: "My Server", Map: "cp_dustbowl", Folder: "tf", Game: "Team Fortress", AppID: 440,
		Players: 5, MaxPlayers: 24, Bots: 1, ServerType: 'd', Environment: 'l', VAC: 1, Version: "1.0",
		HasEDF: true, EDF: a2s.EDFKeywords, Keywords: "cp,nocrits",
	}})
	a, err := a2s.DecodeResponse(b, nil)
	if err != nil {
		panic(err)
	}
	in := a.Info
	fmt.Println(a.Type, in.Name, in.Map, in.Players, in.MaxPlayers, in.Bots, in.Keywords)
	// Output:
	// info reply (Source) My Server cp_dustbowl 5 24 1 cp,nocrits
}

// A large reply comes in parts, in any order; duplicates are ignored.
func ExampleReassemble() {
	rules := &a2s.Rules{}
	for i := 0; i < 100; i++ {
		rules.Rules = append(rules.Rules, a2s.Rule{Name: "sv_var", Value: "some value"})
	}
	rules.Count = uint16(len(rules.Rules))
	msg, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeRules, Rules: rules})
	parts, _ := a2s.SplitResponse(msg, 1, a2s.SplitSource, 1248)
	fmt.Println(len(parts), "parts")

	whole, _ := a2s.Reassemble(nil, [][]byte{parts[1], parts[0], parts[1]})
	a, _ := a2s.DecodeResponse(whole, nil)
	fmt.Println(len(a.Rules.Rules), "rules")
	// Output:
	// 2 parts
	// 100 rules
}

// The registered codec runs the conversation: INFO, then PLAYER, which the
// server answers with a challenge first.
func ExampleCodec() {
	c, _ := codecs.Lookup("a2s")
	q, _ := c.NewQuery(map[string]string{"rules": "false"})
	fmt.Printf("send %q\n", q.Start()[0])

	info, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfo, Info: &a2s.Info{
		Name: "My Server", Map: "de_dust2", Game: "Counter-Strike", Players: 1, MaxPlayers: 10}})
	send, _, _ := q.Feed(info)
	fmt.Printf("send %q\n", send[0])

	challenge, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeChallenge, Challenge: 0x01020304})
	send, _, _ = q.Feed(challenge)
	fmt.Printf("send %q\n", send[0])

	players, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypePlayers, Players: &a2s.Players{
		Count: 1, Players: []a2s.Player{{Name: "alice", Score: 7, Duration: 60}}}})
	_, done, _ := q.Feed(players)
	m, _ := q.Result(codecs.DecodeOptions{})
	fmt.Println(done, m.Info.Name, m.Info.Map, m.Info.NumPlayers, m.Info.MaxPlayers, m.Info.Players[0].Name)
	// Output:
	// send "\xff\xff\xff\xffTSource Engine Query\x00"
	// send "\xff\xff\xff\xffU\xff\xff\xff\xff"
	// send "\xff\xff\xff\xffU\x04\x03\x02\x01"
	// true My Server de_dust2 1 10 alice
}

// A Steam master's list comes in pages; each query is seeded with the last
// address of the page before, until the list ends with 0.0.0.0:0.
func ExampleMasterPage() {
	list := []a2s.Addr{{IP: [4]byte{127, 0, 0, 1}, Port: 27015}, {IP: [4]byte{127, 0, 0, 2}, Port: 27015}}
	q, _ := a2s.AppendMasterRequest(nil, a2s.MasterRequest{Region: a2s.RegionAll, Filter: `\appid\440`})
	fmt.Printf("%q\n", q)
	page, _ := a2s.DecodeMasterReply(a2s.MasterPage(nil, list, a2s.Addr{}))
	fmt.Println(page.Servers, page.End)
	// Output:
	// "1\xff0.0.0.0:0\x00\\appid\\440\x00"
	// [127.0.0.1:27015 127.0.0.2:27015] true
}
