package alerts

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// boardFile is a watches file with a Discord, a Slack and a generic
// destination, then board (a [[board]] table's keys).
func boardFile(board string) string {
	return `
[[destination]]
name = "ops"
kind = "discord"
url = "https://discord.com/api/webhooks/1/x"

[[destination]]
name = "team"
kind = "slack"
url = "https://hooks.slack.com/services/T0/B0/x"

[[destination]]
name = "pager"
kind = "webhook"
url = "https://alerts.example.com/q"
secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

[[board]]
` + board
}

func TestParseBoards(t *testing.T) {
	const two = `servers = [{ protocol = "quake3", addr = "127.0.0.1:27960" }, { protocol = "zandronum", addr = "127.0.0.1:10666" }]` + "\n"
	for _, tc := range []struct {
		name  string
		file  string
		want  []string // in the error; none: valid
		slack bool     // the error wraps ErrSlackNoEdit
	}{
		{name: "valid", file: "id = \"all\"\ntitle = \"Our servers\"\nto = \"ops\"\nevery = \"15s\"\n" + two},
		{name: "no title", file: "id = \"all\"\nto = \"ops\"\n" + two},
		{name: "no id", file: "to = \"ops\"\n" + two, want: []string{"board 1", "id: missing"}},
		{name: "id twice", file: "id = \"all\"\nto = \"ops\"\n" + two + "[[board]]\nid = \"all\"\nto = \"ops\"\n" + two,
			want: []string{`board 2 ("all")`, "id: twice"}},
		{name: "no to", file: "id = \"all\"\n" + two, want: []string{`board 1 ("all")`, "to: names no destination"}},
		{name: "to a list", file: "id = \"all\"\nto = [\"ops\"]\n" + two, want: []string{"line 20", `(last key "board.to")`, "wrong type"}},
		{name: "unknown destination", file: "id = \"all\"\nto = \"nope\"\n" + two, want: []string{`board 1 ("all")`, `to: no destination "nope"`}},
		{name: "slack", file: "id = \"all\"\nto = \"team\"\n" + two, want: []string{`board 1 ("all")`, `to: "team" is a Slack destination`, "cannot edit"}, slack: true},
		{name: "webhook", file: "id = \"all\"\nto = \"pager\"\n" + two, want: []string{`board 1 ("all")`, `to: "pager" is not a Discord destination`}},
		{name: "no servers", file: "id = \"all\"\nto = \"ops\"\n", want: []string{`board 1 ("all")`, "servers: none"}},
		{name: "server without addr", file: "id = \"all\"\nto = \"ops\"\nservers = [{ protocol = \"quake3\" }]\n", want: []string{`board 1 ("all")`, "servers[0]: needs protocol and addr"}},
		{name: "server twice", file: "id = \"all\"\nto = \"ops\"\nservers = [{ protocol = \"quake3\", addr = \"127.0.0.1:1\" }, { protocol = \"quake3\", addr = \"127.0.0.1:1\" }]\n",
			want: []string{`board 1 ("all")`, `servers[1]: "quake3/127.0.0.1:1" twice`}},
		{name: "a watch id for a server", file: "id = \"all\"\nto = \"ops\"\nservers = [\"duel\"]\n", want: []string{"line 21", `(last key "board.servers")`, "wrong type"}},
		{name: "negative every", file: "id = \"all\"\nto = \"ops\"\nevery = \"-1s\"\n" + two, want: []string{`board 1 ("all")`, "every: negative"}},
		{name: "long title", file: "id = \"all\"\nto = \"ops\"\ntitle = \"" + strings.Repeat("x", DiscordTitle+1) + "\"\n" + two, want: []string{`board 1 ("all")`, "title: longer than 256"}},
		{name: "unknown key", file: "id = \"all\"\nto = \"ops\"\nboard = true\n" + two, want: []string{`unknown key "board.board"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFile([]byte(boardFile(tc.file)), nil)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if len(f.Boards) != 1 || len(f.Boards[0].Servers) != 2 || f.Boards[0].Servers[1].String() != "zandronum/127.0.0.1:10666" {
					t.Fatalf("%+v", f.Boards)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted: %+v", f.Boards)
			}
			if !errors.Is(err, ErrFile) {
				t.Errorf("not ErrFile: %v", err)
			}
			if errors.Is(err, ErrSlackNoEdit) != tc.slack {
				t.Errorf("ErrSlackNoEdit: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestBoardHeading(t *testing.T) {
	if h := (Board{ID: "all"}).Heading(); h != "all" {
		t.Error(h)
	}
	if h := (Board{ID: "all", Title: "Our servers"}).Heading(); h != "Our servers" {
		t.Error(h)
	}
}

// TestBoardManyServers: a board of the most servers a [[board]] takes
// pages into messages within Discord's limits, every server once, in
// order.
func TestBoardManyServers(t *testing.T) {
	rows := make([]BoardRow, MaxBoardServers)
	for i := range rows {
		rows[i] = BoardRow{Server: Ref{Protocol: "quake3", Addr: "192.0.2.1:" + strconv.Itoa(27000+i)}, State: StateOnline,
			Name: strings.Repeat("n", 40) + strconv.Itoa(i), Map: "q3dm17", NumPlayers: i % 16, MaxPlayers: 16}
	}
	msgs := DiscordBoard("All", rows, time.Unix(0, 0))
	if len(msgs) < 2 || len(msgs) > 10 {
		t.Fatalf("%d messages", len(msgs))
	}
	n := 0
	for _, m := range msgs {
		if len(m.Embeds) > DiscordEmbeds || m.total() > DiscordTotal {
			t.Errorf("a message of %d embeds, %d characters", len(m.Embeds), m.total())
		}
		for _, e := range m.Embeds {
			for _, f := range e.Fields {
				if !strings.HasSuffix(f.Name, strconv.Itoa(n)) {
					t.Fatalf("field %d is %q", n, f.Name)
				}
				n++
			}
		}
	}
	if n != len(rows) {
		t.Errorf("%d fields of %d servers", n, len(rows))
	}
}
