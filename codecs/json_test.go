package codecs_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
)

func TestAppendJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"nil", nil, `null`},
		{"ints", []any{int8(-1), uint16(65535), uint32(5660023), int64(-7)}, `[-1,65535,5660023,-7]`},
		{"float32", float32(0.5), `0.5`},
		{"colour escape", "\x1cDBob", `"\u001cDBob"`},
		{"html", "<b>&", `"\u003cb\u003e\u0026"`},
		{"invalid utf8", "a\xffb", `"a\ufffdb"`},
		{"hex", codecs.Hex{0xc7, 0}, `"c700"`},
		{"object", codecs.Object{}.Add("a", 1).Add("b", []string{"x"}), `{"a":1,"b":["x"]}`},
		{"unsupported", struct{}{}, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(codecs.AppendJSON(nil, tc.v))
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("invalid JSON %s", got)
			}
		})
	}
}

func TestMessageJSON(t *testing.T) {
	m := &codecs.Message{Protocol: "zandronum", Kind: codecs.KindResponse,
		Info: &codecs.Info{Has: codecs.HasName | codecs.HasPlayers, Name: "CTF Night",
			Players: []codecs.Player{{Name: "a", Score: -2, Team: 1, HasTeam: true}, {Name: "b"}}}}
	got := string(m.AppendJSON(nil))
	want := `{"protocol":"zandronum","kind":"response","info":{"name":"CTF Night","players":[` +
		`{"name":"a","score":-2,"ping":0,"team":1,"spectator":false,"bot":false},` +
		`{"name":"b","score":0,"ping":0,"team":null,"spectator":false,"bot":false}]},"fields":{},"warnings":[]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestErrorObject(t *testing.T) {
	err := &codecs.Error{Protocol: "zandronum", Field: "players[2].ping", Offset: 57, Err: codecs.ErrShort}
	got := string(codecs.AppendJSON(nil, codecs.ErrorObject(err, &codecs.Message{Protocol: "zandronum", Kind: codecs.KindResponse})))
	want := `{"error":{"protocol":"zandronum","field":"players[2].ping","offset":57,"message":"short buffer"},` +
		`"partial":{"kind":"response","fields":{},"warnings":[]}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !errors.Is(err, codecs.ErrShort) {
		t.Error("errors.Is(ErrShort) = false")
	}
	if want := "zandronum: players[2].ping at offset 57: short buffer"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestDetailKeepsSentinel(t *testing.T) {
	err := codecs.Detail(codecs.ErrBadValue, "game mode 99")
	if !errors.Is(err, codecs.ErrBadValue) || err.Error() != "bad value: game mode 99" {
		t.Errorf("Detail = %v", err)
	}
}

// FuzzAppendJSONString: the output is one valid JSON string that reads
// back as s with each invalid byte replaced by U+FFFD, and holds none of
// < > & raw (so it can sit inside a <script>).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x1c[Red]x\x7f\t\n\r", "<script>&", "\xff\xfe", "é\u2028\u2029😀", "tail\xe2\x82"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := codecs.AppendJSONString([]byte("x"), s)[1:]
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("AppendJSONString(%q) = %s: %v", s, out, err)
		}
		if want := string([]rune(s)); got != want {
			t.Fatalf("AppendJSONString(%q) reads back as %q, want %q", s, got, want)
		}
		if bytes.ContainsAny(out, "<>&\u2028\u2029") {
			t.Fatalf("AppendJSONString(%q) = %s holds a raw < > & or line separator", s, out)
		}
	})
}

// TestEqualFoldASCII: ASCII letters match in either case; nothing else
// folds (not '@' with '`', nor non-ASCII bytes).
func TestEqualFoldASCII(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"GamePassword", "gamepassword", true}, {"si_usePass", "SI_USEPASS", true}, {"", "", true},
		{"abc", "abcd", false}, {"@", "`", false}, {"[", "{", false}, {"é", "É", false}, {"a1", "A1", true},
	} {
		if got := codecs.EqualFoldASCII(tc.a, tc.b); got != tc.want {
			t.Errorf("EqualFoldASCII(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}
