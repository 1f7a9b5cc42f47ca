package gamespy1

import (
	"strconv"

	"github.com/querylens/querylens/codecs"
)

// The master protocol (docs/protocols/gamespy1.md, "The master list"):
// game servers announce themselves to a master over UDP, and a browser
// asks the master for its list over TCP, on MasterPort. The master speaks
// first:
//
//	client                                           master (TCP 28900)
//	  |                          \basic\\secure\ABCDEF[\final\]  |  the challenge
//	  | <-------------------------------------------------------- |
//	  | \gamename\ut\location\0\validate\V\final\                 |  V = Validate(challenge, key)
//	  | \list\\gamename\ut\final\                                 |  or \list\cmp\…: 6-byte records
//	  | --------------------------------------------------------> |
//	  |          \ip\1.2.3.4:7778\ip\…\final\  or  records\final\ |  the list, then the master closes
//	  | <-------------------------------------------------------- |
//
// A master that refuses the validation answers \error\TEXT\final\ (or
// 333networks' \echo\TEXT\final\) in place of the list.

// Master constants.
const (
	// MasterPort is the masters' TCP port.
	MasterPort = 28900
	// DefaultMaster is the public master asked when none is given:
	// 333networks', which keeps the lists of the Unreal engine games.
	DefaultMaster = "master.333networks.com:28900"
	// MaxMasterBytes bounds one master conversation's reply: a list of
	// ten thousand servers as text is about 250 KiB.
	MaxMasterBytes = 512 << 10
	// MaxChallengeLen bounds the \secure\ value read from a master.
	MaxChallengeLen = MaxTextLen
	// MaxGameNameLen bounds a game name sent to a master.
	MaxGameNameLen = 32
)

// MasterGame is one game the public masters list, by the name the
// protocol knows it under and its secret key (the validate key): the
// facts a client needs to pass the challenge.
type MasterGame struct {
	Name  string // the gamename sent to the master
	Key   string // the six-character secret key Validate takes
	Title string
}

// MasterGames are the games whose keys are known (sources in
// docs/protocols/gamespy1.md, "Game keys"). Unreal Tournament 2004 is not
// among them: its master protocol is Epic's own, not this one.
var MasterGames = []MasterGame{
	{"ut", "Z5Nfb0", "Unreal Tournament"},
	{"unreal", "DAncRK", "Unreal"},
	{"deusex", "Av3M99", "Deus Ex"},
	{"rune", "BnA4a3", "Rune"},
	{"wot", "RSSSpA", "The Wheel of Time"},
	{"postal2", "yw3R9c", "Postal 2"},
	{"serioussam", "AKbna4", "Serious Sam: The First Encounter"},
	{"serioussamse", "AKbna4", "Serious Sam: The Second Encounter"},
	{"quake2", "rtW0xg", "Quake II"},
	{"kingpin", "QFWxY2", "Kingpin: Life of Crime"},
	{"sin", "Ij1uAB", "SiN"},
	{"turok2", "RWd3BG", "Turok 2: Seeds of Evil"},
}

// MasterKey returns the secret key of game name (MasterGames).
func MasterKey(name string) (string, bool) {
	for _, g := range MasterGames {
		if g.Name == name {
			return g.Key, true
		}
	}
	return "", false
}

