package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	const exposition = `# HELP querylens_relay_replies_total Replies sent.
# TYPE querylens_relay_replies_total counter
querylens_relay_replies_total 1361
querylens_relay_timeouts_total{rule="timeout"} 31
querylens_relay_conns 10001
querylens_relay_broken not-a-number
a line without a value

querylens_relay_ratio 0.25
`
	got, err := parseMetrics(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"querylens_relay_replies_total":                  1361,
		`querylens_relay_timeouts_total{rule="timeout"}`: 31,
		"querylens_relay_conns":                          10001,
		"querylens_relay_ratio":                          0.25,
	}
	if !maps.Equal(got, want) {
		t.Errorf("parseMetrics = %v, want %v", got, want)
	}

	for _, tc := range []struct {
		name string
		want float64
	}{
		{"querylens_relay_conns", 10001},
		{"querylens_relay_replies_total", 1361},
		{"querylens_relay_timeouts_total", -1}, // labelled: not an unlabelled sample
		{"querylens_relay", -1},                // a prefix of names only
		{"missing", -1},
	} {
		if got := metricValue(exposition, tc.name); got != tc.want {
			t.Errorf("metricValue(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStatCPU(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       float64
	}{
		// utime 150 and stime 50 clock ticks of 10 ms.
		{"plain name", "1234 (querylens) S 1 1234 1234 0 -1 4194304 100 0 0 0 150 50 0 0 20 0 8 0 100 0 0", 2000},
		{"name with spaces and parentheses", "1234 (a (b) c) S 1 1234 1234 0 -1 4194304 100 0 0 0 7 3 0 0 20 0", 100},
		{"too few fields", "1234 (querylens) S 1 2 3", 0},
		{"no name", "garbage", 0},
		{"empty", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statCPU(tc.stat); got != tc.want {
				t.Errorf("statCPU = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestVmRSS(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		want         float64
	}{
		{"present", "Name:\tbenchreport\nVmPeak:\t  300000 kB\nVmRSS:\t  254016 kB\nThreads:\t8\n", 254016 * 1024},
		{"absent", "Name:\tbenchreport\n", 0},
		{"no value", "VmRSS:\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := vmRSS(tc.status); got != tc.want {
				t.Errorf("vmRSS = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseGameDig(t *testing.T) {
	got, err := parseGameDig("a log line\n{\"asked\":1000,\"ok\":999,\"players\":16055,\"ms\":776.5,\"errors\":{\"timeout\":1}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got.Asked != 1000 || got.OK != 999 || got.Players != 16055 || got.MS != 776.5 || got.Errors["timeout"] != 1 {
		t.Errorf("parseGameDig = %+v", got)
	}
	for _, out := range []string{"", "not json\n", "{\"asked\":1000,\n"} {
		if _, err := parseGameDig(out); err == nil || !strings.Contains(err.Error(), "gamedig.mjs printed") {
			t.Errorf("parseGameDig(%q): %v, want an error naming gamedig.mjs", out, err)
		}
	}
}

func TestParseBenchtime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"100ms", 100, true},
		{"1s", 1000, true},
		{"2s", 2000, true},
		{"1x", 0, false},
		{"ms", 0, false},
		{"", 0, false},
	} {
		got, err := parseBenchtime(tc.in)
		if (err == nil) != tc.ok || tc.ok && got != tc.want {
			t.Errorf("parseBenchtime(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestQuoteArgs(t *testing.T) {
	got := quoteArgs([]string{"test", "-run", "^$", "-bench", "^(A|B)$", "./relay"})
	want := []string{"test", "-run", "'^$'", "-bench", "'^(A|B)$'", "./relay"}
	if !slices.Equal(got, want) {
		t.Errorf("quoteArgs = %q, want %q", got, want)
	}
}

func TestStartSteps(t *testing.T) {
	set := []startTimeline{
		{"firstDecode": 500, "html": 20},
		{"firstDecode": 300},
		{"firstDecode": 400, "html": 30},
	}
	if got := steps(set, "firstDecode"); !slices.Equal(got, []float64{500, 300, 400}) {
		t.Errorf("steps = %v", got)
	}
	if got := medianStep(set, "firstDecode"); got != 400 {
		t.Errorf("medianStep(firstDecode) = %v, want 400", got)
	}
	// A step an opening did not reach is left out, not counted as 0.
	if got := steps(set, "html"); !slices.Equal(got, []float64{20, 30}) {
		t.Errorf("steps(html) = %v", got)
	}
	if got := medianStep(set, "missing"); got != 0 {
		t.Errorf("medianStep(missing) = %v, want 0", got)
	}
}

func TestBrowserProtocols(t *testing.T) {
	for _, tc := range []struct {
		list    string
		want    []string
		wantErr bool
	}{
		{"", []string{"zandronum", "a2s", "quake3", "ase", "gamespy1", "minecraft", "samp"}, false},
		{"minecraft", []string{"zandronum", "minecraft"}, false},
		// Any protocol the demo can start a fleet of (demo.MoreProtocols).
		{"samp,ase", []string{"zandronum", "ase", "samp"}, false},
		{"doom3", []string{"zandronum", "doom3"}, false},
		{"a2s", []string{"zandronum", "a2s"}, false},
		{" gamespy1 , a2s,", []string{"zandronum", "a2s", "gamespy1"}, false},
		{"zandronum", []string{"zandronum"}, false},
		{"a2s,steam", nil, true},
	} {
		got, err := browserProtocols(tc.list)
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("browserProtocols(%q) = %v, %v; want %v (error %v)", tc.list, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestLogRelayRefusals(t *testing.T) {
	var b strings.Builder
	logRelayRefusals(&b, map[string]float64{
		`querylens_relay_refusals_total{rule="in-flight"}`: 3,
		`querylens_relay_refusals_total{rule="per-ip"}`:    0,
		"querylens_relay_replies_total":                    1361,
		`querylens_relay_drops_total{reason="queue-full"}`: 2,
	})
	want := "browser: relay querylens_relay_drops_total{reason=\"queue-full\"} +2\n" +
		"browser: relay querylens_relay_refusals_total{rule=\"in-flight\"} +3\n"
	if b.String() != want {
		t.Errorf("logged\n%s\nwant\n%s", b.String(), want)
	}
}
