package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/alerts"
	"github.com/querylens/querylens/alerts/deliver"
	"github.com/querylens/querylens/alerts/manage"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/history/outbox"
	"github.com/querylens/querylens/server"
)

// The admin endpoints (watches and the outbox's failed rows) exist only
// with Config.AdminToken: a request without the token gets 401, and
// without a token configured the paths answer 404 as any unknown path.
// The token is compared in constant time (of its SHA-256, so that its
// length is not told either). No answer, error or log line carries a
// destination's URL or secret: destinations are shown masked
// (manage.Dest).

// MaxWatchBody bounds a POST /api/v1/watches body.
const MaxWatchBody = 16 << 10

// MaxFailed is the most failed rows GET /api/v1/outbox/failed lists.
const MaxFailed = 500

// WatchRules are what a watch tells, as the API spells them: durations
// in Go's spelling ("10m", "90s").
type WatchRules struct {
	Down        bool            `json:"down,omitempty"`
	Up          bool            `json:"up,omitempty"`
	Malformed   bool            `json:"malformed,omitempty"`
	Resend      string          `json:"resend,omitempty"`
	AtLeast     int             `json:"at_least,omitempty"`
	Full        bool            `json:"full,omitempty"`
	Empty       bool            `json:"empty,omitempty"`
	MapChange   bool            `json:"map_change,omitempty"`
	NameChange  bool            `json:"name_change,omitempty"`
	Joins       bool            `json:"joins,omitempty"`
	Leaves      bool            `json:"leaves,omitempty"`
	Players     []string        `json:"players,omitempty"`
	DownSamples int             `json:"down_samples,omitempty"`
	DownAfter   string          `json:"down_after,omitempty"`
	Mute        []alerts.Window `json:"mute,omitempty"`
	Every       string          `json:"every,omitempty"` // how often the server is sampled (empty: 30 s)
	Board       bool            `json:"board,omitempty"` // a live status message on its Discord destination, edited in place
}

// NewWatch is the body of POST /api/v1/watches.
type NewWatch struct {
	ID     string `json:"id,omitempty"` // empty: a random one
	Server string `json:"server"`       // PROTOCOL/HOST:PORT[?OPTION=VALUE&…]
	WatchRules
	Destination NewDestination `json:"destination"`
}

// NewDestination is where a new watch tells.
type NewDestination struct {
	Kind     alerts.DestKind `json:"kind"`
	URL      string          `json:"url"`
	Secret   string          `json:"secret,omitempty"`
	ThreadID string          `json:"thread_id,omitempty"`
}

// Watch is a stored watch as the API shows it.
type Watch struct {
	ID     string        `json:"id"`
	Origin outbox.Origin `json:"origin"`
	Server string        `json:"server"`
	WatchRules
	Destinations []manage.Dest `json:"destinations"`         // its own, masked; a watches file's watch: none (the file's)
	To           []string      `json:"to"`                   // the destinations it names
	LastEvent    *LastEvent    `json:"last_event,omitempty"` // the last event told
	Updated      time.Time     `json:"updated"`
}

// LastEvent is the last event a watch told.
type LastEvent struct {
	Kind alerts.Kind `json:"kind"`
	At   time.Time   `json:"at"`
}

// Watches is the body of GET /api/v1/watches.
type Watches struct {
	Watches []Watch `json:"watches"`
	Max     int     `json:"max"` // the most watches that may be stored
}

// FailedRow is a message given up on.
type FailedRow struct {
	ID        string          `json:"id"`
	MessageID string          `json:"message_id"`
	Watch     string          `json:"watch"`
	Dest      string          `json:"destination"`
	DestKind  alerts.DestKind `json:"destination_kind"`
	Kind      alerts.Kind     `json:"kind"`
	Attempts  int             `json:"attempts"`
	LastError string          `json:"last_error"`
	Created   time.Time       `json:"created"`
	FailedAt  time.Time       `json:"failed_at"`
}

// Failed is the body of GET /api/v1/outbox/failed.
type Failed struct {
	Failed []FailedRow `json:"failed"`
}

// watchStore is Config.Watches, or the history's store when it keeps
// watches; nil when there is none.
func (cfg Config) watchStore() manage.Store {
	if cfg.Watches != nil {
		return cfg.Watches
	}
	var s any = cfg.History
	if b, ok := s.(*history.Buffered); ok {
		s = b.Store
	}
	st, _ := s.(manage.Store)
	return st
}

