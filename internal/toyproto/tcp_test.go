package toyproto

import (
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
)

func init() { RegisterTCP() }

func reply(players int) []byte {
	b := TCPMessage("R" + ServerName)
	for range players {
		b = append(b, TCPMessage("P")...)
	}
	return append(b, TCPMessage("E")...)
}

// TestNewConversation: a page's conversation of a stream protocol takes the
// stream's bytes in any pieces and asks nothing to be written; without a
// target it names localhost (the relay's own query names the real one).
func TestNewConversation(t *testing.T) {
	q, stream, err := codecs.NewConversation(TCPCodec{}, nil)
	if err != nil || !stream {
		t.Fatalf("NewConversation = %v, %v", stream, err)
	}
	if got := q.Start(); len(got) != 1 || string(got[0][2:]) != "Qlocalhost:27996" {
		t.Fatalf("Start = %q", got)
	}
	b := reply(3)
	for i := range b {
		send, done, err := q.Feed(b[i : i+1])
		if len(send) != 0 || err != nil || done != (i == len(b)-1) {
			t.Fatalf("Feed byte %d = %q, %v, %v", i, send, done, err)
		}
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Info.NumPlayers != 3 {
		t.Fatalf("Result = %+v, %v", m, err)
	}
	q, _, _ = codecs.NewConversation(TCPCodec{}, map[string]string{"host": "Play.Example", "port": "25565"})
	if got := q.Start(); string(got[0][2:]) != "QPlay.Example:25565" {
		t.Fatalf("Start = %q", got)
	}
	if _, done, err := q.Feed(append(TCPMessage("R"), 0xff, 0xff)); !done || err == nil {
		t.Error("a malformed framing does not end the conversation")
	}
}

func TestDecodeStream(t *testing.T) {
	m, err := codecs.DecodeStream(TCPCodec{}, reply(2), codecs.DecodeOptions{})
	if err != nil || m.Info.Name != ServerName || m.Info.NumPlayers != 2 {
		t.Fatalf("DecodeStream = %+v, %v", m, err)
	}
	b := reply(1)
	m, err = codecs.DecodeStream(TCPCodec{}, b[:len(b)-1], codecs.DecodeOptions{})
	if !errors.Is(err, codecs.ErrIncomplete) || m == nil || m.Info.Name != ServerName {
		t.Fatalf("a cut stream: %+v, %v", m, err)
	}
}
