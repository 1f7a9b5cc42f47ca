package ase_test

import (
	"fmt"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ase"
)

func ExampleAppendResponse() {
	b, err := ase.AppendResponse(nil, ase.Response{
		Game: "mta", Port: "22003", Name: "Freeroam", GameType: "Freeroam", Map: "None", Version: "1.6",
		Password: "0", NumPlayers: "1", MaxPlayers: "32",
		Rules: []ase.Rule{{Key: "Weather", Value: "sunny"}},
		// Name, score and ping: team, skin and time are not sent at all.
		Players: []ase.Player{{Flags: ase.FlagName | ase.FlagScore | ase.FlagPing, Name: "Gumby", Score: "12", Ping: "48"}},
	})
	fmt.Printf("%q %v\n", b, err)
	// Output:
	// "EYE1\x04mta\x0622003\tFreeroam\tFreeroam\x05None\x041.6\x020\x021\x0332\bWeather\x06sunny\x01\x19\x06Gumby\x0312\x0348" <nil>
}

func ExampleDecodeResponse() {
	r, err := ase.DecodeResponse([]byte("EYE1\x04mta\x0622003\tFreeroam\tFreeroam\x05None\x041.6\x020\x021\x0332\x01\x09\x06Gumby\x0312"), nil)
	fmt.Println(r.Name, r.NumPlayers+"/"+r.MaxPlayers, err)
	p := r.Players[0]
	fmt.Printf("%s: score %q (sent %v), ping %q (sent %v)\n", p.Name, p.Score, p.Has(ase.FlagScore), p.Ping, p.Has(ase.FlagPing))
	// Output:
	// Freeroam 1/32 <nil>
	// Gumby: score "12" (sent true), ping "" (sent false)
}

func ExampleDecodeResponse_hostile() {
	// The map's length byte is 0: a length counts its own byte.
	_, err := ase.DecodeResponse([]byte("EYE1\x04mta\x0622003\x02x\x02y\x00"), nil)
	fmt.Println(err)
	// Output:
	// ase: map at offset 18: bad value: length 0: a length counts its own byte, so it is at least 1
}

func ExampleCodec_Decode() {
	m, _ := (&ase.Codec{}).Decode([][]byte{[]byte("EYE1\x04mta\x0622003\x02x\x02y\x02z\x021\x020\x020\x0332\x01")}, codecs.DecodeOptions{})
	fmt.Println(m.Info.Name, m.Info.Map, m.Info.GameType, m.Info.MaxPlayers, m.Info.Rules)
	// Output:
	// x z y 32 [[gamename mta] [hostport 22003]]
}
