package gamespy2_test

import (
	"encoding/hex"
	"os"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy2"
)

func ExampleAppendRequest() {
	q := gamespy2.FullRequest([4]byte{0x10, 0x20, 0x30, 0x40})
	b, _ := gamespy2.AppendRequest(nil, q)
	os.Stdout.WriteString(hex.EncodeToString(b) + "\n")

	// Index mode: only the values of hostname (1) and mapname (5).
	q = gamespy2.Request{ID: q.ID, Server: gamespy2.KeyList(gamespy2.KeyHostname, gamespy2.KeyMapname)}
	b, _ = gamespy2.AppendRequest(nil, q)
	os.Stdout.WriteString(hex.EncodeToString(b) + "\n")
	// Output:
	// fefd0010203040ffffff
	// fefd00102030400201050000
}

func ExampleDecodeRequest() {
	b, _ := hex.DecodeString("fefd000000000100ff00")
	q, err := gamespy2.DecodeRequest(b)
	if err != nil {
		panic(err)
	}
	os.Stdout.WriteString(hex.EncodeToString(q.ID[:]) + " players:" + boolString(q.Players.All) + " server:" + boolString(q.Server.Wanted()) + "\n")
	// Output: 00000001 players:true server:false
}

func ExampleAppendResponse() {
	resp := gamespy2.Response{
		Rules:   []gamespy2.Rule{{Key: "hostname", Value: "Café"}, {Key: "mapname", Value: "Dust"}},
		Players: gamespy2.Table{Fields: []string{"player_", "score_"}, Rows: [][]string{{"Bob", "3"}}},
	}
	req := gamespy2.Request{ID: [4]byte{0, 0, 0, 1}, Server: gamespy2.AllKeys, Players: gamespy2.AllKeys}
	b, _ := gamespy2.AppendResponse(nil, resp, req)
	os.Stdout.WriteString(hex.EncodeToString(b) + "\n")
	// Output: 0000000001686f73746e616d6500436166e9006d61706e616d65004475737400000001706c617965725f0073636f72655f0000426f62003300
}

func ExampleDecodeResponse() {
	b, _ := hex.DecodeString("0000000001686f73746e616d6500436166e9006d61706e616d65004475737400000001706c617965725f0073636f72655f0000426f62003300")
	resp, err := gamespy2.DecodeResponse(b, nil) // sections inferred from the bytes
	if err != nil {
		panic(err)
	}
	name, _ := resp.Rule("hostname")
	os.Stdout.WriteString(name + " " + resp.Players.Fields[0] + "=" + resp.Players.Rows[0][0] + "\n")
	// Output: Café player_=Bob
}

func ExampleCodec() {
	c, _ := codecs.Lookup("gamespy2")
	q, _ := c.NewQuery(map[string]string{"style": "split"})
	for _, d := range q.Start() {
		os.Stdout.WriteString(hex.EncodeToString(d) + "\n")
	}
	reply, _ := hex.DecodeString("000000000100027465616d5f740073636f72655f7400004e5641003000555341003000")
	q.Feed(reply)
	m, _ := q.Result(codecs.DecodeOptions{})
	os.Stdout.Write(m.AppendJSON(nil))
	os.Stdout.WriteString("\n")
	// Output:
	// fefd0000000001ff0000
	// fefd000000000100ff00
	// fefd00000000010000ff
	// {"protocol":"gamespy2","kind":"response","info":{"teams":[{"name":"NVA","score":0},{"name":"USA","score":0}]},"fields":{"packet_type":0,"id":"00000001","count_bytes":2,"teams":{"count":2,"fields":["team_t","score_t"],"rows":[["NVA","0"],["USA","0"]]}},"warnings":["no reply to the server query","no reply to the players query"]}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
