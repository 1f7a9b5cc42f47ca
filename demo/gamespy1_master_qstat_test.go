package demo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/masters"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/server"
)

// qstat's GameSpy master type (quakestat -gsm,GAME HOST:PORT) speaks an
// older form of the conversation than the masters do now (qstat 2.17,
// qstat.c send_gamespy_master_request and
// deal_with_gamespy_master_response):
//
//   - it writes, as soon as it connects, a fixed validation,
//     \gamename\gamespy2\gamever\020109017\location\5\validate\12345678\final\,
//     then \list\\gamename\GAME\final\, without reading the challenge
//     (its source says so: it works only with masters that do not check
//     the value). The demo master checks it, as 333networks' does: it
//     takes the first gamename, gamespy2, whose key it does not know,
//     and refuses with \error\…\final\.
//   - it ends the reply at the first chunk that ends with \final\, and
//     skips 21 bytes of greeting, `\basic\\secure\` and six letters,
//     before the list: the greeting of GameSpy's own masters had no
//     \final\. The demo master's greeting ends with one (the form of
//     docs/protocols/gamespy1.md, section 6), so qstat stops there and
//     reads an empty list of 6-byte records: "0" servers, no error.
//
// So qstat cannot list the demo master by itself, nor any master that
// checks the validation (333networks' does). The bridge of
// startGSMBridge stands between them to test what qstat can: its
// reading of the list. It answers the challenge for qstat (the
// validation qstat would have sent, had it read the challenge: for the
// game of qstat's list request, with that game's key), passes qstat's
// list request as sent, and hands qstat the greeting without its
// \final\ and then the master's list byte for byte (or as mutate
// changes it).

// gsmExchange is what the bridge saw on one connection.
type gsmExchange struct {
	fromQstat []byte // everything qstat wrote
	greeting  []byte // the master's greeting, as it sent it
	list      []byte // the master's list, as it sent it (before mutate)
	changed   bool   // mutate changed the list
	err       error  // why the bridge gave up
}

// startGSMBridge listens on loopback for qstat and bridges each
// connection to the GameSpy v1 master at master (loopback too), passing
// the master's list through mutate (nil: as sent); compact: see
// bridgeGSM. It returns the
// address to give qstat and the exchanges so far; it stops with the test.
func startGSMBridge(t *testing.T, master string, compact bool, mutate func([]byte) []byte) (string, func() []gsmExchange) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		out []gsmExchange
		wg  sync.WaitGroup
		// conns counts the connections accepted and not yet recorded:
		// qstat may exit between the bridge's last write and its
		// exchange's append.
		conns sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			wg.Go(func() {
				defer conns.Done()
				x := bridgeGSM(c, master, compact, mutate)
				mu.Lock()
				out = append(out, x)
				mu.Unlock()
			})
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	// The exchanges of the connections accepted so far, once each has
	// ended (qstat's connection was counted before the bridge wrote it
	// a byte).
	return ln.Addr().String(), func() []gsmExchange {
		conns.Wait()
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(out)
	}
}

