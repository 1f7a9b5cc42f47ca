// Package manage is what the operator's tools share to keep watches made
// by hand: querylens watch add|list|rm|test and /api/v1/watches. Each such
// watch has one destination of its own (outbox.DestName(id)), stored with
// it in the history database; a watches file's watches are the file's to
// change (reconciled on SIGHUP), and Remove refuses them.
//
//	Add ─▶ Watch.Validate, the destination's shape (deliver.Sender.Check),
//	       the cap ─▶ PutDestination, PutWatch
//	List ─▶ Watches + Destinations ─▶ Entry, every URL masked
//	Remove ─▶ DeleteWatch, DeleteDestination
//	Samples ─▶ one made-up event of each kind, for a test message
//
// A destination's URL and secret are credentials: no Entry, error or
// String of this package carries them (alerts.MaskURL).
package manage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history/outbox"
)

// Store is what the tools use of the history database.
type Store interface {
	PutWatch(ctx context.Context, w alerts.Watch, origin outbox.Origin, now time.Time) error
	Watches(ctx context.Context) ([]outbox.Watch, error)
	DeleteWatch(ctx context.Context, id string) error
	Failed(ctx context.Context, limit int) ([]outbox.Row, error)
	outbox.Destinations
}

// Errors of Add and Remove. Each is safe to show (no URL, no secret).
var (
	ErrExists    = errors.New("manage: a watch with this id exists")
	ErrCap       = errors.New("manage: too many watches")
	ErrNotFound  = errors.New("manage: no such watch")
	ErrFileWatch = errors.New("manage: this watch is the watches file's: change the file and send SIGHUP")
	ErrDest      = errors.New("manage: bad destination")
	ErrBadID     = errors.New("manage: a watch id is 1 to 64 letters, digits, '-', '_' or '.'")
)

