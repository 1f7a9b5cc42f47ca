package relay

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/relay/client"
)

// TestLoad500Clients runs 500 WebSocket clients at once, each asking
// several loopback responders distinct questions: every reply must arrive.
func TestLoad500Clients(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: 500 clients, left out by -short")
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
			c, err := client.Dial(ctx, f.url, nil)
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
