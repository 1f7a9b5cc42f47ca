package status

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/card"
)

// cardAlt is og:image:alt: what the card shows, in words.
func cardAlt(v view) string {
	s := v.Protocol.Title() + " server " + card.Clean(v.Name) + ": " + v.State.Label()
	if v.State == server.Online && v.Counts != "" {
		s += ", " + v.Counts + " players"
	}
	if v.Map != "" {
		s += ", map " + card.Clean(v.Map)
	}
	if v.History != nil && !v.History.Empty() {
		s += "; player count over the last 24 hours"
	}
	return s
}

// Chart geometry, in the SVG's user units.
const (
	chartW    = 360
	chartH    = 110
	chartLeft = 24 // room for the scale
	chartTop  = 6
	chartBot  = 18 // room for the time labels
)

// chartView is one server-rendered chart.
type chartView struct {
	Name      string // "24h"
	Label     string // "Last 24 hours"
	Area      string // SVG path of the filled area, "" without data
	Line      string // SVG path of the top edge
	Down      string // SVG path of periods sampled but never online
	YMax      string
	Ticks     []tick
	Uptime    string // "98.5 %" or "–"
	Peak      string
	Samples   int
	Synthetic bool
	Alt       string
}

type tick struct {
	X     string
	Label string
}

var rangeLabels = map[string]string{"24h": "Last 24 hours", "7d": "Last 7 days", "30d": "Last 30 days"}

func charts(s *history.Summary) []chartView {
	if s == nil {
		return nil
	}
	var out []chartView
	for _, r := range s.Ranges {
		out = append(out, newChart(r))
	}
	return out
}

func newChart(r history.Range) chartView {
	c := chartView{Name: r.Name, Label: rangeLabels[r.Name], Samples: r.Samples, Synthetic: r.Synthetic > 0, Uptime: "–", Peak: "–"}
	if c.Label == "" {
		c.Label = r.Name
	}
	if r.Samples > 0 {
		c.Uptime = strconv.FormatFloat(r.Uptime*100, 'f', 1, 64) + " %"
		c.Peak = strconv.Itoa(r.Peak)
	}
	hi := float64(max(r.Capacity, r.Peak, 1))
	c.YMax = strconv.Itoa(int(hi))
	n := len(r.Points)
	if n == 0 {
		return c
	}
	plotW := float64(chartW - chartLeft)
	plotH := float64(chartH - chartTop - chartBot)
	base := float64(chartTop) + plotH
	step := plotW / float64(n)
	x := func(i int) string { return num(float64(chartLeft) + float64(i)*step) }
	y := func(v float64) string { return num(base - v/hi*plotH) }
	var area, line, down strings.Builder
	for i := 0; i < n; {
		p := r.Points[i]
		if !p.HasData() {
			if p.Samples > 0 { // sampled, never online: a red mark on the axis
				down.WriteString("M" + x(i) + " " + num(base) + "H" + x(i+1))
			}
			i++
			continue
		}
		j := i
		area.WriteString("M" + x(i) + " " + num(base))
		line.WriteString("M" + x(i) + " " + y(r.Points[i].Players))
		for ; j < n && r.Points[j].HasData(); j++ {
			v := r.Points[j].Players
			area.WriteString("V" + y(v) + "H" + x(j+1))
			if j > i {
				line.WriteString("V" + y(v))
			}
			line.WriteString("H" + x(j+1))
		}
		area.WriteString("V" + num(base) + "Z")
		i = j
	}
	c.Area, c.Line, c.Down = area.String(), line.String(), down.String()
	// Time labels: four, at the quarter points.
	for q := 0; q <= 4; q++ {
		i := q * n / 4
		t := r.From.Add(time.Duration(i) * r.Step)
		label := t.Format("15:04")
		if r.Step >= time.Hour {
			label = t.Format("Jan 2")
		}
		if q == 4 {
			label = "now"
		}
		c.Ticks = append(c.Ticks, tick{X: x(i), Label: label})
	}
	c.Alt = "Players, " + strings.ToLower(c.Label) + ": peak " + c.Peak + ", uptime " + c.Uptime
	return c
}

func num(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// ago is a short "3 h ago" for the maps list.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min ago"
	default:
		return strconv.Itoa(int(d/time.Hour)) + " h ago"
	}
}

// tickAnchor keeps the first and last time labels inside the chart.
func tickAnchor(i, n int) string {
	switch i {
	case 0:
		return "start"
	case n - 1:
		return "end"
	}
	return "middle"
}
