package codecs

// DecodeOptions tunes Codec.Decode and Query.Result.
type DecodeOptions struct {
	// Spans asks for Message.Layers and Message.Spans (the inspector's view).
	Spans bool
	// Query is the wire query the reply answers, where the reply's layout
	// depends on what was asked (GameSpy v2 sections). Nil: infer from the bytes.
	Query []byte
	// NoFields says the caller reads only what a server list shows
	// (AppendSummaryJSON: Kind, Denied, Info, Servers, the error), so a
	// codec may leave Message.Fields out, which is most of a decode's
	// allocations. A codec that does keeps the keys the summary reads
	// ("country"). Kind, Denied, Info, Servers, Warnings and the error are
	// the same either way.
	NoFields bool
}

// Option describes one knob of Codec.NewQuery, so that the CLI, the
// inspector's form and the browser can offer every protocol's query options
// without knowing the protocol.
type Option struct {
	Name    string   // key in the options map, e.g. "flags"
	Kind    string   // OptionBool, OptionUint, OptionHex or OptionChoice (read by OptionReader)
	Default string   // the value used when the key is absent
	Choices []string // with Kind "choice"
	Help    string   // one line for the user
	// Echo marks an option whose value the server only echoes back, or
	// that carries a challenge (Zandronum's time, Bloodmasters' token,
	// GameSpy v2's id, OGP's request_id and challenge): it changes the
	// bytes of a query but not which server is asked or what it answers.
	// Such options are not part of a server's identity (package server):
	// two status links, or two history keys, that differ only in them
	// name the same server.
	Echo bool
}

// Confidence says how sure Detect is. Detection picks the highest.
type Confidence int

const (
	NotMine Confidence = 0  // not this protocol
	Weak    Confidence = 25 // plausible shape, no magic (GameSpy v2 replies)
	Likely  Confidence = 50 // magic or a known code, body not fully checked
	Certain Confidence = 100
)

// Codec is what each protocol package registers.
type Codec interface {
	// Name is the protocol's identifier: "zandronum", "gamespy2", "ogp", "bloodmasters".
	Name() string
	// Title is the human name, e.g. "GameSpy v2".
	Title() string
	// DefaultPort is the protocol's usual query port, or 0 when none is fixed.
	DefaultPort() int
	// Options lists what NewQuery accepts.
	Options() []Option
	// Detect reports what kind of datagram b is and how sure it is.
	// It never panics and never allocates more than b's size.
	Detect(b []byte) (Kind, Confidence)
	// CheckQuery returns nil when b is a well-formed query datagram of this
	// protocol (to a game server or a master), no longer than the longest
	// query a real client sends (each package's MaxQueryLen, checked first
	// with CheckQueryLen); otherwise an error that says why. The relay
	// forwards only datagrams that pass.
	CheckQuery(b []byte) error
	// Decode decodes one message made of one or more datagrams, as they were
	// on the wire, in any order. On error it returns the partial message too.
	Decode(datagrams [][]byte, opt DecodeOptions) (*Message, error)
	// NewQuery starts a conversation with one server (or master), configured
	// by opts (keys from Options; unknown keys are an error).
	NewQuery(opts map[string]string) (Query, error)
}

// Query is a transport-independent conversation with one server: the CLI
// drives it over UDP, the browser through the relay, the status page through
// the relay's cache. It turns challenges, segmented and split replies,
// multi-packet master lists and multi-query protocols into one result.
//
//	q, _ := codec.NewQuery(nil)
//	send(q.Start())
//	for !done { b := recv(); more, done, _ = q.Feed(b); send(more) }
//	msg, err := q.Result(codecs.DecodeOptions{})
//
// Result may also be called before done (on timeout): it decodes what came
// and says what is missing.
type Query interface {
	// Start returns the datagrams to send first.
	Start() [][]byte
	// Feed takes one received datagram and returns datagrams to send next
	// (an OGP challenge answer leads to the real query) and whether the
	// message is complete. A datagram that does not belong is ignored with an
	// error; the conversation's state is kept.
	Feed(b []byte) (send [][]byte, done bool, err error)
	// Result decodes everything received so far.
	Result(opt DecodeOptions) (*Message, error)
}

var registry []Codec

// Register makes a codec available by name. Protocol packages call it from
// init; importing codecs/all registers all four. Registering a name twice
// panics, as it is a programming error.
func Register(c Codec) {
	for _, r := range registry {
		if r.Name() == c.Name() {
			panic("codecs: Register called twice for " + c.Name())
		}
	}
	registry = append(registry, c)
	for i := len(registry) - 1; i > 0 && registry[i].Name() < registry[i-1].Name(); i-- {
		registry[i], registry[i-1] = registry[i-1], registry[i]
	}
}

// Protocols returns the registered codecs, sorted by name.
func Protocols() []Codec { return append([]Codec(nil), registry...) }

// Lookup returns the codec registered as name.
func Lookup(name string) (Codec, error) {
	for _, c := range registry {
		if c.Name() == name {
			return c, nil
		}
	}
	return nil, &Error{Protocol: name, Field: "protocol", Err: ErrUnknown}
}

// Detect finds the protocol of a datagram (query or reply) by asking every
// registered codec and taking the most confident answer.
func Detect(b []byte) (Codec, Kind, error) {
	var best Codec
	var kind Kind
	bestConf := NotMine
	for _, c := range registry {
		k, conf := c.Detect(b)
		if conf > bestConf {
			best, kind, bestConf = c, k, conf
		}
	}
	if best == nil {
		return nil, "", &Error{Field: "datagram", Err: ErrUndetected}
	}
	return best, kind, nil
}

// QueryKeyer is implemented by codecs whose queries carry fields that only
// echo back to the asker (Zandronum's time, GameSpy's request id,
// Bloodmasters' token, OGP's request id). QueryKey returns the query with
// those fields made neutral, so that a relay can answer identical questions
// from different pages with one upstream query. It returns nil when b is
// not a query of the protocol.
type QueryKeyer interface {
	QueryKey(b []byte) []byte
}

// QueryKey returns the cache key of query datagram b in protocol: the
// codec's QueryKey when it has one, else b itself.
func QueryKey(protocol string, b []byte) []byte {
	if c, err := Lookup(protocol); err == nil {
		if k, ok := c.(QueryKeyer); ok {
			if key := k.QueryKey(b); key != nil {
				return key
			}
		}
	}
	return b
}
