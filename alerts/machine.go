package alerts

import (
	"slices"
	"time"
)

// Sample is one ask of a watched server, as the tracker records it.
type Sample struct {
	Time  time.Time
	State string // a State* name
	Err   string // what went wrong, for the states that are not online

	// What the server said; read only when State is online.
	Name            string
	Map             string
	Players         []string // the players' names, as the server sent them
	PlayersComplete bool     // Players lists every player (not a sample of them)
	NumPlayers      int
	MaxPlayers      int
}

// Kind is what an event tells.
type Kind string

// The events. The names are the generic webhook's event types (with a
// "server." prefix) and stable: they are stored in outbox rows.
const (
	KindDown        Kind = "down"         // no answer (offline or unreachable) for DownSamples samples or DownAfter
	KindStillDown   Kind = "still-down"   // Resend elapsed and it is still down
	KindMalformed   Kind = "malformed"    // it answers, but its replies do not decode
	KindUp          Kind = "up"           // it answers again after a down or malformed was told
	KindCannotCheck Kind = "cannot-check" // querylens's relay refused or limited every ask for BlindAfter
	KindChecking    Kind = "checking"     // asks go out again after a cannot-check
	KindAtLeast     Kind = "at-least"     // the player count reached Watch.AtLeast
	KindFull        Kind = "full"         // the player count reached the maximum
	KindEmpty       Kind = "empty"        // the last player left
	KindMap         Kind = "map"          // the map changed (Previous holds the old one)
	KindName        Kind = "name"         // the server's name changed (Previous holds the old one)
	KindPlayers     Kind = "players"      // players joined or left (Joined, Left)
	KindPlayersMore Kind = "players-more" // the hour's cap of player events is reached; more are not told
)

// Kinds lists every kind, in the order above.
func Kinds() []Kind {
	return []Kind{KindDown, KindStillDown, KindMalformed, KindUp, KindCannotCheck, KindChecking,
		KindAtLeast, KindFull, KindEmpty, KindMap, KindName, KindPlayers, KindPlayersMore}
}

// Event is one thing to tell about one watched server.
type Event struct {
	Watch  string    `json:"watch"`
	Kind   Kind      `json:"kind"`
	Time   time.Time `json:"time"`           // the sample's time
	Since  time.Time `json:"since,omitzero"` // down, still-down, up, malformed, cannot-check: when the condition began
	Server Ref       `json:"server"`
	State  string    `json:"state"` // the sample's state
	Err    string    `json:"error,omitempty"`

	// The server's last known details (those of the sample when online).
	Name       string   `json:"name,omitempty"`
	Map        string   `json:"map,omitempty"`
	NumPlayers int      `json:"numplayers"`
	MaxPlayers int      `json:"maxplayers"`
	Players    []string `json:"players,omitempty"`

	Previous string   `json:"previous,omitempty"` // map and name: the value before
	Joined   []string `json:"joined,omitempty"`   // players: the names that joined
	Left     []string `json:"left,omitempty"`     // players: the names that left
	Limit    int      `json:"limit,omitempty"`    // at-least: Watch.AtLeast; players-more: the cap
}

// Conditions of State.Cond and State.Told.
const (
	condUp        = "up"
	condDown      = "down"
	condMalformed = "malformed"
)

// State is the machine's memory of one watch: small, plain and
// serialisable (JSON), stored next to the watch so that a restart neither
// repeats an event nor loses a transition. The zero State is a watch
// never sampled.
type State struct {
	Last time.Time `json:"last,omitzero"` // the last sample's time: older or equal samples are ignored

	// The run of samples of one class (up, down, malformed) being counted.
	Run      string    `json:"run,omitempty"`
	RunCount int       `json:"run_count,omitempty"`
	RunSince time.Time `json:"run_since,omitzero"`

	Cond      string    `json:"cond,omitempty"`      // the condition the samples show once debounced
	CondSince time.Time `json:"cond_since,omitzero"` // when Cond's run began
	Told      string    `json:"told,omitempty"`      // the condition last told (or taken for granted: up)
	ToldAt    time.Time `json:"told_at,omitzero"`    // when the down was last told (for Resend)
	ToldSince time.Time `json:"told_since,omitzero"` // when the told down or malformed began (an up's Since)

	BlindSince time.Time `json:"blind_since,omitzero"` // first of the relay's refusals in a row
	BlindTold  bool      `json:"blind_told,omitempty"`

	// The server's last known details (from online samples).
	Known      bool     `json:"known,omitempty"`
	Name       string   `json:"name,omitempty"`
	Map        string   `json:"map,omitempty"`
	NumPlayers int      `json:"numplayers,omitempty"`
	MaxPlayers int      `json:"maxplayers,omitempty"`
	Players    []string `json:"players,omitempty"` // sorted; only when ListKnown
	ListKnown  bool     `json:"list_known,omitempty"`

	CapStart time.Time `json:"cap_start,omitzero"` // the hour the player events are counted in
	CapCount int       `json:"cap_count,omitempty"`

	// The last event told (not held by a mute window): what the status
	// page shows of a watched server.
	LastKind Kind      `json:"last_kind,omitempty"`
	LastAt   time.Time `json:"last_at,omitzero"`
}

