package pagestream_test

import (
	"errors"
	"os"
	"testing"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/internal/toyproto"
)

func TestMain(m *testing.M) {
	toyproto.RegisterTCP() // a made-up stream protocol, known to these tests alone
	os.Exit(m.Run())
}

// TestConversation: a stream protocol's page-side query takes the
// stream's bytes in any cuts and is done with the reply; a datagram
// protocol's is its codec's own.
func TestConversation(t *testing.T) {
	c, err := codecs.Lookup(toyproto.TCPProtocol)
	if err != nil {
		t.Fatal(err)
	}
	reply := append(toyproto.TCPMessage("R"+toyproto.ServerName), toyproto.TCPMessage("E")...)
	for _, cut := range []int{0, 1, 3, len(reply) - 1} {
		q, stream, err := codecs.NewConversation(c, nil)
		if err != nil || !stream {
			t.Fatalf("NewConversation = %v, %v", stream, err)
		}
		if _, done, err := q.Feed(reply[:cut]); done || err != nil {
			t.Fatalf("cut %d: done %v, %v after the first part", cut, done, err)
		}
		if _, done, err := q.Feed(reply[cut:]); !done || err != nil {
			t.Fatalf("cut %d: done %v, %v after the whole reply", cut, done, err)
		}
		if m, err := q.Result(codecs.DecodeOptions{}); err != nil || m.Info.Name != toyproto.ServerName {
			t.Errorf("cut %d: Result = %+v, %v", cut, m, err)
		}
	}
	d, _ := codecs.Lookup("quake3")
	if _, stream, err := codecs.NewConversation(d, nil); stream || err != nil {
		t.Errorf("a datagram protocol: stream %v, %v", stream, err)
	}
}

// TestDecodeStream: a reply given whole is cut into its messages; bytes
// left that are not a whole message are ErrIncomplete, with what decoded.
func TestDecodeStream(t *testing.T) {
	c, err := codecs.Lookup(toyproto.TCPProtocol)
	if err != nil {
		t.Fatal(err)
	}
	whole := append(toyproto.TCPMessage("R"+toyproto.ServerName), toyproto.TCPMessage("E")...)
	if m, err := codecs.DecodeStream(c, whole, codecs.DecodeOptions{}); err != nil || m.Info.Name != toyproto.ServerName {
		t.Errorf("whole: %+v, %v", m, err)
	}
	m, err := codecs.DecodeStream(c, whole[:len(whole)-1], codecs.DecodeOptions{})
	var ce *codecs.Error
	if !errors.Is(err, codecs.ErrIncomplete) || !errors.As(err, &ce) || ce.Field != "stream" || m == nil {
		t.Errorf("cut: %+v, %v", m, err)
	}
}
