package unreal2_test

import (
	"fmt"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/unreal2"
)

// Build a server's replies, then read them as a client does: the rules
// and players first, the server info last, which closes the conversation.
func Example() {
	rules, _ := unreal2.AppendResponse(nil, unreal2.Response{Type: unreal2.TypeRules, Rules: []unreal2.Rule{
		{Key: unreal2.Text("ServerVersion"), Value: unreal2.Text("3369")},
		{Key: unreal2.Text("GamePassword"), Value: unreal2.Text("True")},
	}})
	players, _ := unreal2.AppendResponse(nil, unreal2.Response{Type: unreal2.TypePlayers, Players: []unreal2.Player{
		{ID: 3, Name: unreal2.Text("\x1b\xff\x10\x10Gumby"), Ping: 48, Score: 12},
	}})
	info, _ := unreal2.AppendResponse(nil, unreal2.Response{Type: unreal2.TypeInfo, Info: unreal2.ServerInfo{
		IP: unreal2.String{NoNUL: true}, GamePort: 7777, QueryPort: 7778,
		Name: unreal2.Text("Deck Party"), Map: unreal2.Text("DM-Rankin"), GameType: unreal2.Text("xDeathMatch"),
		NumPlayers: 1, MaxPlayers: 8, Dialect: unreal2.DialectUT2004, HasPing: true, HasFlags: true, Skill: unreal2.Text("3"),
	}})

	q, _ := (&unreal2.Codec{}).NewQuery(nil)
	for _, d := range q.Start() {
		fmt.Printf("% x\n", d)
	}
	for _, d := range [][]byte{rules, players, info} {
		_, done, _ := q.Feed(d)
		fmt.Println(done)
	}
	m, _ := q.Result(codecs.DecodeOptions{})
	fmt.Println(m.Info.Name, "on", m.Info.Map, m.Info.NumPlayers, "/", m.Info.MaxPlayers, "version", m.Info.Version, "password", m.Info.Password)
	p := m.Info.Players[0]
	fmt.Println(p.Name, p.Score, p.Ping)
	// Output:
	// 79 00 00 00 01
	// 79 00 00 00 02
	// 79 00 00 00 00
	// false
	// false
	// true
	// Deck Party on DM-Rankin 1 / 8 version 3369 password true
	// Gumby 12 48
}

// A UCS-2 string with a colour code: the text, and where the code stood.
func ExampleDecodeResponse() {
	b := []byte{0x80, 0, 0, 0, 1,
		0x83, 'a', 0, 'b', 0, 0, 0, // "ab", UCS-2, terminated
		0x06, 0x1b, 0xff, 0, 0, 'x', 0} // a red "x"
	r, _ := unreal2.DecodeResponse(b, nil)
	k, v := r.Rules[0].Key, r.Rules[0].Value
	fmt.Println(k.Value, k.UCS2, v.Value, v.Colours)
	// Output: ab true x [{0 255 0 0}]
}