// gsmFinal ends each message of the conversation.
const gsmFinal = `\final\`

// bridgeGSM serves one qstat connection c (see startGSMBridge). With
// compact it asks the master for 6-byte records (\list\cmp\), which
// qstat reads too when a master sends them, though it never asks.
func bridgeGSM(c net.Conn, master string, compact bool, mutate func([]byte) []byte) (x gsmExchange) {
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	c.SetDeadline(deadline)
	m, err := net.DialTimeout("tcp4", master, 5*time.Second)
	if err != nil {
		x.err = err
		return x
	}
	defer m.Close()
	m.SetDeadline(deadline)

	// The master's greeting, and qstat's two messages.
	x.greeting, x.err = readUntil(m, func(b []byte) bool { return gamespy1.MasterMessageLen(b) > 0 })
	if x.err != nil {
		return x
	}
	x.fromQstat, x.err = readUntil(c, func(b []byte) bool { return bytes.Count(b, []byte(gsmFinal)) >= 2 })
	if x.err != nil {
		return x
	}
	challenge, err := gamespy1.ReadChallenge(x.greeting, nil)
	if err != nil {
		x.err = err
		return x
	}
	msgs := bytes.SplitAfter(x.fromQstat, []byte(gsmFinal))
	listReq := msgs[1]
	game := pairValues(listReq)["gamename"]
	if compact {
		listReq = []byte(`\list\cmp\gamename\` + game + gsmFinal)
	}
	key, _ := gamespy1.MasterKey(game) // unknown: no key, and the master refuses

	// The validation qstat would send if it read the challenge.
	req := []byte(`\gamename\` + game + `\location\0\validate\`)
	req = gamespy1.AppendValidate(req, []byte(challenge), key)
	req = append(append(req, gsmFinal...), listReq...)
	if _, x.err = m.Write(req); x.err != nil {
		return x
	}
	greeting := bytes.TrimSuffix(x.greeting, []byte(gsmFinal))
	if _, x.err = c.Write(greeting); x.err != nil {
		return x
	}
	// The list: the master writes it whole and closes.
	x.list, x.err = io.ReadAll(io.LimitReader(m, gamespy1.MaxMasterBytes))
	if x.err != nil {
		return x
	}
	list := x.list
	if mutate != nil {
		list = mutate(slices.Clone(x.list))
		x.changed = !bytes.Equal(list, x.list)
	}
	if x.err = loopbackList(list, compact); x.err != nil {
		return x
	}
	_, x.err = c.Write(list)
	return x
}

// loopbackList returns an error unless list is a master's list of
// loopback addresses only. qstat asks every server it reads from a list,
// and reads whatever follows the greeting as one: a refusal
// (\error\…\final\) as 6-byte records that spell public addresses.
// Such a list is never handed to qstat.
func loopbackList(list []byte, compact bool) error {
	addrs, err := gamespy1.ReadMasterList(list, compact, 0, nil)
	if err != nil {
		return errors.New("not a list to hand qstat: " + err.Error())
	}
	for _, a := range addrs {
		if ap, err := netip.ParseAddrPort(a); err != nil || !ap.Addr().IsLoopback() {
			return errors.New("the list holds " + a + ", which is not a loopback address")
		}
	}
	return nil
}

// gsmGreetingOnly stands between qstat and the master at master as the
// network usually does: it hands qstat the master's greeting alone and
// closes qstat's connection, passing qstat's request to the master and
// recording the master's answer. A direct connection would let the
// master's refusal reach qstat in the same read as the greeting now and
// then, which qstat would take for records and ask the public addresses
// they spell.
func gsmGreetingOnly(t *testing.T, master string) (string, func() []gsmExchange) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		out []gsmExchange
		wg  sync.WaitGroup
		// conns counts the connections accepted and not yet recorded:
		// qstat exits as soon as it has read the greeting, before the
		// bridge has the master's answer to what it forwarded.
		conns sync.WaitGroup
	)
	serve := func(c net.Conn) (x gsmExchange) {
		defer c.Close()
		deadline := time.Now().Add(20 * time.Second)
		c.SetDeadline(deadline)
		m, err := net.DialTimeout("tcp4", master, 5*time.Second)
		if err != nil {
			x.err = err
			return x
		}
		defer m.Close()
		m.SetDeadline(deadline)
		if x.greeting, x.err = readUntil(m, func(b []byte) bool { return gamespy1.MasterMessageLen(b) > 0 }); x.err != nil {
			return x
		}
		if x.fromQstat, x.err = readUntil(c, func(b []byte) bool { return bytes.Count(b, []byte(gsmFinal)) >= 2 }); x.err != nil {
			return x
		}
		if _, x.err = c.Write(x.greeting); x.err != nil {
			return x
		}
		if _, x.err = m.Write(x.fromQstat); x.err != nil {
			return x
		}
		x.list, x.err = io.ReadAll(io.LimitReader(m, gamespy1.MaxMasterBytes))
		return x
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			wg.Go(func() {
				defer conns.Done()
				x := serve(c)
				mu.Lock()
				out = append(out, x)
				mu.Unlock()
			})
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	// The exchanges of the connections accepted so far, once each has
	// ended (qstat's connection was counted before serve wrote it a
	// byte).
	return ln.Addr().String(), func() []gsmExchange {
		conns.Wait()
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(out)
	}
}

// readUntil reads from c until done says what came is enough, at most
// 4 KiB: a greeting, a request.
func readUntil(c net.Conn, done func([]byte) bool) ([]byte, error) {
	var got []byte
	buf := make([]byte, 512)
	for !done(got) {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		switch {
		case done(got):
		case err != nil:
			return got, err
		case len(got) > 4096:
			return got, errors.New("4 KiB and no whole message")
		}
	}
	return got, nil
}

// qstatGSMList runs quakestat -gsm,GAME against addr and returns the
// count qstat's GSM line gives and the addresses it lists (the servers it
// then asked, GameSpy status protocol, each on its own line whatever
// their state), in qstat's order.
func qstatGSMList(t *testing.T, qstat, game, addr string) (int, []string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// -nocfg: no qstat.cfg types; -timeout bounds the status queries of
	// the listed servers (one of the demo's is silent), which do not
	// change the list.
	cmd := exec.CommandContext(ctx, qstat, "-nocfg", "-gsm,"+game, addr, "-raw", ",", "-retry", "1", "-timeout", "10")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quakestat -gsm,%s %s: %v\n%s", game, addr, err, stderr.Bytes())
	}
	n := -1
	var listed []string
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), ",")
		switch {
		case len(f) >= 3 && f[0] == "GSM" && f[1] == addr:
			if n, err = strconv.Atoi(f[2]); err != nil {
				t.Fatalf("qstat's GSM line %q: %v", line, err)
			}
		case len(f) >= 2 && f[0] == "GPS":
			listed = append(listed, f[1])
		}
	}
	if n < 0 {
		t.Fatalf("qstat printed no GSM line for %s:\n%s", addr, out)
	}
	return n, listed, out
}

// compareGSMLists says how the list qstat printed (its count and
// addresses) differs from ours, in any order. Nothing when they agree.
func compareGSMLists(n int, theirs, ours []string) []string {
	var diffs []string
	if n != len(ours) {
		diffs = append(diffs, "count: qstat "+strconv.Itoa(n)+", querylens "+strconv.Itoa(len(ours)))
	}
	a, b := slices.Sorted(slices.Values(theirs)), slices.Sorted(slices.Values(ours))
	if !slices.Equal(a, b) {
		diffs = append(diffs, "servers: qstat "+strings.Join(a, " ")+"; querylens "+strings.Join(b, " "))
	}
	return diffs
}

// gs1OurList is our decoder's list from a master's greeting and list as
// recorded: the codec's master conversation fed the messages
// MasterMessageLen cuts.
func gs1OurList(t *testing.T, game string, compact bool, greeting, list []byte) []string {
	t.Helper()
	opts := map[string]string{"master": "true", "gamename": game}
	if compact {
		opts["list"] = "cmp"
	}
	q, err := (&gamespy1.Codec{}).NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	msgs, rest, bad := codecs.CutStream(append(slices.Clone(greeting), list...), gamespy1.MasterMessageLen)
	if bad || len(rest) > 0 {
		t.Fatalf("our framing cut %q with %q left (bad %v)", msgs, rest, bad)
	}
	for _, m := range msgs {
		if _, _, err := q.Feed(m); err != nil {
			t.Fatalf("our decoder, message %q: %v", m, err)
		}
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil {
		t.Fatalf("our decoder: %v", err)
	}
	return m.Servers
}

// gs1AskMaster lists game from the master at addr as `querylens master -p
// gamespy1 --filter GAME ADDR` does: the protocol's master options and
// filter, over a connection of its own (masters.ExchangeStream).
func gs1AskMaster(t *testing.T, addr, game string) []string {
	t.Helper()
	p, ok := server.LookupProtocol(gamespy1.Protocol)
	if !ok || p.Master == nil {
		t.Fatal("gamespy1 has no master")
	}
	d := p.Description().Master
	opts := maps.Clone(p.Master.Options)
	fo, err := d.Filter(game)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(opts, fo)
	q, err := (&gamespy1.Codec{}).NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := masters.ExchangeStream(ctx, d, addr, q, masters.StreamConfig{Timeout: 20 * time.Second})
	if err != nil || !res.Done {
		t.Fatalf("asking the master: %v (done %v)", err, res.Done)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil {
		t.Fatalf("our client: %v", err)
	}
	return m.Servers
}

// gs1KeptList is the master keeper's list of game from the master at
// addr (a Keeper configured with that master and filter, as `querylens
// serve --master gamespy1=ADDR?filter=GAME` keeps it).
func gs1KeptList(t *testing.T, addr, game string) []string {
	t.Helper()
	k, err := masters.New(masters.Config{
		Masters:   []server.MasterSpec{{Protocol: gamespy1.Protocol, Addr: addr, Filter: game, Kept: true}},
		Exchanger: &netquery.Direct{}, // a TCP master is asked over a connection of the keeper's own
		Allow: func(ap netip.AddrPort) error {
			if !ap.Addr().IsLoopback() {
				return errors.New("not loopback")
			}
			return nil
		},
		StreamTimeout: 20 * time.Second,
		FirstWait:     30 * time.Second, // the list comes first: loopback
		Logger:        slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	ml, err := k.List(ctx, gamespy1.Protocol, addr, &game)
	if err != nil || !ml.Complete || ml.Error != "" {
		t.Fatalf("kept list: %+v, %v", ml, err)
	}
	var out []string
	for _, s := range ml.Servers {
		out = append(out, s.Address)
	}
	return out
}

// TestQstatGameSpyMasterInterop lists the demo's GameSpy v1 master with
// qstat's GameSpy master type (quakestat -gsm,GAME), for every game the
// master serves (gamespy1.MasterGames), through gsmBridge (see above for
// why qstat cannot ask it by itself): the addresses qstat lists, and
// their count, must be our decoder's reading of the same list, and the
// list our own client (`querylens master`) and our master keeper get
// from the master. The first game again with the master's records
// (\list\cmp\), and with one entry's address changed on its way to qstat:
// the comparison must then report it.
func TestQstatGameSpyMasterInterop(t *testing.T) {
	qstat := needQstat(t)
	d, err := Start(context.Background(), Config{Servers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	master := d.GameSpy1Master()

	// What qstat does alone: the master refuses its fixed validation,
	// and qstat, which stops at the greeting's \final\, reports no
	// servers and no error.
	t.Run("alone", func(t *testing.T) {
		addr, exchanges := gsmGreetingOnly(t, master)
		n, listed, out := qstatGSMList(t, qstat, "ut", addr)
		if n != 0 || len(listed) != 0 {
			t.Errorf("qstat listed the demo master alone:\n%s", out)
		}
		xs := exchanges()
		if len(xs) != 1 || xs[0].err != nil {
			t.Fatalf("greeting only: %+v", xs)
		}
		if !bytes.HasPrefix(xs[0].fromQstat, []byte(`\gamename\gamespy2\`)) || !bytes.Contains(xs[0].fromQstat, []byte(`\validate\12345678\final\\list\\gamename\ut\final\`)) {
			t.Errorf("qstat sent %q", xs[0].fromQstat)
		}
		if string(xs[0].list) != GameSpy1Refusal {
			t.Errorf("the master answered qstat's request with %q, want its refusal", xs[0].list)
		}
	})

	for i, g := range gamespy1.MasterGames {
		t.Run(g.Name, func(t *testing.T) {
			direct := gs1AskMaster(t, master, g.Name)
			if len(direct) < 2 {
				t.Fatalf("a list of %d servers proves little", len(direct))
			}
			for _, a := range direct {
				// qstat asks every listed server: loopback only.
				if ap, err := netip.ParseAddrPort(a); err != nil || !ap.Addr().IsLoopback() {
					t.Fatalf("the demo master lists %q", a)
				}
			}
			kept := gs1KeptList(t, master, g.Name)
			if !slices.Equal(kept, direct) {
				t.Errorf("the keeper's list %q is not our client's %q", kept, direct)
			}
			modes := []bool{false}
			if i == 0 {
				modes = append(modes, true)
			}
			for _, compact := range modes {
				addr, exchanges := startGSMBridge(t, master, compact, nil)
				n, listed, out := qstatGSMList(t, qstat, g.Name, addr)
				xs := exchanges()
				if len(xs) != 1 || xs[0].err != nil {
					t.Fatalf("bridged: %+v", xs)
				}
				ours := gs1OurList(t, g.Name, compact, xs[0].greeting, xs[0].list)
				if diffs := compareGSMLists(n, listed, ours); len(diffs) > 0 {
					t.Errorf("qstat and querylens differ (records %v):\n%s\nqstat printed:\n%s", compact, strings.Join(diffs, "\n"), out)
				}
				if !slices.Equal(ours, direct) {
					t.Errorf("the list qstat read %q is not the one our client got %q", ours, direct)
				}
			}
			if i != 0 {
				return
			}

			// One entry's address changed (to another loopback address,
			// where nothing answers) in the list qstat reads.
			addr, exchanges := startGSMBridge(t, master, false, replaceOnce(`\ip\127.0.0.1:`, `\ip\127.0.0.2:`))
			n, listed, _ := qstatGSMList(t, qstat, g.Name, addr)
			xs := exchanges()
			if len(xs) != 1 || xs[0].err != nil || !xs[0].changed {
				t.Fatalf("bridged: %+v", xs)
			}
			if diffs := compareGSMLists(n, listed, gs1OurList(t, g.Name, false, xs[0].greeting, xs[0].list)); len(diffs) != 1 || !strings.HasPrefix(diffs[0], "servers:") {
				t.Errorf("qstat read a list with one address changed, and the comparison said %q", diffs)
			}
		})
	}
}
