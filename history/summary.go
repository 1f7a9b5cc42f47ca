package history

import (
	"context"
	"time"
)

// Point is one period of a chart.
type Point struct {
	Start      time.Time
	Samples    int     // samples of any state in the period
	Online     int     // online samples
	Players    float64 // mean players over the online samples
	PlayersMax int
	Synthetic  bool // some sample of the period was synthetic
}

// HasData reports whether the server answered in the period.
func (p Point) HasData() bool { return p.Online > 0 }

// Range is a chart and its figures over one span of time.
type Range struct {
	Name     string // "24h", "7d", "30d"
	From, To time.Time
	Step     time.Duration
	Points   []Point
	Samples  int
	Online   int
	Peak     int     // the most players seen at once
	Uptime   float64 // Online / Samples, 0..1; meaningless when Samples is 0
	Capacity int     // the largest MaxPlayers seen
	// Synthetic counts the synthetic samples in the range.
	Synthetic int
}

// Summary is what the status page, history.json and the card show.
type Summary struct {
	Key
	At     time.Time
	Ranges []Range // 24h, 7d, 30d
	Maps   []MapPlay
}

// Synthetic reports whether any of the history is made up.
func (s Summary) Synthetic() bool {
	for _, r := range s.Ranges {
		if r.Synthetic > 0 {
			return true
		}
	}
	return false
}

// Empty reports whether there is no sample at all.
func (s Summary) Empty() bool {
	for _, r := range s.Ranges {
		if r.Samples > 0 {
			return false
		}
	}
	return true
}

// The ranges Summarize builds: the day from raw samples in 5-minute
// periods, the week in hours, the month in 4-hour periods.
var ranges = []struct {
	name       string
	span, step time.Duration
	raw        bool
}{
	{"24h", 24 * time.Hour, 5 * time.Minute, true},
	{"7d", 7 * 24 * time.Hour, time.Hour, false},
	{"30d", 30 * 24 * time.Hour, 4 * time.Hour, false},
}

// MapsSince is how far back Summary.Maps looks, and MapsLimit how many it
// lists.
const (
	MapsSince = 24 * time.Hour
	MapsLimit = 8
)

// Summarize reads k's history up to now from s.
func Summarize(ctx context.Context, s Store, k Key, now time.Time) (Summary, error) {
	now = now.UTC()
	sum := Summary{Key: k, At: now}
	for _, rg := range ranges {
		// Periods are aligned to the step (UTC), the last one holding now.
		end := now.Truncate(rg.step).Add(rg.step)
		r := Range{Name: rg.name, From: end.Add(-rg.span), To: end, Step: rg.step}
		n := int(rg.span / rg.step)
		r.Points = make([]Point, n)
		for i := range r.Points {
			r.Points[i].Start = r.From.Add(time.Duration(i) * rg.step)
		}
		sums := make([]int, n)
		at := func(t time.Time) int {
			i := int(t.Sub(r.From) / rg.step)
			if i < 0 || i >= n {
				return -1
			}
			return i
		}
		if rg.raw {
			samples, err := s.Samples(ctx, k, r.From, r.To)
			if err != nil {
				return sum, err
			}
			for _, sm := range samples {
				i := at(sm.At)
				if i < 0 {
					continue
				}
				p := &r.Points[i]
				p.Samples++
				r.Samples++
				if sm.Synthetic {
					p.Synthetic = true
					r.Synthetic++
				}
				r.Capacity = max(r.Capacity, sm.MaxPlayers)
				if sm.State == StateOnline {
					p.Online++
					r.Online++
					sums[i] += sm.Players
					p.PlayersMax = max(p.PlayersMax, sm.Players)
				}
			}
		} else {
			hours, err := s.Hours(ctx, k, r.From, r.To)
			if err != nil {
				return sum, err
			}
			for _, h := range hours {
				i := at(h.Start)
				if i < 0 {
					continue
				}
				p := &r.Points[i]
				p.Samples += h.Samples
				p.Online += h.Online
				p.Synthetic = p.Synthetic || h.Synthetic > 0
				p.PlayersMax = max(p.PlayersMax, h.PlayersMax)
				sums[i] += h.PlayersSum
				r.Samples += h.Samples
				r.Online += h.Online
				r.Synthetic += h.Synthetic
				r.Capacity = max(r.Capacity, h.MaxPlayers)
			}
		}
		for i := range r.Points {
			p := &r.Points[i]
			if p.Online > 0 {
				p.Players = float64(sums[i]) / float64(p.Online)
			}
			r.Peak = max(r.Peak, p.PlayersMax)
		}
		if r.Samples > 0 {
			r.Uptime = float64(r.Online) / float64(r.Samples)
		}
		sum.Ranges = append(sum.Ranges, r)
	}
	maps, err := s.Maps(ctx, k, now.Add(-MapsSince), MapsLimit)
	if err != nil {
		return sum, err
	}
	sum.Maps = maps
	return sum, nil
}
