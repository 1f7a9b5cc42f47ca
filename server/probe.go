package server

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
)

// DefaultTimeout bounds one probe: long enough for a slow server on
// another continent, short enough for an unfurler's patience.
const DefaultTimeout = 2 * time.Second

// Report is the outcome of one probe.
type Report struct {
	Ref      Ref
	Codec    codecs.Codec // nil when the protocol is not registered
	State    State
	Detail   string          // one sentence for people when not Online
	Msg      *codecs.Message // the decoded reply, or what decoded before an error
	Err      *codecs.Error   // the decoding error, for Malformed
	RTT      time.Duration
	Cached   bool
	At       time.Time
	Sent     [][]byte // the query datagrams, for the inspector
	Received [][]byte // the reply datagrams, in arrival order
}

// recorder keeps every datagram of a conversation, so that a page can hand
// the exact packets to the inspector.
type recorder struct {
	codecs.Query
	sent, received [][]byte
}

func (r *recorder) Start() [][]byte {
	s := r.Query.Start()
	r.sent = append(r.sent, s...)
	return s
}

func (r *recorder) Feed(b []byte) ([][]byte, bool, error) {
	r.received = append(r.received, append([]byte(nil), b...))
	send, done, err := r.Query.Feed(b)
	r.sent = append(r.sent, send...)
	return send, done, err
}

// Probe asks the server of ref once through ex (for the pages and the
// sampler, the relay's Exchange, so that its policy, cache and limits
// apply), bounded by timeout (DefaultTimeout when 0), and says what it
// found. It never fails: what went wrong is the Report's State and Detail.
func Probe(ctx context.Context, ex netquery.Exchanger, ref Ref, timeout time.Duration) Report {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rep := Report{Ref: ref, At: time.Now()}
	c, err := codecs.Lookup(ref.Protocol)
	if err != nil {
		rep.State, rep.Detail = Unreachable, "querylens does not speak "+strconv.Quote(ref.Protocol)+"."
		return rep
	}
	rep.Codec = c
	// A protocol whose query names its server gets the address in its
	// options (Description.TargetOptions).
	d := codecs.DescriptionOf(c)
	opts := ref.Options
	if d.TargetInQuery {
		var host string
		var port int
		if host, port, err = netquery.SplitTarget(d, ref.Addr); err == nil {
			opts, err = d.TargetOptions(host, port, opts)
		}
	}
	var q codecs.Query
	if err == nil {
		q, err = c.NewQuery(opts)
	}
	if err != nil {
		rep.State, rep.Detail = Unreachable, "querylens could not build a query: "+err.Error()
		return rep
	}
	rec := &recorder{Query: q}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, xerr := netquery.ExchangeFor(ctx, ex, c.Name(), ref.Addr, opts, rec)
	rep.RTT, rep.Cached = res.RTT, res.FromCache
	rep.Sent, rep.Received = rec.sent, rec.received
	if len(rec.received) == 0 {
		rep.State, rep.Detail = Classify(xerr, timeout)
		return rep
	}
	msg, derr := q.Result(codecs.DecodeOptions{})
	if res.Capped && msg != nil {
		msg.Warn(codecs.WarnTruncated) // the relay dropped the rest of the reply
	}
	rep.Msg = msg
	if derr != nil {
		var ce *codecs.Error
		if !errors.As(derr, &ce) {
			ce = &codecs.Error{Protocol: c.Name(), Field: "message", Err: derr}
		}
		rep.Err = ce
		rep.State = Malformed
		rep.Detail = "The server answered, but its reply does not decode: " + ce.Field + " at offset " +
			strconv.Itoa(ce.Offset) + ": " + ce.Message() + "."
		if !res.Done {
			rep.Detail = "The server's reply was incomplete when the wait ended: " + ce.Message() + "."
		}
		if res.Capped {
			rep.Detail = "The server's reply was larger than the relay lets one query bring back, and was cut: " +
				ce.Field + " at offset " + strconv.Itoa(ce.Offset) + ": " + ce.Message() + "."
		}
		return rep
	}
	switch msg.Kind {
	case codecs.KindDenied, codecs.KindMasterDenied:
		switch msg.Denied {
		case codecs.DeniedBanned:
			rep.State, rep.Detail = Banned, "The server refuses queries from this relay (banned)."
		case codecs.DeniedWrongVersion:
			rep.State, rep.Detail = Malformed, "The server does not speak this version of the protocol."
		default:
			rep.State, rep.Detail = RateLimited, "The server was asked too recently and refused; it answers again in a few seconds."
		}
	default:
		rep.State = Online
		if len(msg.Warnings) > 0 {
			rep.Detail = "The server answered, with warnings: " + strings.Join(msg.Warnings, "; ") + "."
		}
	}
	return rep
}

