// The browser decoder's JavaScript surface: globalThis.querylens, installed
// by querylens.wasm (wasm/ in the repository), and by each protocol
// family's module, querylens-<family>.wasm, which knows that family's
// protocols only and lacks pcapng, the capture* calls and huffman (the
// inspector's, which loads the combined module). Every message-shaped result
// is the JSON the command line prints (docs/protocols/json.md), parsed; errors are
// returned as data, never thrown. Byte arrays are Uint8Array.

export {};

/** docs/protocols/json.md "info": the protocol-neutral view; keys absent when not carried. */
export interface Info {
  name?: string;
  map?: string;
  game_type?: string;
  version?: string;
  password?: boolean;
  num_players?: number;
  num_bots?: number;
  max_players?: number;
  max_clients?: number;
  anticheat?: boolean;
  os?: string;
  keywords?: string;
  players?: { name: string; score: number; ping: number; team: number | null; spectator: boolean; bot: boolean }[];
  teams?: { name: string; score: number }[];
  rules?: [string, string][];
}

export type Kind = "query" | "response" | "challenge" | "denied" | "master-query" | "master-list" | "master-denied";

/** One view of a message's bytes; hex is lowercase. parent is -1 for the wire. */
export interface Layer { name: string; hex: string; parent: number }

/** A decoded field: [start, end) in layer `layer`. */
export interface Span { layer: number; start: number; end: number; field: string; kind: string; value: string }

export interface Message {
  protocol: string;
  kind: Kind;
  denied?: "rate-limited" | "banned" | "wrong-version";
  info?: Info;
  servers?: string[];
  fields: Record<string, unknown>;
  warnings: string[];
  /** Present when spans were asked for (inspect, or {spans: true}). */
  layers?: Layer[];
  spans?: Span[];
}

export interface ErrorInfo {
  protocol?: string;
  field?: string;
  offset?: number;
  /** The layer the offset is in, when the message has several. */
  layer?: string;
  message: string;
}

/** docs/protocols/json.md's failure object: partial is what decoded before the error (no "protocol" key). */
export interface Failure {
  error: ErrorInfo;
  partial?: Omit<Message, "protocol">;
}

/**
 * codecs.AppendSummaryJSON: the little of a decoded message a server list needs.
 * row is [name, map, mode, players, bots, max, password, country, hay,
 * anticheat, os, keywords] (codecs.RowName…, named in model.js Row;
 * strings have colour escapes stripped; hay is the searchable text, one
 * string per line).
 */
export interface Summary {
  kind?: Kind;
  denied?: "rate-limited" | "banned" | "wrong-version";
  error?: ErrorInfo;
  row?: [string, string, string, number, number, number, boolean, string, string, boolean, string, string];
  servers?: string[];
}

/** One result of querylens.batch, by request: OPEN, STEP, FINISH; or a request that could not run. */
export type BatchResult =
  | { handle: number; send: string[]; stream?: true }
  | { send: string[]; done: boolean; error?: ErrorInfo; summary?: Summary }
  | Summary
  | Failure;

export interface Option {
  name: string;
  kind: "bool" | "uint" | "hex" | "choice" | string;
  default: string;
  choices: string[];
  help: string;
}

export interface Protocol { name: string; title: string; default_port: number; options: Option[] }

/** Option values: strings as the CLI takes them; booleans and numbers are converted; null means unset. */
export type Options = Record<string, string | number | boolean | null> | null | undefined;

export interface DecodeOptions {
  /** The query the reply answers (GameSpy v2 layouts depend on it). */
  query?: Uint8Array;
  /** Include layers and spans. */
  spans?: boolean;
}

/** A conversation with one server, mirroring codecs.Query. */
export interface Conversation {
  readonly protocol: string;
  readonly handle: number;
  /**
   * A stream (TCP) protocol's: the page asks the relay's EXCHANGE and feeds
   * the CHUNKs, as they come, to feed; start is what the relay's own query
   * writes, for the record.
   */
  readonly stream: boolean;
  /** Datagrams to send first. */
  start(): Uint8Array[];
  /** Feed one received datagram: what to send next and whether the message is complete. A stray datagram gives an error and keeps the state. */
  feed(datagram: Uint8Array): { send: Uint8Array[]; done: boolean; error?: ErrorInfo };
  /** Decode what came so far (also before done, after a timeout). */
  result(options?: DecodeOptions): Message | Failure;
  /** Release the Go side. Methods answer {error} afterwards. */
  close(): void;
}

export interface PcapPacket {
  /** Milliseconds since the Unix epoch (Date.now()). */
  time: number;
  direction: "sent" | "received";
  /** "ip:port" of the game server; a host name is kept as a comment. */
  target: string;
  data: Uint8Array;
  comment?: string;
  /** "tcp": data is bytes of a TCP connection with target (handshake, segments, close); "udp" or none: a datagram. */
  transport?: "udp" | "tcp";
  /** With transport "tcp": the packets of one stream number are one connection. */
  stream?: number;
}

