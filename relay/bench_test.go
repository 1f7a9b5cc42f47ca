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
	"github.com/querylens/querylens/relay/wire"
)

func percentile(d []time.Duration, p float64) time.Duration {
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkRoundTrip measures one query and its reply directly over UDP
// and through the relay (WebSocket on loopback, cache miss: every question
// is new), alternating, and reports the medians and 90th percentiles and
// what the relay adds at the median. (The sub-benchmark keeps the name
// relay=now that bench/cmd/benchreport reads.)
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("relay=now", benchRoundTrip)
}

func benchRoundTrip(b *testing.B) {
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
		c.sendRaw(ctx, wire.AppendQuery(nil, id, testProto, r.addr, []byte(q)))
		if fr := c.read(ctx); fr.Type != wire.FrameReply {
			b.Fatalf("got %v %q", fr.Type, fr.Message)
		}
		relayed = append(relayed, time.Since(start))
		c.sendRaw(ctx, wire.AppendIDFrame(nil, wire.FrameCancel, id))
		if fr := c.read(ctx); fr.Type != wire.FrameEnd {
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
func BenchmarkThroughput(b *testing.B) {
	for _, replies := range []int{1, 8} {
		b.Run("replies="+strconv.Itoa(replies)+"/relay=now", func(b *testing.B) {
			benchThroughput(b, replies)
		})
	}
}

// throughputConfig is the relay of the throughput benchmarks: every query
// is new (no cache) and many may be open.
func throughputConfig() Config {
	cfg := testConfig()
	cfg.MaxUpstream = 4096
	cfg.CacheTTL = -1
	cfg.ReplyWindow = 2 * time.Second
	cfg.MaxConnsPerIP = 100000
	cfg.MaxConns = 100000
	return cfg
}

// loadResponders are the 64 servers the throughput benchmarks ask, each
// many times: an upstream socket never serves a server twice (see
// sockets.go), so with fewer servers than socketUses the relay's sockets
// would retire before their last use.
func loadResponders(b *testing.B, replies int) []*responder {
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
	return responders
}

func benchThroughput(b *testing.B, replies int) {
	ctx := testCtx(b, 10*time.Minute)
	responders := loadResponders(b, replies)
	f := newRelay(b, throughputConfig())
	b.ResetTimer()
	start, cpuStart := time.Now(), cpuTime()
	lost := runLoad(b, ctx, f.url, responders, replies)
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
	b.ReportMetric(float64(lost), "lost")
}

// BenchmarkRelayProcess is BenchmarkThroughput with single-reply
// exchanges and the relay in a child process, so that its own CPU time is
// measured apart from the load generator's and the responders'. It reports
// the relay's CPU per exchange and the exchanges per second that two cores
// given to the relay alone would carry (2 s of CPU per second), next to
// the rate reached on this machine with everything sharing it.
//
// load=hog runs a busy loop pinned to CPU 0 in another process meanwhile
// (TestHelperCPUHog), so that the relay and the load generator share what
// is left of a second core: the busy-machine case.
func BenchmarkRelayProcess(b *testing.B) {
	for _, load := range []string{"quiet", "hog"} {
		b.Run("load="+load+"/relay=now", func(b *testing.B) {
			benchRelayProcess(b, load == "hog")
		})
	}
}

func benchRelayProcess(b *testing.B, hog bool) {
	ctx := testCtx(b, 10*time.Minute)
	if hog {
		startCPUHog(b, ctx)
	}
	responders := loadResponders(b, 1)
	child := startRelayProcess(b, ctx)
	b.ResetTimer()
	start, cpuStart := time.Now(), child.cpu()
	lost := runLoad(b, ctx, child.relayURL(), responders, 1)
	elapsed, cpu := time.Since(start), child.cpu()-cpuStart
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "exchanges/s")
	b.ReportMetric(float64(cpu/time.Microsecond)/float64(b.N), "relay-cpu-µs/exchange")
	b.ReportMetric(2*float64(b.N)/cpu.Seconds(), "exchanges/s@2cpu")
	b.ReportMetric(float64(lost), "lost")
}

// startCPUHog starts a busy loop pinned to CPU 0 in a child process until
// the benchmark ends (or for 10 minutes at most).
func startCPUHog(b *testing.B, ctx context.Context) {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperCPUHog$")
	cmd.Env = append(os.Environ(), "QUERYLENS_CPU_HOG=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || strings.TrimSpace(line) != "hogging" {
		b.Fatalf("the CPU hog did not start: %q %v", line, err)
	}
}

// TestHelperCPUHog is the child of startCPUHog: one thread pinned to CPU 0
// spinning until its standard input closes, at most 10 minutes.
func TestHelperCPUHog(t *testing.T) {
	if os.Getenv("QUERYLENS_CPU_HOG") != "1" {
		t.Skip("helper process for the benchmarks' CPU hog")
	}
	runtime.LockOSThread()
	if err := pinToCPU0(); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	go func() { io.Copy(io.Discard, os.Stdin); stop.Store(true) }()
	os.Stdout.WriteString("hogging\n")
	deadline := time.Now().Add(10 * time.Minute)
	for n := 0; !stop.Load(); n++ {
		if n%(1<<20) == 0 && time.Now().After(deadline) {
			return
		}
	}
}

// runLoad sends b.N single queries through the relay at url from 8
// connections, each keeping 16 open, spread over the responders, and
// waits for every one to end. A query ends when its replies all came (the
// client cancels it then, as a page does) or its window closed. It returns
// how many got no reply (datagrams the kernel dropped under load).
func runLoad(b *testing.B, ctx context.Context, url string, responders []*responder, replies int) int64 {
	const conns, window = 8, 16
	clients := make([]*rawClient, conns)
	for i := range clients {
		clients[i] = dialRaw(b, ctx, url)
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
	var wg sync.WaitGroup
	for ci, c := range clients {
		wg.Go(func() {
			var seq uint64
			open := 0
			send := func(id uint32) {
				seq++
				target := responders[(ci+int(seq))%len(responders)].addr
				d := "RQ" + strconv.Itoa(ci) + "." + strconv.FormatUint(seq, 10)
				c.ws.Write(ctx, websocket.MessageBinary, wire.AppendQuery(nil, id, testProto, target, []byte(d)))
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
				fr, _ := wire.ParseFrame(msg)
				switch fr.Type {
				case wire.FrameReply:
					if got[fr.ID]++; got[fr.ID] == replies {
						c.ws.Write(ctx, websocket.MessageBinary, wire.AppendIDFrame(nil, wire.FrameCancel, fr.ID))
					}
				case wire.FrameEnd:
					delete(got, fr.ID)
					open--
					if take() {
						send(fr.ID)
					}
				case wire.FrameError:
					if fr.Code != wire.CodeTimeout {
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
	for _, c := range clients {
		c.ws.CloseNow()
	}
	return lost.Load()
}

// relayProcess is a relay in a child process (TestHelperRelayProcess).
type relayProcess struct {
	b    *testing.B
	base string
}

func (p *relayProcess) relayURL() string { return "ws" + strings.TrimPrefix(p.base, "http") + "/relay" }

func (p *relayProcess) get(path string) string {
	resp, err := http.Get(p.base + path)
	if err != nil {
		p.b.Fatal(err)
	}
	defer resp.Body.Close()
	s, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(s))
}

// cpu is the child's CPU time so far (user and system).
func (p *relayProcess) cpu() time.Duration {
	v, _ := strconv.ParseInt(p.get("/cpu"), 10, 64)
	return time.Duration(v)
}

// startRelayProcess starts this test binary as a relay child.
func startRelayProcess(b *testing.B, ctx context.Context) *relayProcess {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperRelayProcess$")
	cmd.Env = append(os.Environ(), "QUERYLENS_RELAY_HELPER=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	base, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return &relayProcess{b: b, base: strings.TrimSpace(base)}
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
			ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{wire.Subprotocol}})
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
	// The throughput benchmarks' config: for idle connections only the
	// connection caps matter.
	srv := New(throughputConfig(), nil)
	mux := http.NewServeMux()
	mux.Handle("/relay", srv)
	mux.HandleFunc("/cpu", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strconv.FormatInt(int64(cpuTime()), 10)+"\n")
	})
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
