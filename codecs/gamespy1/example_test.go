package gamespy1_test

import (
	"fmt"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
)

// Ask a server for its status, and read a reply that arrived over three
// datagrams, the final one first.
func Example() {
	q, _ := gamespy1.AppendRequest(nil, gamespy1.Request{Words: []gamespy1.Word{{Name: gamespy1.WordStatus}}})
	fmt.Printf("%s\n", q)

	reply := [][]byte{
		[]byte(`\player_0\Gumby\frags_0\12\ping_0\ 48\final\\queryid\7.3`),
		[]byte(`\gamename\ut\gamever\436\queryid\7.1`),
		[]byte(`\hostname\Deck Party\mapname\DM-Deck16][\numplayers\1\maxplayers\8\queryid\7.2`),
	}
	m, err := (&gamespy1.Codec{}).Decode(reply, codecs.DecodeOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Info.Name, "on", m.Info.Map, m.Info.NumPlayers, "/", m.Info.MaxPlayers)
	for _, p := range m.Info.Players {
		fmt.Printf("%s %d %dms\n", p.Name, p.Score, p.Ping)
	}
	// Output:
	// \status\
	// Deck Party on DM-Deck16][ 1 / 8
	// Gumby 12 48ms
}

// One datagram: its pairs, and where it belongs in the reply.
func ExampleDecodeResponse() {
	r, _ := gamespy1.DecodeResponse([]byte(`\hostname\Wake Island\numplayers\36\queryid\5.2\final\`), nil)
	id, n, _ := r.Packet()
	fmt.Println(r.Vars, "query", id, "datagram", n, "final", r.Final)
	// Output: [{hostname Wake Island} {numplayers 36}] query 5 datagram 2 final true
}

// A conversation ends when the final datagram and all before it have come.
func ExampleCodec_NewQuery() {
	q, _ := (&gamespy1.Codec{}).NewQuery(map[string]string{"xserverquery": "true"})
	fmt.Printf("%s\n", q.Start()[0])
	_, done, _ := q.Feed([]byte(`\numplayers\0\final\\queryid\3.2`))
	fmt.Println(done)
	_, done, _ = q.Feed([]byte(`\hostname\Empty\queryid\3.1`))
	fmt.Println(done)
	// Output:
	// \status\xserverquery
	// false
	// true
}
