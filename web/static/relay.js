// @ts-check
// The page's side of the relay: the querylens.relay.v1 WebSocket protocol
// (binary frames, integers big-endian), in three parts:
//
//   relay-client.js    the client: Relay (the connection, HELLO, the
//                      queue of queries, BATCH both ways) and the frames
//   relay-converse.js  the conversation driver: one decoder conversation
//                      through the client, with a full decode (converse)
//                      or a summary (converseSummary), and classify
//   relay-batch.js     the batch encoder: Batch, the server browser's
//                      decoder requests run together in one call into Go
//
// This module is what the pages and the decoding worker import.
//
//   page → relay  0x01 QUERY  u32 id | u8 n | protocol | u8 m | target | datagram
//                 0x02 PING   u32 nonce
//                 0x03 CANCEL u32 id
//                 0x04 RELEASE u32 id  (CANCEL without the END)
//                 0x05 EXCHANGE u32 id | u8 n | protocol | u8 m | target | (u8 k | key | u8 v | value)*
//                             one conversation of a TCP protocol, held by the relay
//                             (querylens.relay.v2 only; Relay.exchange)
//                 0x85 BATCH  (u16 n | frame[n])+  the frames above, in order, in one message
//                             of at most 64 KiB: with querylens.relay.v1.batch, the frames one
//                             task makes go together (Relay.#send)
//   relay → page  0x80 HELLO  u8 version | u16 max datagram | u32 reply window ms
//                             | u16 max in-flight | u32 cache TTL ms
//                 0x81 REPLY  u32 id | u32 rtt µs | u8 flags (1 cached, 2 coalesced) | datagram
//                 0x82 END    u32 id | u8 reason (0 window closed, 1 byte cap, 2 cancelled) | u16 replies
//                 0x83 ERROR  u32 id | u8 code | u16 n | message
//                 0x84 PONG   u32 nonce
//                 0x86 CHUNK  u32 id | u32 offset | u8 flags | data  an EXCHANGE's reply bytes,
//                             in order; its END reasons: 3 done, 4 cap, 5 timeout, 6 refused,
//                             7 closed, 8 slow-client, 9 malformed (querylens.relay.v2 only)
//                 0x85 BATCH  (u16 n | frame[n])+  the frames above but HELLO, in order, in one
//                             message: only with querylens.relay.v1.batch, which the page offers
//                             first (one message event for the replies that came together)


// The worker reads the model through this module, which it imports already.
export { State, PageState, Row } from "./model.js";
export { SUBPROTOCOL, SUBPROTOCOL_BATCH, SUBPROTOCOL_STREAM, ERROR_CODES, queryFrame, exchangeFrame, batchError, Relay } from "./relay-client.js";
export { converse, converseSummary, newTiming, classify } from "./relay-converse.js";
export { Batch, later } from "./relay-batch.js";
export { fromHex } from "./ql.js";

/** @typedef {import("./relay-converse.js").Timing} Timing */
