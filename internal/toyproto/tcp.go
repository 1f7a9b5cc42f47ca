package toyproto

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	// The TCP toy is a stream protocol: the page's side of it.
	_ "github.com/querylens/querylens/codecs/pagestream"
)

// The TCP toy is the toy's stream twin: a made-up protocol that runs over
// TCP (codecs.Description.Transport), so that tests prove a stream
// protocol plugs into the relay, the command line and the page the way a
// datagram one does. Every message is a big-endian u16 length and that
// many bytes. The client sends "Q" and the target as the user gave it
// (TargetInQuery: "Q" host ":" port); the server answers "R" and its
// name, a "P" message per player, and "E", which completes the reply.
// A bare name is looked up as SRV "_toytcp._tcp.NAME".

// TCPProtocol is the TCP toy's registered name.
const TCPProtocol = "toytcp"

// TCPPort is the TCP toy's default port.
const TCPPort = 27996

// TCPCap is the TCP toy's reply cap.
var TCPCap = codecs.ReplyCap{Bytes: 2048, Datagrams: 32}

// RegisterTCP registers the TCP toy's codec and description. Call it once,
// before anything reads the registry.
func RegisterTCP() {
	codecs.Register(TCPCodec{})
	codecs.Describe(codecs.Description{Name: TCPProtocol, Transport: codecs.TCP, MessageLen: TCPMessageLen,
		ReplyCap: TCPCap, SRV: "_toytcp._tcp", TargetInQuery: true})
}

// TCPMessageLen frames the TCP toy's stream: a u16 length (at most 1024)
// and the message.
func TCPMessageLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	n := int(binary.BigEndian.Uint16(b))
	switch {
	case n == 0 || n > 1024:
		return -1
	case len(b) < 2+n:
		return 0
	}
	return 2 + n
}

// TCPMessage frames body as one TCP toy message.
func TCPMessage(body string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(body))), body...)
}

// TCPCodec is the TCP toy's codecs.Codec.
type TCPCodec struct{}

func (TCPCodec) Name() string     { return TCPProtocol }
func (TCPCodec) Title() string    { return "Toy Protocol over TCP" }
func (TCPCodec) DefaultPort() int { return TCPPort }
func (TCPCodec) Options() []codecs.Option {
	return []codecs.Option{
		{Name: "host", Kind: codecs.OptionText, Help: "the server's name as the user gave it"},
		{Name: "port", Kind: codecs.OptionUint, Default: strconv.Itoa(TCPPort), Help: "the server's port as the user gave it"},
		{Name: "players", Kind: codecs.OptionBool, Default: "true", Help: "ask for the players too"},
	}
}

func (TCPCodec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if TCPMessageLen(b) <= 2 {
		return "", codecs.NotMine
	}
	switch b[2] {
	case 'Q', 'q':
		return codecs.KindQuery, codecs.Likely
	case 'R':
		return codecs.KindResponse, codecs.Likely
	}
	return "", codecs.NotMine
}

func (TCPCodec) CheckQuery(b []byte) error {
	if n := TCPMessageLen(b); n != len(b) || n < 3 || b[2] != 'Q' && b[2] != 'q' {
		return codecs.NewError(TCPProtocol, "magic", 0, codecs.ErrNotQuery)
	}
	return nil
}

func (TCPCodec) Decode(msgs [][]byte, _ codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: TCPProtocol, Kind: codecs.KindResponse}
	info := &codecs.Info{}
	for i, b := range msgs {
		if TCPMessageLen(b) != len(b) || len(b) < 3 {
			return m, codecs.NewError(TCPProtocol, "message["+strconv.Itoa(i)+"]", 0, codecs.ErrShort)
		}
		switch body := b[3:]; b[2] {
		case 'R':
			info.Has |= codecs.HasName
			info.Name = string(body)
		case 'P':
			info.Has |= codecs.HasNumPlayers
			info.NumPlayers++
		case 'E':
		default:
			return m, codecs.NewError(TCPProtocol, "message["+strconv.Itoa(i)+"].type", 2, codecs.ErrBadMagic)
		}
	}
	if info.Has&codecs.HasName == 0 {
		return m, codecs.NewError(TCPProtocol, "name", 0, codecs.ErrIncomplete)
	}
	m.Info = info
	return m, nil
}

func (c TCPCodec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(TCPProtocol, c.Options(), opts)
	host := r.Value("host")
	port := r.Uint("port", 16)
	players := r.Bool("players")
	if err := r.Err(); err != nil {
		return nil, err
	}
	if host == "" || len(host) > 253 || bytes.ContainsAny([]byte(host), "\r\n") {
		return nil, codecs.OptionError(TCPProtocol, "host", "a host name is needed")
	}
	kind := "Q"
	if !players {
		kind = "q"
	}
	return &tcpQuery{ask: TCPMessage(kind + host + ":" + strconv.FormatUint(port, 10))}, nil
}

type tcpQuery struct {
	ask []byte
	got [][]byte
}

func (q *tcpQuery) Start() [][]byte { return [][]byte{q.ask} }

func (q *tcpQuery) Feed(b []byte) ([][]byte, bool, error) {
	if len(b) < 3 || !bytes.ContainsRune([]byte("RPE"), rune(b[2])) {
		return nil, false, codecs.NewError(TCPProtocol, "type", 2, codecs.ErrBadMagic)
	}
	q.got = append(q.got, b)
	return nil, b[2] == 'E', nil
}

func (q *tcpQuery) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	return TCPCodec{}.Decode(q.got, opt)
}
