package demo

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs/quake3"
)

// Servers for trying alerts: one that goes down and comes back on a
// schedule, with players joining and leaving until it is full and then
// empty. What they answer is a pure function of the clock they are given
// (Respond's now), so a test replays a day in a loop.

// Flapping wraps h in a server that is silent for the first down of every
// period (counted from the Unix epoch, so the same on every run) and
// answers as h otherwise: a server that crashes and restarts. down must
// be shorter than period.
func Flapping(period, down time.Duration, h Handler) Handler {
	return &flapping{period: period, down: down, h: h}
}

type flapping struct {
	period, down time.Duration
	h            Handler
}

// Down reports whether the server is silent at now.
func (f *flapping) Down(now time.Time) bool {
	return time.Duration(bmMod(now.UnixNano(), int64(f.period))) < f.down
}

func (f *flapping) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	if f.Down(now) {
		return nil
	}
	return f.h.Respond(q, from, now)
}

// CrowdSlots is a crowd server's sv_maxclients.
const CrowdSlots = 8

// CrowdFullSteps is how many steps a crowd server stays full: long enough
// for a watch sampling every 10 s to see it at the short schedules the
// demo's docs suggest (a 2-minute period has 4.2 s steps).
const CrowdFullSteps = 4

// NewQuake3Crowd returns an ioquake3 server whose players follow a cycle
// of 2×CrowdSlots+CrowdFullSteps-1 steps of step each: one joins every
// step until it is full, it stays full for CrowdFullSteps steps, then the
// first to come leaves every step until it is empty. So a watch sees
// joins, full, leaves and empty in one cycle. It answers getstatus and
// getinfo.
func NewQuake3Crowd(seed int64, step time.Duration) Handler {
	return newCrowd(seed, step, func(now time.Time) time.Duration { return time.Duration(now.UnixNano()) })
}

// newCrowd is a crowd whose cycle counts from since(now).
func newCrowd(seed int64, step time.Duration, since func(time.Time) time.Duration) *crowd {
	s := &crowd{step: step, since: since, name: "^3querylens^7 demo ^1Flapping ^7#" + strconv.Itoa(int(bmMix(uint64(seed), 1)%90+10))}
	start := int(bmMix(uint64(seed), 2) % uint64(len(bmNames)))
	for i := range CrowdSlots {
		s.names[i] = bmNames[(start+i)%len(bmNames)]
	}
	return s
}

type crowd struct {
	step  time.Duration
	since func(time.Time) time.Duration // the time the cycle counts from
	name  string
	names [CrowdSlots]string
}

// crowdCycle is how many steps a crowd's cycle has.
const crowdCycle = 2*CrowdSlots + CrowdFullSteps - 1

// Players is who is in at now, in the order they came.
func (s *crowd) Players(now time.Time) []string {
	i := int(bmMod(int64(s.since(now)/s.step), crowdCycle))
	switch {
	case i <= CrowdSlots:
		return s.names[:i] // 0 … full
	case i < CrowdSlots+CrowdFullSteps:
		return s.names[:] // full a while
	}
	return s.names[i-CrowdSlots-CrowdFullSteps+1:] // the first to come leave first
}

func (s *crowd) Respond(q []byte, _ netip.AddrPort, now time.Time) [][]byte {
	req, err := quake3.DecodeRequest(q)
	if err != nil || req.IsMaster() {
		return nil
	}
	in := s.Players(now)
	r := quake3.Response{Command: quake3.CmdStatusResponse}
	add := func(k, v string) { r.Vars = append(r.Vars, quake3.Var{Key: k, Value: v}) }
	add("sv_maxclients", strconv.Itoa(CrowdSlots))
	add("sv_hostname", s.name)
	add("mapname", "q3dm17")
	add("g_gametype", "0")
	add("protocol", "68")
	if req.Challenge != "" {
		add("challenge", req.Challenge)
	}
	if req.Command == quake3.CmdGetInfo {
		r.Command = quake3.CmdInfoResponse
		add("clients", strconv.Itoa(len(in)))
	} else {
		for i, name := range in {
			r.Players = append(r.Players, quake3.Player{Name: name, Score: i, Ping: 20 + i})
		}
	}
	b, err := quake3.AppendResponse(nil, r)
	if err != nil {
		return nil
	}
	return [][]byte{b}
}

// NewFlappingServer is the demo's flapping server: a crowd that is down
// for 3 minutes of every 10 and, each time it is up, fills (a player
// every 21 s), stays full, and empties.
func NewFlappingServer(seed int64) Handler {
	return NewFlappingServerAt(seed, FlapSchedule{})
}

// FlapSchedule is the flapping server's schedule: silent for Down of
// every Period, a player joining (then leaving) every Step. Each up
// starts empty, and the crowd's cycle counts from it, so that every up
// shows joins, full, leaves and empty in that order when the cycle fits
// (the default Step makes it: the up time over the cycle's steps plus
// one). A zero field is NewFlappingServer's (10 minutes, 3 minutes, 21 s);
// a test runs the
// same server in seconds.
type FlapSchedule struct {
	Period, Down, Step time.Duration
}

// Defaults is s with its zero fields set, Down kept below Period.
func (s FlapSchedule) Defaults() FlapSchedule {
	if s.Period <= 0 {
		s.Period = 10 * time.Minute
	}
	if s.Down <= 0 {
		s.Down = s.Period * 3 / 10
	}
	if s.Down >= s.Period {
		s.Down = s.Period / 2
	}
	if s.Step <= 0 {
		s.Step = (s.Period - s.Down) / (crowdCycle + 1)
	}
	return s
}

// NewFlappingServerAt is the flapping server on schedule s.
func NewFlappingServerAt(seed int64, s FlapSchedule) Handler {
	s = s.Defaults()
	since := func(now time.Time) time.Duration {
		return time.Duration(bmMod(now.UnixNano(), int64(s.Period))) - s.Down
	}
	return Flapping(s.Period, s.Down, newCrowd(seed, s.Step, since))
}
