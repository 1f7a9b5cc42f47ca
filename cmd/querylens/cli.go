package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/netquery"
)

const usage = `querylens - game-server query codecs, browser and relay

usage:
  querylens decode  [-p PROTOCOL] [--query HEX] HEX...   decode one message (- reads datagrams from stdin)
  querylens inspect [-p PROTOCOL] [--query HEX] HEX...   the same, as an annotated field dump
  querylens inspect [-p PROTOCOL] [--json] --pcap FILE   every UDP datagram and TCP turn of a pcap or pcapng capture
  querylens huffman encode|decode HEX                    Zandronum's Huffman layer
  querylens query   [-p PROTOCOL] [flags] HOST:PORT      query a live server and print the decoded JSON
                                                         (no -p, unknown port: every protocol is tried at once)
  querylens query   -g GAME [flags] HOST[:PORT]          the same for a game, by GameDig's id (-g rust)
  querylens master  [-p PROTOCOL | -g GAME] [flags] [HOST:PORT]
                                                         list the servers a master knows (default: the public one)
  querylens serve   [flags]                              the web pages and the relay
  querylens demo    [flags]                              emulated game servers on loopback
  querylens watch   add|list|rm|test [flags]             alerts to Discord, Slack or a webhook when a server goes down, fills up...
  querylens protocols                                    list the protocols and their query options
  querylens games   [--json] [ID...]                     every game GameDig knows: protocol, query port, served or why not
  querylens version                                      this binary's version and browser module

PROTOCOL is one of the registered protocols; without -p it is detected from the bytes.
Exit status: 0 decoded, 1 the input could not be decoded (the JSON says why), 2 bad usage.
Run "querylens COMMAND -h" for a command's flags.
`

// Exit statuses (docs/protocols/json.md).
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// env is what a command sees of the process, so tests can run commands in
// memory.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// exchanger, when not nil, replaces direct UDP for query and master
	// (tests use it to see what would be sent, and where, without sending).
	exchanger netquery.Exchanger
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&env{stdin: stdin, stdout: stdout, stderr: stderr}).run(args)
}

// run runs the command named by args[0] and returns the exit status.
func (e *env) run(args []string) int {
	stdout, stderr := e.stdout, e.stderr
	if len(args) == 0 {
		io.WriteString(stderr, usage)
		return exitUsage
	}
	cmds := map[string]func(*env, []string) int{
		"decode":    func(e *env, a []string) int { return e.decode(a, false) },
		"inspect":   func(e *env, a []string) int { return e.decode(a, true) },
		"huffman":   (*env).huffman,
		"query":     func(e *env, a []string) int { return e.query(a, false) },
		"master":    func(e *env, a []string) int { return e.query(a, true) },
		"protocols": (*env).protocols,
		"games":     (*env).games,
		"serve":     (*env).serve,
		"demo":      (*env).demo,
		"version":   (*env).version,
		"watch":     (*env).watch,
	}
	switch args[0] {
	case "help", "-h", "--help":
		io.WriteString(stdout, usage)
		return exitOK
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		io.WriteString(stderr, "querylens: unknown command "+strconv.Quote(args[0])+"\n\n"+usage)
		return exitUsage
	}
	return cmd(e, args[1:])
}

// parseInterspersed parses flags that may come before, between or after the
// positional arguments, and returns the positional ones. "--" ends flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlagSet(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		io.WriteString(e.stderr, "usage: querylens "+name+" "+synopsis+"\n")
		fs.PrintDefaults()
	}
	return fs
}

// usageErr prints msg and the command's usage and returns exitUsage.
func (e *env) usageErr(fs *flag.FlagSet, msg string) int {
	io.WriteString(e.stderr, "querylens "+fs.Name()+": "+msg+"\n")
	fs.Usage()
	return exitUsage
}

// parseHex decodes one datagram written as hex; spaces, tabs, colons and a
// leading 0x are allowed. The error names the offending character.
func parseHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	out := make([]byte, 0, len(s)/2)
	var hi byte
	half := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		case c == ' ' || c == '\t' || c == ':' || c == '\r' || c == '\n':
			continue
		default:
			return nil, errors.New("invalid hex character " + strconv.QuoteRune(rune(c)) + " at position " + strconv.Itoa(i))
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		return nil, errors.New("odd number of hex digits")
	}
	return out, nil
}

