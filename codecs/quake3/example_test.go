package quake3_test

import (
	"fmt"

	"github.com/querylens/querylens/codecs/quake3"
)

// Ask a server for its status and read the reply.
func Example() {
	q, _ := quake3.AppendRequest(nil, quake3.Request{Command: quake3.CmdGetStatus, Challenge: "42"})
	fmt.Printf("%q\n", q)

	reply := []byte("\xff\xff\xff\xffstatusResponse\n\\sv_hostname\\^1Red^7 Arena\\mapname\\q3dm17\\challenge\\42\n" +
		"15 48 \"^4Blue\"\n3 0 \"Sarge\"\n")
	r, err := quake3.DecodeResponse(reply, &quake3.Request{Command: quake3.CmdGetStatus})
	if err != nil {
		fmt.Println(err)
		return
	}
	name, _ := r.Var("sv_hostname")
	mapName, _ := r.Var("mapname")
	fmt.Println(quake3.StripColors(name), "on", mapName)
	for _, p := range r.Players {
		fmt.Printf("%-6s %3d %3dms\n", quake3.StripColors(p.Name), p.Score, p.Ping)
	}
	// Output:
	// "\xff\xff\xff\xffgetstatus 42"
	// Red Arena on q3dm17
	// Blue    15  48ms
	// Sarge    3   0ms
}

// A master's list arrives over several datagrams; the last ends with the
// end-of-transmission marker.
func ExampleDecodeResponse_master() {
	b := []byte("\xff\xff\xff\xffgetserversResponse\\\xcb\x00\x71\x05\x6d\x38\\EOT\x00\x00\x00")
	r, _ := quake3.DecodeResponse(b, nil)
	fmt.Println(r.Servers, r.End)
	// Output: [203.0.113.5:27960] true
}
