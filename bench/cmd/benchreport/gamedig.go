package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/querylens/querylens/bench"
	"github.com/querylens/querylens/bench/farm"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
)

// gdConcurrency is how many servers each client asks at once.
const gdConcurrency = 100

// cliSample is how many servers the one-process-per-server comparison asks.
const cliSample = 10

// gdProtocol is one protocol of the GameDig section: the emulated
// servers, and how each client asks them the same questions.
type gdProtocol struct {
	title   string // "GameSpy v2"
	servers string // the emulated servers, as the page says it
	asks    string // what both clients ask, as the page says it
	handler func(i int) demo.Handler
	// stream, for a protocol over TCP (in place of handler), is server
	// i's: the servers are a farm.StreamFarm, and the replies sent and
	// received are counted in bytes.
	stream func(i int) demo.StreamHandler

	protocol string            // querylens's codec
	opts     map[string]string // its NewQuery options
	gdType   string            // GameDig's type
	gdRules  bool              // GameDig's requestRules
}

// gdProtocols are the protocols measured, in the page's order.
var gdProtocols = []gdProtocol{
	{title: "GameSpy v2", servers: "`demo.NewGameSpy2`",
		asks:     "everything; querylens in one combined query, GameDig in three in turn (server, players, teams)",
		handler:  func(i int) demo.Handler { return demo.NewGameSpy2(int64(i), demo.Normal) },
		protocol: "gamespy2", gdType: "battlefieldvietnam"},
	{title: "A2S", servers: "`demo.NewA2S`, Source, INFO challenge on",
		asks: "INFO, PLAYER and RULES, each after its challenge; the rules come in three split datagrams",
		handler: func(i int) demo.Handler {
			return demo.NewA2S(int64(i), demo.A2SConfig{InfoChallenge: true}, demo.Normal)
		},
		protocol: "a2s", gdType: "protocol-valve", gdRules: true},
	{title: "Quake III", servers: "`demo.NewQuake3`, ioquake3",
		asks:     "`getstatus`",
		handler:  func(i int) demo.Handler { return demo.NewQuake3(int64(i), demo.Quake3IOQ3, demo.Normal) },
		protocol: "quake3", gdType: "protocol-quake3"},
	{title: "GameSpy v1", servers: "`demo.NewGameSpy1`, Unreal Tournament",
		asks:     "`\\status\\xserverquery` (querylens's `xserverquery=true`); three datagrams, the final one first",
		handler:  func(i int) demo.Handler { return demo.NewGameSpy1(int64(i), demo.GameSpy1UT99, demo.Normal) },
		protocol: "gamespy1", opts: map[string]string{"xserverquery": "true"}, gdType: "protocol-gamespy1"},
	// The title of those below is the codec's (codecs.Codec.Title).
	{servers: "`demo.NewASE`, Multi Theft Auto",
		asks:     "`s`: the server, its rules and players in one reply",
		handler:  func(i int) demo.Handler { return demo.NewASE(int64(i), demo.ASEMTA, demo.Normal) },
		protocol: "ase", gdType: "protocol-ase"},
	{servers: "`demo.NewSAMP`, SA-MP 0.3.7",
		asks:     "`i`, `r` and `d` in turn (info, rules, players with ids and pings)",
		handler:  func(i int) demo.Handler { return demo.NewSAMP(int64(i), demo.SAMP037, demo.Normal) },
		protocol: "samp", gdType: "protocol-samp"},
	// GameDig's "minecraft" type asks three protocols of every server at
	// once (the Java List Ping over TCP, GameSpy v4's Query and Bedrock's
	// ping over UDP); "protocol-minecraftvanilla" is its Java List Ping
	// alone, which querylens's codec asks.
	{servers: "`demo.NewMinecraft`, vanilla 1.21.4, a 64×64 favicon",
		asks:     "the List Ping over TCP (handshake and status request, one status reply), a connection each",
		stream:   func(i int) demo.StreamHandler { return demo.NewMinecraft(int64(i), demo.MinecraftVanilla, demo.Normal) },
		protocol: "minecraft", gdType: "protocol-minecraftvanilla"},
}

