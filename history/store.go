package history

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Key names one game server: the protocol it is asked with and its
// host:port as the status page's URL spells it.
type Key struct {
	Protocol string
	Addr     string
}

func (k Key) String() string { return k.Protocol + "/" + k.Addr }

// Valid reports whether k can be stored: both parts set and of bounded size.
func (k Key) Valid() bool {
	return k.Protocol != "" && k.Addr != "" && len(k.Protocol) <= 32 && len(k.Addr) <= 300
}

// State is what one sample found. The numeric values are stored: never
// renumber them, only append.
type State uint8

const (
	StateOnline      State = 1 // a complete answer was decoded
	StateOffline     State = 2 // no answer within the window
	StateRateLimited State = 3 // the relay or the server refused for rate
	StateBanned      State = 4 // the server said the asker is banned
	StateMalformed   State = 5 // an answer came that did not decode
	stateEnd         State = 6 // one past the last state
)

var stateNames = [...]string{"", "online", "offline", "rate-limited", "banned", "malformed"}

func (s State) String() string {
	if s > 0 && s < stateEnd {
		return stateNames[s]
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// Valid reports whether s is one of the states above.
func (s State) Valid() bool { return s > 0 && s < stateEnd }

// ParseState is String's inverse.
func ParseState(s string) (State, bool) {
	for i := 1; i < len(stateNames); i++ {
		if stateNames[i] == s {
			return State(i), true
		}
	}
	return 0, false
}

// Source says why a server is tracked.
type Source uint8

const (
	SourceView   Source = 1 // its status page, card or badge was requested
	SourceMaster Source = 2 // a configured master server lists it
	SourceDemo   Source = 3 // it is one of the demo's servers
	SourceWatch  Source = 4 // an alert watches it (Tracker.Pin)
)

// Server is one row of the tracked set.
type Server struct {
	Key
	Name       string    // the last name a sample reported ("" if none yet)
	Source     Source    // why it was first tracked
	LastViewed time.Time // last view (or master listing) that kept it tracked
}

// Sample is one observation of one server. Players, Bots, MaxPlayers and
// Map are meaningful only when State is StateOnline.
type Sample struct {
	Key
	At         time.Time // when the query was sent; stored to the second
	State      State
	Players    int // humans and bots together, as the server counts them
	Bots       int
	MaxPlayers int
	Map        string
	Name       string        // server name if the answer had one; kept per server, not per sample
	RTT        time.Duration // stored to the microsecond
	Synthetic  bool          // made up by the demo, never observed
}

// Hour is the rollup of one server's samples in one UTC hour.
type Hour struct {
	Start      time.Time // the hour's first second, UTC
	Samples    int       // samples of any state
	Online     int       // samples with StateOnline
	PlayersSum int       // sum of Players over online samples
	PlayersMax int
	BotsMax    int
	MaxPlayers int // the largest MaxPlayers seen
	Synthetic  int // how many of Samples were synthetic
}

// MapPlay is one map seen in a range of samples.
type MapPlay struct {
	Map         string
	First, Last time.Time
	Samples     int
}

// Pruned counts the rows Prune removed.
type Pruned struct {
	Samples, Hours, Servers int
}

// Store keeps the tracked set, the samples and their hourly rollups. An
// implementation is safe for concurrent use; every method that writes
// commits before returning, so a process killed at any moment loses at
// most the call in progress. Time ranges are half-open, [from, to), and
// results are in ascending time order. Run historytest.Run against any
// implementation.
type Store interface {
	// Track adds servers to the tracked set, or refreshes their
	// LastViewed (never moving it backwards). Name is ignored.
	Track(ctx context.Context, servers []Server) error
	// Untrack removes servers from the tracked set; their history stays
	// until it ages out. A server that has no history (it never got a
	// sample) is deleted at once.
	Untrack(ctx context.Context, keys []Key) error
	// Tracked lists the tracked set, least recently viewed first.
	Tracked(ctx context.Context) ([]Server, error)
	// Record stores samples and folds them into their hours, all in one
	// transaction. A sample of a server not tracked is stored all the same.
	Record(ctx context.Context, samples []Sample) error
	// Samples returns k's raw samples in [from, to).
	Samples(ctx context.Context, k Key, from, to time.Time) ([]Sample, error)
	// Hours returns k's hourly rollups whose Start is in [from, to).
	Hours(ctx context.Context, k Key, from, to time.Time) ([]Hour, error)
	// Maps returns the maps of k's online samples since the given time,
	// most recently played first, at most limit of them.
	Maps(ctx context.Context, k Key, since time.Time, limit int) ([]MapPlay, error)
	// Prune deletes samples older than rawBefore, hours older than
	// hoursBefore, and untracked servers left with no history. It may
	// commit in several steps; an error leaves what was deleted deleted.
	Prune(ctx context.Context, rawBefore, hoursBefore time.Time) (Pruned, error)
	// Close releases the store. Calls after Close return ErrClosed.
	Close() error
}

// Retention of the two kinds of history.
const (
	RawRetention  = 14 * 24 * time.Hour
	HourRetention = 365 * 24 * time.Hour
)

var (
	// ErrForeign means the database holds something that is not a
	// querylens history; it is left untouched.
	ErrForeign = errors.New("history: not a querylens history database")
	// ErrCorrupt means the database failed its integrity check.
	ErrCorrupt = errors.New("history: database is corrupt")
	// ErrNewer means the database's schema is newer than this program's.
	ErrNewer = errors.New("history: database schema is newer than this program")
	// ErrClosed is returned by calls on a closed store.
	ErrClosed = errors.New("history: store is closed")
	// ErrInvalid is wrapped by a *InvalidError.
	ErrInvalid = errors.New("invalid")
)

// InvalidError names a value a Store refused and why.
type InvalidError struct {
	What   string // "sample 3", "server 0", "range"
	Field  string // "Key", "State", "Players", ...
	Reason string
}

func (e *InvalidError) Error() string {
	return "history: " + e.What + ": " + e.Field + " " + e.Reason
}

func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Limits on what a Store accepts, so one bad sample cannot fill a disk.
const (
	MaxName    = 256 // bytes of a server name; longer names are cut
	MaxMap     = 64  // bytes of a map name; longer names are cut
	MaxPlayers = 1 << 16
)

// CheckSample validates s as every Store does before writing; i names it in
// the error. Long Name and Map are not errors: Normalize cuts them.
func CheckSample(i int, s Sample) error {
	what := "sample " + strconv.Itoa(i)
	switch {
	case !s.Key.Valid():
		return &InvalidError{what, "Key", "must have a protocol (<= 32 bytes) and an address (<= 300 bytes)"}
	case !s.State.Valid():
		return &InvalidError{what, "State", "is " + s.State.String()}
	case s.At.IsZero() || s.At.Year() < 2000 || s.At.Year() > 9999:
		return &InvalidError{what, "At", "is out of range: " + s.At.String()}
	case s.Players < 0 || s.Players > MaxPlayers:
		return &InvalidError{what, "Players", "is out of range: " + strconv.Itoa(s.Players)}
	case s.Bots < 0 || s.Bots > MaxPlayers:
		return &InvalidError{what, "Bots", "is out of range: " + strconv.Itoa(s.Bots)}
	case s.MaxPlayers < 0 || s.MaxPlayers > MaxPlayers:
		return &InvalidError{what, "MaxPlayers", "is out of range: " + strconv.Itoa(s.MaxPlayers)}
	case s.RTT < 0 || s.RTT > time.Hour:
		return &InvalidError{what, "RTT", "is out of range: " + s.RTT.String()}
	}
	return nil
}

// Normalize returns s as a Store keeps it: time in UTC to the second, RTT
// to the microsecond, Name and Map cut to their limits on a UTF-8 boundary,
// and the counts zeroed unless online.
func Normalize(s Sample) Sample {
	s.At = s.At.UTC().Truncate(time.Second)
	s.RTT = s.RTT.Truncate(time.Microsecond)
	s.Name = cut(s.Name, MaxName)
	s.Map = cut(s.Map, MaxMap)
	if s.State != StateOnline {
		s.Players, s.Bots, s.MaxPlayers, s.Map = 0, 0, 0, ""
	}
	return s
}

// HourOf returns the start of t's UTC hour.
func HourOf(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 { // back up to the start of a rune
		i--
	}
	return s[:i]
}
