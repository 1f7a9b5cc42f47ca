//go:build js && wasm && !family

package main

import "syscall/js"

// registerInspector installs what only the inspector uses: the pcapng
// writer, the capture reader and the Huffman layer. A family module (built
// with -tags family, scripts/build-wasm.sh) leaves them out.
func registerInspector(ns js.Value) {
	ns.Set("pcapng", fn(pcapngFile))
	registerCapture(ns)
	ns.Set("huffman", fn(huffmanCall))
}
