// Package netquery drives a codecs.Query conversation over a transport:
// direct UDP (the CLI, the demo's tests, the native benchmark client), a
// relay's WebSocket (package relay/client) or a relay in the same process
// (relay.Server, used by the status page so that shared links go through
// the relay's cache and policy).
package netquery

import (
	"context"
	"time"

	"github.com/querylens/querylens/codecs"
)

// Exchanger runs one conversation with the server at target ("host:port")
// in the given protocol: it sends q.Start(), feeds every reply datagram to
// q.Feed (sending what Feed returns) until q says it is done or ctx ends.
// The caller then reads q.Result. A nil error with Result.Done false means
// the server did not finish answering in time (what came is in q).
type Exchanger interface {
	Exchange(ctx context.Context, protocol, target string, q codecs.Query) (Result, error)
}

// OptionsExchanger is an Exchanger that holds a stream protocol's
// conversation at the other end (a relay, which never lets a client's
// bytes through to a TCP server): it is asked with the query's options,
// builds the query itself, and streams the reply back, which feeds q. The
// command line asks a relay so for the protocols whose Transport is TCP.
type OptionsExchanger interface {
	ExchangeOptions(ctx context.Context, protocol, target string, opts map[string]string, q codecs.Query) (Result, error)
}

// ExchangeFor asks ex the way protocol needs: a stream protocol's
// conversation with its options where ex holds such conversations itself
// (OptionsExchanger: a relay), any other with Exchange. opts are the
// options q was built with.
func ExchangeFor(ctx context.Context, ex Exchanger, protocol, target string, opts map[string]string, q codecs.Query) (Result, error) {
	if ox, ok := ex.(OptionsExchanger); ok {
		if d, err := codecs.LookupDescription(protocol); err == nil && d.Transport == codecs.TCP {
			return ox.ExchangeOptions(ctx, protocol, target, opts, q)
		}
	}
	return ex.Exchange(ctx, protocol, target, q)
}

// Result describes how a conversation went.
type Result struct {
	// RTT is the time from sending the first datagram to the first reply,
	// measured where the UDP socket is (the relay measures it for pages).
	RTT       time.Duration
	Sent      int  // datagrams sent
	Received  int  // datagrams received and fed
	Done      bool // the Query reported a complete message
	FromCache bool // the replies came from a relay's cache
	// Capped says a relay cut the reply at its per-query cap for the
	// protocol (relay END reason byte-cap): datagrams past it were
	// dropped, so the message is truncated.
	Capped bool
}
