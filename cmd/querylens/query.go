package main

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
)

// optionFlags collects repeated -o key=value flags.
type optionFlags map[string]string

func (o optionFlags) String() string { return "" }
func (o optionFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want key=value, got " + strconv.Quote(s))
	}
	o[k] = v
	return nil
}

// portProtocols guesses the protocol from a well-known default port.
func guessProtocol(target string) string {
	_, port, err := net.SplitHostPort(target)
	if err != nil {
		return ""
	}
	for _, c := range codecs.Protocols() {
		if p := c.DefaultPort(); p != 0 && strconv.Itoa(p) == port {
			return c.Name()
		}
	}
	if port == "15300" {
		return "zandronum" // the Zandronum master's port
	}
	return ""
}

func (e *env) query(args []string, master bool) int {
	name := "query"
	if master {
		name = "master"
	}
	fs := newFlagSet(e, name, "[-p PROTOCOL] [-o KEY=VALUE]... [--timeout D] [--retries N] [--relay URL] HOST:PORT")
	proto := fs.String("p", "", "protocol (`name`); guessed from a well-known port when empty")
	fs.StringVar(proto, "protocol", "", "same as -p")
	opts := optionFlags{}
	fs.Var(opts, "o", "a query option `key=value` (see querylens protocols); repeatable")
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the reply to complete")
	retries := fs.Int("retries", 1, "resend this many times when nothing at all came back")
	relayURL := fs.String("relay", "", "send through a querylens relay (`ws://host:port/relay`) instead of direct UDP")
	pretty := fs.Bool("pretty", false, "indent the JSON")
	spans := fs.Bool("spans", false, "include layers and field spans in the JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		return e.usageErr(fs, "want exactly one HOST:PORT")
	}
	target := pos[0]
	if _, _, err := net.SplitHostPort(target); err != nil {
		return e.usageErr(fs, "bad address "+strconv.Quote(target)+": want HOST:PORT")
	}
	if *proto == "" {
		if master {
			*proto = "zandronum"
		} else if *proto = guessProtocol(target); *proto == "" {
			return e.usageErr(fs, "no protocol: give -p ("+protocolNames()+")")
		}
	}
	c, err := codecs.Lookup(*proto)
	if err != nil {
		return e.usageErr(fs, "unknown protocol "+strconv.Quote(*proto)+" (known: "+protocolNames()+")")
	}
	if master {
		if !hasOption(c, "master") {
			return e.usageErr(fs, c.Title()+" has no master server protocol")
		}
		opts["master"] = "true"
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		return e.usageErr(fs, err.Error())
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout*time.Duration(*retries+2)+5*time.Second)
	defer cancel()
	var ex netquery.Exchanger = &netquery.UDP{Timeout: *timeout, Retries: *retries}
	if *relayURL != "" {
		rc, err := dialRelay(ctx, *relayURL)
		if err != nil {
			return e.fail(&codecs.Error{Protocol: c.Name(), Field: "relay", Err: err}, nil, *pretty)
		}
		defer rc.Close()
		ex = rc
	}
	res, err := ex.Exchange(ctx, c.Name(), target, q)
	if err != nil {
		return e.fail(relayError(c.Name(), err), nil, *pretty)
	}
	if res.Received == 0 {
		return e.fail(&codecs.Error{Protocol: c.Name(), Field: "reply", Err: errors.New("no reply from " + target +
			" within " + timeout.String() + " (" + strconv.Itoa(res.Sent) + " datagrams sent)")}, nil, *pretty)
	}
	msg, err := q.Result(codecs.DecodeOptions{Spans: *spans})
	if err != nil {
		return e.fail(err, msg, *pretty)
	}
	o := msg.Object().Add("target", target).Add("ping_ms", float64(res.RTT.Microseconds())/1000)
	if res.FromCache {
		o = o.Add("cached", true)
	}
	e.writeJSON(o, *pretty)
	return exitOK
}

func hasOption(c codecs.Codec, name string) bool {
	for _, o := range c.Options() {
		if o.Name == name {
			return true
		}
	}
	return false
}

// closer is what a relay client adds to an Exchanger.
type closer interface {
	netquery.Exchanger
	io.Closer
}
