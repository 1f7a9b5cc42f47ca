package alerts

import (
	"errors"
	"strings"
	"time"
)

// Ref names a game server the way package server's Ref does (the same
// three fields, the same JSON), so that a server.Ref converts with
// alerts.Ref{Protocol: r.Protocol, Addr: r.Addr, Options: r.Options}
// without this package importing server.
type Ref struct {
	Protocol string            `json:"protocol"`
	Addr     string            `json:"addr"`
	Options  map[string]string `json:"options,omitempty"`
}

// String is "protocol/addr", the options left out: a label for people.
func (r Ref) String() string { return r.Protocol + "/" + r.Addr }

// The states of a sample: the names of package server's State (String),
// kept here as strings so that the machine does not follow that
// package's refactoring; TestStateNames checks they still agree.
const (
	StateOnline      = "online"        // the server answered with data
	StateRateLimited = "rate-limited"  // the server refused: asked too recently
	StateBanned      = "banned"        // the server refuses this asker
	StateOffline     = "offline"       // no answer in time
	StateMalformed   = "malformed"     // an answer came that does not decode
	StateRefused     = "refused"       // the relay's policy refused the address
	StateLimited     = "relay-limited" // the relay's own limits
	StateUnreachable = "unreachable"   // the name does not resolve, or sending failed
)

// Window is a mute or maintenance window, [Start, End): events that fall
// inside are not told (see Next for what is told after it).
type Window struct {
	Start time.Time `json:"start" toml:"start"`
	End   time.Time `json:"end" toml:"end"`
}

// Contains reports whether t is inside the window.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.Start) && t.Before(w.End) }

// Watch is what to tell about one server. The zero value of every rule is
// "off"; the thresholds have defaults (Defaults).
type Watch struct {
	ID     string        `json:"id" toml:"id"`                 // stable: names the machine's state and the events
	Server Ref           `json:"server" toml:"server"`         // which server
	Every  time.Duration `json:"every,omitempty" toml:"every"` // how often it is sampled (0: 30 s; never more often than the relay's per-target limits allow)

	Down       bool          `json:"down,omitempty" toml:"down"`               // tell when it goes down (offline or unreachable)
	Up         bool          `json:"up,omitempty" toml:"up"`                   // tell when it comes back, only after a down (or malformed) was told
	Malformed  bool          `json:"malformed,omitempty" toml:"malformed"`     // tell when it answers with replies that do not decode
	Resend     time.Duration `json:"resend,omitempty" toml:"resend"`           // while down, tell again every Resend (0: never)
	AtLeast    int           `json:"at_least,omitempty" toml:"at_least"`       // tell when the player count reaches AtLeast (0: off)
	Full       bool          `json:"full,omitempty" toml:"full"`               // tell when it fills up
	Empty      bool          `json:"empty,omitempty" toml:"empty"`             // tell when the last player leaves
	MapChange  bool          `json:"map_change,omitempty" toml:"map_change"`   // tell when the map changes
	NameChange bool          `json:"name_change,omitempty" toml:"name_change"` // tell when the server's name changes
	Joins      bool          `json:"joins,omitempty" toml:"joins"`             // tell when a player joins
	Leaves     bool          `json:"leaves,omitempty" toml:"leaves"`           // tell when a player leaves
	Board      bool          `json:"board,omitempty" toml:"board"`             // keep a live status message on the first Discord destination, edited in place
	Players    []string      `json:"players,omitempty" toml:"players"`         // joins and leaves of these names only (* matches any run of characters, case-insensitive); empty: everyone

	DownSamples int           `json:"down_samples,omitempty" toml:"down_samples"` // down after this many down samples in a row (default 3)
	DownAfter   time.Duration `json:"down_after,omitempty" toml:"down_after"`     // or, when set, after down samples lasting this long (instead of counting)
	BlindAfter  time.Duration `json:"blind_after,omitempty" toml:"blind_after"`   // "cannot check" after querylens's own refusals last this long (default 5 minutes)
	PlayerCap   int           `json:"player_cap,omitempty" toml:"player_cap"`     // join/leave events per hour before one "more" notice (default 30)

	Mute []Window `json:"mute,omitempty" toml:"mute"` // maintenance windows

	To []string `json:"to,omitempty" toml:"to"` // names of the destinations told (resolved by the caller)
}

