package main

import (
	"errors"
	"io"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/huffman"
)

func (e *env) huffman(args []string) int {
	fs := newFlagSet(e, "huffman", "encode|decode [--legacy] HEX")
	legacy := fs.Bool("legacy", false, "encode: use the pre-2013 raw-fallback rule")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) < 2 || (pos[0] != "encode" && pos[0] != "decode") {
		return e.usageErr(fs, "want encode or decode and one HEX datagram")
	}
	dgs, err := e.readDatagrams(pos[1:])
	if err != nil {
		return e.fail(inputError("huffman", "hex", err), nil, false)
	}
	if len(dgs) != 1 {
		return e.usageErr(fs, "want exactly one datagram")
	}
	var out []byte
	if pos[0] == "encode" {
		if *legacy {
			out = huffman.EncodeLegacy(nil, dgs[0])
		} else {
			out = huffman.Encode(nil, dgs[0])
		}
	} else {
		out, err = huffman.Decode(nil, dgs[0])
		if err != nil {
			ce := &codecs.Error{Protocol: "huffman", Field: "datagram", Err: err}
			var he *huffman.Error
			if errors.As(err, &he) {
				ce.Offset, ce.Err = he.Offset, he.Err
			}
			return e.fail(ce, nil, false)
		}
	}
	io.WriteString(e.stdout, string(codecs.AppendHex(nil, out))+"\n")
	return exitOK
}
