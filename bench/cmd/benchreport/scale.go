package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/querylens/querylens/bench"
)

// scaleSection measures what sharing state through Redis costs a relay
// (relay/redisstore's benchmarks against the in-process default, in one
// run) and checks that the game servers see the same number of queries
// with 1, 2 and 3 relays.
func scaleSection(ctx context.Context, e *env) (string, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return "", fmt.Errorf("redis-server is not installed (apt-get install redis-server)")
	}
	cmd1, ss, err := e.goBenchTime(ctx, "^(BenchmarkSharedRTT|BenchmarkSharedThroughput)$", "1s", "./relay/redisstore")
	if err != nil {
		return "", err
	}
	cmd2, up, err := e.goBenchTime(ctx, "^BenchmarkUpstreamQueries$", "1x", "./relay/redisstore")
	if err != nil {
		return "", err
	}
	return scaleReport(e, cmd1, cmd2, ss, up), nil
}

// scaleReport writes the scale section from relay/redisstore's benchmarks:
// ss from cmd1, up (BenchmarkUpstreamQueries) from cmd2.
func scaleReport(e *env, cmd1, cmd2 string, ss, up []bench.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "relay/redisstore's benchmarks against a redis-server on loopback (started by the benchmark, on the same 2 cores), parsed: %s and %s.\n\n", code(cmd1), code(cmd2))
	if rt := bench.Find(ss, "BenchmarkSharedRTT"); rt != nil {
		m := rt.Median
		t := newTable("one query and its reply over a loopback WebSocket, alternating in random order", "p50", "÷ in-process cache hit")
		t.add("in-process relay, cache hit (baseline)", us(m["hit-p50-µs"]), "1×")
		t.add("relay with --redis, cache hit (its local cache; client tokens from its lease)", us(m["redis-hit-p50-µs"]), ratio(m["redis-hit/hit"]))
		t.add("relay with --redis, hit in Redis only (another relay fetched it)", us(m["shared-hit-p50-µs"]), ratio(m["shared-hit/hit"]))
		t.add("in-process relay, cache miss", us(m["miss-p50-µs"]), ratio(m["miss-p50-µs"]/m["hit-p50-µs"]))
		t.add("relay with --redis, cache miss (claim, UDP, publish)", us(m["shared-miss-p50-µs"]), ratio(m["shared-miss-p50-µs"]/m["hit-p50-µs"]))
		b.WriteString(t.String())
		fmt.Fprintf(&b, "\nA miss with --redis adds %s at the median (%d runs, spread %s).\n\n", us(m["added-miss-p50-µs"]), rt.Runs, pct(rt.Spread["added-miss-p50-µs"]))
		b.WriteString(goal(m["redis-hit/hit"] <= 1.5, fmt.Sprintf("a cache hit through a relay with --redis takes %s the in-process hit (goal ≤ 1.5×).", ratio(m["redis-hit/hit"]))) + "\n\n")
		e.addGoal(m["redis-hit/hit"] <= 1.5, "cache hit through a relay with --redis, p50", "≤ 1.5× the in-process hit",
			fmt.Sprintf("%s (%s against %s)", ratio(m["redis-hit/hit"]), us(m["redis-hit-p50-µs"]), us(m["hit-p50-µs"])))
	}
	in, rd := bench.Find(ss, "BenchmarkSharedThroughput/in-process"), bench.Find(ss, "BenchmarkSharedThroughput/redis")
	if in != nil && rd != nil {
		t := newTable("cache misses, 8 connections × 16 open queries", "queries/s", "÷ in-process")
		t.add("in-process relay", num(in.Median["queries/s"]), "1×")
		t.add("relay with --redis", num(rd.Median["queries/s"]), ratio(rd.Median["queries/s"]/in.Median["queries/s"]))
		b.WriteString(t.String())
		r := rd.Median["queries/s"] / in.Median["queries/s"]
		b.WriteString("\n" + goal(r >= 0.7, fmt.Sprintf("%.0f %% of the in-process throughput on cache misses (goal ≥ 70 %%).", 100*r)) + "\n\n")
		e.addGoal(r >= 0.7, "cache-miss throughput of a relay with --redis", "≥ 70 % of the in-process relay's",
			fmt.Sprintf("%.0f %% (%s against %s queries/s)", 100*r, num(rd.Median["queries/s"]), num(in.Median["queries/s"])))
	}
	t := newTable("relays sharing one Redis (4 clients each, 8 servers, 2 s, cache TTL 500 ms)", "queries the servers received", "client queries answered")
	var counts []float64
	for _, s := range up {
		if n, ok := strings.CutPrefix(s.Name, "BenchmarkUpstreamQueries/"); ok {
			t.add(n, num(s.Median["upstream-queries"]), num(s.Median["client-queries"]))
			counts = append(counts, s.Median["upstream-queries"])
		}
	}
	if len(counts) > 0 {
		b.WriteString(t.String())
		lo, hi := counts[0], counts[0]
		for _, c := range counts {
			lo, hi = min(lo, c), max(hi, c)
		}
		b.WriteString("\n" + goal(hi-lo <= 8, fmt.Sprintf("the servers received %s to %s queries whatever the number of relays (one per server per TTL is 32; the edges of the run add at most one period, 8).", num(lo), num(hi))) + "\n")
		e.addGoal(hi-lo <= 8, "queries the game servers receive from relays sharing one Redis", "the same with 1, 2 and 3 relays (± one TTL period, 8)",
			fmt.Sprintf("%s to %s with 1 to %d relays", num(lo), num(hi), len(counts)))
	}
	return b.String()
}
