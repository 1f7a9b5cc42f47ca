package alerts

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseExample(t *testing.T) {
	data, err := os.ReadFile("testdata/watches.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(data, func(p string) bool { return p != "minecraft" })
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Destinations) != 3 || len(f.Watches) != 2 || len(f.Boards) != 1 || len(f.Boards[0].Servers) != 3 || f.Boards[0].Heading() != "Our servers" {
		t.Fatalf("%+v", f)
	}
	duel := f.Watches[0]
	if duel.Server.String() != "zandronum/203.0.113.7:10666" || duel.Resend != time.Hour ||
		len(duel.Mute) != 1 || !duel.Mute[0].Start.Equal(time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)) {
		t.Errorf("duel: %+v", duel)
	}
	if to := f.To(duel); len(to) != 2 || to[0].Kind != DestDiscord || to[1].Kind != DestWebhook {
		t.Errorf("to: %v", to)
	}
	// Printed whole, the file shows no URL token nor secret.
	for _, out := range []string{fmt.Sprint(f), fmt.Sprintf("%+v", f), fmt.Sprintf("%#v", f)} {
		for _, secret := range []string{"made-up-token", "made-up-secret", "MfKQ9r8G", "/querylens"} {
			if strings.Contains(out, secret) {
				t.Errorf("%q printed: %s", secret, out)
			}
		}
	}
	clan := f.Watches[1]
	if clan.AtLeast != 8 || !clan.Joins || clan.PlayerCap != 20 || len(clan.Players) != 2 {
		t.Errorf("clan: %+v", clan)
	}
}

func TestParseFileErrors(t *testing.T) {
	const dest = "[[destination]]\nname = \"ops\"\nkind = \"discord\"\nurl = \"https://discord.com/api/webhooks/1/SECRETTOKEN\"\n"
	const watch = "[[watch]]\nid = \"w\"\nto = [\"ops\"]\nserver = { protocol = \"zandronum\", addr = \"127.0.0.1:10666\" }\ndown = true\n"
	for _, tc := range []struct{ name, text, want string }{
		{"ok", dest + watch, ""},
		{"syntax", dest + "url = \"https://discord.com/api/webhooks/1/SECRETTOKEN", "line 4 (key \"destination.url\"): unexpected EOF"},
		{"wrong type", dest + watch + "resend = 5\nup = \"yes\"\n", `line 11 (last key "watch.up"): a value of the wrong type`},
		{"bad duration", dest + watch + "resend = \"SECRETTOKEN\"\n", "invalid duration: \"…\""},
		{"unknown key", dest + watch + "dowm = true\n", "unknown key \"watch.dowm\""},
		{"no destination", watch, "no destination \"ops\""},
		{"twice", dest + dest + watch, "twice"},
		{"bad kind", strings.Replace(dest, "discord", "pager", 1) + watch, "kind is"},
		{"webhook secret", strings.Replace(dest, "discord", "webhook", 1) + watch, "signing secret"},
		{"invalid watch", dest + strings.Replace(watch, "down = true", "joins = true", 1), "complete player lists"},
		{"no to", dest + strings.Replace(watch, "to = [\"ops\"]\n", "", 1), "tells no destination"},
		{"same id", dest + watch + watch, "id twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tc.text), func(p string) bool { return p != "zandronum" || !strings.Contains(tc.name, "invalid") })
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "SECRETTOKEN") {
				t.Errorf("the error quotes a secret: %v", err)
			}
		})
	}
}

func FuzzParseFile(f *testing.F) {
	if data, err := os.ReadFile("testdata/watches.example.toml"); err == nil {
		f.Add(string(data)) // the example
	}
	f.Add("[[watch]]\nid = 1\n")                   // a wrong type
	f.Add("[[destination]]\nname = \"a\"\nkind =") // cut short
	f.Fuzz(func(t *testing.T, text string) {
		file, err := ParseFile([]byte(text), nil)
		if err != nil {
			return
		}
		for _, w := range file.Watches {
			if err := w.Validate(nil); err != nil {
				t.Fatalf("ParseFile took an invalid watch: %v", err)
			}
			// A watch that parses runs: a few samples must not panic.
			var st State
			for i, s := range []string{StateOnline, StateOffline, StateRefused, StateOnline} {
				st, _ = Next(w, st, Sample{Time: time.Unix(int64(i+1)*60, 0), State: s, PlayersComplete: true, Players: []string{"a"}})
			}
		}
	})
}

// TestParseDemo: the demo's watches file parses, with its interval and
// live board (docs/operating.md runs serve with it).
func TestParseDemo(t *testing.T) {
	data, err := os.ReadFile("testdata/watches.demo.toml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(data, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Watches) != 1 || f.Watches[0].Every != 10*time.Second || !f.Watches[0].Board || f.Destinations[0].Kind != DestDiscord ||
		len(f.Boards) != 1 || len(f.Boards[0].Servers) != 2 || f.Boards[0].To != "local" {
		t.Errorf("%+v", f)
	}
	// A board alone is something to tell; a negative interval is not.
	w := Watch{ID: "b", Server: Ref{Protocol: "quake3", Addr: "127.0.0.1:27960"}, Board: true}
	if err := w.Validate(nil); err != nil {
		t.Errorf("a board alone: %v", err)
	}
	w.Every = -time.Second
	if err := w.Validate(nil); !errors.Is(err, ErrNegative) {
		t.Errorf("a negative interval: %v", err)
	}
}
