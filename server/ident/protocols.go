package ident

import (
	"errors"
	"strings"

	"github.com/querylens/querylens/codecs"
)

// Known lists the registered protocols' names, sorted, for a message that
// says what querylens speaks ("a2s, gamespy1, …"), or "no protocols".
func Known() string {
	var b strings.Builder
	for i, c := range codecs.Protocols() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name())
	}
	if b.Len() == 0 {
		return "no protocols"
	}
	return b.String()
}

// Candidate is one protocol a detection asks, with its query.
type Candidate struct {
	Codec codecs.Codec
	Query codecs.Query
}

// DetectOrder is what a detection of an address's protocol asks, in order:
// every registered protocol (sorted by name) whose codec accepts opts,
// each with its own server query. With none, the error says why each
// refused.
func DetectOrder(opts map[string]string) ([]Candidate, error) {
	var cands []Candidate
	var rejected string
	for _, c := range codecs.Protocols() {
		q, err := c.NewQuery(opts)
		if err != nil {
			if rejected != "" {
				rejected += "; "
			}
			rejected += c.Name() + ": " + err.Error()
			continue
		}
		cands = append(cands, Candidate{Codec: c, Query: q})
	}
	if len(cands) == 0 {
		return nil, &codecs.Error{Field: "options", Err: errors.New("no protocol accepts these options (" + rejected + ")")}
	}
	return cands, nil
}

// JoinURL is the link that starts the game on the server at addr, from a
// protocol's join template (server.Protocol.Join: "{addr}" stands for
// host:port), or "" when the protocol has none.
func JoinURL(template, addr string) string {
	if template == "" {
		return ""
	}
	return strings.ReplaceAll(template, "{addr}", addr)
}
