package main

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/masters"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/server/games"
)

// optionFlags collects repeated -o key=value flags, read by
// server.ParseOptionArgs (the one option parser: a key given twice is an
// error).
type optionFlags []string

func (o *optionFlags) String() string { return "" }
func (o *optionFlags) Set(s string) error {
	if _, err := server.ParseOptionArgs([]string{s}); err != nil {
		return err
	}
	*o = append(*o, s)
	return nil
}

// guessProtocol guesses the protocol from a well-known port of the
// protocol table (server.GuessProtocol).
func guessProtocol(target string) string {
	_, port, err := net.SplitHostPort(target)
	if err != nil {
		return ""
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return ""
	}
	return server.GuessProtocol(n)
}

func (e *env) query(args []string, master bool) int {
	name := "query"
	synopsis := "[-p PROTOCOL | -g GAME] [-o KEY=VALUE]... [--timeout D] [--retries N] [--relay URL] HOST:PORT (-g: HOST[:PORT])"
	protoHelp := "protocol (`name`); guessed from a well-known port when empty, else every protocol is tried at once"
	if master {
		name = "master"
		synopsis = "[-p PROTOCOL | -g GAME] [--filter F] [--page-interval D] [-o KEY=VALUE]... [--timeout D] [--retries N] [--relay URL] [HOST:PORT]"
		protoHelp = "protocol (`name`) of the master; zandronum when empty"
	}
	fs := newFlagSet(e, name, synopsis)
	proto := fs.String("p", "", protoHelp)
	fs.StringVar(proto, "protocol", "", "same as -p")
	gameHelp := "the game (GameDig's `id`: querylens games lists them): its protocol, options and query port; a port given is the game port"
	if master {
		gameHelp = "the game (GameDig's `id`) whose servers to list: its master's protocol, address and filter"
	}
	gameID := fs.String("g", "", gameHelp)
	fs.StringVar(gameID, "game", "", "same as -g")
	var rawOpts optionFlags
	fs.Var(&rawOpts, "o", "a query option `key=value` (see querylens protocols); repeatable")
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the reply to complete")
	retries := fs.Int("retries", 1, "resend this many times when nothing at all came back")
	relayURL := fs.String("relay", "", "send through a querylens relay (`ws://host:port/relay`) instead of direct UDP")
	pretty := fs.Bool("pretty", false, "indent the JSON")
	spans := fs.Bool("spans", false, "include layers and field spans in the JSON")
	var filter *string
	var pageEvery *time.Duration
	if master {
		filter = fs.String("filter", "", "the master's filter: Steam's (a2s) `\\appid\\440\\dedicated\\1…`, or Quake III's getservers\n"+
			"arguments \"[GAME] PROTOCOL [FILTER…]\" (\"Xonotic 3 empty full\"; the word ext asks getserversExt)")
		pageEvery = fs.Duration("page-interval", masters.DefaultInterval, "the least time between two pages of a paged list (Steam's master\n"+
			"ignores an address that asks faster); 0 asks each page as soon as the one before came")
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	opts, err := server.ParseOptionArgs(rawOpts)
	if err != nil {
		return e.usageErr(fs, err.Error())
	}
	if opts == nil {
		opts = map[string]string{}
	}
	if *timeout <= 0 {
		return e.usageErr(fs, "--timeout must be positive, got "+timeout.String())
	}
	if *retries < 0 || *retries > 10 {
		return e.usageErr(fs, "--retries must be between 0 and 10, got "+strconv.Itoa(*retries))
	}
	var game games.Game
	if *gameID != "" {
		var ok bool
		if game, ok = games.Lookup(*gameID); !ok {
			return e.usageErr(fs, "unknown game "+strconv.Quote(*gameID)+" (querylens games lists GameDig's ids)")
		}
		if *proto != "" && !(master && *proto == game.Master) {
			return e.usageErr(fs, "-g names the protocol: give -p or -g, not both")
		}
		*proto = ""
		switch {
		case master && game.Master == "":
			return e.usageErr(fs, game.Name+" ("+game.ID+"): no master querylens knows lists its servers")
		case master:
			*proto = game.Master
			if *filter == "" {
				*filter = game.Filter
			}
			if len(pos) == 0 && game.MasterAddr != "" {
				pos = []string{game.MasterAddr}
			}
		case !game.Served():
			return e.usageErr(fs, game.Name+" ("+game.ID+") is not served: "+game.WhyNot())
		default:
			*proto = game.Protocol
			for k, v := range game.Options {
				if _, set := opts[k]; !set {
					opts[k] = v
				}
			}
			d, _ := codecs.LookupDescription(game.Protocol)
			if len(pos) == 1 && !bareSRV(d, pos[0]) {
				// HOST, or HOST:PORT with the game port: the query port.
				addr, moved, err := gameTarget(game, pos[0])
				if err != nil {
					return e.usageErr(fs, "bad address "+strconv.Quote(pos[0])+" for "+game.Name+": "+err.Error())
				}
				if moved {
					io.WriteString(e.stderr, "querylens query: "+game.Name+" ("+game.ID+") answers queries on "+addr+"\n")
				}
				pos[0] = addr
			}
		}
	}
	if master && *proto == "" {
		*proto = server.DefaultProtocol
	}
	switch {
	case len(pos) == 0 && master:
		// The address is filled in below, once the protocol is known.
	case len(pos) != 1:
		return e.usageErr(fs, "want exactly one HOST:PORT")
	}
	target := ""
	if len(pos) == 1 {
		target = pos[0]
	}
	if *proto == "" {
		*proto = guessProtocol(target)
	}
	if target != "" {
		// A stream protocol with an SRV record takes a bare name too.
		d, _ := codecs.LookupDescription(*proto)
		if _, _, err := netquery.SplitTarget(d, target); err != nil {
			return e.usageErr(fs, "bad address "+strconv.Quote(target)+": want HOST:PORT")
		}
	}
	var c codecs.Codec
	var q codecs.Query
	if *proto != "" {
		if c, err = codecs.Lookup(*proto); err != nil {
			return e.usageErr(fs, "unknown protocol "+strconv.Quote(*proto)+" (known: "+protocolNames()+")")
		}
		if master {
			p, _ := server.LookupProtocol(c.Name())
			if p.Master == nil {
				return e.usageErr(fs, c.Title()+" has no master server protocol")
			}
			for k, v := range p.Master.Options {
				opts[k] = v
			}
			if *filter != "" {
				d := p.Description().Master
				if d.Filter == nil {
					return e.usageErr(fs, c.Title()+"'s master takes no filter")
				}
				fo, err := d.Filter(*filter)
				if err != nil {
					return e.usageErr(fs, err.Error())
				}
				for k, v := range fo {
					opts[k] = v
				}
			}
			if *pageEvery < 0 {
				return e.usageErr(fs, "--page-interval must not be negative, got "+pageEvery.String())
			}
			if target == "" {
				if target = p.Master.Default; target == "" {
					return e.usageErr(fs, c.Title()+" has no default master: give HOST:PORT")
				}
			}
		}
		// A protocol whose query names its server (TargetInQuery) is
		// given the target as the user wrote it.
		d := codecs.DescriptionOf(c)
		host, port, _ := netquery.SplitTarget(d, target)
		if opts, err = d.TargetOptions(host, port, opts); err != nil {
			return e.usageErr(fs, err.Error())
		}
		if q, err = c.NewQuery(opts); err != nil {
			return e.usageErr(fs, err.Error())
		}
	}
	budget := *timeout*time.Duration(*retries+2) + 5*time.Second
	if p, _ := server.LookupProtocol(*proto); master && c != nil && p.Description().Master.Pages > 0 {
		// Every page is a request of its own, paced.
		budget += (*timeout + *pageEvery) * time.Duration(p.Description().Master.Pages)
		q = &pacedQuery{Query: q, every: *pageEvery}
	}

	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	ex := e.exchanger
	if ex == nil {
		// Each protocol over its own transport: a TCP exchange's timeout
		// bounds the whole conversation, as the relay's deadline does.
		ex = &netquery.Direct{UDP: netquery.UDP{Timeout: *timeout, Retries: *retries}, TCP: netquery.TCP{Timeout: *timeout}}
	}
	var tcpMaster *codecs.MasterDescription
	if master && c != nil {
		tcpMaster = codecs.DescriptionOf(c).Master
	}
	if tcpMaster != nil && tcpMaster.Transport != codecs.TCP {
		tcpMaster = nil
	}
	if tcpMaster != nil {
		// A master spoken to over TCP (GameSpy v1's) is asked directly:
		// no relay holds such a conversation.
		if *relayURL != "" {
			return e.usageErr(fs, c.Title()+"'s master speaks TCP, which a relay does not carry: ask it without --relay")
		}
	}
	if *relayURL != "" {
		rc, err := dialRelay(ctx, *relayURL)
		if err != nil {
			return e.fail(&codecs.Error{Protocol: *proto, Field: "relay", Err: err}, nil, *pretty)
		}
		defer rc.Close()
		ex = rc
	}
	var res netquery.Result
	detected := false
	if c == nil {
		p, err := server.Detect(ctx, ex, target, opts)
		if err != nil {
			return e.fail(err, nil, *pretty)
		}
		c, q, res, detected = p.Codec, p.Query, p.Result, true
		io.WriteString(e.stderr, "querylens query: "+target+" answered in "+c.Title()+" (-p "+c.Name()+")\n")
	} else if tcpMaster != nil {
		if res, err = masters.ExchangeStream(ctx, tcpMaster, target, q, masters.StreamConfig{Timeout: *timeout}); err != nil {
			return e.fail(server.ExchangeError(c.Name(), err), nil, *pretty)
		}
		if res.Received == 0 {
			return e.fail(&codecs.Error{Protocol: c.Name(), Field: "reply", Err: errors.New("no greeting from the master " + target +
				" within " + timeout.String())}, nil, *pretty)
		}
	} else {
		// A relay holds a TCP conversation itself, from the options.
		if res, err = netquery.ExchangeFor(ctx, ex, c.Name(), target, opts, q); err != nil {
			return e.fail(server.ExchangeError(c.Name(), err), nil, *pretty)
		}
		if res.Received == 0 {
			return e.fail(&codecs.Error{Protocol: c.Name(), Field: "reply", Err: errors.New("no reply from " + target +
				" within " + timeout.String() + " (" + strconv.Itoa(res.Sent) + " datagrams sent)")}, nil, *pretty)
		}
	}
	msg, err := q.Result(codecs.DecodeOptions{Spans: *spans})
	if res.Capped && msg != nil {
		msg.Warn(codecs.WarnTruncated) // the relay dropped the rest of the reply
	}
	if err != nil {
		return e.fail(err, msg, *pretty)
	}
	o := msg.Object().Add("target", target).Add("ping_ms", float64(res.RTT.Microseconds())/1000)
	if detected {
		o = o.Add("detected", true)
	}
	if res.FromCache {
		o = o.Add("cached", true)
	}
	e.writeJSON(o, *pretty)
	return exitOK
}

// pacedQuery spaces the requests a paged master conversation sends (each
// page asked with the last address of the one before) at least every
// apart, so that the master does not ignore the asker.
type pacedQuery struct {
	codecs.Query
	every time.Duration
	last  time.Time
}

func (p *pacedQuery) Start() [][]byte {
	p.last = time.Now()
	return p.Query.Start()
}

func (p *pacedQuery) Feed(b []byte) ([][]byte, bool, error) {
	send, done, err := p.Query.Feed(b)
	if len(send) > 0 && p.every > 0 {
		if wait := time.Until(p.last.Add(p.every)); wait > 0 {
			time.Sleep(wait)
		}
		p.last = time.Now()
	}
	return send, done, err
}

// closer is what a relay client adds to an Exchanger.
type closer interface {
	netquery.Exchanger
	io.Closer
}
