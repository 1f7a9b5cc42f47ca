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

// DetectOrderAt is DetectOrder for an address on port: first the
// protocols whose default port it is and that say to be asked first there
// (codecs.Description.DetectFirst), then the others that list it among
// their usual ports (Description.Ports), then the rest, each group sorted
// by name. Port 25565 is Minecraft Java's game port, where its List Ping
// answers, and GameSpy v4's default too (Minecraft's Query, which few
// servers enable): the List Ping is asked first there. Port 0: no
// preference. (The browser module, which detects without a port, does
// not link it.)
func DetectOrderAt(port int, opts map[string]string) ([]Candidate, error) {
	cands, err := DetectOrder(opts)
	if err != nil || port == 0 {
		return cands, err
	}
	var groups [3][]Candidate
	for _, c := range cands {
		g := 2
		if Preferred(c.Codec, port) {
			g = 0
		} else {
			for _, p := range codecs.DescriptionOf(c.Codec).Ports {
				if p == port {
					g = 1
				}
			}
		}
		groups[g] = append(groups[g], c)
	}
	return append(append(groups[0], groups[1]...), groups[2]...), nil
}

// Preferred reports whether c is to be asked first on port (its default
// port, and its description says DetectFirst): a detection on port waits
// for such a candidate's answer before it takes another's.
func Preferred(c codecs.Codec, port int) bool {
	return port != 0 && c.DefaultPort() == port && codecs.DescriptionOf(c).DetectFirst
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
