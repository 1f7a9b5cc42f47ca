package demo

import (
	"net/netip"
	"time"

	"github.com/querylens/querylens/codecs/mumble"
)

// mumbleServer is an emulated Mumble server's ping: its users come and go
// on a cycle of minutes picked by the seed; the rest is fixed by it.
type mumbleServer struct {
	behavior Behavior
	seed     uint64
	max      uint32
}

// NewMumble returns an emulated Mumble server answering the UDP ping,
// built with the mumble encoder. It honours Silent and Truncated (every
// answer cut after the users, inside the fixed 24 bytes); Slow is the
// caller's to apply. The ping has no length, count or string a hostile
// server could lie with: a cut answer is its one malformed shape.
func NewMumble(seed int64, b Behavior) Handler {
	s := &mumbleServer{behavior: b, seed: uint64(seed)}
	s.max = uint32(20 + bmMix(s.seed, 1)%5*20)
	return s
}

func (s *mumbleServer) Respond(q []byte, _ netip.AddrPort, now time.Time) [][]byte {
	req, err := mumble.DecodeRequest(q)
	if err != nil {
		return nil
	}
	// Users: a slow wave over ten minutes, offset by the seed.
	phase := (uint64(now.Unix())/60 + bmMix(s.seed, 2)) % 10
	users := uint32(phase) * s.max / 12
	out := mumble.AppendResponse(nil, mumble.Response{
		Version:   mumble.NewVersion(1, 4, uint8(200+bmMix(s.seed, 3)%56)),
		Ident:     req.Ident,
		Users:     users + 1,
		MaxUsers:  s.max,
		Bandwidth: 72000,
	})
	if s.behavior == Truncated {
		out = out[:16]
	}
	return [][]byte{out}
}
