package gamespy3_test

import (
	"encoding/hex"
	"os"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy3"
)

func ExampleAppendRequest() {
	b, _ := gamespy3.AppendRequest(nil, gamespy3.Request{Type: gamespy3.TypeChallenge, Session: 1})
	os.Stdout.WriteString(hex.EncodeToString(b) + "\n")
	b, _ = gamespy3.AppendRequest(nil, gamespy3.Request{Type: gamespy3.TypeStat, Session: 1, HasChallenge: true, Challenge: 9513307})
	os.Stdout.WriteString(hex.EncodeToString(b) + "\n")
	// Output:
	// fefd0900000001
	// fefd00000000010091295bffffff01
}

// A reply in two packets that arrived out of order, the player names
// continued from packet 0 into packet 1.
func ExampleReassemble() {
	p1 := gamespy3.Response{Type: gamespy3.TypeStat, Split: true, Number: 1, Last: true, Sections: []gamespy3.Section{
		{Marker: gamespy3.SectionPlayers, Fields: []gamespy3.Field{{Name: "player_", Offset: 1, Values: []string{"Bob"}}}},
	}}
	p0 := gamespy3.Response{Type: gamespy3.TypeStat, Split: true, Number: 0, HasRules: true,
		Rules: []gamespy3.Rule{{Key: "hostname", Value: "Deck"}},
		Sections: []gamespy3.Section{
			{Marker: gamespy3.SectionPlayers, Fields: []gamespy3.Field{{Name: "player_", Values: []string{"Alice"}}}},
		}}
	var packets []gamespy3.Response
	for _, p := range []gamespy3.Response{p1, p0} {
		b, _ := gamespy3.AppendResponse(nil, p) // what the server sends
		r, _ := gamespy3.DecodeResponse(b, nil)
		packets = append(packets, r)
	}
	reply, _, err := gamespy3.Reassemble(packets)
	if err != nil {
		panic(err)
	}
	name, _ := reply.Rule("hostname")
	os.Stdout.WriteString(name + ": " + strconv.Itoa(len(reply.Players.Rows)) + " players, " +
		reply.Players.Rows[0][0] + " and " + reply.Players.Rows[1][0] + "\n")
	// Output: Deck: 2 players, Alice and Bob
}

func ExampleCodec() {
	c, _ := codecs.Lookup("gamespy3")
	q, _ := c.NewQuery(map[string]string{"minecraft": "true"})
	os.Stdout.WriteString(hex.EncodeToString(q.Start()[0]) + "\n")
	challenge, _ := hex.DecodeString("09010203043935313333303700") // "9513307"
	next, _, _ := q.Feed(challenge)
	os.Stdout.WriteString(hex.EncodeToString(next[0]) + "\n")
	reply, _ := hex.DecodeString("0001020304" + "73706c69746e756d00" + "8000" +
		"686f73746e616d6500" + "4d4300" + "6d617000" + "776f726c6400" + "00" + // hostname MC, map world
		"01" + "706c617965725f00" + "00" + "416c657800" + "00") // player_: Alex
	_, done, _ := q.Feed(reply)
	m, _ := q.Result(codecs.DecodeOptions{NoFields: true})
	os.Stdout.WriteString(strconv.FormatBool(done) + " " + m.Info.Name + " " + m.Info.Map + " " + m.Info.Players[0].Name + "\n")
	// Output:
	// fefd0901020304
	// fefd00010203040091295b00000000
	// true MC world Alex
}
