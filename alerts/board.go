package alerts

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Board is a live status board of several servers ([[board]] in a
// watches file): one Discord message (or several, paged by DiscordBoard
// when the servers outgrow one) kept edited in place as the servers
// change, posted again if it was deleted. Its servers are named the way
// a watch names its server, and sampled (pinned) like watched servers,
// whether or not a watch names them too.
type Board struct {
	ID      string        `json:"id" toml:"id"`           // stable: names the stored message ids
	Title   string        `json:"title" toml:"title"`     // the first embed's title (empty: the id)
	To      string        `json:"to" toml:"to"`           // one Discord destination's name
	Servers []Ref         `json:"servers" toml:"servers"` // in the order shown
	Every   time.Duration `json:"every" toml:"every"`     // how often its servers are sampled (0: 30 s, as a watch's)
}

// MaxBoardServers bounds a board's servers: 250 is ten messages of ten
// embeds of 25 fields at most, and fewer once their text counts.
const MaxBoardServers = 250

// Heading is b's title, or its id when it has none.
func (b Board) Heading() string {
	if strings.TrimSpace(b.Title) != "" {
		return b.Title
	}
	return b.ID
}

// checkBoards checks f's boards against its destinations (kind by name):
// an id, unique; one Discord destination (Slack cannot edit:
// ErrSlackNoEdit); at least one server, each named once with protocol
// and address; no negative interval. Each error names the board and the
// field.
func checkBoards(f File, kinds map[string]DestKind) error {
	ids := map[string]bool{}
	for i, b := range f.Boards {
		where := "board " + strconv.Itoa(i+1)
		if b.ID != "" {
			where += " (" + quote(b.ID) + ")"
		}
		fail := func(field, msg string) error { return fileErr(where + ": " + field + ": " + msg) }
		switch {
		case strings.TrimSpace(b.ID) == "":
			return fail("id", "missing")
		case ids[b.ID]:
			return fail("id", "twice")
		case Length(b.Title) > DiscordTitle:
			return fail("title", "longer than "+strconv.Itoa(DiscordTitle)+" characters")
		case b.To == "":
			return fail("to", "names no destination (one Discord destination)")
		case b.Every < 0:
			return fail("every", "negative")
		case len(b.Servers) == 0:
			return fail("servers", "none")
		case len(b.Servers) > MaxBoardServers:
			return fail("servers", "more than "+strconv.Itoa(MaxBoardServers))
		}
		ids[b.ID] = true
		switch kind, ok := kinds[b.To]; {
		case !ok:
			return fail("to", "no destination "+quote(b.To))
		case kind == DestSlack:
			return errors.Join(fail("to", quote(b.To)+" is a Slack destination"), ErrSlackNoEdit)
		case kind != DestDiscord:
			return fail("to", quote(b.To)+" is not a Discord destination: only Discord can edit a message it posted")
		}
		seen := map[string]bool{}
		for j, s := range b.Servers {
			if s.Protocol == "" || s.Addr == "" {
				return fail("servers["+strconv.Itoa(j)+"]", "needs protocol and addr")
			}
			k := s.Protocol + "\x00" + s.Addr
			if seen[k] {
				return fail("servers["+strconv.Itoa(j)+"]", quote(s.String())+" twice")
			}
			seen[k] = true
		}
	}
	return nil
}