// routeAdmin registers the admin endpoints when a token is configured.
func (h *Handler) routeAdmin() {
	if h.cfg.AdminToken == "" {
		return
	}
	h.watches = h.cfg.watchStore()
	if h.watches == nil {
		h.cfg.Logger.Warn("api: --admin-token is set, but the history is off: /api/v1/watches does not exist")
		return
	}
	sum := sha256.Sum256([]byte(h.cfg.AdminToken))
	h.adminSum = sum[:]
	o := &h.cfg.WatchOptions
	if o.Max <= 0 {
		o.Max = outbox.DefaultMaxWatches
	}
	if o.Check == nil {
		if s, err := deliver.New(deliver.Config{}); err == nil {
			o.Check = func(d alerts.Destination) error { _, err := s.Check(d); return err }
		}
	}
	h.mux.HandleFunc("GET /api/v1/watches", h.admin(h.listWatches))
	h.mux.HandleFunc("POST /api/v1/watches", h.admin(h.addWatch))
	h.mux.HandleFunc("DELETE /api/v1/watches/{id}", h.admin(h.deleteWatch))
	h.mux.HandleFunc("GET /api/v1/outbox/failed", h.admin(h.failedRows))
}

// admin lets through the requests that carry the token.
func (h *Handler) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], h.adminSum) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="querylens admin"`)
			writeError(w, http.StatusUnauthorized, "", "this endpoint needs the admin token (Authorization: Bearer …)")
			return
		}
		next(w, r)
	}
}

func (h *Handler) storeError(w http.ResponseWriter, what string, err error) {
	// The store's errors name watches and destinations, never a URL.
	h.cfg.Logger.Error("api: "+what, "err", err)
	writeError(w, http.StatusServiceUnavailable, "", "the history database did not answer; try again")
}

func (h *Handler) listWatches(w http.ResponseWriter, r *http.Request) {
	entries, err := manage.List(r.Context(), h.watches)
	if err != nil {
		h.storeError(w, "list watches", err)
		return
	}
	out := Watches{Watches: make([]Watch, 0, len(entries)), Max: h.cfg.WatchOptions.Max}
	for _, e := range entries {
		out.Watches = append(out.Watches, watchOf(e))
	}
	writeJSON(w, http.StatusOK, out)
}

func watchOf(e manage.Entry) Watch {
	ww := e.Watch
	ref := ww.Server.String()
	if r, err := server.New(ww.Server.Protocol, ww.Server.Addr, ww.Server.Options); err == nil {
		ref = r.String()
	}
	out := Watch{ID: ww.ID, Origin: e.Origin, Server: ref, Destinations: e.Dests, To: ww.To, Updated: e.Updated,
		WatchRules: WatchRules{
			Down: ww.Down, Up: ww.Up, Malformed: ww.Malformed, AtLeast: ww.AtLeast, Full: ww.Full, Empty: ww.Empty,
			MapChange: ww.MapChange, NameChange: ww.NameChange, Joins: ww.Joins, Leaves: ww.Leaves, Players: ww.Players,
			DownSamples: ww.DownSamples, Mute: ww.Mute, Board: ww.Board,
		}}
	if ww.Resend > 0 {
		out.Resend = ww.Resend.String()
	}
	if ww.DownAfter > 0 {
		out.DownAfter = ww.DownAfter.String()
	}
	if ww.Every > 0 {
		out.Every = ww.Every.String()
	}
	if out.Destinations == nil {
		out.Destinations = []manage.Dest{}
	}
	if out.To == nil {
		out.To = []string{}
	}
	if e.Last != "" {
		out.LastEvent = &LastEvent{Kind: e.Last, At: e.LastAt}
	}
	return out
}

func (h *Handler) addWatch(w http.ResponseWriter, r *http.Request) {
	var req NewWatch
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxWatchBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		status, msg := http.StatusBadRequest, bodyError(err)
		if errors.As(err, new(*http.MaxBytesError)) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, "body", msg)
		return
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "body", "one JSON object, nothing after it")
		return
	}
	ref, err := server.Parse(req.Server)
	if err != nil {
		writeError(w, http.StatusBadRequest, "server", err.Error())
		return
	}
	wt := alerts.Watch{
		ID: req.ID, Server: alerts.Ref{Protocol: ref.Protocol, Addr: ref.Addr, Options: ref.Options},
		Down: req.Down, Up: req.Up, Malformed: req.Malformed, AtLeast: req.AtLeast, Full: req.Full, Empty: req.Empty,
		MapChange: req.MapChange, NameChange: req.NameChange, Joins: req.Joins, Leaves: req.Leaves, Players: req.Players,
		DownSamples: req.DownSamples, Mute: req.Mute, Board: req.Board,
	}
	for _, d := range []struct {
		field string
		in    string
		out   *time.Duration
	}{{"resend", req.Resend, &wt.Resend}, {"down_after", req.DownAfter, &wt.DownAfter}, {"every", req.Every, &wt.Every}} {
		if d.in == "" {
			continue
		}
		v, err := time.ParseDuration(d.in)
		if err != nil {
			writeError(w, http.StatusBadRequest, d.field, "want a duration such as 10m or 90s")
			return
		}
		*d.out = v
	}
	dest := alerts.Destination{Kind: req.Destination.Kind, URL: req.Destination.URL, Secret: req.Destination.Secret, ThreadID: req.Destination.ThreadID}
	o := h.cfg.WatchOptions
	if o.Now == nil {
		o.Now = h.now
	}
	wt, err = manage.Add(r.Context(), h.watches, wt, dest, outbox.OriginAPI, o)
	switch {
	case errors.Is(err, manage.ErrExists):
		writeError(w, http.StatusConflict, "id", "a watch with this id exists")
		return
	case errors.Is(err, manage.ErrCap):
		writeError(w, http.StatusConflict, "", "too many watches: at most "+strconv.Itoa(o.Max))
		return
	case errors.Is(err, manage.ErrDest):
		writeError(w, http.StatusBadRequest, "destination", scrub(err.Error(), dest))
		return
	case errors.Is(err, manage.ErrBadID):
		writeError(w, http.StatusBadRequest, "id", err.Error())
		return
	case isRuleError(err):
		writeError(w, http.StatusBadRequest, "", strings.ReplaceAll(err.Error(), "\n", "; "))
		return
	case err != nil:
		h.storeError(w, "add watch "+strconv.Quote(wt.ID), err)
		return
	}
	entries, err := manage.List(r.Context(), h.watches)
	if err != nil {
		h.storeError(w, "list watches", err)
		return
	}
	for _, e := range entries {
		if e.Watch.ID == wt.ID {
			w.Header().Set("Location", Prefix+"watches/"+wt.ID)
			writeJSON(w, http.StatusCreated, watchOf(e))
			return
		}
	}
	h.storeError(w, "add watch "+strconv.Quote(wt.ID), errors.New("not found after it was stored"))
}

// isRuleError reports whether err is Watch.Validate's.
func isRuleError(err error) bool {
	for _, e := range []error{alerts.ErrNoID, alerts.ErrNoServer, alerts.ErrPartialPlayers, alerts.ErrBadPattern,
		alerts.ErrBadWindow, alerts.ErrNegative, alerts.ErrNothingToTell, alerts.ErrPlayersWithout,
		alerts.ErrResendWithout, alerts.ErrUpWithoutDown, alerts.ErrDownAfterTooLow} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// scrub replaces d's URL, its path and its secret in s: deliver's and
// manage's errors mask them already; this is a second lock.
func scrub(s string, d alerts.Destination) string {
	s = strings.ReplaceAll(s, "\n", "; ")
	for _, secret := range []string{d.URL, d.Secret, strings.TrimPrefix(d.Secret, "whsec_")} {
		if len(secret) >= 8 {
			s = strings.ReplaceAll(s, secret, "***")
		}
	}
	if i := strings.Index(d.URL, "://"); i >= 0 {
		if j := strings.IndexByte(d.URL[i+3:], '/'); j >= 0 && len(d.URL[i+3+j:]) > 1 {
			s = strings.ReplaceAll(s, d.URL[i+3+j:], "/***")
		}
	}
	return s
}

// bodyError says what is wrong with a body without quoting it (it may
// hold a URL).
func bodyError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, new(*http.MaxBytesError)):
		return "the body is longer than " + strconv.Itoa(MaxWatchBody) + " bytes"
	case errors.As(err, &se):
		return "the body is not JSON (at byte " + strconv.FormatInt(se.Offset, 10) + ")"
	case errors.As(err, &te):
		return "field " + strconv.Quote(te.Field) + " is not a " + te.Type.String()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the body is empty or cut short"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "the body is not a watch"
}

func (h *Handler) deleteWatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	err := manage.Remove(r.Context(), h.watches, id)
	switch {
	case errors.Is(err, manage.ErrNotFound):
		writeError(w, http.StatusNotFound, "id", "no watch "+strconv.Quote(id))
	case errors.Is(err, manage.ErrFileWatch):
		writeError(w, http.StatusConflict, "id", "watch "+strconv.Quote(id)+" is the watches file's: change the file and send SIGHUP")
	case err != nil:
		h.storeError(w, "delete watch "+strconv.Quote(id), err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (h *Handler) failedRows(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxFailed {
			writeError(w, http.StatusBadRequest, "limit", "limit is 1 to "+strconv.Itoa(MaxFailed))
			return
		}
		limit = n
	}
	rows, err := h.watches.Failed(r.Context(), limit)
	if err != nil {
		h.storeError(w, "failed rows", err)
		return
	}
	dests, err := h.watches.Destinations(r.Context())
	if err != nil {
		h.storeError(w, "destinations", err)
		return
	}
	out := Failed{Failed: make([]FailedRow, 0, len(rows))}
	for _, row := range rows {
		msg := row.LastError
		for _, d := range dests {
			msg = scrub(msg, d)
		}
		out.Failed = append(out.Failed, FailedRow{ID: row.ID, MessageID: row.MessageID, Watch: row.Watch, Dest: row.Dest,
			DestKind: row.DestKind, Kind: row.Kind, Attempts: row.Attempts, LastError: msg, Created: row.Created, FailedAt: row.FailedAt})
	}
	writeJSON(w, http.StatusOK, out)
}
