package server

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server/ident"
)

// Detected is the conversation that won Detect.
type Detected struct {
	Codec  codecs.Codec
	Query  codecs.Query // complete: its Result decodes, or (no protocol's did) says what does not
	Result netquery.Result
}

// Detect asks target in every registered protocol at once, each with its own
// server query (ident.DetectOrder: opts narrow the candidates to the
// protocols that accept them), and keeps the first conversation that completes with a reply that
// decodes without error, or that took a whole reply as its own but could
// not decode it (the server speaks that protocol, badly: the caller
// reports what does not decode); the others are cancelled. Each candidate sends what
// its Query sends, resent as ex's retries allow, so a probe sends at most
// (protocols × attempts) datagrams plus challenge answers, and ends when ctx
// does. With no winner, the error says what each protocol got. On a port
// that is some protocol's default (ident.DetectOrderAt), that protocol's
// answer is waited for before another's is taken: a Minecraft server on
// 25565 may answer its List Ping and GameSpy v4's Query both, and the List
// Ping is the one to keep.
func Detect(ctx context.Context, ex netquery.Exchanger, target string, opts map[string]string) (Detected, error) {
	type outcome struct {
		p        Detected
		err      error // nil: a well-formed reply
		exchange bool  // err came from the exchange itself (relay, resolver, socket)
	}
	port := 0
	if i := strings.LastIndexByte(target, ':'); i >= 0 {
		port, _ = strconv.Atoi(target[i+1:])
	}
	order, err := ident.DetectOrderAt(port, opts)
	if err != nil {
		return Detected{}, err
	}
	cands := make([]Detected, 0, len(order))
	candOpts := make([]map[string]string, 0, len(order))
	for _, c := range order {
		// A protocol whose query names its server (Minecraft's handshake)
		// is asked with the target as given; one that cannot name it (an
		// address its syntax refuses) is left out.
		o, q := opts, c.Query
		if d := codecs.DescriptionOf(c.Codec); d.TargetInQuery {
			host, port, err := netquery.SplitTarget(d, target)
			if err == nil {
				o, err = d.TargetOptions(host, port, opts)
			}
			if err == nil {
				q, err = c.Codec.NewQuery(o)
			}
			if err != nil {
				continue
			}
		}
		cands = append(cands, Detected{Codec: c.Codec, Query: q})
		candOpts = append(candOpts, o)
	}
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan outcome, len(cands))
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }() // the losers stop as soon as ctx is cancelled
	for i, p := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			p.Result, err = netquery.ExchangeFor(ctx, ex, p.Codec.Name(), target, candOpts[i], p.Query)
			exchangeErr := err != nil
			switch {
			case err != nil:
			case p.Result.Received == 0:
				err = errors.New("no reply")
			case !p.Result.Done:
				err = errors.New("reply incomplete after " + strconv.Itoa(p.Result.Received) + " datagrams")
			default:
				_, err = p.Query.Result(codecs.DecodeOptions{})
			}
			out <- outcome{p, err, exchangeErr}
		}()
	}
	var why []string
	var same error // set while every conversation failed in Exchange with the same error
	preferred := 0 // preferred candidates still running
	for _, c := range cands {
		if ident.Preferred(c.Codec, port) {
			preferred++
		}
	}
	var held *Detected // a winner waiting for the preferred candidates
	for i := range cands {
		o := <-out
		isPreferred := ident.Preferred(o.p.Codec, port)
		if isPreferred {
			preferred--
		}
		won := o.err == nil
		if !won && !o.exchange && o.p.Result.Done {
			// A server speaks one protocol on a port: the others
			// would only time out.
			_, won = errors.AsType[*codecs.Error](o.err)
		}
		if won {
			if isPreferred || preferred == 0 {
				return o.p, nil
			}
			if held == nil {
				held = &o.p
			}
			continue
		}
		if held != nil && preferred == 0 {
			return *held, nil
		}
		switch {
		case !o.exchange || i > 0 && (same == nil || o.err.Error() != same.Error()):
			same = nil
		case i == 0:
			same = o.err
		}
		why = append(why, o.p.Codec.Name()+": "+o.err.Error())
	}
	if held != nil {
		return *held, nil
	}
	if same != nil {
		// A relay's refusal or a name that does not resolve is the same for
		// every protocol: say it once.
		return Detected{}, ExchangeError("", same)
	}
	slices.Sort(why)
	return Detected{}, &codecs.Error{Field: "probe", Err: errors.New("no protocol answered " + target + ": " + strings.Join(why, "; "))}
}

// ExchangeError is an exchange's failure as a *codecs.Error: a relay's
// refusal names its code in Field ("relay.denied"), anything else is the
// target's.
func ExchangeError(protocol string, err error) error {
	var re *wire.RefusedError
	if errors.As(err, &re) {
		return &codecs.Error{Protocol: protocol, Field: "relay." + re.Code.String(),
			Err: errors.New("refused by the relay (" + re.Code.String() + "): " + re.Message)}
	}
	return &codecs.Error{Protocol: protocol, Field: "target", Err: err}
}
