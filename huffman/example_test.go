package huffman_test

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/querylens/querylens/huffman"
)

func ExampleEncode() {
	// A launcher query: LONG 199, flags SQF_NAME|SQF_NUMPLAYERS, time 0.
	query, _ := hex.DecodeString("c70000000100080000000000")
	fmt.Println(hex.EncodeToString(huffman.Encode(nil, query)))

	// 0xff has a 9-bit code, so the raw form is shorter.
	fmt.Println(hex.EncodeToString(huffman.Encode(nil, []byte{0xff})))
	// Output:
	// 04b849da95469204
	// ffff
}

func ExampleDecode() {
	datagram, _ := hex.DecodeString("066812f1522701")
	payload, err := huffman.Decode(nil, datagram)
	fmt.Println(hex.EncodeToString(payload), err)

	// A stream cut inside a code is reported with its byte offset.
	// The bytes decoded before the problem are returned with the error.
	payload, err = huffman.Decode(nil, datagram[:5])
	var e *huffman.Error
	if errors.As(err, &e) {
		fmt.Println(hex.EncodeToString(payload), e.Offset, errors.Is(err, huffman.ErrIncompleteCode))
	}
	// Output:
	// 7c5d56000200 <nil>
	// 7c5d 3 true
}

func ExampleIsLegacy() {
	payload := []byte{0x41} // one 8-bit code: k == n == 1
	current := huffman.Encode(nil, payload)
	legacy := huffman.EncodeLegacy(nil, payload)
	fmt.Println(hex.EncodeToString(current), huffman.IsLegacy(current))
	fmt.Println(hex.EncodeToString(legacy), huffman.IsLegacy(legacy))
	// Output:
	// 009c false
	// ff41 true
}
