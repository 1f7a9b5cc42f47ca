package gamespy1

import "github.com/querylens/querylens/codecs"

// Protocol is the registry name of the codec.
const Protocol = "gamespy1"

// DefaultPort is the query port of an Unreal Tournament (UT99) server: the
// game port 7777 plus one. Other games of the protocol use their own
// (Battlefield 1942: 23000, Medal of Honor: 12300), which callers pass.
const DefaultPort = 7778

// Limits. A reply is at most MaxDatagrams datagrams of MaxReplyBytes bytes
// in all; more is refused, so a hostile server cannot make a decoder hold
// more than that.
const (
	// MaxQueryLen is the longest query CheckQuery accepts: the longest a
	// client sends (`\basic\\info\\rules\\players\` and an echo) is well
	// under it.
	MaxQueryLen = 128
	// MaxWords is the most query words one query may hold (each word
	// asked once).
	MaxWords = 8
	// MaxTextLen bounds the text of \echo\ and \secure\.
	MaxTextLen = 64
	// MaxDatagrams is the most datagrams one reply may span.
	MaxDatagrams = 16
	// MaxReplyBytes is the most bytes one reply may hold, over all its
	// datagrams.
	MaxReplyBytes = 16 << 10
	// MaxPlayerIndex is the highest N of a player key (player_N) read as a
	// player; a key with a higher N is kept as a rule. N never sizes an
	// allocation: players are collected as they come and sorted.
	MaxPlayerIndex = 1023
)

// The query words, each written `\word\`. Echo and secure carry a text
// after them (`\echo\TEXT\`); any other may carry the word
// XServerQuery, which some clients add (GameDig's `\status\xserverquery`).
const (
	WordStatus  = "status"  // basic, info, rules and players, over several datagrams
	WordBasic   = "basic"   // gamename, gamever, location
	WordInfo    = "info"    // hostname, mapname, numplayers, maxplayers, gametype, …
	WordRules   = "rules"   // the game's settings
	WordPlayers = "players" // player_N, frags_N, ping_N, team_N, …
	WordEcho    = "echo"    // the text comes back (\echo\TEXT, or UT 451's \echo_replay\TEXT)
	WordSecure  = "secure"  // a master's challenge; the reply is \validate\HASH

	XServerQuery = "xserverquery"
)

// Keys of a reply that are not data: the packet number and the end marker.
const (
	KeyQueryID = "queryid" // ID.N: the query's number and the datagram's, from 1
	KeyFinal   = "final"   // empty value: the datagram with the highest N
)

// Word is one query word and the text after it, if any.
type Word struct {
	Name  string // one of the Word constants
	Value string // echo or secure text, or XServerQuery; "" for none
}

// Request is a query datagram: one or more words, such as `\status\` or
// `\basic\\info\`.
type Request struct {
	Words []Word
	// Open says the last word's value has no closing '\' (as in
	// GameDig's `\status\xserverquery`); only a value can be left open.
	Open bool
}

// Var is one \key\value pair of a reply, in wire order.
type Var struct {
	Key, Value string
}

// Response is one reply datagram. Vars holds every pair but the queryid
// and final ones, which say where the datagram belongs.
type Response struct {
	Vars []Var
	// QueryID is the queryid value as sent ("12.3": query 12, datagram 3);
	// "" when the datagram has none. Packet reads it.
	QueryID string
	// Final says the datagram carries \final\: it is the last of the reply.
	Final bool
	// FinalFirst says \final\ comes before \queryid\ (Unreal and UT99 before
	// patch 451); after it otherwise (UT99 451 and later, the GameSpy SDK).
	FinalFirst bool
	// Trailer says a lone '\' ends the datagram after its last value.
	Trailer bool
}

// Packet reads QueryID: the query's number and the datagram's. A queryid
// without a '.' ("7") is datagram 1. ok is false when there is no
// queryid.
func (r *Response) Packet() (id string, n int, ok bool) {
	if r.QueryID == "" {
		return "", 0, false
	}
	id, num, dot := cut(r.QueryID, '.')
	if !dot {
		return id, 1, true
	}
	n, _ = atoi(num)
	return id, n, true
}

// Var returns the value of the first key named key (ASCII
// case-insensitive: games differ in case, "AdminEMail").
func (r *Response) Var(key string) (string, bool) {
	for _, v := range r.Vars {
		if codecs.EqualFoldASCII(v.Key, key) {
			return v.Value, true
		}
	}
	return "", false
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// atoi parses 1 to 9 decimal digits, no sign.
func atoi(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