// The defaults of Watch's thresholds.
const (
	DefaultDownSamples = 3
	DefaultBlindAfter  = 5 * time.Minute
	DefaultPlayerCap   = 30
	capWindow          = time.Hour
)

// Defaults returns w with its zero thresholds set to their defaults.
func (w Watch) Defaults() Watch {
	if w.DownSamples <= 0 {
		w.DownSamples = DefaultDownSamples
	}
	if w.BlindAfter <= 0 {
		w.BlindAfter = DefaultBlindAfter
	}
	if w.PlayerCap <= 0 {
		w.PlayerCap = DefaultPlayerCap
	}
	return w
}

// Errors of Validate.
var (
	ErrNoID            = errors.New("alerts: watch has no id")
	ErrNoServer        = errors.New("alerts: watch names no server (protocol and address)")
	ErrPartialPlayers  = errors.New("alerts: joins and leaves need complete player lists, and this protocol lists only some players")
	ErrBadPattern      = errors.New("alerts: bad player name pattern (empty, only stars, or too long)")
	ErrBadWindow       = errors.New("alerts: mute window ends before it starts")
	ErrNegative        = errors.New("alerts: negative threshold")
	ErrNothingToTell   = errors.New("alerts: watch tells nothing (no rule is on)")
	ErrPlayersWithout  = errors.New("alerts: player names given without joins or leaves")
	ErrResendWithout   = errors.New("alerts: resend given without down")
	ErrUpWithoutDown   = errors.New("alerts: up given without down or malformed")
	ErrDownAfterTooLow = errors.New("alerts: down_after below one second")
)

// Validate checks w. complete reports whether a protocol's replies list
// every player (false for one that sends a sample of them, such as
// Minecraft's dozen); a watch of joins or leaves needs it. A nil complete
// accepts every protocol.
func (w Watch) Validate(complete func(protocol string) bool) error {
	switch {
	case strings.TrimSpace(w.ID) == "":
		return ErrNoID
	case w.Server.Protocol == "" || w.Server.Addr == "":
		return ErrNoServer
	case w.Every < 0 || w.Resend < 0 || w.AtLeast < 0 || w.DownSamples < 0 || w.DownAfter < 0 || w.BlindAfter < 0 || w.PlayerCap < 0:
		return ErrNegative
	case w.DownAfter > 0 && w.DownAfter < time.Second:
		return ErrDownAfterTooLow
	case w.Resend > 0 && !w.Down:
		return ErrResendWithout
	case w.Up && !w.Down && !w.Malformed:
		return ErrUpWithoutDown
	case len(w.Players) > 0 && !w.Joins && !w.Leaves:
		return ErrPlayersWithout
	case (w.Joins || w.Leaves) && complete != nil && !complete(w.Server.Protocol):
		return ErrPartialPlayers
	case !(w.Down || w.Malformed || w.AtLeast > 0 || w.Full || w.Empty || w.MapChange || w.NameChange || w.Joins || w.Leaves || w.Board):
		return ErrNothingToTell
	}
	for _, p := range w.Players {
		if strings.Trim(p, "*") == "" || Length(p) > MaxName {
			return errors.Join(ErrBadPattern, errors.New("alerts: pattern "+quote(p)))
		}
	}
	for _, m := range w.Mute {
		if !m.End.After(m.Start) {
			return ErrBadWindow
		}
	}
	return nil
}

// muted reports whether t is inside one of w's windows.
func (w *Watch) muted(t time.Time) bool {
	for _, m := range w.Mute {
		if m.Contains(t) {
			return true
		}
	}
	return false
}

// follows reports whether the joins and leaves of name are told.
func (w *Watch) follows(name string) bool {
	if len(w.Players) == 0 {
		return true
	}
	n := strings.ToLower(name)
	for _, p := range w.Players {
		if glob(strings.ToLower(CleanName(p)), n) {
			return true
		}
	}
	return false
}

// glob reports whether name matches pattern, where * matches any run of
// characters and everything else itself: clan tags such as [EU] are
// plain text, not character classes.
func glob(pattern, name string) bool {
	// The classic greedy match with one backtrack point: the last star.
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case p < len(pattern) && pattern[p] == name[n]:
			p++
			n++
		case star >= 0:
			mark++
			p, n = star+1, mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// quote is strconv.Quote of at most 64 bytes of s, for error messages
// that carry input.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
