package main

import (
	"fmt"
	"strings"
)

const (
	docHead = `# Benchmarks

Written by ` + "`go tool task bench`" + ` (scripts/bench.sh → bench/cmd/benchreport); do not edit the
sections by hand, only the notes. Every number is a median over several runs, and every absolute
number stands next to the baseline measured in the same run. The machine is shared: each section
gives the load average around it. ` + "`go tool task bench -- -only decoder,huffman`" + ` reruns some sections
and keeps the others.
`
	notesBegin = "<!-- notes:begin -->"
	notesEnd   = "<!-- notes:end -->"
)

// doc is BENCHMARKS.md: generated sections by key, and the hand-written
// notes, kept across runs.
type doc struct {
	sections map[string]string
	notes    string
}

func sectionBegin(k string) string { return "<!-- section:" + k + " -->" }
func sectionEnd(k string) string   { return "<!-- /section:" + k + " -->" }

func parseDoc(s string) *doc {
	d := &doc{sections: map[string]string{}, notes: "## Notes\n\n(none yet)\n"}
	if _, rest, ok := strings.Cut(s, notesBegin); ok {
		if n, _, ok := strings.Cut(rest, notesEnd); ok {
			d.notes = strings.TrimSpace(n) + "\n"
		}
	}
	for _, sec := range sections {
		if _, rest, ok := strings.Cut(s, sectionBegin(sec.key)); ok {
			if body, _, ok := strings.Cut(rest, sectionEnd(sec.key)); ok {
				d.sections[sec.key] = strings.TrimSpace(body)
			}
		}
	}
	return d
}

func (d *doc) render() string {
	var b strings.Builder
	b.WriteString(docHead)
	b.WriteString("\n")
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

// table is a Markdown table.
type table struct {
	head []string
	rows [][]string
}

func newTable(head ...string) *table { return &table{head: head} }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) String() string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	line(t.head)
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
		line(r)
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
