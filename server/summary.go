package server

import (
	"encoding/json"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
)

// Summary is what the JSON API, the probe endpoint and a master's list say
// of one server: its identity, its state and the numbers a row shows. It
// is built from a fresh Report (SummaryOf) or from the last recorded
// history sample (SummaryOfSample), so every consumer speaks one
// vocabulary: the state names are State's.
type Summary struct {
	Protocol   string            `json:"protocol"`
	Address    string            `json:"address"` // canonical host:port
	Options    map[string]string `json:"options,omitempty"`
	Key        string            `json:"key"` // protocol/host:port?options, the history key (Ref.Key().String())
	State      State             `json:"state"`
	Detail     string            `json:"detail,omitempty"` // one sentence for people when not online, or an online reply's warnings
	Name       string            `json:"name,omitempty"`   // colour codes stripped
	Map        string            `json:"map,omitempty"`
	Game       string            `json:"game,omitempty"`
	Players    int               `json:"players"`
	Bots       int               `json:"bots"`
	MaxPlayers int               `json:"max_players"`
	Password   *bool             `json:"password,omitempty"` // nil when the protocol does not say
	RTT        time.Duration     `json:"-"`
	RTTSeconds float64           `json:"rtt_seconds,omitempty"`
	At         time.Time         `json:"at,omitzero"`      // when the server was asked; absent when nobody has (state "unknown")
	Source     string            `json:"source,omitempty"` // "query", "cache" or "history"; absent when nobody has asked
	Join       string            `json:"join,omitempty"`   // the protocol's join link, when it has one
	Status     string            `json:"status,omitempty"` // the status page's path
}

// Summary sources.
const (
	SourceQuery   = "query"   // asked now
	SourceCache   = "cache"   // the relay's cached answer
	SourceHistory = "history" // the last recorded sample
)

// Unknown is the JSON name of the zero State: a server listed by a master
// that nobody has asked yet.
const Unknown = "unknown"

// MarshalJSON writes the state as its name ("unknown" for the zero State).
func (s State) MarshalJSON() ([]byte, error) {
	if s == 0 {
		return json.Marshal(Unknown)
	}
	return json.Marshal(s.String())
}

// UnmarshalJSON reads a state name.
func (s *State) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return err
	}
	if name == Unknown {
		*s = 0
		return nil
	}
	st, ok := ParseState(name)
	if !ok {
		return &json.UnsupportedValueError{Str: "unknown server state " + name}
	}
	*s = st
	return nil
}

func summaryBase(ref Ref) Summary {
	s := Summary{Protocol: ref.Protocol, Address: ref.Addr, Options: ref.Options, Key: ref.Key().String(), Status: ref.Path()}
	if p, ok := LookupProtocol(ref.Protocol); ok {
		s.Join = p.JoinURL(ref.Addr)
	}
	return s
}

// SummaryOf summarises a probe's report.
func SummaryOf(rep Report) Summary {
	s := summaryBase(rep.Ref)
	s.State, s.At = rep.State, rep.At.UTC()
	if rep.State != Online {
		s.Detail = rep.Detail
	}
	s.Source = SourceQuery
	if rep.Cached {
		s.Source = SourceCache
	}
	s.RTT = rep.RTT
	s.RTTSeconds = rep.RTT.Seconds()
	if rep.Msg != nil && rep.Msg.Info != nil {
		in := rep.Msg.Info
		c := CountsOf(in)
		s.Name, s.Players, s.Bots, s.MaxPlayers = c.Name, c.Players, c.Bots, c.Max
		s.Map = codecs.StripColors(in.Map)
		s.Game = codecs.StripColors(in.GameType)
		if in.Has&codecs.HasPassword != 0 {
			pw := in.Password
			s.Password = &pw
		}
	}
	return s
}

// SummaryOfSample summarises the last recorded sample of ref's server.
func SummaryOfSample(ref Ref, hs history.Sample) Summary {
	s := summaryBase(ref)
	s.Source = SourceHistory
	s.At = hs.At.UTC()
	for st := State(1); st < stateEnd; st++ {
		if h, ok := st.History(); ok && h == hs.State {
			s.State = st
		}
	}
	s.Name, s.Map = hs.Name, hs.Map
	s.Players, s.Bots, s.MaxPlayers = hs.Players, hs.Bots, hs.MaxPlayers
	s.RTT = hs.RTT
	s.RTTSeconds = hs.RTT.Seconds()
	return s
}
