package codecs

// Span is one decoded field: its byte range [Start, End) in layer Layer of a
// Message, its stable dotted path, the display kind and the value as text.
//
// Kind names how the inspector shows the bytes: "u8", "u16le", "u16be",
// "u32le", "u32be", "s16le", "s16be", "f32le", "cstring", "lstring"
// (length-prefixed), "bytes", "flags:SQF" (a bit set; the suffix names the
// table), "varuint", "varsint", "varbits", "huffman", "group" (a span that
// encloses other spans, e.g. one player), and so on.
type Span struct {
	Layer int    `json:"layer"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Field string `json:"field"`
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// Layer is one view of the bytes of a message: a datagram as it was on the
// wire, or a payload decoded out of another layer (Zandronum's Huffman layer),
// or a buffer reassembled from several datagrams.
type Layer struct {
	Name  string // "wire", "payload", "datagram 2", "reassembled"
	Bytes []byte
	// Parent is the index of the layer this one was decoded from, or -1.
	Parent int
}
