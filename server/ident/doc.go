// Package ident is a game server's identity as the pages, the commands and
// the history spell it: the protocol it is asked in, its address in
// canonical form, and the query options that change what is asked. It is
// pure (no fmt, no encoding/json, no net/url, no I/O), so the browser
// module compiles it too: the pages build a status link, check a typed
// address and order a protocol detection with this code instead of a
// JavaScript copy of it (wasm/ref.go exports it as querylens.ref, paths,
// hostPort and detectOrder; querylens.d.ts). Known, the protocol list every
// "querylens does not speak X" message gives, and DetectOrder, what
// server.Detect asks, are here too.
//
// Every spelling of a server goes through one parser and one formatter:
//
//	status path     /s/zandronum/203.0.113.7:10666?flags=0x1   FromPath, Ref.Path
//	history key     zandronum, 203.0.113.7:10666?flags=0x1     FromKey, Ref.KeyAddr
//	--server flag   zandronum=203.0.113.7:10666?flags=0x1      ParseFlag
//	text            zandronum/203.0.113.7:10666?flags=0x1      Parse, Ref.String
//	fields          "zandronum", "203.0.113.7:10666", options  New
//
// (package server adds the JSON form and history.Key on top.) A Ref made by
// these functions is valid: the protocol is registered, the address is
// host:port as the relay spells it (wire.ParseTarget, port not 0; the
// browser module checks the same syntax without net/netip, target.go), and
// the codec's NewQuery accepts the options. Each is checked once. Options a
// codec marks Echo (codecs.Option) are not part of the identity, and an
// option given twice is an error in every spelling.
package ident
