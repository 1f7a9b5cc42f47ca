package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/server/ident"
)

// RetryAfter is the Retry-After (seconds) of a response with a server the
// visitor's limit left unasked: the visitor's bucket refills a token a
// second.
const RetryAfter = "5"

// server serves GET /api/v1/servers/{protocol}/{target}[?options].
func (h *Handler) server(w http.ResponseWriter, r *http.Request) {
	ref, err := server.FromPath(r.PathValue("protocol"), r.PathValue("target"), r.URL.RawQuery)
	if err != nil {
		field, msg := refError(err, r.PathValue("protocol"), r.PathValue("target"))
		writeError(w, http.StatusBadRequest, field, msg)
		return
	}
	limited := h.cfg.Allow != nil && !h.cfg.Allow(r)
	s, unanswered := h.summarize(r.Context(), ref, limited)
	if unanswered {
		w.Header().Set("Retry-After", RetryAfter)
		w.Header().Set("Cache-Control", "no-store")
	} else {
		// As the status page: a fresh count for the next reader.
		w.Header().Set("Cache-Control", "public, max-age=10")
	}
	writeJSON(w, http.StatusOK, s)
}

// BatchRequest is the body of POST /api/v1/servers: each server in the
// text spelling server.Parse reads, PROTOCOL/HOST:PORT[?OPTION=VALUE&…].
type BatchRequest struct {
	Servers []string `json:"servers"`
}

// BatchResponse is its answer: one Summary per asked server, in request
// order (a server listed twice is asked once and answered twice).
type BatchResponse struct {
	Servers []server.Summary `json:"servers"`
}

