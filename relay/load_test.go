package relay

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
)

// TestLoad500Clients runs 500 WebSocket clients at once, each asking
// several loopback responders distinct questions: every reply must arrive.
func TestLoad500Clients(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const clients, perClient, parts = 500, 4, 2
	ctx := testCtx(t, 90*time.Second)
	cfg := testConfig()
	cfg.ReplyWindow = 5 * time.Second
	f := newRelay(t, cfg)
	responders := make([]*responder, 8)
	for i := range responders {
		responders[i] = newResponder(t, func(d []byte) [][]byte {
			return [][]byte{append([]byte("RA1"), d[2:]...), append([]byte("RA2"), d[2:]...)}
		})
	}
	var done, received atomic.Int64
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			c, err := Dial(ctx, f.url, nil)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for j := range perClient {
				r := responders[(i+j)%len(responders)]
				q := &testQuery{tag: strconv.Itoa(i) + "." + strconv.Itoa(j), parts: parts}
				res, err := c.Exchange(ctx, testProto, r.addr, q)
				if err != nil {
					errs <- err
					return
				}
				if !res.Done {
					errs <- errors.New("exchange " + q.tag + " not done")
					return
				}
				for _, b := range q.got {
					if !bytes.HasSuffix(b, []byte(q.tag)) {
						errs <- errors.New("reply " + string(b) + " for " + q.tag)
						return
					}
				}
				done.Add(1)
				received.Add(int64(res.Received))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var upstream int64
	for _, r := range responders {
		upstream += r.count.Load()
	}
	if done.Load() != clients*perClient || received.Load() != clients*perClient*parts || upstream != clients*perClient {
		t.Fatalf("%d exchanges done, %d replies, %d upstream queries", done.Load(), received.Load(), upstream)
	}
	if d := f.metric(`querylens_relay_drops_total{reason="queue-full"}`); d != 0 {
		t.Fatalf("%v replies dropped", d)
	}
}

// TestZandronumThroughRelay relays a real Zandronum launcher query, built
// by the registered codec, to a loopback responder that answers with a
// reference "too soon" reply, and checks that the conversation completes.
func TestZandronumThroughRelay(t *testing.T) {
	codec, err := codecs.Lookup("zandronum")
	if err != nil {
		t.Skip("zandronum is not registered")
	}
	ctx := testCtx(t, 10*time.Second)
	// 5660024 (too soon) echoing time 1597643819, Huffman-encoded
	// (spec vectors: "response: denied, query too soon").
	tooSoon, _ := hex.DecodeString("044712f1d232025a0b")
	var mu sync.Mutex
	var got []byte
	r := newResponder(t, func(d []byte) [][]byte {
		mu.Lock()
		got = d
		mu.Unlock()
		return [][]byte{tooSoon}
	})
	f := newRelay(t, testConfig())
	c := dialClient(t, ctx, f.url)
	q, err := codec.NewQuery(map[string]string{"time": "1597643819"})
	if err != nil {
		t.Fatal(err)
	}
	sent := q.Start()[0]
	res, err := c.Exchange(ctx, "zandronum", r.addr, q)
	if err != nil || !res.Done || res.Received != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !bytes.Equal(got, sent) || codec.CheckQuery(got) != nil {
		t.Fatalf("responder got %x, want the query %x", got, sent)
	}
	msg, err := q.Result(codecs.DecodeOptions{})
	if err != nil || msg.Kind != codecs.KindDenied || msg.Denied != codecs.DeniedRateLimited {
		t.Fatalf("result %+v %v", msg, err)
	}
	// A Zandronum datagram that is not a query is refused before sending.
	_, err = c.Exchange(ctx, "zandronum", r.addr, fixedQuery{tooSoon})
	var re *RefusedError
	if !errors.As(err, &re) || re.Code != CodeNotAQuery {
		t.Fatalf("a reply sent as a query: %v", err)
	}
}

// fixedQuery sends one given datagram and is never done.
type fixedQuery struct{ d []byte }

func (q fixedQuery) Start() [][]byte                                      { return [][]byte{q.d} }
func (q fixedQuery) Feed([]byte) ([][]byte, bool, error)                  { return nil, false, nil }
func (q fixedQuery) Result(codecs.DecodeOptions) (*codecs.Message, error) { return nil, nil }
