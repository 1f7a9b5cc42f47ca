package relay

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func percentile(d []time.Duration, p float64) time.Duration {
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkRoundTrip measures one query and its reply directly over UDP
// and through the relay (WebSocket on loopback, cache miss: every question
// is new), alternating, and reports the medians and 90th percentiles and
// what the relay adds at the median.
func BenchmarkRoundTrip(b *testing.B) {
	ctx := testCtx(b, 10*time.Minute)
	r := newResponder(b, echoReply)
	f := newRelay(b, testConfig())
	c := dialRaw(b, ctx, f.url)
	udp, err := net.Dial("udp", r.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer udp.Close()
	buf := make([]byte, 2048)
	var direct, relayed []time.Duration
	var id uint32
	for b.Loop() {
		id++
		q := "RQ" + strconv.FormatUint(uint64(id), 10)

		start := time.Now()
		udp.Write([]byte(q))
		if _, err := udp.Read(buf); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, time.Since(start))

		start = time.Now()
		c.sendRaw(ctx, appendQuery(nil, id, testProto, r.addr, []byte(q)))
		if fr := c.read(ctx); fr.Type != FrameReply {
			b.Fatalf("got %v %q", fr.Type, fr.Message)
		}
		relayed = append(relayed, time.Since(start))
		c.sendRaw(ctx, appendIDFrame(nil, FrameCancel, id))
		if fr := c.read(ctx); fr.Type != FrameEnd {
			b.Fatalf("got %v", fr.Type)
		}
	}
	d50, r50 := percentile(direct, 0.5), percentile(relayed, 0.5)
	b.ReportMetric(us(d50), "direct-p50-µs")
	b.ReportMetric(us(percentile(direct, 0.9)), "direct-p90-µs")
	b.ReportMetric(us(r50), "relay-p50-µs")
	b.ReportMetric(us(percentile(relayed, 0.9)), "relay-p90-µs")
	b.ReportMetric(us(r50-d50), "added-p50-µs")
}

// BenchmarkThroughput pushes queries through one relay from several
// connections, each keeping a window of queries open; every query is new
// (cache miss) and gets replies datagrams back. It reports reply datagrams
// per second through the relay. Load generator and responders run in the
// same process and share its CPUs.
//
// sockets=per-exchange is the relay before upstream sockets were reused (a
// new socket for every exchange), kept for this comparison only.
func BenchmarkThroughput(b *testing.B) {
	for _, replies := range []int{1, 8} {
		for _, reuse := range []bool{false, true} {
			name := "replies=" + strconv.Itoa(replies) + "/sockets=per-exchange"
			if reuse {
				name = "replies=" + strconv.Itoa(replies) + "/sockets=reused"
			}
			b.Run(name, func(b *testing.B) {
				benchThroughput(b, replies, reuse)
			})
		}
	}
}

func benchThroughput(b *testing.B, replies int, reuse bool) {
	const conns, window = 8, 16
	ctx := testCtx(b, 10*time.Minute)
	// 64 servers, each asked many times: an upstream socket never serves a
	// server twice (see sockets.go), so with fewer servers than
	// socketUses sockets would retire before their last use.
	responders := make([]*responder, 64)
	for i := range responders {
		responders[i] = newResponder(b, func(d []byte) [][]byte {
			out := make([][]byte, replies)
			for j := range out {
				out[j] = append([]byte("RA"), d[2:]...)
			}
			return out
		})
	}
	cfg := testConfig()
	cfg.MaxUpstream = 4096
	cfg.CacheTTL = -1
	cfg.ReplyWindow = 2 * time.Second
	f := newRelay(b, cfg)
	f.srv.sockets.reuse = reuse && canReconnect
	clients := make([]*rawClient, conns)
	for i := range clients {
		clients[i] = dialRaw(b, ctx, f.url)
	}
	var next sync.Mutex
	var lost atomic.Int64
	issued := 0
	take := func() bool {
		next.Lock()
		defer next.Unlock()
		if issued >= b.N {
			return false
		}
		issued++
		return true
	}
	b.ResetTimer()
	start, cpuStart := time.Now(), cpuTime()
	var wg sync.WaitGroup
	for ci, c := range clients {
		wg.Go(func() {
			var seq uint64
			open := 0
			send := func(id uint32) {
				seq++
				target := responders[(ci+int(seq))%len(responders)].addr
				d := "RQ" + strconv.Itoa(ci) + "." + strconv.FormatUint(seq, 10)
				c.ws.Write(ctx, websocket.MessageBinary, appendQuery(nil, id, testProto, target, []byte(d)))
				open++
			}
			got := make(map[uint32]int)
			for id := uint32(1); id <= window && take(); id++ {
				send(id)
			}
			for open > 0 {
				_, msg, err := c.ws.Read(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				fr, _ := ParseFrame(msg)
				switch fr.Type {
				case FrameReply:
					if got[fr.ID]++; got[fr.ID] == replies {
						c.ws.Write(ctx, websocket.MessageBinary, appendIDFrame(nil, FrameCancel, fr.ID))
					}
				case FrameEnd:
					delete(got, fr.ID)
					open--
					if take() {
						send(fr.ID)
					}
				case FrameError:
					if fr.Code != CodeTimeout {
						b.Errorf("query %d: %v %s", fr.ID, fr.Code, fr.Message)
						return
					}
					lost.Add(1) // a datagram the kernel dropped under load
					delete(got, fr.ID)
					open--
					if take() {
						send(fr.ID)
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), cpuTime()-cpuStart
	b.ReportMetric(float64(b.N*replies)/elapsed.Seconds(), "replies/s")
	// CPU time of the whole process (relay, load generator and responders)
	// per reply, and the reply rate two fully available cores would give:
	// a figure that does not depend on what else the machine is running.
	if cpu > 0 {
		b.ReportMetric(float64(cpu/time.Microsecond)/float64(b.N*replies), "cpu-µs/reply")
		b.ReportMetric(2*float64(b.N*replies)/cpu.Seconds(), "replies/s@2cpu")
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "queries/s")
	b.ReportMetric(float64(lost.Load()), "lost")
}

// BenchmarkIdleConnMemory opens idle connections to a relay running in a
// child process (so that the clients' memory is not counted) and reports
// the relay's heap plus goroutine stacks per connection. Run it with
// -benchtime=1x: each iteration opens its own set of connections.
func BenchmarkIdleConnMemory(b *testing.B) {
	const n = 1000
	ctx := testCtx(b, 5*time.Minute)
	for b.Loop() {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperRelayProcess$")
		cmd.Env = append(os.Environ(), "QUERYLENS_RELAY_HELPER=1")
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		base, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		base = strings.TrimSpace(base)
		mem := func() float64 {
			resp, err := http.Get(base + "/mem")
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			s, _ := io.ReadAll(resp.Body)
			v, _ := strconv.ParseFloat(strings.TrimSpace(string(s)), 64)
			return v
		}
		before := mem()
		wsURL := "ws" + strings.TrimPrefix(base, "http") + "/relay"
		conns := make([]*websocket.Conn, 0, n)
		for range n {
			ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := ws.Read(ctx); err != nil { // HELLO
				b.Fatal(err)
			}
			conns = append(conns, ws)
		}
		after := mem()
		b.ReportMetric((after-before)/n, "bytes/conn")
		for _, ws := range conns {
			ws.CloseNow()
		}
		stdin.Close()
		cmd.Wait()
	}
}

// TestHelperRelayProcess is the child of BenchmarkIdleConnMemory: a relay
// on loopback plus /mem, which reports heap in use plus stack in use after
// a collection. It stops when its standard input closes.
func TestHelperRelayProcess(t *testing.T) {
	if os.Getenv("QUERYLENS_RELAY_HELPER") != "1" {
		t.Skip("helper process for BenchmarkIdleConnMemory")
	}
	cfg := testConfig()
	cfg.MaxConnsPerIP = 100000
	cfg.MaxConns = 100000
	srv := New(cfg, nil)
	mux := http.NewServeMux()
	mux.Handle("/relay", srv)
	mux.HandleFunc("/mem", func(w http.ResponseWriter, r *http.Request) {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		io.WriteString(w, strconv.FormatUint(ms.HeapInuse+ms.StackInuse, 10)+"\n")
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	os.Stdout.WriteString(ts.URL + "\n")
	io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}