// batch serves POST /api/v1/servers.
func (h *Handler) batch(w http.ResponseWriter, r *http.Request) {
	refs, status, field, msg := readBatch(w, r)
	if msg != "" {
		writeError(w, status, field, msg)
		return
	}
	// One probe per distinct server, charged to the visitor in request
	// order: the first servers of the list are the ones asked.
	idx := make(map[string]int, len(refs))
	type job struct {
		ref        server.Ref
		limited    bool
		sum        server.Summary
		unanswered bool
	}
	var jobs []*job
	allowed := true
	for _, ref := range refs {
		k := ref.String()
		if _, ok := idx[k]; ok {
			continue
		}
		idx[k] = len(jobs)
		if allowed && h.cfg.Allow != nil {
			allowed = h.cfg.Allow(r)
		}
		jobs = append(jobs, &job{ref: ref, limited: !allowed})
	}
	sem := make(chan struct{}, Parallel)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			j.sum, j.unanswered = h.summarize(r.Context(), j.ref, j.limited)
		}()
	}
	wg.Wait()
	out := BatchResponse{Servers: make([]server.Summary, len(refs))}
	retry := false
	for i, ref := range refs {
		j := jobs[idx[ref.String()]]
		out.Servers[i] = j.sum
		retry = retry || j.unanswered
	}
	if retry {
		w.Header().Set("Retry-After", RetryAfter)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

// readBatch reads and checks a batch's body, or says what is wrong with
// it: the status, the field and the message of the error response.
func readBatch(w http.ResponseWriter, r *http.Request) (refs []server.Ref, status int, field, msg string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, http.StatusRequestEntityTooLarge, "body", "the body is larger than " + strconv.Itoa(MaxBodyBytes) + " bytes"
		}
		return nil, http.StatusBadRequest, "body", "reading the body: " + err.Error()
	}
	const want = `; want {"servers": ["protocol/host:port?options", …]}`
	var raw struct {
		Servers []json.RawMessage `json:"servers"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, http.StatusBadRequest, "body", "the body is not a batch: " + err.Error() + want
	}
	// Anything after the batch but white space is refused: a second value,
	// or a stray closing bracket (which Decoder.More, made for the
	// elements of an array, does not report at the top level).
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, http.StatusBadRequest, "body", "the body goes on after its JSON value, which ends at byte " +
			strconv.FormatInt(end, 10) + want
	}
	if raw.Servers == nil {
		return nil, http.StatusBadRequest, "servers", "the body has no servers list" + want
	}
	if len(raw.Servers) > MaxBatch {
		return nil, http.StatusRequestEntityTooLarge, "servers", "at most " + strconv.Itoa(MaxBatch) +
			" servers per request, got " + strconv.Itoa(len(raw.Servers)) + "; split the list"
	}
	refs = make([]server.Ref, 0, len(raw.Servers))
	for i, m := range raw.Servers {
		f := "servers[" + strconv.Itoa(i) + "]"
		var s string
		if err := json.Unmarshal(m, &s); err != nil {
			return nil, http.StatusBadRequest, f, f + " is not a string" + want
		}
		ref, err := server.Parse(s)
		if err != nil {
			proto, rest, _ := strings.Cut(s, "/")
			addr, _, _ := strings.Cut(rest, "?")
			_, why := refError(err, proto, addr)
			return nil, http.StatusBadRequest, f, f + " " + strconv.Quote(s) + ": " + why
		}
		refs = append(refs, ref)
	}
	return refs, 0, "", ""
}

// refError names the part of a server's spelling that is wrong and says
// why, for an error response.
func refError(err error, protocol, target string) (field, msg string) {
	switch {
	case errors.Is(err, server.ErrProtocol):
		return "protocol", "querylens does not speak " + strconv.Quote(protocol) + "; it knows " + ident.Known()
	case errors.Is(err, server.ErrAddr):
		return "address", strconv.Quote(target) + " is not host:port (for example 203.0.113.7:10666)"
	case errors.Is(err, server.ErrOptions), errors.Is(err, server.ErrRepeated):
		return "options", err.Error()
	}
	var ce *codecs.Error
	if errors.As(err, &ce) {
		return "options", ce.Error()
	}
	// The spelling itself (no "/" between protocol and address).
	return "server", err.Error()
}

// summarize asks ref's server as the status page does, or, when the
// visitor is past its limit, only the relay's cache. unanswered reports a
// server the limit left unasked with nothing cached.
func (h *Handler) summarize(ctx context.Context, ref server.Ref, limited bool) (s server.Summary, unanswered bool) {
	if !limited {
		return server.SummaryOf(server.Probe(ctx, h.cfg.Exchanger, ref, h.cfg.Timeout)), false
	}
	if ce, ok := h.cfg.Exchanger.(CacheExchanger); ok {
		cx := &cacheOnly{ce: ce}
		rep := server.Probe(ctx, cx, ref, h.cfg.Timeout)
		if !cx.notCached.Load() {
			return server.SummaryOf(rep), false
		}
	}
	s = server.SummaryOf(server.Report{Ref: ref, State: server.Limited, At: h.now(),
		Detail: "This visitor asked for more servers than its limit allows, and the relay had no recent answer to share; try again in a few seconds."})
	s.Source = server.SourceCache
	return s, true
}

// cacheOnly is an Exchanger that asks only the relay's cache, and notes
// when a query of the conversation was not in it: a probe that got a
// challenge from the cache and no answer to its follow-up must not read as
// a malformed server.
type cacheOnly struct {
	ce        CacheExchanger
	notCached atomic.Bool
}

func (c *cacheOnly) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	return c.noted(c.ce.ExchangeCached(ctx, protocol, target, q))
}

// ExchangeOptions asks a stream protocol's server from the cache alone
// when the relay can (relay.Server.ExchangeOptionsCached); otherwise as
// Exchange does.
func (c *cacheOnly) ExchangeOptions(ctx context.Context, protocol, target string, opts map[string]string, q codecs.Query) (netquery.Result, error) {
	if oc, ok := c.ce.(interface {
		ExchangeOptionsCached(ctx context.Context, protocol, target string, opts map[string]string, q codecs.Query) (netquery.Result, error)
	}); ok {
		return c.noted(oc.ExchangeOptionsCached(ctx, protocol, target, opts, q))
	}
	return c.Exchange(ctx, protocol, target, q)
}

// noted notes a query that was not in the cache.
func (c *cacheOnly) noted(res netquery.Result, err error) (netquery.Result, error) {
	var ref *wire.RefusedError
	if errors.As(err, &ref) && ref.Rule() == wire.RuleNotCached {
		c.notCached.Store(true)
	}
	return res, err
}