// gdFarm is a protocol's running servers: a farm.Farm (UDP) or a
// farm.StreamFarm (TCP).
type gdFarm interface {
	Targets() []string
	Reset()
	Counts() (queries, replies int64)
	Close()
}

// startFarm starts p's servers, n of them.
func (p gdProtocol) startFarm(ctx context.Context, n int) (gdFarm, error) {
	if p.stream != nil {
		// n listeners, and both ends of every connection in progress
		// (gdConcurrency of each client), with room for the rest.
		if err := checkFiles(n + 2*gdConcurrency + 256); err != nil {
			return nil, err
		}
		return farm.StartTCP(ctx, n, p.stream, nil)
	}
	return farm.Start(ctx, n, p.handler)
}

// checkFiles fails, saying so, when this process may not open need files:
// Go raises the soft RLIMIT_NOFILE to the hard one as a program starts, so
// a limit still below need is the hard one.
func checkFiles(need int) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	if l.Cur < uint64(need) {
		return fmt.Errorf("this process may open %d files (RLIMIT_NOFILE, hard limit %d) and needs %d: raise it (ulimit -Hn)", l.Cur, l.Max, need)
	}
	return nil
}

// sentReceived are what the servers sent and the client received: reply
// datagrams over UDP; reply bytes written and read over TCP.
func sentReceived(f gdFarm, replies int64, datagrams int, bytes int64) (sent, got int64) {
	if sf, ok := f.(*farm.StreamFarm); ok {
		return sf.Bytes(), bytes
	}
	return replies, int64(datagrams)
}

// gdSelected is gdProtocols with their titles filled in, only those named
// in list (comma-separated codec names; "": all).
func gdSelected(list string) ([]gdProtocol, error) {
	var known []string
	for _, p := range gdProtocols {
		known = append(known, p.protocol)
	}
	want, err := protocolSet(list, known)
	if err != nil {
		return nil, err
	}
	var out []gdProtocol
	for _, p := range gdProtocols {
		if want != nil && !want[p.protocol] {
			continue
		}
		if p.title == "" {
			c, err := codecs.Lookup(p.protocol)
			if err != nil {
				return nil, fmt.Errorf("GameDig section: %w", err)
			}
			p.title = c.Title()
		}
		out = append(out, p)
	}
	return out, nil
}

// protocolSet reads -protocols against a section's known protocols: nil
// for all (an empty list), else the set named; a name the section does
// not know is an error.
func protocolSet(list string, known []string) (map[string]bool, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	want := map[string]bool{}
	for p := range strings.SplitSeq(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(known, p) {
			return nil, fmt.Errorf("-protocols: unknown protocol %q (known: %s)", p, strings.Join(known, ","))
		}
		want[p] = true
	}
	return want, nil
}

type gamedigResult struct {
	Asked         int            `json:"asked"`
	OK            int            `json:"ok"`
	Players       int            `json:"players"`
	Received      int            `json:"received"`
	ReceivedBytes int64          `json:"receivedBytes"` // read by TCP sockets
	MS            float64        `json:"ms"`
	Errors        map[string]int `json:"errors"`
}

// gamedigSection queries e.servers emulated servers of each protocol with
// GameDig and with querylens's native client, in quiet rounds and rounds
// with one core busy, alternating, and counts the datagrams on both sides.
func gamedigSection(ctx context.Context, e *env) (string, error) {
	gdDir := filepath.Join(e.root, "tools", "gamedig")
	if _, err := os.Stat(filepath.Join(gdDir, "node_modules", "gamedig")); err != nil {
		return "GameDig is not installed: run `npm ci --prefix tools/gamedig`.\n", err
	}
	selected, err := gdSelected(e.protocols)
	if err != nil {
		return "", err
	}
	var runs []gdRun
	for _, p := range selected {
		r, err := e.gamedigProtocol(ctx, gdDir, p)
		if err != nil {
			return "", fmt.Errorf("%s: %w", p.title, err)
		}
		runs = append(runs, r)
	}

	// One process per server: what a script that calls each tool's command
	// line pays, on a small sample of GameSpy v2 servers, the two tools
	// alternating.
	f, err := farm.Start(ctx, cliSample, gdProtocols[0].handler)
	if err != nil {
		return "", err
	}
	defer f.Close()
	targets := f.Targets()
	var cliQL, cliGD []float64
	for round := range e.e2eCount {
		fmt.Fprintf(e.log, "gamedig: command-line round %d/%d\n", round+1, e.e2eCount)
		start := time.Now()
		for _, t := range targets {
			if _, err := e.command(ctx, nil, e.querylens, "query", "-p", "gamespy2", t); err != nil {
				return "", err
			}
		}
		cliQL = append(cliQL, float64(time.Since(start).Microseconds())/1000/float64(len(targets)))
		start = time.Now()
		for _, t := range targets {
			host, port, _ := net.SplitHostPort(t)
			if _, err := e.commandIn(ctx, gdDir, nil, nil, e.node, "query.mjs", host, port); err != nil {
				return "", err
			}
		}
		cliGD = append(cliGD, float64(time.Since(start).Microseconds())/1000/float64(len(targets)))
	}
	return gamedigReport(e, gamedigVersion(gdDir), runs, cliQL, cliGD, len(targets)), nil
}

