package minecraft

import (
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{`{"a":[1,-2.5e3,true,false,null,"x\u00e9\ud83d\ude00\n"]}`, ""},
		{`  "just a string"  `, ""},
		{`{"a":1,}`, "syntax"},
		{`{"a" 1}`, "syntax"},
		{`[1 2]`, "syntax"},
		{`"\x"`, "syntax"},
		{`"open`, "syntax"},
		{`01`, "syntax"},
		{`-`, "syntax"},
		{`1.`, "syntax"},
		{"\"a\x01\"", "syntax"},
		{strings.Repeat("[", MaxJSONDepth+2) + strings.Repeat("]", MaxJSONDepth+2), "deep"},
		{strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth), ""},
		{"[" + strings.Repeat("0,", MaxJSONNodes) + "0]", "too many"},
		{`{} {}`, "syntax"},
	} {
		_, err := parseJSON([]byte(tc.in))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%.40q: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%.40q: %v, want %q", tc.in, err, tc.err)
		}
	}
	d, err := parseJSON([]byte(`{"s":"x\u00e9\ud83d\ude00","n":-42,"big":99999999999,"f":1.5,"o":{"k":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := d.str(d.get(0, "s")); s != "xé😀" {
		t.Errorf("s = %q", s)
	}
	if n, ok := d.integer(d.get(0, "n")); !ok || n != -42 {
		t.Errorf("n = %d, %v", n, ok)
	}
	if _, ok := d.integer(d.get(0, "big")); ok {
		t.Error("a number past 32 bits read as an int")
	}
	if _, ok := d.integer(d.get(0, "f")); ok {
		t.Error("1.5 read as an int")
	}
	if v, ok := d.boolean(d.get(d.get(0, "o"), "k")); !v || !ok {
		t.Error("o.k")
	}
}

// FuzzJSON: the reader never panics, and what it accepts has nodes whose
// ranges lie inside the text and nest.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c\u00e9"}]}`, `"x"`, `[[[[]]]]`, `{"description":{"text":"a","extra":["b",{"text":"c","bold":true}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseJSON(b)
		if err != nil {
			if err.off < 0 || err.off > len(b) {
				t.Fatalf("error offset %d of %d", err.off, len(b))
			}
			return
		}
		for i, n := range d.n {
			if n.start < 0 || n.end > int32(len(b)) || n.start >= n.end {
				t.Fatalf("node %d: [%d, %d) of %d", i, n.start, n.end, len(b))
			}
			for c := n.first; c >= 0; c = d.n[c].next {
				if d.n[c].start < n.start || d.n[c].end > n.end {
					t.Fatalf("child %d outside node %d", c, i)
				}
			}
		}
		var c chat
		c.d = &d
		c.walk(0, "", 0, "")
	})
}

// TestJSONString: a string with no escape (read in one scan) and one with
// escapes (read a byte at a time) give the same text, invalid UTF-8 as
// U+FFFD either way, and a control byte fails where it stands.
func TestJSONString(t *testing.T) {
	long := strings.Repeat("iVBORw0KGgo+/", 400)
	for _, tc := range []struct {
		in   string
		want string
		off  int // the error's offset; -1: none
	}{
		{`"` + long + `"`, long, -1},
		{`"` + long + `\n"`, long + "\n", -1},
		{`"\u00e9` + long + `"`, "é" + long, -1},
		{"\"a\xffb\"", "a\ufffdb", -1},
		{"\"a\xffb\\t\"", "a\ufffdb\t", -1},
		{`""`, "", -1},
		{"\"" + long + "\x01\"", "", 1 + len(long)},
		{"\"ab\\n\x02\"", "", 5},
		{`"` + long, "", 1 + len(long)},
	} {
		d, err := parseJSON([]byte(tc.in))
		switch {
		case tc.off >= 0 && (err == nil || err.off != tc.off):
			t.Errorf("%.30q: %v, want an error at %d", tc.in, err, tc.off)
		case tc.off < 0 && err != nil:
			t.Errorf("%.30q: %v", tc.in, err)
		case tc.off < 0:
			if s, _ := d.str(0); s != tc.want {
				t.Errorf("%.30q: %.30q, want %.30q", tc.in, s, tc.want)
			}
		}
	}
}
