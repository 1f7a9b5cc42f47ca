package redisstore

import (
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/internal/testredis"
	"github.com/querylens/querylens/internal/toyproto"
	"github.com/querylens/querylens/internal/toyproto/tcpserver"
	"github.com/querylens/querylens/relay"
)

func init() { toyproto.RegisterTCP() }

// TestRelaysShareStream: a stream exchange one relay held answers the
// other's from the shared cache; the server is connected to once.
func TestRelaysShareStream(t *testing.T) {
	srv := testredis.Start(t)
	st := open(t, srv.URL())
	up, err := tcpserver.Listen(tcpserver.Answer, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	a, b := newRelay(t, st, nil), newRelay(t, st, nil)
	ctx := ctxFor(t, 10*time.Second)
	ask := func(s *relay.Server) (bool, bool, *codecs.Message) {
		q, err := toyproto.TCPCodec{}.NewQuery(map[string]string{"host": "127.0.0.1", "port": up.Addr()[len("127.0.0.1:"):]})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.ExchangeOptions(ctx, toyproto.TCPProtocol, up.Addr(), nil, q)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := q.Result(codecs.DecodeOptions{})
		return res.Done, res.FromCache, m
	}
	if done, cached, m := ask(a); !done || cached || m.Info.NumPlayers != 2 {
		t.Fatalf("relay a: done=%v cached=%v %+v", done, cached, m)
	}
	// Relay a's exchange settles just after its asker is done.
	time.Sleep(100 * time.Millisecond)
	if done, cached, m := ask(b); !done || !cached || m.Info.NumPlayers != 2 {
		t.Fatalf("relay b: done=%v cached=%v %+v; want a cache hit", done, cached, m)
	}
	if n := up.Conns(); n != 1 {
		t.Fatalf("server connected to %d times, want 1", n)
	}
}
