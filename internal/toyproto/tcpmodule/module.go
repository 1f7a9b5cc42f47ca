// Package tcpmodule registers the TCP toy (a stream protocol) when
// imported: the package a browser module of the TCP toy alone links
// (scripts/build-wasm.sh --family), for the test that browses it through
// the relay's stream exchanges.
package tcpmodule

import "github.com/querylens/querylens/internal/toyproto"

func init() { toyproto.RegisterTCP() }
