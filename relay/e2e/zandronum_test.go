package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/wire"
)

// TestZandronumThroughRelay relays a real Zandronum launcher query, built
// by the registered codec, to a loopback responder that answers with a
// reference "too soon" reply, and checks that the conversation completes
// both over a WebSocket and in process.
func TestZandronumThroughRelay(t *testing.T) {
	codec, err := codecs.Lookup("zandronum")
	if err != nil {
		t.Fatal("zandronum is not registered (the test imports codecs/all): ", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// 5660024 (too soon) echoing time 1597643819, Huffman-encoded
	// (spec vectors: "response: denied, query too soon").
	tooSoon, _ := hex.DecodeString("044712f1d232025a0b")
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got [][]byte
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			mu.Lock()
			got = append(got, append([]byte(nil), buf[:n]...))
			mu.Unlock()
			pc.WriteToUDPAddrPort(tooSoon, from)
		}
	})
	defer func() { pc.Close(); wg.Wait() }()

	srv := relay.New(relay.Config{
		AllowTargets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		CacheTTL:     -1, // each exchange below must reach the responder
	}, nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Shutdown(ctx)
	c, err := relay.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	target := pc.LocalAddr().String()
	for _, run := range []struct {
		name     string
		exchange func(context.Context, string, string, codecs.Query) error
	}{
		{"client", func(ctx context.Context, p, t string, q codecs.Query) error { return done(c.Exchange(ctx, p, t, q)) }},
		{"server", func(ctx context.Context, p, t string, q codecs.Query) error { return done(srv.Exchange(ctx, p, t, q)) }},
	} {
		t.Run(run.name, func(t *testing.T) {
			q, err := codec.NewQuery(map[string]string{"time": "1597643819"})
			if err != nil {
				t.Fatal(err)
			}
			sent := q.Start()[0]
			if err := run.exchange(ctx, "zandronum", target, q); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			last := got[len(got)-1]
			mu.Unlock()
			if !bytes.Equal(last, sent) || codec.CheckQuery(last) != nil {
				t.Fatalf("responder got %x, want the query %x", last, sent)
			}
			msg, err := q.Result(codecs.DecodeOptions{})
			if err != nil || msg.Kind != codecs.KindDenied || msg.Denied != codecs.DeniedRateLimited {
				t.Fatalf("result %+v %v", msg, err)
			}
			// A Zandronum reply offered as a query is refused before sending.
			err = run.exchange(ctx, "zandronum", target, fixedQuery{tooSoon})
			var re *wire.RefusedError
			if !errors.As(err, &re) || re.Code != wire.CodeNotAQuery {
				t.Fatalf("a reply sent as a query: %v", err)
			}
		})
	}
}

// done turns an exchange that ended without a complete message into an error.
func done(res netquery.Result, err error) error {
	if err == nil && !res.Done {
		err = errors.New("the exchange did not complete")
	}
	return err
}

// fixedQuery sends one given datagram and is never done.
type fixedQuery struct{ d []byte }

func (q fixedQuery) Start() [][]byte                                      { return [][]byte{q.d} }
func (q fixedQuery) Feed([]byte) ([][]byte, bool, error)                  { return nil, false, nil }
func (q fixedQuery) Result(codecs.DecodeOptions) (*codecs.Message, error) { return nil, nil }