// validateAlphabet is the standard base64 alphabet, which the validate
// value is written in (without padding).
const validateAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// AppendValidate appends the validate value of challenge under key (the
// game's secret key) to dst: the "enctype 0" answer of the GameSpy SDK
// (aluigi's gsmsalg). Three steps:
//
//  1. A 256-byte table, 0…255, is scrambled with the key as RC4's key
//     schedule does: j += table[i] + key[i%len(key)]; swap table[i], table[j].
//  2. Each challenge byte c is XORed with a keystream byte drawn from the
//     table, where the index advances by the challenge byte itself (not
//     by one, as in RC4): i += c + 1; j += table[i]; swap; c ^ table[table[i]+table[j]].
//  3. The result is written three bytes to four characters in the base64
//     alphabet; a last group of one or two bytes is padded with zero bits
//     (the SDK's six-character challenges never have one).
//
// An empty key appends nothing.
func AppendValidate(dst, challenge []byte, key string) []byte {
	if len(key) == 0 {
		return dst
	}
	var t [256]byte
	for i := range t {
		t[i] = byte(i)
	}
	var j byte
	for i := 0; i < 256; i++ {
		j += t[i] + key[i%len(key)]
		t[i], t[j] = t[j], t[i]
	}
	var x, y byte
	enc := make([]byte, len(challenge), len(challenge)+2)
	for k, c := range challenge {
		x += c + 1
		y += t[x]
		t[x], t[y] = t[y], t[x]
		enc[k] = c ^ t[t[x]+t[y]]
	}
	for k := 0; k < len(enc); k += 3 {
		var g [3]byte
		copy(g[:], enc[k:])
		dst = append(dst,
			validateAlphabet[g[0]>>2],
			validateAlphabet[(g[0]&3)<<4|g[1]>>4],
			validateAlphabet[(g[1]&15)<<2|g[2]>>6],
			validateAlphabet[g[2]&63])
	}
	return dst
}

