package alerts

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var server1 = Ref{Protocol: "zandronum", Addr: "203.0.113.7:10666"}

// sampleEvents is one event of every kind.
func sampleEvents() []Event {
	base := Event{Watch: "duel", Server: server1, Time: t0.Add(5 * time.Minute), State: StateOnline,
		Name: "\x1cR[EU] Duel \x1cGServer", Map: "MAP07", NumPlayers: 2, MaxPlayers: 8, Players: []string{"alice", "bob"}}
	out := []Event{}
	add := func(k Kind, edit func(*Event)) {
		e := base
		e.Kind = k
		if edit != nil {
			edit(&e)
		}
		out = append(out, e)
	}
	down := func(e *Event) { e.State, e.Err, e.Since, e.Players = StateOffline, "no answer in 3 s", t0, nil }
	add(KindDown, down)
	add(KindStillDown, func(e *Event) { down(e); e.Time = t0.Add(3 * time.Hour) })
	add(KindMalformed, func(e *Event) {
		e.State, e.Err, e.Since = StateMalformed, "zandronum: numplayers at offset 37: short buffer", t0
	})
	add(KindUp, func(e *Event) { e.Since, e.Previous = t0, "down" })
	add(KindCannotCheck, func(e *Event) { e.State, e.Err, e.Since = StateLimited, "upstream-cap", t0 })
	add(KindChecking, func(e *Event) { e.Since = t0 })
	add(KindAtLeast, func(e *Event) { e.Limit = 2 })
	add(KindFull, func(e *Event) { e.NumPlayers, e.MaxPlayers = 8, 8 })
	add(KindEmpty, func(e *Event) { e.NumPlayers, e.Players = 0, nil })
	add(KindMap, func(e *Event) { e.Previous = "MAP06" })
	add(KindName, func(e *Event) { e.Previous = "Old name" })
	add(KindPlayers, func(e *Event) { e.Joined, e.Left = []string{"bob"}, []string{"carol", "dave"} })
	add(KindPlayersMore, func(e *Event) { e.Joined, e.Limit = []string{"erin"}, 30 })
	return out
}

// hostileEvents carry names made to break messages.
func hostileEvents() []Event {
	long := strings.Repeat("W", 10000)
	names := []string{
		"@everyone",
		"@here <@123456789012345678> <@&42> <#99> <t:0:R> </ban:1>",
		"**bold** __u__ ~~s~~ `code` ||spoiler|| > quote # head [link](https://evil.example/) \\",
		long,
		"abc\u202edcba\u200b\u2066x\u2069",
		"line1\nline2\r\x00\x07\x1b[31mred",
		"<!channel> <!here> & <https://evil.example|click>",
		"\xff\xfe invalid utf-8",
		strings.Repeat("😀", 3000),
	}
	var out []Event
	for i, n := range names {
		out = append(out, Event{Watch: "hostile-" + strconv.Itoa(i), Kind: KindPlayers, Server: server1, Time: t0, State: StateOnline,
			Name: n, Map: n, Joined: []string{n, n}, Left: []string{n}, Players: []string{n}, NumPlayers: 1, MaxPlayers: 2})
	}
	return out
}

type goldenEntry struct {
	Event string          `json:"event"`
	Body  json.RawMessage `json:"body"`
}

func golden(t *testing.T, name string, entries []goldenEntry) {
	t.Helper()
	got, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./alerts -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the builders make now (go test ./alerts -update rewrites it); got:\n%s", path, got)
	}
}

func TestGolden(t *testing.T) {
	for _, k := range []DestKind{DestDiscord, DestSlack, DestWebhook} {
		for _, set := range []struct {
			name   string
			events []Event
		}{{"events", sampleEvents()}, {"hostile", hostileEvents()}} {
			t.Run(string(k)+"_"+set.name, func(t *testing.T) {
				var entries []goldenEntry
				for _, e := range set.events {
					m := Render(k, e)
					if !json.Valid(m.Body) {
						t.Fatalf("%s: invalid JSON", e.Kind)
					}
					entries = append(entries, goldenEntry{Event: string(e.Kind) + " " + e.Watch, Body: m.Body})
				}
				golden(t, string(k)+"_"+set.name+".json", entries)
			})
		}
	}
	t.Run("discord_board", func(t *testing.T) {
		var entries []goldenEntry
		for i, m := range DiscordBoard("Our servers", boardRows(3), t0) {
			entries = append(entries, goldenEntry{Event: "page " + strconv.Itoa(i+1), Body: m.JSON()})
		}
		golden(t, "discord_board.json", entries)
	})
}