// Classify turns an exchange that brought no datagram into a state: what
// the relay refused or limited is the relay's doing, not the server's.
func Classify(err error, timeout time.Duration) (State, string) {
	wait := "within " + timeout.String()
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return Offline, "No answer " + wait + ": the server is down, firewalled, or not a server of this protocol."
	}
	var ref *wire.RefusedError
	if errors.As(err, &ref) {
		switch ref.Code {
		case wire.CodeRateLimited:
			return Limited, "The relay is limiting queries to this server right now (" + ref.Message + "); try again in a few seconds."
		case wire.CodeBusy:
			return Limited, "The relay is busy; try again shortly (" + ref.Message + ")."
		case wire.CodeDenied:
			return Refused, "This relay does not query that address (" + ref.Message + ")."
		case wire.CodeResolve:
			if ref.Rule() != wire.RuleResolve {
				return Refused, "The host name resolves to an address this relay does not query (" + ref.Message + ")."
			}
			return Unreachable, "The host name does not resolve (" + ref.Message + ")."
		case wire.CodeTimeout:
			return Offline, "No answer " + wait + "."
		}
		return Unreachable, "The relay could not send the query: " + ref.Error() + "."
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return Unreachable, "The host name does not resolve."
	}
	return Unreachable, "The query could not be sent: " + err.Error() + "."
}

// Sample turns a report into a history sample, and false when the report
// is the relay's or the network's doing (State.Recorded), which is never
// recorded.
func Sample(rep Report) (history.Sample, bool) {
	hs, ok := rep.State.History()
	if !ok {
		return history.Sample{}, false
	}
	s := history.Sample{Key: rep.Ref.Key(), At: rep.At, RTT: rep.RTT, State: hs}
	if rep.State == Online && rep.Msg != nil && rep.Msg.Info != nil {
		c := CountsOf(rep.Msg.Info)
		s.Name = c.Name
		s.Map = codecs.StripColors(rep.Msg.Info.Map)
		s.Players = min(max(c.Players, 0), history.MaxPlayers)
		s.Bots = min(c.Bots, s.Players)
		s.MaxPlayers = min(max(c.Max, 0), history.MaxPlayers)
	}
	return s, true
}

// Counts is what a row, a card and a sample show of an answer's numbers.
type Counts struct {
	Name    string // colour codes stripped; "" when the server gave none
	Players int    // as the server counts them, else the player list's length
	Bots    int    // as the server counts them, else the players flagged Bot
	Max     int    // max players, else max clients, else 0
}

// CountsOf reads in's counts.
func CountsOf(in *codecs.Info) Counts {
	var c Counts
	if in.Has&codecs.HasName != 0 {
		c.Name = codecs.StripColors(in.Name)
	}
	c.Players = in.NumPlayers
	if in.Has&codecs.HasNumPlayers == 0 {
		c.Players = len(in.Players)
	}
	if in.Has&codecs.HasNumBots != 0 {
		// The server's own count (A2S), bounded by everyone it counts.
		c.Bots = min(max(in.NumBots, 0), max(c.Players, 0))
	} else {
		for _, p := range in.Players {
			if p.Bot {
				c.Bots++
			}
		}
	}
	c.Max = MaxPlayers(in)
	return c
}

// MaxPlayers is in's capacity: max players, else max clients, else 0.
func MaxPlayers(in *codecs.Info) int {
	if in.Has&codecs.HasMaxPlayers != 0 {
		return in.MaxPlayers
	}
	if in.Has&codecs.HasMaxClients != 0 {
		return in.MaxClients
	}
	return 0
}