// gdRun is one protocol's rounds: each client quiet and with one core busy.
type gdRun struct {
	p                        gdProtocol
	native, gd, nativeH, gdH gamedigSide
}

// gamedigProtocol measures one protocol: a fresh farm, then e.e2eCount
// rounds, each a quiet and a loaded pass, each pass querylens then GameDig.
func (e *env) gamedigProtocol(ctx context.Context, gdDir string, p gdProtocol) (gdRun, error) {
	run := gdRun{p: p}
	f, err := p.startFarm(ctx, e.servers)
	if err != nil {
		return run, err
	}
	defer f.Close()
	targets := f.Targets()
	script := filepath.Join(e.root, "bench", "node", "gamedig.mjs")
	gdArgs := []string{script, gdDir, strconv.Itoa(gdConcurrency), "-type", p.gdType}
	if p.gdRules {
		gdArgs = append(gdArgs, "-rules")
	}
	gdArgs = append(gdArgs, "-")
	for _, s := range []*gamedigSide{&run.native, &run.gd, &run.nativeH, &run.gdH} {
		s.errs = map[string]int{}
	}
	for round := range e.e2eCount {
		for _, loaded := range []bool{false, true} {
			fmt.Fprintf(e.log, "gamedig: %s round %d/%d (cpu hog %v)\n", p.title, round+1, e.e2eCount, loaded)
			native, gd := &run.native, &run.gd
			var hog *cpuHog
			if loaded {
				native, gd = &run.nativeH, &run.gdH
				hog = startCPUHog(2 * time.Minute)
				if hog.pin != nil {
					fmt.Fprintf(e.log, "gamedig: cpu hog not pinned to CPU %d: %v\n", hogCPU, hog.pin)
				}
			}
			err := func() error {
				f.Reset()
				out, err := farm.QueryAll(ctx, p.protocol, p.opts, targets, gdConcurrency, 2*time.Second)
				if err != nil {
					return err
				}
				q, r := f.Counts()
				sent, got := sentReceived(f, r, out.Received, out.Bytes)
				native.add(float64(out.Wall.Microseconds())/1000, out.Done, out.Players, q, sent, got, out.Errors)
				fmt.Fprintf(e.log, "gamedig: querylens %+v; servers got %d queries, sent %d replies (%d counted)\n", out, q, r, sent)

				f.Reset()
				stdout, err := e.commandIn(ctx, gdDir, nil, strings.NewReader(strings.Join(targets, "\n")), e.node, gdArgs...)
				if err != nil {
					return err
				}
				res, err := parseGameDig(stdout)
				if err != nil {
					return err
				}
				q, r = f.Counts()
				sent, got = sentReceived(f, r, res.Received, res.ReceivedBytes)
				gd.add(res.MS, res.OK, res.Players, q, sent, got, res.Errors)
				fmt.Fprintf(e.log, "gamedig: GameDig %+v; servers got %d queries, sent %d replies (%d counted)\n", res, q, r, sent)
				return nil
			}()
			if hog != nil {
				hog.stop()
			}
			if err != nil {
				return run, err
			}
		}
	}
	return run, nil
}

