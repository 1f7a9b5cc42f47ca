package masters

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/server"
)

// entry is one address a master listed.
type entry struct {
	addr    string // canonical host:port
	refused bool   // the relay's policy does not let it be queried
}

// fetch is one run over a master's list: what came so far.
type fetch struct {
	entries  []entry
	seen     map[string]bool
	complete bool
	pages    int
	err      string
	hostile  int // entries dropped: 0.0.0.0, port 0, multicast, broadcast, duplicates
	sent     [][]byte
	received [][]byte
	rawBytes int
	capped   bool
}

// keepRaw records a datagram for the inspector, within MaxRawBytes.
func (f *fetch) keepRaw(dst *[][]byte, b []byte, max int) {
	if f.rawBytes+len(b) > max {
		return
	}
	f.rawBytes += len(b)
	*dst = append(*dst, append([]byte(nil), b...))
}

// add files one listed address; it reports false once the list is full.
func (f *fetch) add(k *Keeper, ap netip.AddrPort) bool {
	if len(f.entries) >= k.cfg.MaxEntries {
		f.capped = true
		return false
	}
	a := ap.Addr().Unmap()
	if !ap.IsValid() || ap.Port() == 0 || a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		f.hostile++
		return true
	}
	ap = netip.AddrPortFrom(a, ap.Port())
	s := ap.String()
	if f.seen[s] {
		f.hostile++
		return true
	}
	f.seen[s] = true
	e := entry{addr: s}
	if k.cfg.Allow != nil && k.cfg.Allow(ap) != nil {
		e.refused = true
	}
	f.entries = append(f.entries, e)
	return true
}

// maxMisses is how many times one page is asked again when no reply came
// before the list is reported as stopped.
const maxMisses = 2

// fetchList runs the master conversation of l's protocol
// (codecs.MasterDescription.NewList): each page asked on its own, paced,
// until the list ends, the master stops answering, or the protocol says
// why the list stops short.
func (k *Keeper) fetchList(ctx context.Context, l *list, f *fetch, progress func()) {
	d, err := codecs.LookupDescription(l.spec.Protocol)
	if err != nil || d.Master == nil || d.Master.NewList == nil {
		f.err = "querylens does not keep " + l.spec.Protocol + " masters' lists"
		return
	}
	ml, err := d.Master.NewList(l.spec.Filter)
	if err != nil {
		f.err = err.Error()
		return
	}
	misses := 0
	for q := ml.Next(); q != nil; q = ml.Next() {
		if err := wait(ctx, k.cfg.Pacer, l.spec.Addr, k.cfg.Sleep); err != nil {
			f.err = "stopped: " + err.Error()
			return
		}
		rec := &recorder{Query: q, f: f, max: k.cfg.MaxRawBytes}
		res, xerr := k.exchangePage(ctx, d.Master, l.spec, rec)
		addrs, end, perr := ml.Page(res.Done)
		if !res.Done && len(addrs) == 0 && !end && perr == nil {
			if ctx.Err() != nil {
				f.err = "stopped: " + ctx.Err().Error()
				return
			}
			misses++
			if misses > maxMisses || isRefusal(xerr) {
				f.err = stoppedText(f.pages, xerr, k.cfg.PageTimeout)
				if d.Master.Transport == codecs.TCP {
					f.err = stoppedText(f.pages, xerr, k.cfg.StreamTimeout)
				}
				return
			}
			continue
		}
		misses = 0
		f.pages += max(res.Received, 1)
		for _, s := range addrs {
			ap, err := netip.ParseAddrPort(s)
			if err != nil {
				f.hostile++
				continue
			}
			if !f.add(k, ap) {
				f.err = "the list was cut at " + strconv.Itoa(k.cfg.MaxEntries) + " entries"
				progress()
				return
			}
		}
		progress()
		switch {
		case perr != nil:
			f.err = perr.Error()
			return
		case end:
			f.complete = true
			return
		}
	}
	timeout := k.cfg.PageTimeout
	if d.Master.Transport == codecs.TCP {
		timeout = k.cfg.StreamTimeout
	}
	f.err = "the master sent no end marker; the list is what came within " + timeout.String()
}

// exchangePage asks one page of the master spec: through the Exchanger
// (the relay) within PageTimeout, or, for a master spoken to over TCP,
// over a connection of its own within StreamTimeout, every address
// judged by Allow (ExchangeStream).
func (k *Keeper) exchangePage(ctx context.Context, m *codecs.MasterDescription, spec server.MasterSpec, q codecs.Query) (netquery.Result, error) {
	if m.Transport == codecs.TCP {
		return ExchangeStream(ctx, m, spec.Addr, q, StreamConfig{Allow: k.cfg.Allow, Resolver: k.cfg.Resolver, Timeout: k.cfg.StreamTimeout})
	}
	pctx, cancel := context.WithTimeout(ctx, k.cfg.PageTimeout)
	defer cancel()
	return k.cfg.Exchanger.Exchange(pctx, spec.Protocol, spec.Addr, q)
}

// isRefusal reports whether err is the relay refusing the master itself,
// which asking again would not change.
func isRefusal(err error) bool {
	st, _ := server.Classify(err, time.Second)
	return err != nil && st != server.Offline
}

func stoppedText(pages int, err error, timeout time.Duration) string {
	_, detail := server.Classify(err, timeout)
	if pages == 0 {
		return "the master did not answer: " + detail
	}
	return "the master stopped answering after " + strconv.Itoa(pages) + " pages: " + detail
}

// recorder keeps the datagrams of a conversation for the inspector.
type recorder struct {
	codecs.Query
	f   *fetch
	max int
}

func (r *recorder) Start() [][]byte {
	s := r.Query.Start()
	for _, b := range s {
		r.f.keepRaw(&r.f.sent, b, r.max)
	}
	return s
}

func (r *recorder) Feed(b []byte) ([][]byte, bool, error) {
	r.f.keepRaw(&r.f.received, b, r.max)
	send, done, err := r.Query.Feed(b)
	for _, s := range send { // a TCP master's request answers its greeting
		r.f.keepRaw(&r.f.sent, s, r.max)
	}
	return send, done, err
}