// readDatagrams turns the HEX arguments (or "-": one per stdin line) into
// datagrams.
func (e *env) readDatagrams(args []string) ([][]byte, error) {
	var out [][]byte
	add := func(where, s string) error {
		b, err := parseHex(s)
		if err != nil {
			return errors.New(where + ": " + err.Error())
		}
		out = append(out, b)
		return nil
	}
	for i, a := range args {
		if a == "-" {
			sc := bufio.NewScanner(e.stdin)
			sc.Buffer(make([]byte, 64*1024), 1<<20)
			line := 0
			for sc.Scan() {
				line++
				t := strings.TrimSpace(sc.Text())
				if t == "" || strings.HasPrefix(t, "#") {
					continue
				}
				if err := add("stdin line "+strconv.Itoa(line), t); err != nil {
					return nil, err
				}
			}
			if err := sc.Err(); err != nil {
				return nil, err
			}
			continue
		}
		if err := add("argument "+strconv.Itoa(i+1), a); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeJSON prints one JSON value and a newline, indented if pretty.
func (e *env) writeJSON(v codecs.Object, pretty bool) {
	b := codecs.AppendJSON(nil, v)
	if pretty {
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", "  "); err == nil {
			b = out.Bytes()
		}
		// AppendJSON always writes valid JSON; were it not to, the compact
		// form is printed rather than nothing.
	}
	e.stdout.Write(append(b, '\n'))
}

// fail prints docs/protocols/json.md's error object for err (with the partial message if
// any) and returns exitFail.
func (e *env) fail(err error, partial *codecs.Message, pretty bool) int {
	e.writeJSON(codecs.ErrorObject(err, partial), pretty)
	return exitFail
}

// inputError is an error in the command's input that is not a decoding
// error of a protocol (bad hex, no protocol detected).
func inputError(protocol, field string, err error) error {
	var ce *codecs.Error
	if errors.As(err, &ce) {
		return err
	}
	return &codecs.Error{Protocol: protocol, Field: field, Err: err}
}

func (e *env) decode(args []string, inspect bool) int {
	name := "decode"
	if inspect {
		name = "inspect"
	}
	fs := newFlagSet(e, name, "[-p PROTOCOL] [--query HEX] HEX...")
	proto := fs.String("p", "", "protocol (`name`); detected from the bytes when empty")
	fs.StringVar(proto, "protocol", "", "same as -p")
	queryHex := fs.String("query", "", "the query (`HEX`) the reply answers, where the layout depends on it")
	pretty := fs.Bool("pretty", false, "indent the JSON")
	asJSON := fs.Bool("json", false, "inspect: print the JSON with layers and spans instead of the dump")
	var pcapFile *string
	var spans *bool
	if inspect {
		pcapFile = fs.String("pcap", "", "decode the UDP datagrams and TCP turns of a pcap or pcapng `FILE` (--json: one object per datagram or turn)")
		spans = fs.Bool("spans", false, "with --pcap and --json: include layers and spans in each message")
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if inspect && *pcapFile != "" {
		if len(pos) > 0 || *queryHex != "" {
			return e.usageErr(fs, "--pcap takes no HEX arguments and no --query")
		}
		opt := captureOptions{file: *pcapFile, json: *asJSON, spans: *spans, pretty: *pretty}
		if *proto != "" {
			if opt.proto, err = codecs.Lookup(*proto); err != nil {
				return e.usageErr(fs, "unknown protocol "+strconv.Quote(*proto)+" (known: "+protocolNames()+")")
			}
		}
		return e.inspectCapture(opt)
	}
	if len(pos) == 0 {
		return e.usageErr(fs, "no datagram given")
	}
	dgs, err := e.readDatagrams(pos)
	if err != nil {
		return e.fail(inputError(*proto, "hex", err), nil, *pretty)
	}
	if len(dgs) == 0 {
		return e.fail(inputError(*proto, "datagram", errors.New("no datagram in the input")), nil, *pretty)
	}
	opt := codecs.DecodeOptions{Spans: inspect}
	if *queryHex != "" {
		if opt.Query, err = parseHex(*queryHex); err != nil {
			return e.fail(inputError(*proto, "query", err), nil, *pretty)
		}
	}
	var c codecs.Codec
	if *proto != "" {
		if c, err = codecs.Lookup(*proto); err != nil {
			io.WriteString(e.stderr, "querylens "+name+": unknown protocol "+strconv.Quote(*proto)+" (known: "+protocolNames()+")\n")
			e.writeJSON(codecs.ErrorObject(err, nil), *pretty)
			return exitUsage
		}
	} else {
		if c, _, err = codecs.Detect(dgs[0]); err != nil {
			return e.fail(err, nil, *pretty)
		}
	}
	var msg *codecs.Message
	if len(dgs) == 1 && codecs.DescriptionOf(c).Transport == codecs.TCP {
		// A stream protocol's reply, whole: cut into its messages.
		msg, err = codecs.DecodeStream(c, dgs[0], opt)
	} else {
		msg, err = c.Decode(dgs, opt)
	}
	if inspect && !*asJSON {
		if msg != nil {
			e.stdout.Write(codecs.AppendDump(nil, msg))
		}
		if err != nil {
			io.WriteString(e.stdout, "error: "+err.Error()+"\n")
			return exitFail
		}
		return exitOK
	}
	if err != nil {
		return e.fail(err, msg, *pretty)
	}
	e.writeJSON(msg.Object(), *pretty)
	return exitOK
}

func protocolNames() string {
	var names []string
	for _, c := range codecs.Protocols() {
		names = append(names, c.Name())
	}
	return strings.Join(names, ", ")
}

func (e *env) protocols(args []string) int {
	fs := newFlagSet(e, "protocols", "[--pretty] [--names]")
	pretty := fs.Bool("pretty", false, "indent the JSON")
	names := fs.Bool("names", false, "print the registered protocols' names only, one a line")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 0 {
		return e.usageErr(fs, "unexpected argument "+strconv.Quote(pos[0]))
	}
	if *names {
		for _, c := range codecs.Protocols() {
			io.WriteString(e.stdout, c.Name()+"\n")
		}
		return exitOK
	}
	var list []codecs.Object
	for _, c := range codecs.Protocols() {
		var opts []codecs.Object
		for _, o := range c.Options() {
			oo := codecs.Object{}.Add("name", o.Name).Add("kind", o.Kind).Add("default", o.Default).Add("help", o.Help)
			if len(o.Choices) > 0 {
				oo = oo.Add("choices", o.Choices)
			}
			opts = append(opts, oo)
		}
		if opts == nil {
			opts = []codecs.Object{}
		}
		list = append(list, codecs.Object{}.Add("name", c.Name()).Add("title", c.Title()).
			Add("default_port", c.DefaultPort()).Add("options", opts))
	}
	if list == nil {
		list = []codecs.Object{}
	}
	e.writeJSON(codecs.Object{}.Add("protocols", list), *pretty)
	return exitOK
}
