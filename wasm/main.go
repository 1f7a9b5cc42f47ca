//go:build js && wasm

// Command wasm is the browser side of querylens: it puts one namespace
// object, globalThis.querylens, in front of the codecs so that the pages
// decode packets with exactly the code the command line uses.
//
// Every result that describes a message is built as JSON by the codecs
// (Message.AppendJSON, codecs.ErrorObject) and handed to the JS engine's
// JSON.parse in one call, so the page sees what `querylens decode` prints,
// byte for byte, and the boundary is crossed once per call instead of once
// per field. Errors come back as data ({error, partial}), never as throws,
// except for programming errors such as a missing argument.
//
// The server browser's conversations run once per server and reply, so
// they skip even that: the worker writes many requests (open, step,
// finish) into one Uint8Array the namespace holds (querylens.in), runs
// them with one call, batch(n), and reads the JSON array of their results
// from another (querylens.out): only numbers cross. A string or object
// passed or returned costs syscall/js a reference with a Go finalizer, and
// each call from JS resumes the Go scheduler; a batch pays that once for
// all the servers whose replies arrived together (web/static/relay.js
// Batch).
//
// web/static/querylens.d.ts describes the namespace.
package main

import (
	_ "github.com/querylens/querylens/codecs/all"
)

func main() {
	register()
	select {}
}