func boardRows(n int) []BoardRow {
	states := []string{StateOnline, StateOffline, StateMalformed, StateLimited, ""}
	var rows []BoardRow
	for i := range n {
		rows = append(rows, BoardRow{
			Server: Ref{Protocol: "zandronum", Addr: "203.0.113.7:" + strconv.Itoa(10666+i)},
			State:  states[i%len(states)], Name: "Server " + strconv.Itoa(i), Map: "MAP0" + strconv.Itoa(i%10),
			NumPlayers: i % 9, MaxPlayers: 8, Since: t0.Add(-time.Duration(i) * time.Minute),
		})
	}
	return rows
}

// checkDiscord checks every one of Discord's limits on a message.
func checkDiscord(t *testing.T, m DiscordMessage) {
	t.Helper()
	if len(m.Embeds) > DiscordEmbeds {
		t.Errorf("%d embeds", len(m.Embeds))
	}
	if m.AllowedMentions.Parse == nil || len(m.AllowedMentions.Parse) != 0 {
		t.Errorf("allowed_mentions %v", m.AllowedMentions)
	}
	if !strings.Contains(string(m.JSON()), `"allowed_mentions":{"parse":[]}`) {
		t.Errorf("body without allowed_mentions: %s", m.JSON())
	}
	limit := func(what, s string, n int) {
		if Length(s) > n {
			t.Errorf("%s: %d characters, limit %d", what, Length(s), n)
		}
		if !utf8.ValidString(s) {
			t.Errorf("%s: invalid UTF-8", what)
		}
	}
	for _, e := range m.Embeds {
		limit("title", e.Title, DiscordTitle)
		limit("description", e.Description, DiscordDescription)
		if len(e.Fields) > DiscordFields {
			t.Errorf("%d fields", len(e.Fields))
		}
		for _, f := range e.Fields {
			limit("field name", f.Name, DiscordFieldName)
			limit("field value", f.Value, DiscordFieldValue)
			if f.Name == "" || f.Value == "" {
				t.Errorf("empty field %+v", f)
			}
		}
		if e.Footer != nil {
			limit("footer", e.Footer.Text, DiscordFooterText)
		}
		if _, err := time.Parse(time.RFC3339, e.Timestamp); e.Timestamp != "" && err != nil {
			t.Errorf("timestamp %q", e.Timestamp)
		}
	}
	if n := m.total(); n > DiscordTotal {
		t.Errorf("%d characters in all", n)
	}
}

func TestDiscordLimits(t *testing.T) {
	huge := strings.Repeat("é😀x", 5000)
	var m DiscordMessage
	for range 12 {
		e := DiscordEmbed{Title: huge, Description: huge, Footer: &DiscordFooter{Text: huge}}
		for range 30 {
			e.Fields = append(e.Fields, DiscordField{Name: huge, Value: huge})
		}
		e.Fields = append(e.Fields, DiscordField{})
		m.Embeds = append(m.Embeds, e)
	}
	m.Fit()
	checkDiscord(t, m)
	if len(m.Embeds) != DiscordEmbeds || len(m.Embeds[0].Fields) != DiscordFields {
		t.Errorf("kept %d embeds, %d fields", len(m.Embeds), len(m.Embeds[0].Fields))
	}
	if m.Embeds[0].Title != Truncate(huge, DiscordTitle) || !strings.HasSuffix(m.Embeds[0].Title, "…") {
		t.Errorf("the first title was cut more than its own limit")
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"ééé", 3, "ééé"},
		{"éééé", 3, "éé…"},
		{"😀😀", 4, "😀😀"},
		{"😀😀", 3, "😀…"},
		{"😀😀", 2, "…"},
		{"abc", 0, ""},
	} {
		if got := Truncate(tc.in, tc.limit); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}

func TestHostileNames(t *testing.T) {
	for _, e := range hostileEvents() {
		d := DiscordEvent(e)
		checkDiscord(t, d)
		body := string(d.JSON())
		for _, bad := range []string{"@everyone", "@here", "<@", "<#", "<t:", "</", "\u202e", "\u2066", "\\n", "\\u0000", "\\u001b", "**bold**", "[link](", "\n"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: Discord body contains %q", e.Watch, bad)
			}
		}
		s := SlackEvent(e)
		sb := string(s.JSON())
		for _, bad := range []string{"<!", "<@", "<http", "\u202e", "\\u0000"} {
			if strings.Contains(sb, bad) {
				t.Errorf("%s: Slack body contains %q", e.Watch, bad)
			}
		}
		for _, b := range s.Blocks {
			if b.Text != nil && Length(b.Text.Text) > SlackSectionText {
				t.Errorf("%s: Slack section of %d", e.Watch, Length(b.Text.Text))
			}
		}
		w := WebhookEvent(e)
		if Length(w.Data.Name) > MaxName || strings.ContainsRune(w.Data.Name, '\u202e') || !utf8.ValidString(w.Data.Name) {
			t.Errorf("%s: webhook name %q", e.Watch, w.Data.Name)
		}
	}
}

