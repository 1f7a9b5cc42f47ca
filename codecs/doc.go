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
//     and the browser module returns (see ../shared/spec/json.md);
//   - Codec and Query, the interfaces each protocol package registers, so that
//     the CLI, the relay and the WebAssembly module handle all protocols alike.
//
// Import codecs/all to register every protocol.
//
// Nothing here or in the protocol packages imports fmt (a test enforces it):
// the packages compile to WebAssembly, where every imported package costs
// download size.
package codecs
