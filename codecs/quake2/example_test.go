package quake2_test

import (
	"fmt"

	"github.com/querylens/querylens/codecs/quake2"
)

// A QuakeWorld status reply: the names keep their Quake characters;
// Readable shows them.
func ExampleDecodeResponse() {
	b := []byte("\xff\xff\xff\xffn\\hostname\\demo\\map\\dm6\n3 12 5 40 \"\xd3\xe8\xe1\xe6\xf4\" \"base\" 4 4\n\x00")
	r, err := quake2.DecodeResponse(b, quake2.QuakeWorld, nil)
	if err != nil {
		panic(err)
	}
	v, _ := r.Var("map")
	fmt.Println(v, len(r.Players), quake2.Readable(r.Players[0].Name), r.Players[0].Score)
	// Output: dm6 1 Shaft 12
}

// A Quake II status query, as the codec's conversation sends it.
func ExampleAppendRequest() {
	b, _ := quake2.AppendRequest(nil, quake2.Request{Dialect: quake2.Quake2, Command: quake2.CmdStatus, End: "\n"})
	fmt.Printf("%q\n", b)
	// Output: "\xff\xff\xff\xffstatus\n"
}