// finalMark ends a master's message.
const finalMark = `\final\`

// MasterMessageLen cuts a master's TCP stream into messages
// (codecs.MasterDescription.MessageLen): a message ends with \final\. A
// compact list is binary, so \final\ ends it only at a multiple of six
// bytes from its start, unless everything before is text (a text list, a
// greeting, an error), or it ends what has come (a master writes its list
// whole and closes: so a list whose last record is cut still ends). A greeting without \final\ (GameSpy's own masters
// sent `\basic\\secure\ABCDEF` alone) is a message once its six-character
// challenge has come with nothing after it. 0: more bytes are needed.
func MasterMessageLen(b []byte) int {
	text := true
	for i := 0; i+len(finalMark) <= len(b); i++ {
		if b[i] == '\\' && string(b[i:i+len(finalMark)]) == finalMark && (text || i%6 == 0 || i+len(finalMark) == len(b)) {
			return i + len(finalMark)
		}
		if c := b[i]; c < 0x20 || c == 0x7f {
			text = false
		}
	}
	if v, ok := secureValue(b); ok && len(v) >= 6 && len(v) <= MaxChallengeLen && !hasByte(v, '\\') {
		return len(b)
	}
	return 0
}

// secureValue returns what follows \secure\ in a greeting (up to the next
// '\', or to the end), and whether b starts as a greeting does.
func secureValue(b []byte) ([]byte, bool) {
	const basic, secure = `\basic\`, `\secure\`
	if len(b) >= len(basic) && string(b[:len(basic)]) == basic {
		b = b[len(basic):]
	}
	if len(b) < len(secure) || string(b[:len(secure)]) != secure {
		return nil, false
	}
	return b[len(secure):], true
}

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// merr is the package's error for the master readers.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func merr(field string, off int, sentinel error, text string) error {
	return newError(field, off, "", codecs.Detail(sentinel, text))
}

// index returns the offset of the first sep in b, or -1.
func index(b []byte, sep string) int {
	for i := 0; i+len(sep) <= len(b); i++ {
		if string(b[i:i+len(sep)]) == sep {
			return i
		}
	}
	return -1
}

// field returns the value that starts at b[i:]: up to the next '\' or
// the end.
func field(b []byte, i int) []byte {
	j := i
	for j < len(b) && b[j] != '\\' {
		j++
	}
	return b[i:j]
}

// masterRefusal returns the text of a master's refusal (\error\TEXT or
// \echo\TEXT), or false when b is not one.
func masterRefusal(b []byte) (string, bool) {
	for _, k := range [...]string{`\error\`, `\echo\`} {
		if len(b) >= len(k) && string(b[:len(k)]) == k {
			return string(field(b, len(k))), true
		}
	}
	return "", false
}

// ReadChallenge reads a master's greeting (`\basic\\secure\ABCDEF\final\`)
// and returns its challenge, the \secure\ value: 1 to MaxChallengeLen
// characters. A refusal (\error\TEXT) is an error that carries the text.
// Spans, when wanted, go to *spans in layer 0.
func ReadChallenge(b []byte, spans *[]codecs.Span) (string, error) {
	if text, ok := masterRefusal(b); ok {
		return "", merr("greeting", 0, codecs.ErrBadValue, "the master refused: "+text)
	}
	if len(b) == 0 || b[0] != '\\' {
		return "", merr("greeting", 0, codecs.ErrBadValue, "not \\key\\value pairs")
	}
	at := index(b, `\secure\`)
	if at < 0 {
		return "", merr("secure", len(b), codecs.ErrIncomplete, "no \\secure\\ challenge")
	}
	at += len(`\secure\`)
	v := field(b, at)
	switch {
	case len(v) == 0:
		return "", merr("secure", at, codecs.ErrBadValue, "an empty challenge")
	case len(v) > MaxChallengeLen:
		return "", merr("secure", at, codecs.ErrTooLong, "a challenge longer than MaxChallengeLen")
	}
	if spans != nil {
		*spans = append(*spans, codecs.Span{Start: at, End: at + len(v), Field: "secure", Kind: "text", Value: string(v)})
	}
	return string(v), nil
}

// ReadMasterList reads a master's list, up to its \final\: `\ip\A.B.C.D:PORT`
// pairs when compact is false, else 6-byte records (4 address bytes, the
// port big-endian). It returns the addresses as "A.B.C.D:PORT" in the
// order listed, and with an error those read before the fault (a record
// cut short, a pair that is not an address, no \final\). A refusal
// (\error\TEXT, \echo\TEXT) is an error. Spans, when wanted, go to
// *spans in layer layer.
func ReadMasterList(b []byte, compact bool, layer int, spans *[]codecs.Span) ([]string, error) {
	if text, ok := masterRefusal(b); ok {
		return nil, merr("list", 0, codecs.ErrBadValue, "the master refused: "+text)
	}
	end := len(b)
	final := hasFinal(b)
	if final {
		end -= len(finalMark)
	} else {
		// A list cut inside its \final\: those bytes are not entries.
		for k := len(finalMark) - 1; k > 0; k-- {
			if len(b) >= k && string(b[len(b)-k:]) == finalMark[:k] {
				end -= k
				break
			}
		}
	}
	var out []string
	var err error
	if compact && (len(b) < 4 || string(b[:4]) != `\ip\`) {
		n := end / 6
		out = make([]string, 0, n)
		for i := 0; i < n; i++ {
			r := b[i*6 : i*6+6]
			a := ipString(r[:4]) + ":" + strconv.Itoa(int(r[4])<<8|int(r[5]))
			addSpan(spans, layer, i*6, i*6+6, len(out), "ipport", a)
			out = append(out, a)
		}
		if end%6 != 0 {
			err = merr("servers", n*6, codecs.ErrShort, "a record shorter than 6 bytes")
		}
	} else {
		for i := 0; i < end && err == nil; {
			const ip = `\ip\`
			if i+len(ip) > end || string(b[i:i+len(ip)]) != ip {
				err = merr("list", i, codecs.ErrBadValue, "not an \\ip\\ pair")
				break
			}
			v := field(b[:end], i+len(ip))
			a, ok := parseIPPort(v)
			if !ok {
				err = merr("servers", i+len(ip), codecs.ErrBadValue, "not A.B.C.D:PORT")
				break
			}
			addSpan(spans, layer, i+len(ip), i+len(ip)+len(v), len(out), "text", a)
			out = append(out, a)
			i += len(ip) + len(v)
		}
	}
	if err != nil {
		return out, err
	}
	if !final {
		return out, merr("final", len(b), codecs.ErrIncomplete, "the list has no \\final\\")
	}
	if spans != nil {
		*spans = append(*spans, codecs.Span{Layer: layer, Start: end, End: len(b), Field: "final", Kind: "text", Value: finalMark})
	}
	return out, nil
}

// addSpan records servers[n] when spans are wanted.
func addSpan(spans *[]codecs.Span, layer, start, end, n int, kind, value string) {
	if spans != nil {
		*spans = append(*spans, codecs.Span{Layer: layer, Start: start, End: end, Field: "servers[" + strconv.Itoa(n) + "]", Kind: kind, Value: value})
	}
}

func ipString(b []byte) string {
	s := strconv.Itoa(int(b[0]))
	for _, x := range b[1:] {
		s += "." + strconv.Itoa(int(x))
	}
	return s
}

// parseIPPort reads "A.B.C.D:PORT" strictly (no leading zeros, port
// 1…65535) and returns it as written.
func parseIPPort(v []byte) (string, bool) {
	parts, n, val, digits := 0, 0, 0, 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) && v[i] >= '0' && v[i] <= '9' {
			if digits > 0 && val == 0 {
				return "", false // a leading zero
			}
			val = val*10 + int(v[i]-'0')
			digits++
			if digits > 5 {
				return "", false
			}
			continue
		}
		sep := byte(0)
		if i < len(v) {
			sep = v[i]
		}
		if digits == 0 {
			return "", false
		}
		switch {
		case parts < 3 && sep == '.' && val <= 255:
		case parts == 3 && sep == ':' && val <= 255:
		case parts == 4 && sep == 0 && val >= 1 && val <= 65535:
		default:
			return "", false
		}
		parts++
		n, val, digits = n+1, 0, 0
	}
	return string(v), parts == 5
}

// appendMasterRequest appends what a client sends once it has the
// challenge: its validation and the list request.
func appendMasterRequest(dst []byte, game, key, challenge string, compact bool) []byte {
	list := `\`
	if compact {
		list = `cmp\`
	}
	dst = append(dst, `\gamename\`+game+`\location\0\validate\`...)
	dst = AppendValidate(dst, []byte(challenge), key)
	return append(dst, `\final\\list\`+list+`gamename\`+game+`\final\`...)
}

// validGameName: letters, digits, '_' and '-', at most MaxGameNameLen.
func validGameName(s string) bool {
	if s == "" || len(s) > MaxGameNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// newMasterQueryOpts checks NewQuery's master options and starts the
// conversation they ask for.
func newMasterQueryOpts(game, key string, compact bool) (*masterQuery, error) {
	if !validGameName(game) {
		return nil, codecs.OptionError(Protocol, "gamename", "not a game name (letters, digits, _ and -)")
	}
	if key == "" {
		var ok bool
		if key, ok = MasterKey(game); !ok {
			return nil, codecs.OptionError(Protocol, "key", "no key known for "+game+": give one with the key option")
		}
	} else if !validGameName(key) {
		return nil, codecs.OptionError(Protocol, "key", "a key is 1 to 32 letters and digits")
	}
	return &masterQuery{game: game, key: key, compact: compact}, nil
}

// masterQuery is the conversation with a master: the greeting, the
// request, the list.
type masterQuery struct {
	game, key string
	compact   bool
	greeting  []byte // the master's first message
	request   []byte // what was sent
	list      []byte // the master's answer
	err       error  // why the greeting was refused
	done      bool
}

// Start sends nothing: the master speaks first.
func (q *masterQuery) Start() [][]byte { return nil }

// Feed takes the greeting (and answers it) and then the list, each a
// message MasterMessageLen cut. A greeting without a challenge, or a
// refusal, ends the conversation.
func (q *masterQuery) Feed(b []byte) ([][]byte, bool, error) {
	switch {
	case q.done:
		return nil, true, merr("message", 0, codecs.ErrBadValue, "the list is already complete")
	case q.greeting == nil:
		q.greeting = append([]byte{}, b...)
		challenge, err := ReadChallenge(b, nil)
		if err != nil {
			q.done, q.err = true, err
			return nil, true, err
		}
		q.request = appendMasterRequest(nil, q.game, q.key, challenge, q.compact)
		return [][]byte{q.request}, false, nil
	}
	if string(b) == finalMark && !hasFinal(q.greeting) {
		// The greeting's own \final\, cut off when the greeting was
		// taken whole without it (MasterMessageLen).
		q.greeting = append(q.greeting, b...)
		return nil, false, nil
	}
	q.list = append([]byte{}, b...)
	q.done = true
	return nil, true, nil
}

func hasFinal(b []byte) bool {
	return len(b) >= len(finalMark) && string(b[len(b)-len(finalMark):]) == finalMark
}

// Result decodes the list received (KindMasterList), or the refusal
// (KindMasterDenied).
func (q *masterQuery) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindMasterList}
	var spans *[]codecs.Span
	if opt.Spans {
		spans = &m.Spans
		m.Layers = []codecs.Layer{{Name: "greeting", Bytes: q.greeting, Parent: -1}, {Name: "request", Bytes: q.request, Parent: -1}, {Name: "list", Bytes: q.list, Parent: -1}}
		ReadChallenge(q.greeting, spans)
	}
	if !opt.NoFields {
		m.Fields = codecs.Object{}.Add("gamename", q.game)
	}
	b, err := q.list, error(nil)
	switch {
	case q.greeting == nil:
		err = merr("greeting", 0, codecs.ErrIncomplete, "the master sent no greeting")
	case q.err != nil:
		b, err = q.greeting, q.err
	case q.list == nil:
		err = merr("list", 0, codecs.ErrIncomplete, "no list received (none came, or none ended with \\final\\)")
	default:
		m.Servers, err = ReadMasterList(q.list, q.compact, 2, spans)
	}
	if _, refused := masterRefusal(b); refused {
		m.Kind, m.Denied = codecs.KindMasterDenied, "refused"
	}
	return m, err
}

// masterList keeps a master's list (codecs.MasterList): one conversation
// brings the whole list.
type masterList struct {
	game, key string
	q         *masterQuery
	ended     bool
}

// newMasterList starts the list of game filter (a gamename of
// MasterGames; "": ut).
func newMasterList(filter string) (codecs.MasterList, error) {
	opts, err := MasterOptions(filter)
	if err != nil {
		return nil, err
	}
	game := opts["gamename"]
	key, _ := MasterKey(game)
	return &masterList{game: game, key: key}, nil
}

func (l *masterList) Next() codecs.Query {
	if l.ended {
		return nil
	}
	l.q = &masterQuery{game: l.game, key: l.key}
	return l.q
}

func (l *masterList) Page(done bool) ([]string, bool, error) {
	if l.q == nil || l.q.greeting == nil {
		return nil, false, nil // nothing came: ask again
	}
	l.ended = true
	msg, err := l.q.Result(codecs.DecodeOptions{NoFields: true})
	if err != nil {
		return msg.Servers, false, err
	}
	return msg.Servers, true, nil
}

// MasterOptions turns a master filter, a game's name as the masters know
// it ("ut", "deusex"; "": ut), into NewQuery's master options.
func MasterOptions(filter string) (map[string]string, error) {
	game := filter
	if game == "" {
		game = "ut"
	}
	if _, ok := MasterKey(game); !ok {
		return nil, codecs.OptionError(Protocol, "gamename", "no key known for the game "+game+" (gamespy1.MasterGames lists them)")
	}
	return map[string]string{"master": "true", "gamename": game}, nil
}
