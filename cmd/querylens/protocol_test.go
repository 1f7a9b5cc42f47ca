package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/masters"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// toyEnv runs TestToyProtocol's checks in a child process, where the toy
// protocol is registered; the other tests never see it.
const toyEnv = "QUERYLENS_TOY_PROTOCOL"

// toy is a made-up protocol: the query is "TOYQ", the reply "TOYR" and a
// server name; a master's query is "TOYM", its list "TOYL" and addresses,
// one a line. It is added the way the checklist in codecs/doc.go says: a
// codec, its description (a master list it keeps, a reply cap, a join
// link, its own row fields), a demo server; nothing outside this file.
type toy struct{}

const toyName = "Toy Box"

func (toy) Name() string     { return "toy" }
func (toy) Title() string    { return "Toy Protocol" }
func (toy) DefaultPort() int { return 27999 }
func (toy) Options() []codecs.Option {
	return []codecs.Option{{Name: "master", Kind: codecs.OptionBool, Default: "false", Help: "ask a toy master for its list"}}
}
func (toy) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	switch {
	case string(b) == "TOYQ", string(b) == "TOYM":
		return codecs.KindQuery, codecs.Certain
	case bytes.HasPrefix(b, []byte("TOYR")):
		return codecs.KindResponse, codecs.Certain
	}
	return "", codecs.NotMine
}
func (toy) CheckQuery(b []byte) error {
	if string(b) != "TOYQ" && string(b) != "TOYM" {
		return codecs.NewError("toy", "magic", 0, codecs.ErrNotQuery)
	}
	return nil
}
func (toy) Decode(dgs [][]byte, _ codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: "toy"}
	if len(dgs) > 0 && bytes.HasPrefix(dgs[0], []byte("TOYL")) {
		m.Kind = codecs.KindMasterList
		m.Servers = strings.Fields(string(dgs[0][4:]))
		return m, nil
	}
	if len(dgs) == 0 || !bytes.HasPrefix(dgs[0], []byte("TOYR")) {
		return m, codecs.NewError("toy", "magic", 0, codecs.ErrBadMagic)
	}
	m.Kind = codecs.KindResponse
	m.Info = &codecs.Info{Has: codecs.HasName | codecs.HasNumPlayers | codecs.HasMaxPlayers, Name: string(dgs[0][4:]), NumPlayers: 2, MaxPlayers: 8}
	return m, nil
}
func (c toy) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions("toy", c.Options(), opts)
	q := &toyQuery{master: r.Bool("master")}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return q, nil
}

type toyQuery struct {
	master bool
	got    [][]byte
}

func (q *toyQuery) Start() [][]byte {
	if q.master {
		return [][]byte{[]byte("TOYM")}
	}
	return [][]byte{[]byte("TOYQ")}
}
func (q *toyQuery) Feed(b []byte) ([][]byte, bool, error) {
	if !bytes.HasPrefix(b, []byte("TOYR")) && !bytes.HasPrefix(b, []byte("TOYL")) {
		return nil, false, codecs.NewError("toy", "magic", 0, codecs.ErrBadMagic)
	}
	q.got = append(q.got, b)
	return nil, true, nil
}
func (q *toyQuery) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	return toy{}.Decode(q.got, opt)
}

// toyMasterList is the toy master's conversation: one request, one list.
type toyMasterList struct {
	q     *toyQuery
	ended bool
}

func (l *toyMasterList) Next() codecs.Query {
	if l.ended {
		return nil
	}
	l.q = &toyQuery{master: true}
	return l.q
}
func (l *toyMasterList) Page(done bool) ([]string, bool, error) {
	if !done {
		return nil, false, nil
	}
	l.ended = true
	m, err := l.q.Result(codecs.DecodeOptions{})
	return m.Servers, true, err
}

// toyServer is the demo's emulated toy server, which is also a toy master
// listing one address.
type toyServer struct{}

func (toyServer) Respond(q []byte, _ netip.AddrPort, _ time.Time) [][]byte {
	switch string(q) {
	case "TOYQ":
		return [][]byte{[]byte("TOYR" + toyName)}
	case "TOYM":
		return [][]byte{[]byte("TOYL" + toyMasterListed)}
	}
	return nil
}

// toyMasterListed is the address the toy master lists, which the test's
// relay does not query.
const toyMasterListed = "127.0.0.1:27998"

// toyCap is the toy's reply cap, which the relay reads.
var toyCap = codecs.ReplyCap{Bytes: 1234, Datagrams: 3}

func init() {
	if os.Getenv(toyEnv) == "" {
		return
	}
	codecs.Register(toy{})
	codecs.Describe(codecs.Description{Name: "toy", Ports: []int{27999, 27998}, Join: "toy://{addr}",
		Row: []string{"name", "players", "max", "hay"}, ReplyCap: toyCap, MinAskMs: 1500,
		Master: &codecs.MasterDescription{Options: map[string]string{"master": "true"}, Port: 27997, Kept: true,
			NewList: func(filter string) (codecs.MasterList, error) { return &toyMasterList{}, nil }}})
	demo.Register(demo.Server{Protocol: "toy", New: func(int64, demo.Behavior) demo.Handler { return toyServer{} }})
}

