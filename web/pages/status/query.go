package status

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay"
)

// State is what a status query found. The names match the browser page's
// row states (classify in static/relay.js), so both pages describe a server alike.
type State string

const (
	Online      State = "online"       // answered with data
	Offline     State = "offline"      // no answer in time
	RateLimited State = "rate-limited" // the server, or the relay for it, refused for now
	Banned      State = "banned"       // the server refuses this asker
	Refused     State = "refused"      // the relay's policy does not allow this target
	Malformed   State = "malformed"    // an answer came that does not decode
	Unreachable State = "unreachable"  // the name does not resolve, or the query could not be sent
)

// Report is the outcome of one status query.
type Report struct {
	Protocol codecs.Codec
	Target   string            // "host:port", canonical
	Options  map[string]string // the query options, from the URL
	State    State
	Detail   string          // one sentence for the user when not Online
	Msg      *codecs.Message // the decoded reply, or what decoded before an error
	Err      *codecs.Error   // the decoding error, for Malformed
	RTT      time.Duration
	Cached   bool
	At       time.Time
	Sent     [][]byte // the query datagrams, for the inspector link
	Received [][]byte // the reply datagrams, in arrival order
}

// recorder keeps every datagram of a conversation, so that the status page
// can hand the exact packets to the inspector.
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

// query asks target once through ex, bounded by timeout.
func query(ctx context.Context, ex netquery.Exchanger, c codecs.Codec, target string, opts map[string]string, timeout time.Duration) Report {
	rep := Report{Protocol: c, Target: target, Options: opts, At: time.Now()}
	q, err := c.NewQuery(opts)
	if err != nil {
		rep.State, rep.Detail = Unreachable, "querylens could not build a query: "+err.Error()
		return rep
	}
	rec := &recorder{Query: q}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, xerr := ex.Exchange(ctx, c.Name(), target, rec)
	rep.RTT, rep.Cached = res.RTT, res.FromCache
	rep.Sent, rep.Received = rec.sent, rec.received
	if len(rec.received) == 0 {
		rep.State, rep.Detail = classify(xerr, timeout)
		return rep
	}
	msg, derr := q.Result(codecs.DecodeOptions{})
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
	}
	return rep
}

// classify turns an exchange that brought no datagram into a state.
func classify(err error, timeout time.Duration) (State, string) {
	wait := "within " + timeout.String()
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return Offline, "No answer " + wait + ": the server is down, firewalled, or not a server of this protocol."
	}
	var ref *relay.RefusedError
	if errors.As(err, &ref) {
		switch ref.Code {
		case relay.CodeRateLimited:
			return RateLimited, "The relay is limiting queries to this server right now (" + ref.Message + "); try again in a few seconds."
		case relay.CodeDenied:
			return Refused, "This relay does not query that address (" + ref.Message + ")."
		case relay.CodeResolve:
			return Unreachable, "The host name does not resolve to an address this relay may query (" + ref.Message + ")."
		case relay.CodeTimeout:
			return Offline, "No answer " + wait + "."
		case relay.CodeBusy:
			return Unreachable, "The relay is busy; try again shortly (" + ref.Message + ")."
		}
		return Unreachable, "The relay could not send the query: " + ref.Error() + "."
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return Unreachable, "The host name does not resolve."
	}
	return Unreachable, "The query could not be sent: " + err.Error() + "."
}

// Path is the status page's path for a server: /s/{protocol}/{target},
// with the query options, if any, as the query string (sorted, so one
// server has one URL).
func Path(protocol, target string, opts map[string]string) string {
	return "/s/" + protocol + "/" + target + queryString(opts)
}

// queryString is "?k=v&…" for opts (sorted by key), or "".
func queryString(opts map[string]string) string {
	if len(opts) == 0 {
		return ""
	}
	q := url.Values{}
	for k, v := range opts {
		q.Set(k, v)
	}
	return "?" + q.Encode()
}

// ParseTarget checks a "host:port" from a URL and returns it in canonical
// form. The syntax is the relay's (relay.ParseTarget), so that this page
// refuses what the relay refuses: an IPv4-mapped IPv6 address stays IPv6
// and the relay's policy judges it as written. Port 0 is not a server.
func ParseTarget(s string) (string, bool) {
	t, err := relay.ParseTarget(s)
	if err != nil || t.Port == 0 {
		return "", false
	}
	return t.String(), true
}
