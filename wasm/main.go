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
// The server browser's calls (open, step, finish) run once per server and
// reply, so they skip even that: their JSON is copied into one Uint8Array
// the namespace holds (querylens.out) and they return its length, a number.
// A string or object returned to JS costs syscall/js a reference with a Go
// finalizer, and the JSON.parse call another crossing and another
// reference; reading out in JS costs neither (web/static/relay.js result).
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