export interface QueryLens {
  /** The module's version ("devel" unless stamped at build time). */
  readonly version: string;
  /** Every registered protocol with its query options (a form description). */
  protocols(): Protocol[];
  /** Which protocol and kind a datagram is. */
  detect(datagram: Uint8Array): { protocol: string; kind: Kind } | Failure;
  /** The first datagrams of a query, exactly as sent on the wire. */
  buildQuery(protocol: string, options?: Options): { protocol: string; datagrams: Uint8Array[] } | Failure;
  /** Start a conversation; see Conversation. */
  newQuery(protocol: string, options?: Options): Conversation | Failure;
  /**
   * Run the n bytes of requests written into `in`, in order, in one call
   * (the server browser's conversations, many at once; wasm/conversation.go
   * documents the request layout): OPEN starts a conversation and gives its
   * handle and the datagrams to send first (hex), STEP feeds one reply and
   * gives what to send next, whether done and, once done, the summary (the
   * conversation is then released), FINISH gives the summary of what came
   * so far (a timeout) and releases it. Returns the length of the JSON
   * array of results (one per request) now in `out`, or -1 when n is
   * outside `in`. The three are WebAssembly exports that ql.js attachBatch
   * puts here.
   */
  batch(n: number): number;
  /** The module's memory where batch's requests are written (128 KiB: any single request fits); a new view at each access. */
  readonly in: Uint8Array;
  /** The JSON (UTF-8) of the last batch's results. */
  readonly out: Uint8Array;
  /** Decode one message of one or more datagrams (any order); null protocol detects it from the first datagram. */
  decode(protocol: string | null, datagrams: Uint8Array | Uint8Array[], options?: DecodeOptions): Message | Failure;
  /** decode with layers and spans, for the inspector. */
  inspect(protocol: string | null, datagrams: Uint8Array | Uint8Array[], options?: { query?: Uint8Array }): Message | Failure;
  /** A pcapng file (LINKTYPE_RAW, synthesized IPv4/IPv6 + UDP or TCP headers) of the packets. */
  pcapng(packets: PcapPacket[], application?: string): Uint8Array | Failure;
  /**
   * Reading a capture file (pcap or pcapng) in chunks, for the inspector's
   * capture worker (wasm/capture.go). Rows are rowSize bytes each, laid out
   * as wasm/internal/capture's package comment says.
   */
  captureOpen(): { handle: number; protocols: string[]; rowSize: number };
  /** The next bytes of the file; the module keeps them until their rows are read. */
  captureFeed(handle: number, chunk: Uint8Array): void | Failure;
  /** Up to max rows; more says the fed bytes are used up (feed the next chunk); endpoints and kinds are the ones first seen. */
  captureNext(handle: number, max?: number): CaptureBatch | Failure;
  /** The file is over: error when its last block was cut short (or it is not a capture). */
  captureEnd(handle: number): { stats: CaptureStats; error?: CaptureError } | Failure;
  /** The payload of a row flagged stored (a datagram put back together from fragments); null otherwise. */
  capturePayload(handle: number, row: number): Uint8Array | null | Failure;
  captureClose(handle: number): void;
  /** Zandronum's Huffman layer: encode a payload into its datagram, or decode a datagram. */
  huffman(op: "encode" | "decode", bytes: Uint8Array): Uint8Array | Failure;
  /**
   * A server's identity as the server checks it (server/ident New): the
   * address canonical, echo options left out, with its status page. A
   * refusal's error.field names the part: "protocol", "address", "options"
   * (or the codec's own field for a bad option value).
   */
  ref(protocol: string, addr: string, options?: Options): Ref | Failure;
  /**
   * The status pages of many servers of one protocol and one set of options
   * in one call: one address a line in, one path a line out (ref's path),
   * an empty line where ref refuses the server.
   */
  paths(protocol: string, addrs: string, options?: Options | null): string;
  /** A typed address in canonical form ("[v6]:port" for IPv6), defaultPort added when it has none; error.field "address" when it is not host:port. */
  hostPort(text: string, defaultPort?: number): string | Failure;
  /** The protocols a detection asks, in the order the server's Detect tries them: those whose query accepts options. */
  detectOrder(options?: Options): string[] | Failure;
}

/** A server's identity and its spellings (server/ident). */
export interface Ref {
  protocol: string;
  /** host:port, canonical. */
  addr: string;
  /** The identity options, sorted by name ({} for the protocol's defaults). */
  options: Record<string, string>;
  /** The status page: /s/PROTOCOL/HOST:PORT[?OPTIONS] */
  path: string;
}

export interface CaptureStats {
  frames: number; udp: number; skipped: number; fragments: number; reassembled: number; truncated: number;
  /** TCP: frames holding a segment, connections seen, turns made, turns cut at the reader's limit, turns with gaps, connections forgotten. */
  segments: number; streams: number; turns: number; cut: number; gaps: number; evicted: number;
  rows: number;
}

/** A reader error: the block ("EPB", "pcap record", …) and its file offset. */
export interface CaptureError { message: string; block?: string; offset?: number }

export interface CaptureBatch {
  rows: Uint8Array;
  n: number;
  more: boolean;
  endpoints: string[];
  kinds: string[];
  stats: CaptureStats;
  error?: CaptureError;
}

declare global {
  // eslint-disable-next-line no-var
  var querylens: QueryLens;
}
