// Package codecs is the shared core of querylens's game-server query codecs.
//
// Each protocol lives in its own package (codecs/zandronum, codecs/gamespy2,
// codecs/ogp, codecs/bloodmasters) with typed Append/Decode functions in both
// directions. This package holds what every caller must be able to name:
//
//   - Error, the one error type, carrying protocol, field path and byte offset,
//     and the sentinels it wraps (ErrShort, ErrBadMagic, ...);
//   - Span, one decoded field's byte range, for the inspector;
//   - Message and Info, the protocol-neutral view that the CLI prints as JSON
//     and the browser module returns (see docs/protocols/json.md);
//   - Codec and Query, the interfaces each protocol package registers, so that
//     the CLI, the relay and the WebAssembly module handle all protocols alike.
//
// Import codecs/all to register every protocol.
//
// Nothing here or in the protocol packages imports fmt (a test enforces it):
// the packages compile to WebAssembly, where every imported package costs
// download size.
//
// # One shape
//
// The four protocol packages look alike, so that what is learnt reading one
// holds for the others (codecs/all/shape_test.go checks the shape):
//
//   - Codec (registered as &Codec{}), Protocol (the registry name) and
//     MaxQueryLen (the longest query CheckQuery accepts);
//   - Request and Response, with AppendRequest(dst, q) ([]byte, error),
//     DecodeRequest(b) (Request, error) and DecodeResponse(b, req)
//     (Response, error), where req is the request the reply answers or nil;
//   - every error a *Error; a bad NewQuery option is reported by
//     OptionError as field "options.NAME", and options are read by one
//     OptionReader, so "uint" means the same everywhere (ParseUint: 010 is
//     ten);
//   - text as UTF-8 strings decoded from Latin-1, except OGP, which keeps
//     its text as sent (see its package doc);
//   - tests named alike (TestGolden and TestTruncated in golden_test.go,
//     TestRegistered, TestEmptyValues, FuzzDecodeResponse) and written with
//     the helpers of codecs/internal/codectest.
//
// # Code size
//
// The same reason explains two tweaks that would otherwise look arbitrary.
// Small helpers called from many places (error constructors, String
// methods, the cursor's path and failure helpers, Object.Add) carry
// //go:noinline: the compiler would inline a copy at every call site, and
// in the browser module those copies add up. Measured on the module built
// by scripts/build-wasm.sh, dropping every //go:noinline under codecs/
// grows it from 817,860 to 876,944 bytes gzipped (+59 KB, +7%) for a few
// percent fewer instructions natively. A few hot decode functions start
// with `_ = *p`: dereferencing the pointer once lets the compiler drop the
// nil check it would emit at each later field access (+2.6 KB gzipped
// without them). Each such line says so in a comment. Each //go:noinline
// carries, in its doc comment, the tag
//
//	// Out of line: see "Code size" in codecs/doc.go.
//
// which stands for this note, or an "Out of line:" paragraph giving its own
// reason and naming this note. TestSizeTweaksExplained checks
// both, in codecs/, huffman/ and wasm/.
//
// # Adding a protocol
//
// A new protocol touches its codec package and its demo server; nothing
// in server/, masters/, relay/, web/, cmd/ or the page scripts, which read
// every protocol from the registry and its descriptions (scripts/lint.sh
// fails on a protocol's name written as a literal there). A test proves it
// with a toy protocol that lives in its test file alone
// (cmd/querylens/protocol_test.go). The checklist:
//
//  1. codecs/<proto>: the package in the shape above, imported by
//     codecs/all. In Options, mark Echo every option the server only
//     echoes or that carries a challenge (a request id, a token, a
//     challenge number), so that it is not part of a server's identity
//     (package server); the codec's QueryKeyer neutralises the same fields
//     for the relay's cache.
//  2. codecs/<proto>/register.go: an init that calls Register(&Codec{})
//     and Describe(description), the Description saying once what differs
//     from the defaults: more usual ports (DefaultPort first); the master
//     (the options that ask one, the public default and its port, whether
//     the querylens server keeps its lists, whether a filter picks a game,
//     Filter for filtered lists, and NewList, the MasterList conversation
//     package masters drives page by page to keep them); the join link;
//     the row fields it fills and the options a row asks with; MinAsk, the
//     least time between two asks of one server; the anti-cheat label; the
//     team names by index; the relay's reply cap; the transport, who
//     speaks first and MessageLen for a stream. The pages, the commands,
//     the keeper and the relay read these through server.Protocol (its
//     JSON is the page's cfg.protocols) and codecs.DescriptionOf.
//  3. Info: fill what the protocol carries and set the Has bits, so that
//     AppendSummaryJSON's row (RowName…) and every page show it; a bot
//     count the server gives goes in NumBots (else flag the players Bot),
//     and an anti-cheat flag, the OS and the server's tags in AntiCheat,
//     OS and Keywords.
//  4. What only the server may run (an HTTP API that lists a master's
//     servers, as the Steam Web API does) is an adapter in package
//     masters, in a file named for the protocol (masters/a2s.go),
//     registered from its init; the browser module never sees it.
//  5. demo/<proto>.go: an emulated server (a demo.Handler built with the
//     codec's own builders) and its entries in demo.Start's list, or
//     demo.Register for one kept outside the package.
//  6. Specs, golden packets and vectors as for every protocol; rebuild the
//     browser modules (go tool task build:wasm: the combined one, and one
//     per family in the registry, the new one's included) and commit them.
//     The combined module's budget grows by 40 KB of brotli per protocol
//     family (below).
//
// The page scripts get the new protocol from the table in the page's
// config, and its states and row fields from static/model.js, which
// go generate ./web writes from package server (never by hand).
//
// # The browser module's budget
//
// A new protocol family (a new codec package) may add 40 KB of brotli to the
// browser module: the budget is 441 KB for an empty Go program + 60 KB shared
// + 20 KB for the capture reader + 40 KB per codec package in the registry
// (internal/wasmmodule/budget.go; web's TestWasmBudget enforces it, and
// `go run ./bench/cmd/benchreport -only size` shows each package's code
// bytes). A new version of an existing protocol goes in that protocol's
// package and has no budget of its own. The family's own module, which a
// page showing only that family loads, may take 70 KB over the module of
// no family, 571 KB in all (wasmmodule.FamilyBudget).
package codecs
