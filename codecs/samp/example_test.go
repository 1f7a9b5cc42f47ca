package samp_test

import (
	"fmt"

	"github.com/querylens/querylens/codecs/samp"
)

func ExampleAppendRequest() {
	h := samp.NewHeader(false, [4]byte{127, 0, 0, 1}, 7777, samp.OpInfo)
	b, _ := samp.AppendRequest(nil, samp.Request{Header: h})
	fmt.Printf("%q\n", b)
	// Output: "SAMP\x7f\x00\x00\x01a\x1ei"
}

func ExampleDecodeResponseCharset() {
	reply := []byte("SAMP\x7f\x00\x00\x01\x61\x1ec\x01\x00\x04\xc8\xe2\xe0\xed\x2a\x00\x00\x00")
	r, err := samp.DecodeResponseCharset(reply, nil, samp.Windows1251)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Opcode, r.Players[0].Name, r.Players[0].Score)
	// Output: clients Иван 42
}
