package bloodmasters_test

import (
	"encoding/hex"
	"fmt"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/bloodmasters"
)

func ExampleAppendRequest() {
	// The launcher sends its millisecond clock; the server echoes it.
	q, _ := bloodmasters.AppendRequest(nil, bloodmasters.Request{Token: 0x12345678})
	fmt.Println(hex.EncodeToString(q))
	req, err := bloodmasters.DecodeRequest(q)
	fmt.Printf("%#x %v\n", req.Token, err)
	// Output:
	// 07000d12345678
	// 0x12345678 <nil>
}

func ExampleDecodeResponse() {
	b, _ := hex.DecodeString("49000d0000000005456d7074790000100a000c646d5f6461726b746f77657200001d001e000f012157696e33324e54204465646963617465642076657273696f6e20312e352e302e30")
	r, err := bloodmasters.DecodeResponse(b, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s on %s (%s), %d/%d clients, protocol %d\n", r.Title, r.Map, r.GameType, r.NumClients, r.MaxClients, r.Protocol)
	fmt.Println(r.Build)
	// Output:
	// Empty on dm_darktower (DM), 0/16 clients, protocol 29
	// Win32NT Dedicated version 1.5.0.0
}

func ExampleDecodeResponse_truncated() {
	b, _ := hex.DecodeString("49000d0000000005456d7074790000100a00")
	r, err := bloodmasters.DecodeResponse(b, nil)
	fmt.Printf("%q\n%v\n", r.Title, err)
	// Output:
	// "Empty"
	// bloodmasters: map at offset 18: short buffer: string length is cut
}

func ExampleAppendResponse() {
	b, err := bloodmasters.AppendResponse(nil, bloodmasters.Response{
		Token: 1, Title: "Arena", MaxClients: 8, MaxPlayers: 8, GameType: bloodmasters.CTF, Map: "ctf_keep",
		NumClients: 1, NumPlayers: 1, Protocol: bloodmasters.ProtocolVersion, ScoreLimit: 5, TimeLimit: 20,
		Clients:  []bloodmasters.Client{{Name: "Ace", Team: bloodmasters.TeamRed, Ping: 42}},
		HasBuild: true, Build: "1.5",
	})
	fmt.Println(hex.EncodeToString(b), err)
	// Output:
	// 2f000d00000001054172656e610000080802086374665f6b65657001011d0005001400034163650100002a03312e35 <nil>
}

func ExampleParser() {
	b, _ := hex.DecodeString("07000d12345678" + "07008000000005")
	var p bloodmasters.Parser
	p.Start(b)
	for {
		m, err := p.Next()
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Printf("offset %d: %s, packet id %d, %d data bytes\n", m.Offset, m.Command, m.PacketID, len(m.Data))
	}
	// Output:
	// offset 0: ServerInfo, packet id 0, 4 data bytes
	// offset 7: PingOrConfirm, reliable, packet id 5, 0 data bytes
	// bloodmasters: no more messages
}

func ExampleStripColors() {
	fmt.Println(bloodmasters.StripColors("^1Blood^4masters"))
	// Output: Bloodmasters
}

// The registered codec turns a datagram into the JSON every page uses.
func ExampleCodec() {
	c, _ := codecs.Lookup("bloodmasters")
	b, _ := hex.DecodeString("07000d12345678")
	kind, conf := c.Detect(b)
	m, err := c.Decode([][]byte{b}, codecs.DecodeOptions{})
	fmt.Println(kind, conf == codecs.Certain, err)
	fmt.Println(string(m.AppendJSON(nil)))
	// Output:
	// query true <nil>
	// {"protocol":"bloodmasters","kind":"query","fields":{"length":7,"command":13,"token":"12345678"},"warnings":[]}
}
