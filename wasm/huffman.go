//go:build js && wasm && !family

package main

import (
	"syscall/js"

	"github.com/querylens/querylens/huffman"
)

// huffman("encode"|"decode", bytes) → Uint8Array | {error}
//
// Zandronum's Huffman layer, as the command line's `querylens huffman`: the
// inspector's editor re-encodes a Zandronum payload whose fields were edited.
func huffmanCall(args []js.Value) any {
	b, ok := bytesFromJS(arg(args, 1))
	if !ok {
		return usageError("huffman: want an operation and a Uint8Array")
	}
	switch stringArg(args, 0) {
	case "encode":
		return bytesToJS(huffman.Encode(nil, b))
	case "decode":
		out, err := huffman.Decode(nil, b)
		if err != nil {
			return errorValue(err, nil)
		}
		return bytesToJS(out)
	}
	return usageError(`huffman: the operation is "encode" or "decode"`)
}
