package history

import (
	"math"
	"math/rand/v2"
	"time"
)

// SyntheticSpec describes the made-up history of one demo server.
type SyntheticSpec struct {
	Key      Key
	Seed     uint64
	End      time.Time     // the last sample is before End
	Span     time.Duration // how far back; default 24 h
	Step     time.Duration // between samples; default 5 min
	Capacity int           // max players; default 16
	Maps     []string      // rotated every 20-40 minutes; default MAP01..MAP04
	// State overrides the server's state for every sample (a demo server
	// that never answers is offline all day); 0: online with a few
	// outages.
	State State
}

// Synthesize returns plausible samples for s, all marked Synthetic: a
// daily curve that peaks in the evening (UTC), noise, a map rotation and a
// few short outages. The same spec gives the same samples.
func Synthesize(s SyntheticSpec) []Sample {
	if s.Span <= 0 {
		s.Span = 24 * time.Hour
	}
	if s.Step <= 0 {
		s.Step = 5 * time.Minute
	}
	if s.Capacity <= 0 {
		s.Capacity = 16
	}
	if len(s.Maps) == 0 {
		s.Maps = []string{"MAP01", "MAP02", "MAP03", "MAP04"}
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15))
	n := int(s.Span / s.Step)
	start := s.End.Add(-time.Duration(n) * s.Step)
	busy := 0.3 + 0.6*rng.Float64()      // how popular this server is
	phase := rng.Float64() * 2 * math.Pi // not every server peaks at once
	mapIdx, mapLeft := rng.IntN(len(s.Maps)), 0
	down := 0
	out := make([]Sample, 0, n)
	for i := range n {
		at := start.Add(time.Duration(i) * s.Step)
		sm := Sample{Key: s.Key, At: at, Synthetic: true, MaxPlayers: s.Capacity}
		if mapLeft <= 0 {
			mapIdx = (mapIdx + 1) % len(s.Maps)
			mapLeft = int((20*time.Minute + time.Duration(rng.IntN(21))*time.Minute) / s.Step)
		}
		mapLeft--
		if down == 0 && rng.IntN(400) == 0 {
			down = 1 + rng.IntN(4)
		}
		switch {
		case s.State != 0 && s.State != StateOnline:
			sm.State, sm.MaxPlayers = s.State, 0
		case down > 0:
			down--
			sm.State, sm.MaxPlayers = StateOffline, 0
		default:
			h := float64(at.UTC().Hour()) + float64(at.UTC().Minute())/60
			// Peak around 20:00, trough around 08:00, shifted per server.
			day := 0.5 + 0.5*math.Sin((h-14)/24*2*math.Pi+phase/4)
			p := float64(s.Capacity) * busy * day
			p += rng.NormFloat64() * 1.2
			sm.State = StateOnline
			sm.Players = min(max(int(math.Round(p)), 0), s.Capacity)
			sm.Bots = min(sm.Players, rng.IntN(3))
			sm.Map = s.Maps[mapIdx]
			sm.RTT = time.Duration(200+rng.IntN(800)) * time.Microsecond
		}
		out = append(out, sm)
	}
	return out
}
