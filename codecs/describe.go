package codecs

// Description is what the generic code (the server model, the master
// keeper, the relay, the commands and the pages) knows of a protocol
// beyond its Codec: plain facts, each said once, by the protocol's own
// package (its register.go), and registered with Describe beside
// Register. A protocol that says nothing more than its Codec needs none:
// its zero Description is derived from the Codec (DescriptionOf).
type Description struct {
	// Name is the codec's Name.
	Name string
	// Ports are the usual query ports, the codec's DefaultPort first: a
	// server on one of them is guessed to speak the protocol. Nil: the
	// DefaultPort alone.
	Ports []int
	// DetectFirst says that a detection of an address on the protocol's
	// DefaultPort asks it before the other protocols of that port, and
	// waits for its answer before taking theirs (ident.DetectOrderAt):
	// the protocol every server on the port answers, where another one
	// answers only where it is enabled (Minecraft Java's List Ping and
	// GameSpy v4's Minecraft Query, both on 25565).
	DetectFirst bool
	// Master, if set, says how the protocol lists servers from a master.
	Master *MasterDescription
	// Join is a link that starts the game on a server, with {addr}
	// standing for host:port ("zds://{addr}/za"); "" when there is none.
	Join string
	// Row names the row fields (the positions of AppendSummaryJSON, by
	// their names in package server) a reply fills; nil: every field.
	Row []string
	// List are the NewQuery options a server list asks each server with
	// when the server has none of its own: what a row shows, leaving the
	// rest to the status page. Nil: the codec's defaults.
	List map[string]string
	// MinAskMs is the least time between two asks of one server from one
	// address, in milliseconds: a server that answers an address once per
	// interval (and ignores it in between) would look offline when asked
	// sooner. In milliseconds, not a time.Duration: package time would add
	// about 240 KB to the browser module, which has no other use for it.
	MinAskMs int
	// AllPlayers says a reply that lists players (Info.Has HasPlayers)
	// lists every player in the game, not a sample of them (Minecraft's
	// status sends at most a dozen): what a watch of joins and leaves
	// needs (package alerts). Players still connecting may be counted and
	// not listed (A2S); they are not in the game yet.
	AllPlayers bool
	// AntiCheat labels Info.AntiCheat on a row ("VAC"); "": a generic
	// label.
	AntiCheat string
	// Teams are the team names by index, for a reply that numbers its
	// players' teams without naming them.
	Teams []string
	// Wrapped are the inner layers (Message.Layers) the wire carries
	// coded, by layer name, with their coding ("huffman"): the inspector's
	// editor changes such a layer's fields and codes it again.
	Wrapped map[string]string
	// ReplyCap bounds what one query may bring back through the relay;
	// zero fields: the relay's own defaults.
	ReplyCap ReplyCap
	// Transport is how the protocol travels; the zero value is UDP.
	Transport Transport
	// ServerFirst says the server speaks first once connected (a TCP
	// greeting); Query.Start then returns nothing until Feed has the
	// greeting.
	ServerFirst bool
	// MessageLen, for a stream transport, returns the length of the first
	// whole message in b, or 0 while more bytes are needed: the relay
	// cuts a stream into the datagram-like messages Query.Feed takes. Nil
	// for datagrams, each of which is a message. A negative length says b
	// cannot start a message (a length field out of range): the stream is
	// malformed and the conversation stops (Stream, StreamBadFraming).
	MessageLen func(b []byte) int
	// SRV, for a protocol whose servers may be named by a DNS SRV record,
	// is the record's service and protocol labels ("_minecraft._tcp"): a
	// target given as a bare name (no port) is looked up there first
	// (NAME prefixed with SRV), then as the name on the DefaultPort. The
	// relay resolves, never the page. "": no SRV lookup.
	SRV string
	// TargetInQuery says the query carries the target's name and port as
	// the user gave them (Minecraft's handshake, on which proxies route):
	// whoever runs the conversation passes them to NewQuery as the
	// options "host" and "port", and the relay refuses a query whose host
	// or port is not the target's.
	TargetInQuery bool
}

