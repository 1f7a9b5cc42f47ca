package main

import (
	"errors"
	"flag"
	"strconv"
	"time"

	"github.com/querylens/querylens/relay"
)

// tcpOptions are serve's flags for the relay's stream (TCP) exchanges:
// the conversations of TCP protocols the relay holds for pages.
type tcpOptions struct {
	perClient, perTarget, max int
	deadline                  time.Duration
}

func (t *tcpOptions) flags(fs *flag.FlagSet) {
	fs.IntVar(&t.perClient, "tcp-per-client", relay.DefaultMaxStreamsPerClient, "TCP exchanges one client address may have in progress through the relay")
	fs.IntVar(&t.perTarget, "tcp-per-target", relay.DefaultMaxStreamsPerHost, "TCP exchanges in progress to one server address (any port; not the demo's own servers)")
	fs.IntVar(&t.max, "tcp-max", relay.DefaultMaxStreams, "TCP exchanges in progress in the whole relay")
	fs.DurationVar(&t.deadline, "tcp-deadline", relay.DefaultStreamDeadline, "how long one TCP exchange may take, connection included (a slow or silent server holds one socket\n"+
		"for at most this long)")
}

func (t *tcpOptions) check() error {
	for _, n := range []struct {
		name string
		v    int
	}{{"--tcp-per-client", t.perClient}, {"--tcp-per-target", t.perTarget}, {"--tcp-max", t.max}} {
		if n.v < 1 {
			return errors.New(n.name + " must be at least 1, got " + strconv.Itoa(n.v))
		}
	}
	if t.deadline < 100*time.Millisecond || t.deadline > time.Minute {
		return errors.New("--tcp-deadline must be between 100ms and 1m, got " + t.deadline.String())
	}
	return nil
}

func (t *tcpOptions) apply(c *relay.Config) {
	c.MaxStreamsPerClient, c.MaxStreamsPerHost, c.MaxStreams = t.perClient, t.perTarget, t.max
	c.StreamDeadline = t.deadline
}
