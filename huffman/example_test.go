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

func ExampleEncodeLegacy() {
	// The rules differ for the empty payload and for payloads whose codes
	// fill exactly len(payload) bytes (8 and 11 bits here); two 3-bit
	// codes fit in one byte, so both rules use Huffman for 00 00.
	for _, p := range [][]byte{{}, {0x41}, {0x41, 0x00}, {0x00, 0x00}} {
		fmt.Println(hex.EncodeToString(huffman.Encode(nil, p)), hex.EncodeToString(huffman.EncodeLegacy(nil, p)))
	}
	// Output:
	// 00 ff
	// 009c ff41
	// 059c02 ff4100
	// 0212 0212
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
