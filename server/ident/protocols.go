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
func DetectOrder(opts map[string]string) ([]Candidate, error) { return DetectOrderAt(0, opts) }

// DetectOrderAt is DetectOrder for an address on port: first the
// protocols whose default port it is and that say to be asked first there
// (codecs.Description.DetectFirst), then the others that list it among
// their usual ports (Description.Ports), then the rest, each group sorted
// by name. Port 25565 is Minecraft Java's game port, where its List Ping
// answers, and GameSpy v4's default too (Minecraft's Query, which few
// servers enable): the List Ping is asked first there. Port 0: no
// preference.
func DetectOrderAt(port int, opts map[string]string) ([]Candidate, error) {
	var groups [3][]Candidate
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
		g := 2
		if port != 0 {
			switch d := codecs.DescriptionOf(c); {
			case Preferred(c, port):
				g = 0
			case containsInt(d.Ports, port):
				g = 1
			}
		}
		groups[g] = append(groups[g], Candidate{Codec: c, Query: q})
	}
	cands := append(append(groups[0], groups[1]...), groups[2]...)
	if len(cands) == 0 {
		return nil, &codecs.Error{Field: "options", Err: errors.New("no protocol accepts these options (" + rejected + ")")}
	}
	return cands, nil
}

// Preferred reports whether c is to be asked first on port (its default
// port, and its description says DetectFirst): a detection on port waits
// for such a candidate's answer before it takes another's.
func Preferred(c codecs.Codec, port int) bool {
	return port != 0 && c.DefaultPort() == port && codecs.DescriptionOf(c).DetectFirst
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
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