// class sorts a sample state: up (the server answered), down, malformed,
// or blind (querylens's own doing, or a state this package does not
// know: nothing is learnt of the server).
func class(state string) string {
	switch state {
	case StateOnline, StateRateLimited, StateBanned:
		return condUp
	case StateOffline, StateUnreachable:
		return condDown
	case StateMalformed:
		return condMalformed
	}
	return ""
}

// Next is the machine: it folds one sample into st and returns the new
// state with the events to tell, in order. It is pure and deterministic:
// the only clock is the samples' times. Samples must come in time order;
// one not after st.Last is ignored (a replay after a restart tells
// nothing twice).
//
// The rules, each tested in machine_test.go:
//
//   - A down is DownSamples offline or unreachable samples in a row (or,
//     when DownAfter is set, such samples lasting DownAfter). A single
//     lost sample tells nothing. Rate-limited and banned are answers: not
//     down. Malformed is its own condition, debounced the same way.
//   - Up is told on the first answering sample after a down or malformed
//     was told, and only then.
//   - Refused and relay-limited samples are querylens's doing: they
//     neither count nor break a run. Lasting BlindAfter they tell
//     cannot-check once, and the next other sample tells checking.
//   - Name, map, player counts and lists come from online samples and
//     are edges: the first sample sets the baseline and tells nothing.
//     The player list is forgotten when the server goes down, so a
//     restart is not told as everyone leaving and joining.
//   - Joins and leaves need PlayersComplete samples on both sides; the
//     joins and leaves of one sample are one event; at most PlayerCap
//     such events per hour, then one players-more.
//   - Inside a mute window nothing is told, but the state follows the
//     samples; on the first sample after the window a condition that
//     changed inside it (down, malformed, up again) is told once.
func Next(w Watch, st State, s Sample) (State, []Event) {
	if !s.Time.After(st.Last) {
		return st, nil
	}
	w = w.Defaults()
	st.Last = s.Time
	st.Players = slices.Clone(st.Players)
	muted := w.muted(s.Time)
	m := machine{w: &w, st: &st, s: &s, muted: muted}

	c := class(s.State)
	if c == "" {
		m.blind()
		return st, m.out
	}
	if st.BlindTold {
		m.tell(Event{Kind: KindChecking, Since: st.BlindSince})
	}
	st.BlindSince, st.BlindTold = time.Time{}, false
	lead := m.out
	m.out = nil

	if c != st.Run {
		st.Run, st.RunCount, st.RunSince = c, 0, s.Time
	}
	st.RunCount++
	if c != st.Cond && m.debounced() {
		st.Cond, st.CondSince = c, st.RunSince
		if c == condDown {
			st.Players, st.ListKnown = nil, false
		}
	}
	// The details first, so that an up carries the new name and players,
	// but the condition's events come first.
	if s.State == StateOnline {
		m.details()
	}
	details := m.out
	m.out = nil
	m.condition()
	return st, slices.Concat(lead, m.out, details)
}

type machine struct {
	w     *Watch
	st    *State
	s     *Sample
	muted bool
	out   []Event
}

// tell appends e filled from the sample and the state, unless muted.
func (m *machine) tell(e Event) bool {
	if m.muted {
		return false
	}
	e.Watch, e.Server, e.Time, e.State, e.Err = m.w.ID, m.w.Server, m.s.Time, m.s.State, m.s.Err
	e.Name, e.Map, e.NumPlayers, e.MaxPlayers = m.st.Name, m.st.Map, m.st.NumPlayers, m.st.MaxPlayers
	if m.st.ListKnown {
		e.Players = slices.Clone(m.st.Players)
	}
	m.out = append(m.out, e)
	m.st.LastKind, m.st.LastAt = e.Kind, e.Time
	return true
}

// blind handles a sample that says nothing of the server.
func (m *machine) blind() {
	st := m.st
	if st.BlindSince.IsZero() {
		st.BlindSince = m.s.Time
	}
	if !st.BlindTold && m.s.Time.Sub(st.BlindSince) >= m.w.BlindAfter {
		st.BlindTold = m.tell(Event{Kind: KindCannotCheck, Since: st.BlindSince})
	}
}

// debounced reports whether the current run is long enough to change the
// condition: any answer at once, down and malformed after the thresholds.
func (m *machine) debounced() bool {
	st := m.st
	if st.Run == condUp {
		return true
	}
	if m.w.DownAfter > 0 {
		return m.s.Time.Sub(st.RunSince) >= m.w.DownAfter
	}
	return st.RunCount >= m.w.DownSamples
}

