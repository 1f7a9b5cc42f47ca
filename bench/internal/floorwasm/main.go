//go:build js && wasm

// Command floorwasm is the start section's floor (bench/cmd/benchreport):
// the smallest Go js/wasm program that does what the browser module does
// first, export a decode function through syscall/js and wait for calls.
// Its decode reads the datagram into Go and returns its length and first
// byte, so the page's first decode with it is the cost of the chain itself
// (page, worker, Go runtime start, relay HELLO, one exchange) and nothing
// of the codecs. benchreport builds it into a temporary directory when it
// runs.
package main

import "syscall/js"

func main() {
	decode := js.FuncOf(func(_ js.Value, args []js.Value) any {
		b := make([]byte, args[0].Get("length").Int())
		js.CopyBytesToGo(b, args[0])
		first := 0
		if len(b) > 0 {
			first = int(b[0])
		}
		return js.ValueOf(map[string]any{"bytes": len(b), "first": first})
	})
	js.Global().Set("qlFloor", js.ValueOf(map[string]any{"decode": decode}))
	select {}
}
