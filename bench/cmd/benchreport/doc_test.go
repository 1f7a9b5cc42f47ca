package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTableCells(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string
		ok         bool
	}{
		{"cells", "| a | b c | d |", []string{"a", "b c", "d"}, true},
		{"escaped pipe", `| a \| b | c |`, []string{"a | b", "c"}, true},
		{"empty cell", "| a |  | c |", []string{"a", "", "c"}, true},
		{"separator", "| --- | ---: |", []string{"---", "---:"}, true},
		{"one cell", "| a |", []string{"a"}, true},
		{"not a row", "text | with a pipe", nil, false},
		{"no closing pipe", "| a | b", nil, false},
		{"a lone pipe", "|", nil, false},
		{"empty", "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tableCells(tc.line)
			if ok != tc.ok || !slices.Equal(got, tc.want) {
				t.Errorf("tableCells(%q) = %q, %v; want %q, %v", tc.line, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// A row written by mdRow reads back as the same cells.
func TestMdRowRoundTrip(t *testing.T) {
	cells := []string{"a | b", "`go tool task bench -- -only relay`", "", "x\ny"}
	got, ok := tableCells(strings.TrimSuffix(mdRow(cells), "\n"))
	want := []string{"a | b", "`go tool task bench -- -only relay`", "", "x y"}
	if !ok || !slices.Equal(got, want) {
		t.Errorf("got %q, %v; want %q", got, ok, want)
	}
}

func TestOnlyKey(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{"`go tool task bench -- -only browser`", "browser"},
		{"`go tool task bench -- -only start -base old`", "start"},
		{"go tool task bench -- -only huffman,codecs", "huffman"},
		{"`go tool task bench -- -only gone`", ""},
		{"`go test ./web/card`", ""},
		{"-only", ""},
		{"", ""},
	} {
		if got := onlyKey(tc.command); got != tc.want {
			t.Errorf("onlyKey(%q) = %q, want %q", tc.command, got, tc.want)
		}
	}
}

// TestParseRender reads earlier files and writes them in today's layout:
// the notes and known sections kept, the goals table's rows kept by
// section in the sections' order, rows naming no known section at its end.
func TestParseRender(t *testing.T) {
	for _, tc := range []struct{ name, in, golden string }{
		{"empty file", "", "doc-empty.golden"},
		{"before the goals table", "doc-old.md", "doc-old.golden"},
		{"with a goals table", "doc-goals.md", "doc-goals.golden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := ""
			if tc.in != "" {
				b, err := os.ReadFile(filepath.Join("testdata", tc.in))
				if err != nil {
					t.Fatal(err)
				}
				in = string(b)
			}
			got := parseDoc(in).render()
			golden(t, tc.golden, got)
			if again := parseDoc(got).render(); again != got {
				t.Errorf("rendering the rendered file changes it:\n%s", again)
			}
		})
	}
}

// withSections runs f with the sections replaced by fakes.
func withSections(t *testing.T, fake []section) {
	t.Helper()
	saved := sections
	sections = fake
	t.Cleanup(func() { sections = saved })
}

// generated matches what a run writes that changes from run to run: the
// time, machine and load of a section, and today's date in the goals
// table (the fixtures' dates are in 2001).
var generated = regexp.MustCompile(`_Measured 20[1-9][0-9]-[^\n]*_|20[1-9][0-9]-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC`)

// TestRunOnly reruns some sections of a file: the others, their goals
// and the notes stay as they were; a section that fails before checking a
// goal keeps its earlier rows.
func TestRunOnly(t *testing.T) {
	fake := func(body string, goals ...goalRow) func(context.Context, *env) (string, error) {
		return func(_ context.Context, e *env) (string, error) {
			e.goals = append(e.goals, goals...)
			return body, nil
		}
	}
	withSections(t, []section{
		{"alpha", "Alpha", time.Minute, fake("alpha measured again", goalRow{"alpha measure", "≤ 1", "2", false})},
		{"beta", "Beta", time.Minute, fake("beta measured again", goalRow{"beta measure", "≥ 3", "4 | 5", true}, goalRow{"beta second", "≤ 6", "7", false})},
		{"gamma", "Gamma", time.Minute, func(context.Context, *env) (string, error) {
			return "gamma's partial text", errors.New("gamma: no server answered")
		}},
	})
	before := `<!-- goals:begin -->
| measure | goal | result | met | command | date |
| --- | --- | --- | --- | --- | --- |
| alpha measure | ≤ 1 | 0.5 | yes | ` + "`go tool task bench -- -only alpha`" + ` | 2001-01-01 00:00 UTC |
| beta old measure | ≥ 3 | 1 | **no** | ` + "`go tool task bench -- -only beta`" + ` | 2001-01-02 00:00 UTC |
| gamma measure | ≤ 8 | 7 | yes | ` + "`go tool task bench -- -only gamma`" + ` | 2001-01-03 00:00 UTC |
| by hand | ≤ 9 | 9 | yes | ` + "`go test ./x`" + ` | 2001-01-04 |
<!-- goals:end -->

<!-- notes:begin -->
Notes by hand.
<!-- notes:end -->

<!-- section:alpha -->
## Alpha

_Measured 2001-01-01 00:00 UTC._

alpha as measured in 2001
<!-- /section:alpha -->

<!-- section:gamma -->
## Gamma

gamma as measured in 2001
<!-- /section:gamma -->
`
	for _, tc := range []struct {
		name, only, golden, err string
	}{
		{"one section", "beta", "run-beta.golden", ""},
		{"a section that fails", "gamma", "run-gamma.golden", "1 section(s) failed"},
		{"every section", "", "run-all.golden", "1 section(s) failed"},
		{"an unknown section", "beta,delta", "", `unknown section "delta"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
			if err := os.WriteFile(out, []byte(before), 0o644); err != nil {
				t.Fatal(err)
			}
			e := testEnv()
			e.root = t.TempDir()
			e.querylens = "unused"
			err := run(context.Background(), e, tc.only, out)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("run: %v, want an error containing %q", err, tc.err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if tc.golden == "" {
				if string(b) != before {
					t.Errorf("the file changed although the run was refused:\n%s", b)
				}
				return
			}
			got := generated.ReplaceAllString(string(b), "GENERATED")
			golden(t, tc.golden, got)
		})
	}
}

// TestNarrowedRun: a run narrowed by -protocols puts its goals rows in
// place of the earlier rows of the same measure, keeps the others, adds
// the new ones at the end, and folds the section's earlier text (not what
// that text had itself kept of the run before).
func TestNarrowedRun(t *testing.T) {
	old := []string{"| A, 1000 servers | g | 1× | yes | c | d1 |", "| B, 1000 servers | g | 2× | yes | c | d1 |"}
	rows := []string{"| B, 1000 servers | g | 3× | yes | c | d2 |", "| C, 1000 servers | g | 4× | yes | c | d2 |"}
	got := mergeGoalRows(old, rows)
	want := []string{old[0], rows[0], rows[1]}
	if !slices.Equal(got, want) {
		t.Errorf("mergeGoalRows = %q, want %q", got, want)
	}
	prev := "## Title\n\n_Measured then._\n\nthe table\n\n<details><summary>The earlier run (…)</summary>\n\nolder\n\n</details>"
	kept := keptEarlier(prev, "ase,samp")
	if !strings.Contains(kept, "_Measured then._\n\nthe table") || strings.Contains(kept, "older") || strings.Contains(kept, "## Title") ||
		!strings.HasPrefix(kept, "<details><summary>The earlier run (this one measured only ase,samp") {
		t.Errorf("keptEarlier = %q", kept)
	}
	if keptEarlier("", "ase") != "" {
		t.Error("keptEarlier of no earlier section is not empty")
	}
}
