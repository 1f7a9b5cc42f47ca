package alerts

import (
	"errors"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// File is a watches file (--watches FILE, testdata/watches.example.toml):
// the destinations, each named once, the watches that name them, and the
// live boards of several servers.
type File struct {
	Destinations []Destination `toml:"destination"`
	Watches      []Watch       `toml:"watch"`
	Boards       []Board       `toml:"board"`
}

// ErrFile wraps every error of ParseFile. The errors never quote a value
// of the file: a URL or secret in it must not reach a log.
var ErrFile = errors.New("alerts: watches file")

// ParseFile reads a watches file and checks it: no unknown key, every
// watch valid (Watch.Validate with complete), ids and destination names
// unique, every destination a watch names defined, kinds known, a
// generic webhook's secret well formed. Whether a URL is a real Discord
// or Slack webhook is deliver.Sender.Check's to say.
func ParseFile(data []byte, complete func(protocol string) bool) (File, error) {
	var f File
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// The parser's message may quote the value (a URL, a
			// secret): keep its words, not its quotes.
			msg := "line " + strconv.Itoa(pe.Position.Line)
			if pe.LastKey != "" {
				msg += " (key " + strconv.Quote(pe.LastKey) + ")"
			}
			msg += ": " + unquote(pe.Message)
			return File{}, fileErr(msg)
		}
		// A type mismatch names its line and key, then the types:
		// keep the line and key (no value of the file is in them).
		if msg, ok := strings.CutPrefix(err.Error(), "toml: line "); ok {
			if i := strings.Index(msg, "): "); i > 0 && strings.Contains(msg[:i], "(last key ") {
				return File{}, fileErr("line " + msg[:i+1] + ": a value of the wrong type")
			}
		}
		return File{}, fileErr("does not decode (a value of the wrong type?)")
	}
	if und := md.Undecoded(); len(und) > 0 {
		return File{}, fileErr("unknown key " + strconv.Quote(und[0].String()))
	}
	dests := map[string]bool{}
	kinds := map[string]DestKind{}
	for i, d := range f.Destinations {
		where := "destination " + strconv.Itoa(i+1)
		switch {
		case d.Name == "":
			return File{}, fileErr(where + " has no name")
		case dests[d.Name]:
			return File{}, fileErr(where + ": name " + quote(d.Name) + " twice")
		case d.Kind != DestDiscord && d.Kind != DestSlack && d.Kind != DestWebhook:
			return File{}, fileErr(where + ": kind is discord, slack or webhook")
		case d.URL == "":
			return File{}, fileErr(where + " has no url")
		case d.Kind == DestWebhook:
			if _, err := ParseSecret(d.Secret); err != nil {
				return File{}, errors.Join(fileErr(where), err)
			}
		}
		dests[d.Name] = true
		kinds[d.Name] = d.Kind
	}
	ids := map[string]bool{}
	for i, w := range f.Watches {
		where := "watch " + strconv.Itoa(i+1)
		if w.ID != "" {
			where += " (" + quote(w.ID) + ")"
		}
		if err := w.Validate(complete); err != nil {
			return File{}, errors.Join(fileErr(where), err)
		}
		if ids[w.ID] {
			return File{}, fileErr(where + ": id twice")
		}
		ids[w.ID] = true
		if len(w.To) == 0 {
			return File{}, fileErr(where + " tells no destination (to)")
		}
		for _, to := range w.To {
			if !dests[to] {
				return File{}, fileErr(where + ": no destination " + quote(to))
			}
		}
	}
	if err := checkBoards(f, kinds); err != nil {
		return File{}, err
	}
	return f, nil
}

func fileErr(msg string) error { return errors.Join(ErrFile, errors.New(msg)) }

// To is the destinations w tells, in the order it names them.
func (f File) To(w Watch) []Destination {
	var out []Destination
	for _, name := range w.To {
		for _, d := range f.Destinations {
			if d.Name == name {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// unquote replaces what s quotes ("…" or '…') with an ellipsis, and cuts
// it short.
func unquote(s string) string {
	var b strings.Builder
	var in rune
	for _, r := range s {
		switch {
		case in != 0 && r == in:
			in = 0
			b.WriteString("…" + string(r))
		case in != 0:
		case r == '"' || r == '\'':
			in = r
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return Truncate(b.String(), 200)
}