// condition tells a change of the debounced condition not yet told, and
// the resends of a down.
func (m *machine) condition() {
	st, w := m.st, m.w
	switch {
	case st.Cond == st.Told:
		if st.Cond == condDown && w.Resend > 0 && m.s.Time.Sub(st.ToldAt) >= w.Resend {
			if m.tell(Event{Kind: KindStillDown, Since: st.CondSince}) {
				st.ToldAt = m.s.Time
			}
		}
	case st.Cond == condUp:
		if st.Told == "" {
			st.Told = condUp // the first answer: nothing to tell
			return
		}
		// Told is down or malformed; tell the way back.
		if !w.Up {
			st.Told = condUp
			return
		}
		if m.tell(Event{Kind: KindUp, Since: st.ToldSince, Previous: st.Told}) {
			st.Told = condUp
		}
	case st.Cond == condDown:
		if !w.Down {
			return
		}
		if m.tell(Event{Kind: KindDown, Since: st.CondSince}) {
			st.Told, st.ToldAt, st.ToldSince = condDown, m.s.Time, st.CondSince
		}
	case st.Cond == condMalformed:
		if !w.Malformed {
			return
		}
		if m.tell(Event{Kind: KindMalformed, Since: st.CondSince}) {
			st.Told, st.ToldSince = condMalformed, st.CondSince
		}
	}
}

// details compares an online sample's name, map and players with the
// last ones, tells the edges and keeps the new values.
func (m *machine) details() {
	st, w, s := m.st, m.w, m.s
	name, mapName := CleanName(s.Name), CleanName(s.Map)
	if !st.Known {
		st.Known = true
		st.Name, st.Map, st.NumPlayers, st.MaxPlayers = name, mapName, s.NumPlayers, s.MaxPlayers
		if s.PlayersComplete {
			st.Players, st.ListKnown = sortedNames(s.Players), true
		}
		return
	}
	prevNum, prevMax := st.NumPlayers, st.MaxPlayers
	if name != st.Name {
		prev := st.Name
		st.Name = name
		if w.NameChange {
			m.tell(Event{Kind: KindName, Previous: prev})
		}
	}
	if mapName != st.Map {
		prev := st.Map
		st.Map = mapName
		if w.MapChange {
			m.tell(Event{Kind: KindMap, Previous: prev})
		}
	}
	st.NumPlayers, st.MaxPlayers = s.NumPlayers, s.MaxPlayers
	if w.AtLeast > 0 && prevNum < w.AtLeast && s.NumPlayers >= w.AtLeast {
		m.tell(Event{Kind: KindAtLeast, Limit: w.AtLeast})
	}
	full := func(n, max int) bool { return max > 0 && n >= max }
	if w.Full && !full(prevNum, prevMax) && full(s.NumPlayers, s.MaxPlayers) {
		m.tell(Event{Kind: KindFull})
	}
	if w.Empty && prevNum > 0 && s.NumPlayers == 0 {
		m.tell(Event{Kind: KindEmpty})
	}
	m.players()
}

// players tells the joins and leaves between the kept list and the
// sample's, within the hour's cap.
func (m *machine) players() {
	st, w, s := m.st, m.w, m.s
	if !s.PlayersComplete {
		// A partial list says nothing of who left; forget the old one so
		// the next complete list is a new baseline, not a burst of joins.
		st.Players, st.ListKnown = nil, false
		return
	}
	now := sortedNames(s.Players)
	if !st.ListKnown {
		st.Players, st.ListKnown = now, true
		return
	}
	joined, left := diff(st.Players, now)
	st.Players = now
	if !w.Joins {
		joined = nil
	}
	if !w.Leaves {
		left = nil
	}
	joined, left = filter(w, joined), filter(w, left)
	if len(joined) == 0 && len(left) == 0 {
		return
	}
	if st.CapStart.IsZero() || s.Time.Sub(st.CapStart) >= capWindow {
		st.CapStart, st.CapCount = s.Time, 0
	}
	switch {
	case st.CapCount < w.PlayerCap:
		if m.tell(Event{Kind: KindPlayers, Joined: joined, Left: left}) {
			st.CapCount++
		}
	case st.CapCount == w.PlayerCap:
		if m.tell(Event{Kind: KindPlayersMore, Limit: w.PlayerCap, Joined: joined, Left: left}) {
			st.CapCount++
		}
	}
}

// sortedNames cleans and sorts a player list.
func sortedNames(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, CleanName(n))
	}
	slices.Sort(out)
	return out
}

// diff compares two sorted lists as multisets (two players may share a
// name): the names only in b joined, those only in a left.
func diff(a, b []string) (joined, left []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			left = append(left, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			joined = append(joined, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return joined, left
}

func filter(w *Watch, names []string) []string {
	if len(w.Players) == 0 {
		return names
	}
	var out []string
	for _, n := range names {
		if w.follows(n) {
			out = append(out, n)
		}
	}
	return out
}