// TestToyProtocol registers a protocol from this file alone and finds it
// in querylens protocols, in query's probe and master, in the demo, in the
// relay's reply caps, in the kept masters' lists, on the status page and
// badge, in the API's answer and in the browser page's protocol table.
func TestToyProtocol(t *testing.T) {
	if os.Getenv(toyEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestToyProtocol$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), toyEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestToyProtocol")) {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// querylens protocols
	out, _, code := runCLI(t, "", "protocols")
	if code != exitOK || !strings.Contains(out, `"name":"toy","title":"Toy Protocol","default_port":27999`) {
		t.Errorf("protocols (%d): %s", code, out)
	}
	if out, _, code := runCLI(t, "", "protocols", "--names"); code != exitOK || !slices.Contains(strings.Fields(out), "toy") {
		t.Errorf("protocols --names (%d): %s", code, out)
	}

	// The relay's caps are the description's.
	if got := relay.DefaultReplyCaps()["toy"]; got != (relay.ReplyCap{Bytes: toyCap.Bytes, Datagrams: toyCap.Datagrams}) {
		t.Errorf("relay.DefaultReplyCaps()[toy] = %+v, want %+v", got, toyCap)
	}

	// The demo runs a toy server.
	d, err := demo.Start(ctx, demo.Config{Servers: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var tg demo.Target
	var own []netip.AddrPort
	for _, x := range d.Targets() {
		own = append(own, netip.MustParseAddrPort(x.Addr))
		if x.Protocol == "toy" {
			tg = x
		}
	}
	if tg.Addr == "" || tg.Name != toyName {
		t.Fatalf("no toy server among the demo's: %+v", d.Targets())
	}

	// querylens query, without -p: the probe finds the toy protocol.
	q, stderr, code := runWith(t, nil, "query", "--timeout", "2s", "--retries", "3", tg.Addr)
	if code != exitOK || q.Protocol != "toy" || !q.Detected || q.Info.Name != toyName {
		t.Errorf("query probe (%d): %+v %s", code, q, stderr)
	}
	if got := guessProtocol("198.51.100.1:27998"); got != "toy" {
		t.Errorf("guessProtocol from the table's second port = %q", got)
	}
	if got := guessProtocol("198.51.100.1:27997"); got != "toy" {
		t.Errorf("guessProtocol from the master's port = %q", got)
	}

	// querylens master: the toy master's list.
	mout, stderr, code := runCLI(t, "", "master", "-p", "toy", "--timeout", "2s", "--retries", "3", tg.Addr)
	if code != exitOK || !strings.Contains(mout, `"servers":["`+toyMasterListed+`"]`) {
		t.Errorf("master (%d): %s %s", code, mout, stderr)
	}

	// The status page, its badge, and the browser page's table.
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey}, logger)
	defer rs.Shutdown(context.Background())
	toyMaster, err := server.ParseMasterSpec("toy=" + tg.Addr)
	if err != nil || !toyMaster.Kept {
		t.Fatalf("toy master spec %+v: %v", toyMaster, err)
	}
	keeper, err := masters.New(masters.Config{Masters: []server.MasterSpec{toyMaster}, Exchanger: rs, Allow: rs.CheckTarget, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer keeper.Close()
	h, err := web.New(web.Config{Exchanger: rs, Masters: []server.MasterSpec{{Protocol: "zandronum", Addr: d.Master()}, toyMaster},
		Servers: []server.Ref{tg.Ref()}, MasterLists: keeper, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Errorf("GET %s: %d", path, rec.Code)
		}
		return rec.Body.String()
	}
	page := get(tg.Ref().Path())
	for _, want := range []string{`data-state="online"`, `data-protocol="toy"`, toyName, "Toy Protocol", `href="toy://` + tg.Addr + `"`} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	if badge := get(tg.Ref().PathBase() + "/badge.svg"); !strings.Contains(badge, "toy/"+toyName) || !strings.Contains(badge, "2/8") {
		t.Errorf("badge: %s", badge)
	}
	if api := get("/api/v1/servers/toy/" + tg.Addr); !strings.Contains(api, `"protocol":"toy"`) || !strings.Contains(api, toyName) ||
		!strings.Contains(api, `"join":"toy://`+tg.Addr+`"`) {
		t.Errorf("API answer: %s", api)
	}
	// The kept master's list, fetched through the relay by package
	// masters with the toy's own master conversation.
	if list := get("/api/v1/masters/toy/" + tg.Addr); !strings.Contains(list, `"complete":true`) ||
		!strings.Contains(list, `"address":"`+toyMasterListed+`","key":"toy/`+toyMasterListed+`","state":"refused"`) ||
		!strings.Contains(list, `"join":"toy://`+toyMasterListed+`"`) {
		t.Errorf("kept master's list: %s", list)
	}
	browse := get("/")
	for _, want := range []string{`"name":"toy","title":"Toy Protocol","default_port":27999,"master":{"options":{"master":"true"},"port":27997,"kept":true},"join":"toy://{addr}","row":["name","players","max","hay"],"minAskMs":1500}`,
		`{"protocol":"toy","addr":"` + tg.Addr + `","kept":true}`,
		`"protocol":"toy","addr":"` + tg.Addr + `"`} {
		if !strings.Contains(browse, want) {
			t.Errorf("browse page config lacks %s", want)
		}
	}
}