// Options are Add's.
type Options struct {
	// Max is the most watches stored; 0: outbox.DefaultMaxWatches.
	Max int
	// Complete says whether a protocol's replies list every player
	// (Watch.Validate's); nil: AllPlayers.
	Complete func(protocol string) bool
	// Check checks a destination's URL for its kind (a deliver.Sender's
	// Check, whose errors are masked); nil: only that it is there.
	Check func(alerts.Destination) error
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// AllPlayers reports whether protocol's replies list every player, as
// joins and leaves need: its codec says so (codecs.Description.AllPlayers).
// An unknown protocol does not.
func AllPlayers(protocol string) bool {
	d, err := codecs.LookupDescription(protocol)
	return err == nil && d.AllPlayers
}

// Add stores w, telling d, made by origin (cli or api). An empty w.ID is
// given a random one; w.To and d.Name are set to the watch's own
// destination. It returns the watch stored.
func Add(ctx context.Context, st Store, w alerts.Watch, d alerts.Destination, origin outbox.Origin, o Options) (alerts.Watch, error) {
	if o.Complete == nil {
		o.Complete = AllPlayers
	}
	if o.Max <= 0 {
		o.Max = outbox.DefaultMaxWatches
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if w.ID == "" {
		w.ID = NewID()
	}
	if !ValidID(w.ID) {
		return w, ErrBadID
	}
	d.Name = outbox.DestName(w.ID)
	w.To = []string{d.Name}
	if err := w.Validate(o.Complete); err != nil {
		return w, err
	}
	if err := checkDest(d, o.Check); err != nil {
		return w, err
	}
	if w.Board && d.Kind != alerts.DestDiscord {
		return w, errors.Join(ErrDest, errors.New("manage: a live status message is Discord's only (board)"))
	}
	have, err := st.Watches(ctx)
	if err != nil {
		return w, err
	}
	if slices.ContainsFunc(have, func(h outbox.Watch) bool { return h.Watch.ID == w.ID }) {
		return w, ErrExists
	}
	if len(have) >= o.Max {
		return w, errors.Join(ErrCap, errors.New("manage: "+strconv.Itoa(len(have))+" stored, at most "+strconv.Itoa(o.Max)))
	}
	now := o.Now()
	if err := st.PutDestination(ctx, d, origin, now); err != nil {
		return w, err
	}
	if err := st.PutWatch(ctx, w, origin, now); err != nil {
		st.DeleteDestination(ctx, d.Name)
		return w, err
	}
	return w, nil
}

func checkDest(d alerts.Destination, check func(alerts.Destination) error) error {
	switch {
	case d.Kind != alerts.DestDiscord && d.Kind != alerts.DestSlack && d.Kind != alerts.DestWebhook:
		return errors.Join(ErrDest, errors.New("manage: the kind is discord, slack or webhook"))
	case strings.TrimSpace(d.URL) == "":
		return errors.Join(ErrDest, errors.New("manage: no URL"))
	case d.Kind == alerts.DestWebhook:
		if _, err := alerts.ParseSecret(d.Secret); err != nil {
			return errors.Join(ErrDest, err)
		}
	case d.Secret != "":
		return errors.Join(ErrDest, errors.New("manage: a secret signs generic webhooks only"))
	}
	if d.ThreadID != "" && d.Kind != alerts.DestDiscord {
		return errors.Join(ErrDest, errors.New("manage: a thread id is Discord's only"))
	}
	if check != nil {
		if err := check(d); err != nil {
			return errors.Join(ErrDest, err)
		}
	}
	return nil
}

// NewID is a random watch id, "w-" and 8 hex digits.
func NewID() string {
	var b [4]byte
	rand.Read(b[:])
	return "w-" + hex.EncodeToString(b[:])
}

// ValidID reports whether id can name a watch made by hand: it appears in
// command lines and URL paths.
func ValidID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// Dest is a destination as it may be shown: its URL masked, its secret
// only said to be there.
type Dest struct {
	Name     string          `json:"name"`
	Kind     alerts.DestKind `json:"kind"`
	URL      string          `json:"url"` // alerts.MaskURL
	Signed   bool            `json:"signed,omitempty"`
	ThreadID string          `json:"thread_id,omitempty"`
}

// Mask is d as it may be shown.
func Mask(d alerts.Destination) Dest {
	return Dest{Name: d.Name, Kind: d.Kind, URL: alerts.MaskURL(d.URL), Signed: d.Secret != "", ThreadID: d.ThreadID}
}

// Entry is one stored watch as the tools show it.
type Entry struct {
	Watch   alerts.Watch
	Origin  outbox.Origin
	Dests   []Dest      // the destinations it names that are stored (a file's are the file's)
	Last    alerts.Kind // the last event told, if any
	LastAt  time.Time
	Updated time.Time
}

// List lists the stored watches by id, with their destinations masked.
func List(ctx context.Context, st Store) ([]Entry, error) {
	ws, err := st.Watches(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := st.Destinations(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]alerts.Destination{}
	for _, d := range ds {
		byName[d.Name] = d
	}
	out := make([]Entry, 0, len(ws))
	for _, w := range ws {
		e := Entry{Watch: w.Watch, Origin: w.Origin, Last: w.State.LastKind, LastAt: w.State.LastAt, Updated: w.Updated}
		for _, name := range w.Watch.To {
			if d, ok := byName[name]; ok {
				e.Dests = append(e.Dests, Mask(d))
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Find is the stored watch id and its own destination (found false when
// the watch is not stored; a file's watch has none of its own).
func Find(ctx context.Context, st Store, id string) (outbox.Watch, []alerts.Destination, error) {
	ws, err := st.Watches(ctx)
	if err != nil {
		return outbox.Watch{}, nil, err
	}
	i := slices.IndexFunc(ws, func(w outbox.Watch) bool { return w.Watch.ID == id })
	if i < 0 {
		return outbox.Watch{}, nil, ErrNotFound
	}
	ds, err := st.Destinations(ctx)
	if err != nil {
		return outbox.Watch{}, nil, err
	}
	var to []alerts.Destination
	for _, name := range ws[i].Watch.To {
		for _, d := range ds {
			if d.Name == name {
				to = append(to, d)
			}
		}
	}
	return ws[i], to, nil
}

// Remove deletes the watch id made by hand and its destination; a
// watches file's watch is refused (ErrFileWatch).
func Remove(ctx context.Context, st Store, id string) error {
	w, _, err := Find(ctx, st, id)
	if err != nil {
		return err
	}
	if w.Origin == outbox.OriginFile {
		return ErrFileWatch
	}
	if err := st.DeleteWatch(ctx, id); err != nil {
		return err
	}
	return st.DeleteDestination(ctx, outbox.DestName(id))
}

// Samples are one made-up event of each kind for w, at now: what a test
// message shows. The details are marked as a test.
func Samples(w alerts.Watch, now time.Time) []alerts.Event {
	base := alerts.Event{
		Watch: w.ID, Server: w.Server, Time: now.UTC().Truncate(time.Second), State: alerts.StateOnline,
		Name: "querylens test message", Map: "map01", NumPlayers: 3, MaxPlayers: 8,
		Players: []string{"Alice", "Bob", "Carol"},
	}
	since := base.Time.Add(-5 * time.Minute)
	var out []alerts.Event
	for _, k := range alerts.Kinds() {
		e := base
		e.Kind = k
		switch k {
		case alerts.KindDown, alerts.KindStillDown:
			e.State, e.Err, e.Since, e.Players = alerts.StateOffline, "no answer (a test)", since, nil
		case alerts.KindMalformed:
			e.State, e.Err, e.Since = alerts.StateMalformed, "the reply does not decode (a test)", since
		case alerts.KindUp:
			e.Since = since
		case alerts.KindCannotCheck:
			e.State, e.Err, e.Since, e.Players = alerts.StateLimited, "the relay's limits (a test)", since, nil
		case alerts.KindChecking:
			e.Since = since
		case alerts.KindAtLeast:
			e.Limit = 3
		case alerts.KindFull:
			e.NumPlayers = e.MaxPlayers
		case alerts.KindEmpty:
			e.NumPlayers, e.Players = 0, nil
		case alerts.KindMap:
			e.Previous = "map00"
		case alerts.KindName:
			e.Previous = "querylens test (before)"
		case alerts.KindPlayers:
			e.Joined, e.Left = []string{"Carol"}, []string{"Dave"}
		case alerts.KindPlayersMore:
			e.Limit = alerts.DefaultPlayerCap
		}
		out = append(out, e)
	}
	return out
}
