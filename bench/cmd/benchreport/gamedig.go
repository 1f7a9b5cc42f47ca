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
	"time"

	"github.com/querylens/querylens/bench"
	"github.com/querylens/querylens/bench/farm"
	"github.com/querylens/querylens/demo"
)

// gs2Concurrency is how many servers each client asks at once.
const gs2Concurrency = 100

// cliSample is how many servers the one-process-per-server comparison asks.
const cliSample = 10

type gamedigResult struct {
	Asked   int            `json:"asked"`
	OK      int            `json:"ok"`
	Players int            `json:"players"`
	MS      float64        `json:"ms"`
	Errors  map[string]int `json:"errors"`
}

// gamedigSection queries e.servers emulated GameSpy v2 servers with
// GameDig and with querylens's native client, alternating, and counts the
// replies on both sides.
func gamedigSection(ctx context.Context, e *env) (string, error) {
	gdDir := filepath.Join(e.root, "tools", "gamedig")
	if _, err := os.Stat(filepath.Join(gdDir, "node_modules", "gamedig")); err != nil {
		return "GameDig is not installed: run `npm ci --prefix tools/gamedig`.\n", err
	}
	f, err := farm.Start(ctx, e.servers, func(i int) demo.Handler { return demo.NewGameSpy2(int64(i), demo.Normal) })
	if err != nil {
		return "", err
	}
	defer f.Close()
	targets := f.Targets()
	script := filepath.Join(e.root, "bench", "node", "gamedig.mjs")

	var native, gd gamedigSide
	gd.errs = map[string]int{}
	for round := range e.e2eCount {
		fmt.Fprintf(e.log, "gamedig: round %d/%d\n", round+1, e.e2eCount)
		f.Reset()
		out, err := farm.QueryAll(ctx, "gamespy2", nil, targets, gs2Concurrency, 2*time.Second)
		if err != nil {
			return "", err
		}
		q, r := f.Counts()
		native.wall = append(native.wall, float64(out.Wall.Microseconds())/1000)
		native.ok = append(native.ok, float64(out.Done))
		native.players = append(native.players, float64(out.Players))
		native.sent, native.got, native.queries = append(native.sent, float64(r)), append(native.got, float64(out.Received)), append(native.queries, float64(q))
		fmt.Fprintf(e.log, "gamedig: querylens %+v; servers got %d queries, sent %d replies\n", out, q, r)

		f.Reset()
		res, err := e.runGameDig(ctx, script, gdDir, targets)
		if err != nil {
			return "", err
		}
		q, r = f.Counts()
		gd.wall = append(gd.wall, res.MS)
		gd.ok = append(gd.ok, float64(res.OK))
		gd.players = append(gd.players, float64(res.Players))
		// GameDig asks each server three questions (server, players, teams)
		// and reads one reply to each; a failed server's replies are not counted.
		gd.sent, gd.got, gd.queries = append(gd.sent, float64(r)), append(gd.got, float64(3*res.OK)), append(gd.queries, float64(q))
		fmt.Fprintf(e.log, "gamedig: GameDig %+v; servers got %d queries, sent %d replies\n", res, q, r)
		for k, v := range res.Errors {
			gd.errs[k] += v
		}
	}

	// One process per server: what a script that calls each tool's command
	// line pays, on a small sample, the two tools alternating.
	var cliQL, cliGD []float64
	for round := range e.e2eCount {
		fmt.Fprintf(e.log, "gamedig: command-line round %d/%d\n", round+1, e.e2eCount)
		start := time.Now()
		for _, t := range targets[:min(cliSample, len(targets))] {
			if _, err := e.command(ctx, nil, e.querylens, "query", "-p", "gamespy2", t); err != nil {
				return "", err
			}
		}
		cliQL = append(cliQL, float64(time.Since(start).Microseconds())/1000/float64(min(cliSample, len(targets))))
		start = time.Now()
		for _, t := range targets[:min(cliSample, len(targets))] {
			host, port, _ := net.SplitHostPort(t)
			if _, err := e.commandIn(ctx, gdDir, nil, nil, e.node, "query.mjs", host, port); err != nil {
				return "", err
			}
		}
		cliGD = append(cliGD, float64(time.Since(start).Microseconds())/1000/float64(min(cliSample, len(targets))))
	}

	return gamedigReport(e, gamedigVersion(gdDir), native, gd, cliQL, cliGD, min(cliSample, len(targets))), nil
}

