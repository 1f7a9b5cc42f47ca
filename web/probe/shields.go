package probe

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/querylens/querylens/server"
)

// Shields is the body of shields.io's endpoint badge
// (https://shields.io/badges/endpoint-badge).
type Shields struct {
	SchemaVersion int    `json:"schemaVersion"` // always 1
	Label         string `json:"label"`
	Message       string `json:"message"`
	Color         string `json:"color"`
	CacheSeconds  int    `json:"cacheSeconds,omitempty"`
	IsError       bool   `json:"isError,omitempty"`
}

// BadgeMaxAge is how long the shields.io endpoint, like the SVG badge, may
// be cached: short enough for a fresh count in a README, long enough that
// image proxies do not ask every time.
const BadgeMaxAge = 60

// ShieldsOf is the endpoint badge of a server: labelled with its protocol's
// title (shields.io's own &label= overrides it), its message the players
// ("12/16 online") or the state, coloured by state.
func ShieldsOf(s server.Summary) Shields {
	b := Shields{SchemaVersion: 1, Label: s.Protocol, CacheSeconds: BadgeMaxAge}
	if p, ok := server.LookupProtocol(s.Protocol); ok {
		b.Label = p.Title
	}
	switch s.State {
	case server.Online:
		b.Color = "brightgreen"
		b.Message = "online"
		if s.MaxPlayers > 0 || s.Players > 0 {
			b.Message = strconv.Itoa(s.Players) + "/" + strconv.Itoa(s.MaxPlayers) + " online"
		}
	case server.RateLimited:
		b.Color, b.Message = "orange", "rate-limited"
	case server.Malformed:
		b.Color, b.Message = "red", "malformed reply"
	case server.Offline:
		b.Color, b.Message = "lightgrey", "offline"
	default:
		// Banned, and the relay's or the network's doing: nothing said
		// about the server itself.
		b.Color, b.Message = "lightgrey", s.State.String()
	}
	return b
}

// lookup reads the server of /s/{protocol}/{target}/… with its query
// options, answering the error itself (as a shields.io error badge when
// shields is set) when the URL does not name one, or when the visitor is
// over the limit.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request, shields bool) (server.Ref, bool) {
	ref, err := server.FromPath(r.PathValue("protocol"), r.PathValue("target"), r.URL.RawQuery)
	status, msg := http.StatusOK, ""
	switch {
	case err == nil:
		if h.allowed(r) {
			return ref, true
		}
		w.Header().Set("Retry-After", "5")
		status, msg = http.StatusTooManyRequests, "too many requests"
	case errors.Is(err, server.ErrProtocol):
		status, msg = http.StatusNotFound, "unknown protocol "+strconv.Quote(r.PathValue("protocol"))
	case errors.Is(err, server.ErrAddr):
		status, msg = http.StatusBadRequest, strconv.Quote(r.PathValue("target"))+" is not host:port"
	default:
		status, msg = http.StatusBadRequest, "bad query option: "+refError(err).Error()
	}
	if !shields {
		w.Header().Set("Cache-Control", "no-store")
		textError(w, status, msg)
		return server.Ref{}, false
	}
	cc := "public, max-age=300"
	if ra := w.Header().Get("Retry-After"); ra != "" {
		cc = "private, max-age=" + ra
	}
	w.Header().Set("Cache-Control", cc)
	shieldsHeaders(w)
	w.WriteHeader(status)
	writeJSONBody(w, Shields{SchemaVersion: 1, Label: "querylens", Message: msg, Color: "lightgrey", IsError: true})
	return server.Ref{}, false
}

// shieldsHeaders lets any site read (CORS) and frame the endpoint.
func shieldsHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; frame-ancestors *")
}

// ShieldsJSON serves GET /s/{protocol}/{target}/shields.json.
func (h *Handler) ShieldsJSON(w http.ResponseWriter, r *http.Request) {
	ref, ok := h.lookup(w, r, true)
	if !ok {
		return
	}
	b := ShieldsOf(h.summary(r, ref))
	w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(BadgeMaxAge)+", stale-while-revalidate="+strconv.Itoa(BadgeMaxAge))
	shieldsHeaders(w)
	writeJSONBody(w, b)
}
