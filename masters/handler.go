package masters

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/querylens/querylens/server"
)

// Prefix is where the handler is mounted.
const Prefix = "/api/v1/masters/"

// ServeHTTP answers
//
//	GET /api/v1/masters/{protocol}/{host:port}[?filter=…&after=N]    server.MasterList
//	GET /api/v1/masters/{protocol}/{host:port}/datagrams[?filter=…]  the last fetch's datagrams
//
// after=N leaves out the list's first N servers: a page that read part of
// a list still being fetched reads only what came since (Offset says
// where the servers start; it is 0, the whole list, when the list was
// replaced by a refresh and holds N servers or fewer).
//
// for a configured master (any origin may read them: they hold nothing
// private). A master that is not configured is 404, a master the server
// does not keep 404 too (Quake II's and QuakeWorld's: the page asks it
// through the relay), a bad protocol, address
// or filter 400.
func (k *Keeper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		jsonError(w, http.StatusMethodNotAllowed, "only GET reads a master's list")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		jsonError(w, http.StatusNotFound, "no master list at "+r.URL.Path)
		return
	}
	rest, raw := strings.CutSuffix(rest, "/datagrams")
	protocol, target, ok := strings.Cut(rest, "/")
	if !ok || protocol == "" || target == "" {
		jsonError(w, http.StatusBadRequest, "want /api/v1/masters/{protocol}/{host:port}")
		return
	}
	p, known := server.LookupProtocol(protocol)
	if !known {
		jsonError(w, http.StatusBadRequest, "querylens does not speak "+quote(protocol))
		return
	}
	if p.Master == nil {
		jsonError(w, http.StatusBadRequest, protocol+" has no master querylens can ask")
		return
	}
	addr, ok := server.CanonicalAddr(target)
	if !ok {
		jsonError(w, http.StatusBadRequest, quote(target)+" is not host:port")
		return
	}
	var filter *string
	after := 0
	q := r.URL.Query()
	if v, ok := q["after"]; ok {
		n, err := strconv.Atoi(v[0])
		if len(v) > 1 || err != nil || n < 0 || n > k.cfg.MaxEntries {
			jsonError(w, http.StatusBadRequest, "after: want one number of servers from 0 to "+strconv.Itoa(k.cfg.MaxEntries)+", not "+quote(strings.Join(v, ",")))
			return
		}
		after = n
	}
	if q.Has("filter") {
		if len(q["filter"]) > 1 {
			jsonError(w, http.StatusBadRequest, "filter given more than once")
			return
		}
		f := q.Get("filter")
		filter = &f
	}
	if !p.Master.Kept {
		jsonError(w, http.StatusNotFound, protocol+" master "+addr+": its list is asked by the page through the relay, not kept by the server")
		return
	}
	if raw {
		k.serveDatagrams(w, protocol, addr, filter)
		return
	}
	ml, err := k.ListFrom(r.Context(), protocol, addr, filter, after)
	var fe *FilterError
	switch {
	case errors.Is(err, ErrNotConfigured):
		jsonError(w, http.StatusNotFound, protocol+" master "+addr+" is not configured on this server (--master)")
		return
	case errors.Is(err, ErrBusy):
		w.Header().Set("Retry-After", "10")
		jsonError(w, http.StatusServiceUnavailable, protocol+" master "+addr+": "+strings.TrimPrefix(err.Error(), "masters: "))
		return
	case errors.As(err, &fe):
		jsonError(w, http.StatusBadRequest, fe.Err.Error())
		return
	case err != nil:
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	writeJSON(w, http.StatusOK, ml)
}

func (k *Keeper) serveDatagrams(w http.ResponseWriter, protocol, addr string, filter *string) {
	m, ok := k.spec(protocol, addr, filter)
	if !ok {
		jsonError(w, http.StatusNotFound, protocol+" master "+addr+" is not configured on this server (--master)")
		return
	}
	f := m.Filter
	if filter != nil {
		f = *filter
	}
	sent, received, ok := k.Datagrams(protocol, addr, f)
	if !ok {
		jsonError(w, http.StatusNotFound, protocol+" master "+addr+": that list was never asked")
		return
	}
	enc := func(ds [][]byte) []string {
		out := make([]string, 0, len(ds))
		for _, d := range ds {
			out = append(out, base64.StdEncoding.EncodeToString(d))
		}
		return out
	}
	w.Header().Set("Cache-Control", "no-cache")
	writeJSON(w, http.StatusOK, map[string]any{"protocol": protocol, "master": addr, "sent": enc(sent), "received": enc(received)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		jsonError(w, http.StatusInternalServerError, "the list does not encode: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func jsonError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func quote(s string) string { return "\"" + s + "\"" }
