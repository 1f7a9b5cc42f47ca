package alerts

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// ID is the event's stable id ("msg_" and 32 hex digits): the same for
// the same watch, kind and sample time, so that an outbox row written
// twice, or a message sent again after a crash, carries the same
// webhook-id.
func (e Event) ID() string {
	h := sha256.New()
	h.Write([]byte(e.Watch))
	h.Write([]byte{0})
	h.Write([]byte(e.Kind))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, e.Time.UnixNano(), 10))
	return "msg_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// tone is an event's colour family.
type tone int

const (
	toneInfo tone = iota
	toneDown
	toneWarn
	toneUp
	toneGrey
)

func (k Kind) tone() tone {
	switch k {
	case KindDown, KindStillDown:
		return toneDown
	case KindMalformed, KindFull, KindPlayersMore:
		return toneWarn
	case KindUp, KindChecking:
		return toneUp
	case KindCannotCheck:
		return toneGrey
	}
	return toneInfo
}

// text is an event in words, its parts not yet escaped: each destination
// escapes the names (esc) its own way.
type text struct {
	title, desc string
	fields      []field
}

type field struct{ name, value string }

// words builds the text of e; esc escapes a name (already cleaned or
// not: it cleans), plain escapes text this package wrote.
func words(e Event, esc, plain func(string) string) text {
	who := esc(e.Name)
	if who == "" {
		who = esc(e.Server.Addr)
	}
	var t text
	switch e.Kind {
	case KindDown:
		t.title = who + plain(" is down")
		t.desc = plain("No answer since "+clock(e.Since)) + reason(e, esc, plain)
	case KindStillDown:
		t.title = who + plain(" is still down")
		t.desc = plain("Down for "+span(e.Time.Sub(e.Since))+", since "+clock(e.Since)) + reason(e, esc, plain)
	case KindMalformed:
		t.title = who + plain(" answers, but its reply does not decode")
		t.desc = plain("Since "+clock(e.Since)) + reason(e, esc, plain)
	case KindUp:
		t.title = who + plain(" is back up")
		if e.Previous == condMalformed {
			t.desc = plain("Its replies decode again, after " + span(e.Time.Sub(e.Since)) + ".")
		} else {
			t.desc = plain("It answers again, after " + span(e.Time.Sub(e.Since)) + " down.")
		}
	case KindCannotCheck:
		t.title = plain("querylens cannot check ") + who
		t.desc = plain("querylens's relay has refused or limited every ask since " + clock(e.Since) + ": this says nothing of the server.")
	case KindChecking:
		t.title = plain("querylens checks ") + who + plain(" again")
		t.desc = plain("Asks go out again.")
	case KindAtLeast:
		t.title = who + plain(" has "+strconv.Itoa(e.NumPlayers)+" players")
		t.desc = plain("It reached " + strconv.Itoa(e.Limit) + ".")
	case KindFull:
		t.title = who + plain(" is full")
	case KindEmpty:
		t.title = who + plain(" is empty")
		t.desc = plain("The last player left.")
	case KindMap:
		t.title = who + plain(" changed map")
		t.desc = esc(e.Previous) + plain(" → ") + esc(e.Map)
	case KindName:
		t.title = esc(e.Previous) + plain(" is now named ") + who
	case KindPlayers, KindPlayersMore:
		switch {
		case len(e.Joined) > 0 && len(e.Left) > 0:
			t.title = plain(plural(len(e.Joined), "player")+" joined and "+plural(len(e.Left), "player")+" left ") + who
		case len(e.Joined) > 0:
			t.title = plain(plural(len(e.Joined), "player")+" joined ") + who
		default:
			t.title = plain(plural(len(e.Left), "player")+" left ") + who
		}
		if e.Kind == KindPlayersMore {
			t.title = plain("More players join and leave ") + who
			t.desc = plain("That makes " + strconv.Itoa(e.Limit) + " player alerts this hour: the next are not told until the hour is over.")
		}
		if len(e.Joined) > 0 {
			t.fields = append(t.fields, field{plain("Joined"), names(e.Joined, esc, plain)})
		}
		if len(e.Left) > 0 {
			t.fields = append(t.fields, field{plain("Left"), names(e.Left, esc, plain)})
		}
	default:
		t.title = who + plain(": "+string(e.Kind))
	}
	t.fields = append(t.fields, field{plain("Server"), esc(e.Server.String())})
	if e.State != StateOnline {
		return t // the last known map and players would read as now's
	}
	if e.Map != "" && e.Kind != KindMap {
		t.fields = append(t.fields, field{plain("Map"), esc(e.Map)})
	}
	if e.MaxPlayers > 0 || e.NumPlayers > 0 {
		t.fields = append(t.fields, field{plain("Players"), plain(strconv.Itoa(e.NumPlayers) + " / " + strconv.Itoa(e.MaxPlayers))})
	}
	return t
}

// reason is the sample's error text, escaped, in brackets.
func reason(e Event, esc, plain func(string) string) string {
	if e.Err == "" {
		return plain(".")
	}
	return plain(" (") + esc(e.Err) + plain(").")
}

func names(list []string, esc, plain func(string) string) string {
	parts := make([]string, 0, len(list))
	for _, n := range list {
		if n == "" {
			n = "(no name)"
		}
		parts = append(parts, esc(n))
	}
	return strings.Join(parts, plain(", "))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// clock is a time for a message: UTC, to the second.
func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }

// span is a duration for people: "3 minutes", "2 h 5 min".
func span(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return plural(int(d/time.Second), "second")
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h " + strconv.Itoa(int(d%time.Hour/time.Minute)) + " min"
	}
	return plural(int(d/(24*time.Hour)), "day")
}
