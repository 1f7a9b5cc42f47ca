package zandronum_test

import (
	"encoding/hex"
	"fmt"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/zandronum"
)

func ExampleAppendRequest() {
	q := zandronum.Request{
		Flags: zandronum.SQF_NAME | zandronum.SQF_MAPNAME | zandronum.SQF_NUMPLAYERS,
		Time:  1597643819,
	}
	b, err := zandronum.AppendRequest(nil, q)
	if err != nil {
		panic(err)
	}
	p, _ := zandronum.AppendRequestPayload(nil, q)
	fmt.Printf("payload  %x\ndatagram %x\n", p, b)
	// Output:
	// payload  c7000000090008002b1c3a5f
	// datagram 07b849e2a2345a46406b01
}

func ExampleDecodeResponse() {
	// A CTF server's reply to Doomseeker's query (testdata/vectors.json).
	b, _ := hex.DecodeString("005313f1d232025abbda32d9d2d5dc38b9daf3dc13d0dc15d0f5e7a390f2955fa4c61cf1b896ae969ee62ed6cd4d376c8cfbd3e0649ba9915ff079faaf39b36b6576edda5663d1bedf539b6e1cdb12e948d30dad46446a19d568eeada61b37fc227516e948d30dad46446a19d5684ec82ff87abad4314da7694d91da98676ddb9656195695676ddb0d4d5b8d6d99da74a31a4a1b478dda30d932b5e9466927523825974425657f45dad8252236497bc3a81163227569177749e21135624ca4494948a45d3c12b78a9447521eed1adca953d4883191f41569a33a295b52d66c654b9da48e9224e94c9224ed")
	r, err := zandronum.DecodeResponse(b, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Name, "on", r.Map, "-", r.GameMode, "-", r.Limits.TimeLeft, "minutes left")
	for _, p := range r.Players {
		team := "no team"
		if p.Team != zandronum.NoTeam {
			team = r.Teams[p.Team].Name
		}
		fmt.Printf("%-6s %3d %4dms %s\n", zandronum.StripColors(p.Name), p.Score, p.Ping, team)
	}
	// Output:
	// CTF Night on CTF01 - Capture the Flag - 13 minutes left
	// Red1     3   40ms Red
	// Blue1    1   60ms Blue
	// Blue2    0   80ms Blue
	// Spec     0   99ms no team
}

func ExampleDecodeSegmented() {
	reply := zandronum.Response{
		Time: 7, Version: "3.2.1", Flags: zandronum.SQF_NAME | zandronum.SQF_PWADS,
		Name: "Segmented", PWADs: []string{"a.wad", "b.wad", "c.wad", "d.wad", "e.wad"},
	}
	// A server with sv_maxpacketsize 32 cuts the reply into 20-byte chunks.
	ds, err := zandronum.AppendSegmented(nil, reply, 32)
	if err != nil {
		panic(err)
	}
	// They may arrive in any order.
	ds[0], ds[2] = ds[2], ds[0]
	r, err := zandronum.DecodeSegmented(ds)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(ds), "segments:", r.Name, r.PWADs)
	// Output:
	// 3 segments: Segmented [a.wad b.wad c.wad d.wad e.wad]
}

func ExampleDecodeMasterList() {
	var servers []zandronum.Addr
	for i := range 200 {
		servers = append(servers, zandronum.Addr{IP: [4]byte{192, 0, 2, byte(i)}, Port: 10666})
	}
	ds := zandronum.AppendMasterList(nil, servers)
	ds[0], ds[1] = ds[1], ds[0] // packet 1 arrives first
	l, err := zandronum.DecodeMasterList(ds)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(ds), "packets,", len(l.Servers), "servers, complete:", l.Complete)
	fmt.Println(l.Servers[0], l.Servers[199])
	// Output:
	// 2 packets, 200 servers, complete: true
	// 192.0.2.0:10666 192.0.2.199:10666
}

func ExampleStripColors() {
	fmt.Println(zandronum.StripColors("\x1c[Gold]Boss\x1cR of \x1cDDoom"))
	// Output: Boss of Doom
}

func ExampleFlag_String() {
	fmt.Println(zandronum.SQF_NAME | zandronum.SQF_PLAYERDATA | zandronum.SQF_EXTENDED_INFO)
	// Output: SQF_NAME|SQF_PLAYERDATA|SQF_EXTENDED_INFO
}

// A conversation through the registered codec, as the CLI and the browser
// drive it; here the server's side is built with the package's builders.
func ExampleCodec() {
	c, _ := codecs.Lookup("zandronum")
	q, err := c.NewQuery(map[string]string{"time": "42", "segmented": "false"})
	if err != nil {
		panic(err)
	}
	req, _ := zandronum.DecodeRequest(q.Start()[0])
	fmt.Printf("sent flags %#x, time %d\n", uint32(req.Flags), req.Time)

	reply, _ := zandronum.AppendResponse(nil, zandronum.Response{Code: zandronum.CodeIgnored, Time: req.Time})
	_, done, _ := q.Feed(reply)
	m, _ := q.Result(codecs.DecodeOptions{})
	fmt.Println(done, m.Kind, m.Denied)
	// Output:
	// sent flags 0xfbfb3fff, time 42
	// true denied rate-limited
}
