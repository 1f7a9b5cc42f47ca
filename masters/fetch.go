package masters

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
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

// oneReply is the conversation of one request and the first reply that
// accept takes: a page of a paged list, asked on its own so that the
// pacing sits between pages.
type oneReply struct {
	req    []byte
	accept func([]byte) error
	got    []byte
	other  [][]byte // replies that did not belong, for the inspector
}

func (q *oneReply) Start() [][]byte { return [][]byte{q.req} }

func (q *oneReply) Feed(b []byte) ([][]byte, bool, error) {
	if q.got != nil {
		return nil, true, errors.New("masters: the page has already arrived")
	}
	if err := q.accept(b); err != nil {
		if len(q.other) < 4 {
			q.other = append(q.other, append([]byte(nil), b...))
		}
		return nil, false, err
	}
	q.got = append([]byte(nil), b...)
	return nil, true, nil
}

func (q *oneReply) Result(codecs.DecodeOptions) (*codecs.Message, error) {
	return nil, errors.New("masters: a page is read by its caller")
}

// maxMisses is how many times one page is asked again when no reply came
// before the list is reported as stopped.
const maxMisses = 2

// fetchSteam pages through a Steam master's list over UDP: each page asked
// with the last address of the one before (0.0.0.0:0 first), until a page
// ends with 0.0.0.0:0, repeats a seed, or the master stops answering.
func (k *Keeper) fetchSteam(ctx context.Context, l *list, f *fetch, progress func()) {
	req := a2s.MasterRequest{Region: a2s.RegionAll, Filter: l.spec.Filter}
	seeds := map[a2s.Addr]bool{{}: true}
	misses := 0
	for f.pages < a2s.MaxMasterPages {
		b, err := a2s.AppendMasterRequest(nil, req)
		if err != nil {
			f.err = "the filter cannot be sent: " + err.Error()
			return
		}
		if err := wait(ctx, k.cfg.Pacer, l.spec.Addr, k.cfg.Sleep); err != nil {
			f.err = "stopped: " + err.Error()
			return
		}
		var page a2s.MasterReplyPage
		q := &oneReply{req: b, accept: func(d []byte) error {
			p, err := a2s.DecodeMasterReply(d)
			if err == nil {
				page = p
			}
			return err
		}}
		f.keepRaw(&f.sent, b, k.cfg.MaxRawBytes)
		pctx, cancel := context.WithTimeout(ctx, k.cfg.PageTimeout)
		_, xerr := k.cfg.Exchanger.Exchange(pctx, "a2s", l.spec.Addr, q)
		cancel()
		for _, o := range q.other {
			f.keepRaw(&f.received, o, k.cfg.MaxRawBytes)
		}
		if q.got == nil {
			if ctx.Err() != nil {
				f.err = "stopped: " + ctx.Err().Error()
				return
			}
			misses++
			if misses > maxMisses || isRefusal(xerr) {
				f.err = stoppedText(f.pages, xerr, k.cfg.PageTimeout)
				return
			}
			continue
		}
		misses = 0
		f.keepRaw(&f.received, q.got, k.cfg.MaxRawBytes)
		f.pages++
		for _, s := range page.Servers {
			if !f.add(k, netip.AddrPortFrom(netip.AddrFrom4(s.IP), s.Port)) {
				f.err = "the list was cut at " + strconv.Itoa(k.cfg.MaxEntries) + " entries"
				progress()
				return
			}
		}
		progress()
		if page.End || len(page.Servers) == 0 {
			f.complete = true
			return
		}
		last := page.Servers[len(page.Servers)-1]
		if seeds[last] {
			f.err = "the master went back to an address it had listed; the list stops there"
			return
		}
		seeds[last] = true
		req.Seed = last
	}
	f.err = "the list took more than " + strconv.Itoa(a2s.MaxMasterPages) + " pages"
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

// Quake3Options turns a Quake III master's filter, the arguments of its
// getservers request as a master's log shows them ("[GAME] PROTOCOL
// [FILTER…]", e.g. "Xonotic 3 empty full"; the word "ext" asks with
// getserversExt, which lists IPv6 servers too), into the quake3 codec's
// master options. An empty filter is Quake III 1.32's own query,
// "68 empty full".
func Quake3Options(filter string) (map[string]string, error) {
	words := strings.Fields(filter)
	opts := map[string]string{"master": "true"}
	if len(words) == 0 {
		return opts, nil
	}
	var filters []string
	for _, w := range words {
		if w == "ext" {
			opts["ext"] = "true"
			continue
		}
		filters = append(filters, w)
	}
	words = filters
	if len(words) > 0 {
		if _, err := strconv.ParseUint(words[0], 10, 16); err != nil {
			opts["game"] = words[0]
			words = words[1:]
		}
	}
	if len(words) == 0 {
		return nil, errors.New("quake3 master filter " + strconv.Quote(filter) + ": want [GAME] PROTOCOL [FILTER…], e.g. \"Xonotic 3 empty full\"")
	}
	if _, err := strconv.ParseUint(words[0], 10, 16); err != nil {
		return nil, errors.New("quake3 master filter " + strconv.Quote(filter) + ": the protocol number " + strconv.Quote(words[0]) + " is not a number")
	}
	opts["protocol"] = words[0]
	opts["filters"] = strings.Join(words[1:], " ")
	c, err := codecs.Lookup("quake3")
	if err != nil {
		return nil, err
	}
	if _, err := c.NewQuery(opts); err != nil {
		return nil, errors.New("quake3 master filter " + strconv.Quote(filter) + ": " + err.Error())
	}
	return opts, nil
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
	return r.Query.Feed(b)
}

// fetchQuake3 asks a Quake III master once: its list comes in as many
// datagrams as it needs, ending with EOT (or, from a master that sends no
// end marker, when the wait ends).
func (k *Keeper) fetchQuake3(ctx context.Context, l *list, f *fetch, progress func()) {
	opts, err := Quake3Options(l.spec.Filter)
	if err != nil {
		f.err = err.Error()
		return
	}
	c, err := codecs.Lookup("quake3")
	if err != nil {
		f.err = err.Error()
		return
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		f.err = err.Error()
		return
	}
	if err := wait(ctx, k.cfg.Pacer, l.spec.Addr, k.cfg.Sleep); err != nil {
		f.err = "stopped: " + err.Error()
		return
	}
	rec := &recorder{Query: q, f: f, max: k.cfg.MaxRawBytes}
	qctx, cancel := context.WithTimeout(ctx, k.cfg.PageTimeout)
	res, xerr := k.cfg.Exchanger.Exchange(qctx, "quake3", l.spec.Addr, rec)
	cancel()
	f.pages = res.Received
	msg, derr := q.Result(codecs.DecodeOptions{NoFields: true})
	if res.Received == 0 {
		f.err = stoppedText(0, xerr, k.cfg.PageTimeout)
		return
	}
	if msg != nil {
		for _, s := range msg.Servers {
			ap, err := netip.ParseAddrPort(s)
			if err != nil {
				f.hostile++
				continue
			}
			if !f.add(k, ap) {
				f.err = "the list was cut at " + strconv.Itoa(k.cfg.MaxEntries) + " entries"
				break
			}
		}
	}
	progress()
	switch {
	case f.err != "":
	case res.Done:
		f.complete = true
	case derr != nil:
		f.err = "the list did not end: " + derr.Error()
	default:
		f.err = "the master sent no end marker; the list is what came within " + k.cfg.PageTimeout.String()
	}
}
