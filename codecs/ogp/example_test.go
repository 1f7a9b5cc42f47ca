package ogp_test

import (
	"encoding/hex"
	"fmt"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ogp"
)

// The 1.0x challenge answer of the spec's vectors: an error answer whose
// header carries the number to echo.
func ExampleDecodeResponse() {
	b, _ := hex.DecodeString("ffffffff4f47500007ff03efbe371303")
	a, err := ogp.DecodeResponse(b, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Version, a.Type, a.ErrorID)
	fmt.Printf("challenge %#x\n", a.Challenge)
	// Output:
	// 1.0 error invalid challenge number
	// challenge 0x1337beef
}

// The header-only 1.0x challenge request, then the official client's full
// query once the number is known.
func ExampleAppendRequest() {
	b, _ := ogp.AppendRequest(nil, ogp.Request{Header: ogp.Header{Version: ogp.V1, Type: ogp.TypeDefault}})
	fmt.Printf("%x\n", b)

	q := ogp.NewRequest(ogp.V1)
	q.HasChallenge, q.Challenge = true, 0x1337beef
	b, _ = ogp.AppendRequest(nil, q)
	fmt.Printf("%x\n", b)
	// Output:
	// ffffffff4f475000030100
	// ffffffff4f475000070112efbe3713bf018f9f0f1f3f3fbfbfbf010f
}

// An answer that does not fit in what the client asked for is split; the
// parts are reassembled in any order.
func ExampleSplitResponse() {
	a := ogp.Response{
		Header:   ogp.Header{Version: ogp.V1, Type: ogp.TypeDefault},
		Requests: ogp.ReqRules,
	}
	for i := 0; i < 40; i++ {
		a.Rules = append(a.Rules, ogp.Rule{Key: []byte("key"), Value: []byte("a value of some length")})
	}
	parts, _ := ogp.SplitResponse(a, 500)
	fmt.Println(len(parts), "parts")

	parts[0], parts[1] = parts[1], parts[0]
	joined, _ := ogp.Reassemble(nil, parts)
	back, _ := ogp.DecodeResponse(joined, nil)
	fmt.Println(len(back.Rules), "rules")
	// Output:
	// 3 parts
	// 40 rules
}

// The registered codec runs the whole exchange: challenge request, the
// query again with the number, the answer.
func ExampleCodec() {
	c, _ := codecs.Lookup("ogp")
	q, _ := c.NewQuery(nil)
	fmt.Printf("send %x\n", q.Start()[0])

	challenge, _ := hex.DecodeString("ffffffff4f47500007ff03efbe371303")
	send, done, _ := q.Feed(challenge)
	fmt.Printf("send %x (done %v)\n", send[0], done)

	answer, _ := ogp.AppendResponse(nil, ogp.Response{
		Header:   ogp.Header{Version: ogp.V1, Type: ogp.TypeDefault, HasChallenge: true, Challenge: 0x1337beef},
		Requests: ogp.ReqServerInfo,
		Server: ogp.ServerInfo{Fields: ogp.InfoHostName | ogp.InfoPlayerCount | ogp.InfoSlotMax,
			HostName: []byte("My OGP Server"), PlayerCount: 3, SlotMax: 300},
	})
	_, done, _ = q.Feed(answer)
	m, _ := q.Result(codecs.DecodeOptions{})
	fmt.Println(done, m.Kind, m.Info.Name, m.Info.NumPlayers, m.Info.MaxPlayers)
	// Output:
	// send ffffffff4f475000030100
	// send ffffffff4f475000070112efbe3713bf018f9f0f1f3f3fbfbfbf010f (done false)
	// true response My OGP Server 3 300
}