func TestEscapes(t *testing.T) {
	for _, tc := range []struct{ in, discord, slack string }{
		{"@everyone", "@\u200beveryone", "@everyone"},
		{"<@123>", "<\u200b@\u200b123\\>", "&lt;@123&gt;"},
		{"*a*_b_~c~`d`|e|#f>g\\h", "\\*a\\*\\_b\\_\\~c\\~\\`d\\`\\|e\\|\\#f\\>g\\\\h", "*a*_b_~c~`d`|e|#f&gt;g\\h"},
		{"a & b", "a & b", "a &amp; b"},
		{"\x1cRred\x1c[gold]gold  \t two", "redgold two", "redgold two"},
		{"rtl\u202eevil\u200b", "rtlevil", "rtlevil"},
	} {
		if got := Discord(tc.in); got != tc.discord {
			t.Errorf("Discord(%q) = %q, want %q", tc.in, got, tc.discord)
		}
		if got := Slack(tc.in); got != tc.slack {
			t.Errorf("Slack(%q) = %q, want %q", tc.in, got, tc.slack)
		}
	}
}

func TestBoardPaging(t *testing.T) {
	for _, n := range []int{0, 1, 25, 26, 250, 251, 1000} {
		msgs := DiscordBoard("Board", boardRows(n), t0)
		seen := 0
		for _, m := range msgs {
			checkDiscord(t, m)
			for _, e := range m.Embeds {
				seen += len(e.Fields)
			}
		}
		if seen != n {
			t.Errorf("%d rows: %d fields on %d messages", n, seen, len(msgs))
		}
		if n == 1000 && len(msgs) < 4 {
			t.Errorf("1000 rows on %d messages", len(msgs))
		}
	}
}

func TestMaskURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://discord.com/api/webhooks/123/tok-en", "https://discord.com/api/webhooks/123/***"},
		{"https://discord.com/api/v10/webhooks/123/tok-en?wait=true", "https://discord.com/api/v10/webhooks/123/***"},
		{"https://discord.com/api/webhooks/123/tok/messages/9", "https://discord.com/api/webhooks/123/***"},
		{"https://hooks.slack.com/services/T0/B1/secret", "https://hooks.slack.com/services/T0/***"},
		{"https://user:pw@example.com/hook/secret?k=v#f", "https://example.com/***"},
		{"https://example.com", "https://example.com"},
		{"::not a url", "***"},
	} {
		if got := MaskURL(tc.in); got != tc.want {
			t.Errorf("MaskURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	d := Destination{Name: "ops", Kind: DestDiscord, URL: "https://discord.com/api/webhooks/123/tok-en", Secret: "whsec_x"}
	for _, s := range []string{d.String(), d.GoString(), d.LogValue().String()} {
		if strings.Contains(s, "tok-en") || strings.Contains(s, "whsec") {
			t.Errorf("leaks: %s", s)
		}
	}
}

func TestEventID(t *testing.T) {
	a := Event{Watch: "w", Kind: KindDown, Time: t0}
	b := a
	b.Name = "other"
	if a.ID() != b.ID() || !strings.HasPrefix(a.ID(), "msg_") || len(a.ID()) != 36 {
		t.Errorf("ids %q %q", a.ID(), b.ID())
	}
	b.Time = t0.Add(time.Nanosecond)
	if a.ID() == b.ID() {
		t.Errorf("same id for two times")
	}
}

func FuzzClean(f *testing.F) {
	for _, e := range hostileEvents() {
		f.Add(e.Name)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{CleanName(s), Discord(s), Slack(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 from %q", s)
			}
		}
		if Length(CleanName(s)) > MaxName {
			t.Fatalf("too long from %q", s)
		}
		d := Discord(s)
		if strings.Contains(d, "@everyone") || strings.Contains(d, "<@") {
			t.Fatalf("mention from %q: %q", s, d)
		}
		m := DiscordEvent(Event{Kind: KindPlayers, Name: s, Map: s, Joined: []string{s}, Err: s, Watch: s})
		if m.total() > DiscordTotal {
			t.Fatal("over the total")
		}
	})
}