// MasterDescription is how a protocol asks a master server for its list.
type MasterDescription struct {
	// Options are the NewQuery options that ask a master for its list
	// instead of a server for its status.
	Options map[string]string
	// Default is the public master (host:port) asked when none is given.
	Default string
	// Port is the masters' usual port, for guessing the protocol of an
	// address.
	Port int
	// Kept says the querylens server keeps this master's lists (package
	// masters) instead of the page asking the master through the relay:
	// masters that answer a few requests a minute per address and list
	// in many pages.
	Kept bool
	// Games says a list filter can pick one game's servers by its id (the
	// browser page's game picker).
	Games bool
	// Pages is the most pages a list takes when each page is a request of
	// its own (paced by the asker); 0: the list answers one request.
	Pages int
	// Filter turns a master filter, as a master spec spells it, into the
	// NewQuery options of a filtered list (merged over Options). Nil: the
	// master takes no filter.
	Filter func(filter string) (map[string]string, error)
	// NewList starts a conversation that asks a master for its list with
	// filter, page by page. Nil: the list cannot be kept (the page asks
	// it with Options through the relay).
	NewList func(filter string) (MasterList, error)
	// Transport is how the master is spoken to, which may differ from
	// the protocol's own (GameSpy v1: UDP servers, a TCP master); the
	// zero value is UDP. A TCP master's conversation is a stream one
	// (Stream), held by whoever asks it (package masters, the command
	// line), never by the relay's UDP path.
	Transport Transport
	// ServerFirst says the master speaks first once connected (a
	// greeting with a challenge): the conversation's Start is empty.
	ServerFirst bool
	// MessageLen cuts the master's stream into the messages the
	// conversation's Feed takes, as Description.MessageLen does. Nil
	// with Transport TCP: each piece read is a message.
	MessageLen func(b []byte) int
	// ReplyCap bounds one conversation's reply from the master; zero
	// fields: DefaultStreamCap's.
	ReplyCap ReplyCap
}

// MasterList is a conversation with a master that yields its list page
// by page, so that one driver (package masters) keeps any protocol's
// lists, pacing the requests between pages:
//
//	for q := l.Next(); q != nil; q = l.Next() {
//		done := exchange(q) // q's Feed said the page is complete
//		addrs, end, err := l.Page(done)
//		…
//	}
//
// Next after a page that brought nothing asks the same page again.
type MasterList interface {
	// Next returns the conversation that asks the next page, or nil when
	// there is nothing more to ask (the list ended, or the protocol has
	// only one request).
	Next() Query
	// Page reads what the conversation Next returned received: the
	// addresses listed (host:port), whether the list ended with them,
	// and why it stops short, if it does (asking on would not help).
	// done is whether the conversation's Feed said it was complete.
	Page(done bool) (addrs []string, end bool, err error)
}

// ReplyCap is what one query of a protocol may bring back: at most Bytes
// bytes in at most Datagrams datagrams (or stream messages).
type ReplyCap struct {
	Bytes     int
	Datagrams int
}

// Transport is how a protocol's messages travel.
type Transport uint8

const (
	UDP Transport = iota // one datagram per message; the zero value
	TCP                  // a stream, cut into messages by MessageLen
)

// String is the transport's name, as the pages show it.
func (t Transport) String() string {
	if t == TCP {
		return "tcp"
	}
	return "udp"
}

var descriptions = map[string]*Description{}

// Describe registers what the protocol d.Name says beyond its codec.
// Protocol packages call it from init, beside Register. Describing a name
// twice panics, as it is a programming error.
func Describe(d Description) {
	if _, dup := descriptions[d.Name]; dup {
		panic("codecs: Describe called twice for " + d.Name)
	}
	descriptions[d.Name] = &d
}

// DescriptionOf returns the description of codec c, filled in from the
// codec where it leaves a fact unsaid (Ports).
func DescriptionOf(c Codec) Description {
	var d Description
	if p := descriptions[c.Name()]; p != nil {
		d = *p
	}
	d.Name = c.Name()
	if len(d.Ports) == 0 && c.DefaultPort() != 0 {
		d.Ports = []int{c.DefaultPort()}
	}
	return d
}

// Streamed reports whether c's protocol travels as a stream (its
// description's Transport is TCP), without copying its description (the
// browser module's calls per query).
func Streamed(c Codec) bool {
	p := descriptions[c.Name()]
	return p != nil && p.Transport == TCP
}

// LookupDescription returns the description of the codec registered as
// name (DescriptionOf).
func LookupDescription(name string) (Description, error) {
	c, err := Lookup(name)
	if err != nil {
		return Description{}, err
	}
	return DescriptionOf(c), nil
}