// gamedigSide is one client's rounds of one protocol, quiet or loaded.
type gamedigSide struct {
	wall               []float64 // ms
	ok, players        []float64
	sent, got, queries []float64 // replies the servers sent, datagrams the client received, queries the servers got
	errs               map[string]int
}

func (s *gamedigSide) add(wall float64, ok, players int, queries, sent, got int64, errs map[string]int) {
	s.wall = append(s.wall, wall)
	s.ok, s.players = append(s.ok, float64(ok)), append(s.players, float64(players))
	s.queries, s.sent, s.got = append(s.queries, float64(queries)), append(s.sent, float64(sent)), append(s.got, float64(got))
	for k, v := range errs {
		s.errs[k] += v
	}
}

// lost is the replies sent that the client did not receive, over all rounds.
func (s gamedigSide) lost() float64 {
	lost := 0.0
	for i := range s.sent {
		lost += max(s.sent[i]-s.got[i], 0)
	}
	return lost
}

// complete says whether every round had every server answer with no reply lost.
func (s gamedigSide) complete(servers int) bool {
	for i := range s.sent {
		if s.sent[i] != s.got[i] || s.ok[i] != float64(servers) {
			return false
		}
	}
	return len(s.sent) > 0
}

// gamedigReport writes the GameDig section from every protocol's rounds
// and the per-server command lines' times (ms per server, over sampled
// GameSpy v2 servers). It is kept short: one table, and a paragraph for
// the rest.
func gamedigReport(e *env, version string, runs []gdRun, cliQL, cliGD []float64, sampled int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d emulated servers of each protocol (one 127.0.0.1 socket each, in the measuring process), asked by each client %d at a time: "+
		"querylens with `farm.QueryAll` (`netquery.UDP`, `codecs.Lookup(protocol).NewQuery(options)`, `Query.Result`), GameDig %s with %s. "+
		"Per protocol %d quiet and %d loaded rounds, alternating (loaded: a Go busy loop pinned to CPU %d holds one core); in each, querylens goes first, then GameDig. "+
		"Medians (the counts: of the quiet rounds); \"servers answered\" adds the fewest of any round, quiet or loaded, when some did not answer; \"received\" counts the datagrams that reached the client's socket, \"lost\" the replies sent and not received, over all rounds. "+
		"A protocol over TCP (Minecraft Java) has one 127.0.0.1 listener per server (`farm.StartTCP`) and a connection per conversation: querylens's is `netquery.Converse` over a connection of its own, as `netquery.TCP` runs it; its replies sent, received and lost are bytes (B), written by the servers and read by the client's sockets.\n\n",
		e.servers, gdConcurrency, version, code("node bench/node/gamedig.mjs tools/gamedig "+strconv.Itoa(gdConcurrency)+" -type TYPE [-rules] - < targets"),
		e.e2eCount, e.e2eCount, hogCPU)
	t := newTable("protocol (servers): both ask", "client", "wall time, quiet", "one core busy", "GameDig ÷ querylens, quiet / busy",
		"servers answered", "players read", "queries the servers got", "replies sent", "received", "lost")
	var rounds, errs []string
	for _, r := range runs {
		quiet := bench.Median(r.gd.wall) / bench.Median(r.native.wall)
		loaded := bench.Median(r.gdH.wall) / bench.Median(r.nativeH.wall)
		for _, s := range []struct {
			name, what, speed string
			quiet, hog        gamedigSide
		}{
			{"querylens (native)", r.p.title + " (" + r.p.servers + "): " + r.p.asks, "", r.native, r.nativeH},
			{"GameDig `" + r.p.gdType + "`" + map[bool]string{true: " -rules"}[r.p.gdRules], "", "**" + ratio(quiet) + "** / " + ratio(loaded), r.gd, r.gdH},
		} {
			unit := num
			if r.p.stream != nil {
				unit = func(v float64) string { return num(v) + " B" }
			}
			t.add(s.what, s.name, ms(bench.Median(s.quiet.wall)), ms(bench.Median(s.hog.wall)), s.speed,
				answered(s.quiet, s.hog, e.servers), num(bench.Median(s.quiet.players)),
				num(bench.Median(s.quiet.queries)), unit(bench.Median(s.quiet.sent)), unit(bench.Median(s.quiet.got)), unit(s.quiet.lost()+s.hog.lost()))
		}
		rounds = append(rounds, fmt.Sprintf("%s quiet %s, loaded %s", r.p.title, perRound(r.gd.wall, r.native.wall), perRound(r.gdH.wall, r.nativeH.wall)))
		lostAny := !r.native.complete(e.servers) || !r.nativeH.complete(e.servers)
		e.addGoal(quiet >= 3 && loaded >= 3 && !lostAny, fmt.Sprintf("%s, %d servers: querylens against GameDig %s, end to end", r.p.title, e.servers, version),
			"≥ 3× faster, quiet and one core busy; no reply lost", fmt.Sprintf("%s faster (%s with one core busy), %s", ratio(quiet), ratio(loaded), lostText(r.native, r.nativeH, e.servers)))
		for _, side := range []struct {
			name string
			s    gamedigSide
		}{{"GameDig's, quiet", r.gd}, {"GameDig's, loaded", r.gdH}, {"querylens's, quiet", r.native}, {"querylens's, loaded", r.nativeH}} {
			if len(side.s.errs) > 0 {
				errs = append(errs, r.p.title+", "+side.name+": "+errText(side.s.errs))
			}
		}
	}
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nGoal, per protocol (rows in the goals table): querylens at least 3× faster than GameDig, quiet and with one core busy, "+
		"every server answering querylens with no reply lost. GameDig ÷ querylens per round: %s.", strings.Join(rounds, "; "))
	if len(errs) > 0 {
		fmt.Fprintf(&b, " The conversations that did not complete, over all rounds: %s.", strings.Join(errs, "; "))
	}
	fmt.Fprintf(&b, "\n\nOne process per server, sequentially, %d GameSpy v2 servers, %d rounds alternating: %s %s per server, %s %s: **%s**.\n",
		sampled, e.e2eCount, code("querylens query -p gamespy2 HOST:PORT"), ms(bench.Median(cliQL)),
		code("node tools/gamedig/query.mjs HOST PORT"), ms(bench.Median(cliGD)), ratio(bench.Median(cliGD)/bench.Median(cliQL)))
	return b.String()
}

