// Package huffman implements the Huffman layer every Zandronum datagram
// passes through: launcher queries and replies, master-server traffic and
// game traffic are all encoded before sendto and decoded after recvfrom.
//
// # Framing
//
// The first byte of a datagram selects its form:
//
//	ff <payload...>           raw: the payload follows byte for byte ("ff" alone = empty)
//	0..7 <bit stream...>      Huffman: byte 0 = number of padding bits in the last byte
//
// In the Huffman form the stream has (len-1)*8 - byte0 meaningful bits,
// read from byte 1 on, least-significant bit of each byte first. Each
// payload byte is one code, emitted root-first (the first branch taken from
// the root is the first stream bit). Padding occupies the high bits of the
// last byte. Codes are 3 to 10 bits long; the code is fixed, built from
// Zandronum's frequency table and shipped as a 511-byte serialized tree.
//
// Example: the payload 41 is the 8-bit code 00111001 (root-first), packed
// LSB-first as the byte 9c, with no padding: 00 9c.
//
// # Encoder rules
//
// Encode follows the current encoder: the output is capped at len(payload)+1
// bytes, so Huffman is used when its k bytes of codes satisfy k <= len, the
// raw form otherwise, and the empty payload is 00. EncodeLegacy follows the
// pre-2013 encoder, which used Huffman only when k < len and sent the empty
// payload as ff. IsLegacy spots the datagrams only the legacy rule produces.
//
// # Decoding
//
// Decode accepts both forms from both encoders, ignores the padding bits
// (the legacy encoder left garbage there), caps the payload at MaxDecoded
// bytes as Zandronum's receive buffer does, and reports problems as *Error
// with the byte offset.
//
// It is table-driven in the manner of compress/flate. The single-code
// table is indexed by the next 10 bits of the stream (the longest code)
// and yields a symbol and its code length; it is built from the embedded
// 511-byte tree at package initialisation and checked there to be complete
// and prefix-free, so decoding itself never meets an invalid pattern. A
// derived 16-bit table (512 KiB, built and checked on the first Decode)
// yields every code that ends within its index, up to five. The bulk of a
// stream is decoded from a 64-bit bit buffer in batches of three such
// lookups with no per-code checks; the last bits are decoded one lookup at
// a time and checked against the meaningful bit count. Streams of 512 bits
// or more are decoded as two halves interleaved, exploiting the fact that
// a Huffman parse begun mid-stream soon falls into step with the true one;
// when it does not, decoding continues from the first half alone, so the
// result is the same either way.
//
// Encode and Decode append to a caller's buffer and do not allocate when it
// has room.
//
// Specification: docs/protocols/huffman.md (from Zandronum's
// src/huffman/ and, for the legacy rules, the Skulltag-era src/huffman.cpp).
package huffman
