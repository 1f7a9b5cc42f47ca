package main

import (
	"fmt"
	"slices"
	"strings"
)

const (
	docHead = `# Benchmarks

Every goal querylens has set itself, with the latest result, then the measurements behind them.
Written by ` + "`go tool task bench`" + ` (scripts/bench.sh → bench/cmd/benchreport): the goals table and the
sections are regenerated; ` + "`go tool task bench -- -only decoder,huffman`" + ` reruns some sections and keeps
the others, with their rows of the goals table. Only the text between the notes markers is written by
hand. Every number is a median over several runs, next to a baseline measured in the same run; the
machine is shared, so each section gives the load average around it. How the numbers were reached
(method, conditions, what explains them): docs/benchmarks-notes.md.
`
	goalsBegin = "<!-- goals:begin -->"
	goalsEnd   = "<!-- goals:end -->"
	notesBegin = "<!-- notes:begin -->"
	notesEnd   = "<!-- notes:end -->"
)

// goalsHead is the goals table's header; goalRow.cells fills its columns.
var goalsHead = []string{"measure", "goal", "result", "met", "command", "date"}

// doc is BENCHMARKS.md: the generated goals table and sections, and the
// hand-written notes, kept across runs.
type doc struct {
	sections map[string]string   // section key → its block, heading included
	goals    map[string][]string // section key → its rows of the goals table, as written
	orphans  []string            // rows of the goals table that name no known section, kept at its end
	notes    string
}

func sectionBegin(k string) string { return "<!-- section:" + k + " -->" }
func sectionEnd(k string) string   { return "<!-- /section:" + k + " -->" }

// between returns the text between begin and end in s.
func between(s, begin, end string) (string, bool) {
	_, rest, ok := strings.Cut(s, begin)
	if !ok {
		return "", false
	}
	body, _, ok := strings.Cut(rest, end)
	return body, ok
}

// parseDoc reads what a run keeps of an earlier BENCHMARKS.md: the notes,
// every section and the goals table's rows by section. Anything it does
// not recognise is left out; a missing part comes back empty.
func parseDoc(s string) *doc {
	d := &doc{sections: map[string]string{}, goals: map[string][]string{}, notes: "## Notes\n\n(none yet)\n"}
	if n, ok := between(s, notesBegin, notesEnd); ok {
		d.notes = strings.TrimSpace(n) + "\n"
	}
	for _, sec := range sections {
		if body, ok := between(s, sectionBegin(sec.key), sectionEnd(sec.key)); ok {
			d.sections[sec.key] = strings.TrimSpace(body)
		}
	}
	if g, ok := between(s, goalsBegin, goalsEnd); ok {
		for l := range strings.SplitSeq(g, "\n") {
			l = strings.TrimSpace(l)
			cells, ok := tableCells(l)
			if !ok || len(cells) != len(goalsHead) || slices.Equal(cells, goalsHead) || strings.Trim(cells[0], "-: ") == "" {
				continue
			}
			if k := onlyKey(cells[4]); k != "" {
				d.goals[k] = append(d.goals[k], l)
			} else {
				d.orphans = append(d.orphans, l)
			}
		}
	}
	return d
}

// tableCells splits a Markdown table row into its cells, unescaping "\|".
func tableCells(line string) ([]string, bool) {
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil, false
	}
	var cells []string
	var cur strings.Builder
	inner := line[1 : len(line)-1]
	for i := 0; i < len(inner); i++ {
		switch {
		case inner[i] == '\\' && i+1 < len(inner) && inner[i+1] == '|':
			cur.WriteByte('|')
			i++
		case inner[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(inner[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String())), true
}

// onlyKey returns the known section a goal row's command reruns
// ("go tool task bench -- -only browser" → "browser"), or "".
func onlyKey(command string) string {
	_, rest, ok := strings.Cut(command, "-only ")
	if !ok {
		return ""
	}
	k := rest
	if i := strings.IndexFunc(rest, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') }); i >= 0 {
		k = rest[:i]
	}
	for _, sec := range sections {
		if sec.key == k {
			return k
		}
	}
	return ""
}

func (d *doc) render() string {
	var b strings.Builder
	b.WriteString(docHead)
	b.WriteString("\n## Goals\n\n")
	b.WriteString("Measured by the sections below; the command reruns the one section, the date is its run's. " +
		"Goals measured outside this suite are in the notes under the table.\n\n")
	b.WriteString(goalsBegin + "\n")
	b.WriteString(mdRow(goalsHead))
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, sec := range sections {
		for _, r := range d.goals[sec.key] {
			b.WriteString(r + "\n")
		}
	}
	for _, r := range d.orphans {
		b.WriteString(r + "\n")
	}
	b.WriteString(goalsEnd + "\n\n")
	b.WriteString(notesBegin + "\n" + strings.TrimSpace(d.notes) + "\n" + notesEnd + "\n")
	for _, sec := range sections {
		body, ok := d.sections[sec.key]
		if !ok {
			body = "## " + sec.title + "\n\nNot measured yet."
		}
		fmt.Fprintf(&b, "\n%s\n%s\n%s\n", sectionBegin(sec.key), strings.TrimSpace(body), sectionEnd(sec.key))
	}
	return b.String()
}

// goalRow is one goal a section checked.
type goalRow struct {
	measure, goal, result string
	met                   bool
}

// cells is the row of the goals table for g, measured by section key at date.
func (g goalRow) cells(key, date string) []string {
	met := "**no**"
	if g.met {
		met = "yes"
	}
	return []string{g.measure, g.goal, g.result, met, code("go tool task bench -- -only " + key), date}
}

// mdRow is one Markdown table row.
func mdRow(cells []string) string {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + mdEscape(c) + " |")
	}
	b.WriteString("\n")
	return b.String()
}

// table is a Markdown table.
type table struct {
	head []string
	rows [][]string
}

func newTable(head ...string) *table { return &table{head: head} }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) String() string {
	var b strings.Builder
	b.WriteString(mdRow(t.head))
	b.WriteString("|")
	for i := range t.head {
		if i == 0 {
			b.WriteString(" --- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString(mdRow(r))
	}
	return b.String()
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// Number formats.

func ns(v float64) string {
	switch {
	case v <= 0:
		return "–"
	case v >= 1e9:
		return fmt.Sprintf("%.2f s", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2f ms", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1f µs", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.2f µs", v/1e3)
	}
	return fmt.Sprintf("%.0f ns", v)
}

func ms(v float64) string {
	if v >= 10000 {
		return fmt.Sprintf("%.1f s", v/1000)
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

func ratio(v float64) string {
	if v <= 0 {
		return "–"
	}
	if v >= 10 {
		return fmt.Sprintf("%.0f×", v)
	}
	return fmt.Sprintf("%.2f×", v)
}

func num(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func pct(v float64) string { return fmt.Sprintf("±%.0f%%", 50*v) }

// goal says whether a goal is met.
func goal(met bool, text string) string {
	if met {
		return "**Goal met:** " + text
	}
	return "**Goal not met:** " + text
}

// code formats a command for the page.
func code(s string) string { return "`" + s + "`" }
