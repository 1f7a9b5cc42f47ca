package mumble_test

import (
	"fmt"

	"github.com/querylens/querylens/codecs/mumble"
)

func ExampleDecodeResponse() {
	answer := mumble.AppendResponse(nil, mumble.Response{Version: mumble.NewVersion(1, 4, 230), Ident: 1, Users: 7, MaxUsers: 100, Bandwidth: 72000})
	r, err := mumble.DecodeResponse(answer, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Version, r.Users, r.MaxUsers, r.Bandwidth)
	// Output: 1.4.230 7 100 72000
}

func ExampleAppendRequest() {
	b, _ := mumble.AppendRequest(nil, mumble.Request{Ident: 0x0102030405060708})
	fmt.Printf("% x\n", b)
	// Output: 00 00 00 00 01 02 03 04 05 06 07 08
}
