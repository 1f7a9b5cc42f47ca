//go:build js && wasm && !family

package main

import (
	"syscall/js"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/server/ident"
)

// registerInspector installs what only the combined module serves: the
// inspector's pcapng writer, capture reader and Huffman layer, and
// detection's order (the page detects with the combined module). A
// family module (built with -tags family, scripts/build-wasm.sh) leaves
// them out.
func registerInspector(ns js.Value) {
	ns.Set("detectOrder", fn(detectOrder))
	ns.Set("pcapng", fn(pcapngFile))
	registerCapture(ns)
	ns.Set("huffman", fn(huffmanCall))
}

// detectOrder(options) → protocol names | {error}
func detectOrder(args []js.Value) any {
	cands, err := ident.DetectOrder(optionsFromJS(arg(args, 0)))
	if err != nil {
		return errorValue(err, nil)
	}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.Codec.Name()
	}
	return parseJSON(codecs.AppendJSON(nil, names))
}