// gamedigSide is one client's rounds in the GameDig section.
type gamedigSide struct {
	wall               []float64 // ms
	ok, players        []float64
	sent, got, queries []float64 // replies the servers sent, replies the client read, queries the servers got
	errs               map[string]int
}

// gamedigReport writes the GameDig section from both clients' rounds and
// the per-server command lines' times (ms per server, over sampled
// servers).
func gamedigReport(e *env, version string, native, gd gamedigSide, cliQL, cliGD []float64, sampled int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d emulated GameSpy v2 servers (`demo.NewGameSpy2`, one 127.0.0.1 socket each, in the measuring process), "+
		"asked by each client %d at a time; %d rounds, the clients alternating. Medians.\n\n", e.servers, gs2Concurrency, e.e2eCount)
	fmt.Fprintf(&b, "- querylens: `farm.QueryAll` — `netquery.UDP` with `codecs.Lookup(\"gamespy2\").NewQuery(nil)` (one combined query per server), decoded with `Query.Result`\n")
	fmt.Fprintf(&b, "- GameDig %s: %s (GameDig asks each server three questions in turn: server, players, teams)\n\n",
		version, code("node bench/node/gamedig.mjs tools/gamedig "+strconv.Itoa(gs2Concurrency)+" - < targets"))
	t := newTable("client", "wall time, all servers", "servers answered", "players read", "queries the servers got", "replies sent", "replies the client read", "lost, all rounds")
	for _, s := range []struct {
		name string
		v    gamedigSide
	}{{"querylens (native)", native}, {"GameDig", gd}} {
		lost := 0.0
		for i := range s.v.sent {
			lost += s.v.sent[i] - s.v.got[i]
		}
		t.add(s.name, ms(bench.Median(s.v.wall)), fmt.Sprintf("%s / %d", num(bench.Median(s.v.ok)), e.servers), num(bench.Median(s.v.players)),
			num(bench.Median(s.v.queries)), num(bench.Median(s.v.sent)), num(bench.Median(s.v.got)), num(lost))
	}
	b.WriteString(t.String())
	speed := bench.Median(gd.wall) / bench.Median(native.wall)
	lostAny := false
	for i := range native.sent {
		if native.sent[i] != native.got[i] || native.ok[i] != float64(e.servers) {
			lostAny = true
		}
	}
	fmt.Fprintf(&b, "\nGameDig ÷ querylens: **%s** (per round: %s).\n\n", ratio(speed), perRound(gd.wall, native.wall))
	b.WriteString(goal(speed >= 3 && !lostAny, fmt.Sprintf("querylens at least 3× faster with no reply lost: %s faster, %s.", ratio(speed), lostText(lostAny))) + "\n")
	e.addGoal(speed >= 3 && !lostAny, fmt.Sprintf("GameSpy v2, %d servers: querylens against GameDig %s, end to end", e.servers, version),
		"≥ 3× faster, no reply lost", fmt.Sprintf("%s faster, %s", ratio(speed), lostText(lostAny)))
	if len(gd.errs) > 0 {
		fmt.Fprintf(&b, "\nGameDig's errors over all rounds: %s\n", errText(gd.errs))
	}
	fmt.Fprintf(&b, "\n### One process per server\n\n"+
		"Sequentially, %d servers, %d rounds alternating: %s against %s. Per server:\n\n",
		sampled, e.e2eCount, code("querylens query -p gamespy2 HOST:PORT"), code("node tools/gamedig/query.mjs HOST PORT"))
	t = newTable("command line", "per server", "GameDig ÷ querylens")
	t.add("querylens query", ms(bench.Median(cliQL)), "")
	t.add("GameDig (node query.mjs)", ms(bench.Median(cliGD)), ratio(bench.Median(cliGD)/bench.Median(cliQL)))
	b.WriteString(t.String())
	return b.String()
}

func (e *env) runGameDig(ctx context.Context, script, dir string, targets []string) (gamedigResult, error) {
	var res gamedigResult
	out, err := e.commandIn(ctx, dir, nil, strings.NewReader(strings.Join(targets, "\n")), e.node, script, dir, strconv.Itoa(gs2Concurrency), "-")
	if err != nil {
		return res, err
	}
	return parseGameDig(out)
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

func lostText(lost bool) string {
	if lost {
		return "but replies were lost"
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