// answered is the median of the quiet rounds' servers answered out of
// servers, and the fewest of any round when that is fewer than all.
func answered(quiet, loaded gamedigSide, servers int) string {
	text := fmt.Sprintf("%s / %d", num(bench.Median(quiet.ok)), servers)
	if fewest := slices.Min(append(slices.Clone(quiet.ok), loaded.ok...)); fewest < float64(servers) {
		text += " (fewest " + num(fewest) + ")"
	}
	return text
}

// parseGameDig reads the summary bench/node/gamedig.mjs prints as its last
// line.
func parseGameDig(out string) (gamedigResult, error) {
	var res gamedigResult
	last := lastLines(out, 1)
	if err := json.Unmarshal([]byte(last), &res); err != nil {
		return res, fmt.Errorf("gamedig.mjs printed %q: %w", last, err)
	}
	return res, nil
}

func gamedigVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "gamedig", "package.json"))
	if err != nil {
		return "?"
	}
	var p struct{ Version string }
	json.Unmarshal(b, &p)
	return p.Version
}

func perRound(a, b []float64) string {
	var parts []string
	for i := range min(len(a), len(b)) {
		parts = append(parts, ratio(a[i]/b[i]))
	}
	return strings.Join(parts, ", ")
}

// lostText says whether querylens read every reply in every round, quiet
// and loaded: replies lost, or servers whose conversation did not
// complete though nothing was lost (a reply that did not decode).
func lostText(quiet, loaded gamedigSide, servers int) string {
	if quiet.lost()+loaded.lost() > 0 {
		return "but replies were lost"
	}
	if !quiet.complete(servers) || !loaded.complete(servers) {
		fewest := slices.Min(append(slices.Clone(quiet.ok), loaded.ok...))
		return fmt.Sprintf("no reply lost, but as few as %s of %d servers' conversations completed", num(fewest), servers)
	}
	return "every reply read"
}

func errText(m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%d × %s", v, k))
	}
	slices.Sort(parts) // a map's order would change the file from run to run
	return strings.Join(parts, "; ")
}
