//go:build js && wasm && family

package main

import "syscall/js"

// registerInspector has nothing to install in a family module (-tags
// family): the inspector, the only page that writes pcapng, reads captures
// or shows the Huffman layer, loads the combined module.
func registerInspector(js.Value) {}
