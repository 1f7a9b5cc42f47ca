// Package module registers the toy protocol when imported: the package a
// browser module of the toy alone links (scripts/build-wasm.sh --family).
package module

import "github.com/querylens/querylens/internal/toyproto"

func init() { toyproto.Register() }
