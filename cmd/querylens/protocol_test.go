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
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// toyEnv runs TestToyProtocol's checks in a child process, where the toy
// protocol is registered; the other tests never see it.
const toyEnv = "QUERYLENS_TOY_PROTOCOL"

// toy is a made-up protocol: the query is "TOYQ", the reply "TOYR" and a
// server name. It is added the way the checklist in codecs/doc.go says:
// a codec, one registration, a demo server.
type toy struct{}

const toyName = "Toy Box"

func (toy) Name() string             { return "toy" }
func (toy) Title() string            { return "Toy Protocol" }
func (toy) DefaultPort() int         { return 27999 }
func (toy) Options() []codecs.Option { return nil }
func (toy) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	switch {
	case string(b) == "TOYQ":
		return codecs.KindQuery, codecs.Certain
	case bytes.HasPrefix(b, []byte("TOYR")):
		return codecs.KindResponse, codecs.Certain
	}
	return "", codecs.NotMine
}
func (toy) CheckQuery(b []byte) error {
	if string(b) != "TOYQ" {
		return codecs.NewError("toy", "magic", 0, codecs.ErrNotQuery)
	}
	return nil
}
func (toy) Decode(dgs [][]byte, _ codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: "toy"}
	if len(dgs) == 0 || !bytes.HasPrefix(dgs[0], []byte("TOYR")) {
		return m, codecs.NewError("toy", "magic", 0, codecs.ErrBadMagic)
	}
	m.Kind = codecs.KindResponse
	m.Info = &codecs.Info{Has: codecs.HasName | codecs.HasNumPlayers | codecs.HasMaxPlayers, Name: string(dgs[0][4:]), NumPlayers: 2, MaxPlayers: 8}
	return m, nil
}
func (c toy) NewQuery(opts map[string]string) (codecs.Query, error) {
	if err := codecs.ReadOptions("toy", nil, opts).Err(); err != nil {
		return nil, err
	}
	return &toyQuery{}, nil
}

type toyQuery struct{ got [][]byte }

func (q *toyQuery) Start() [][]byte { return [][]byte{[]byte("TOYQ")} }
func (q *toyQuery) Feed(b []byte) ([][]byte, bool, error) {
	if !bytes.HasPrefix(b, []byte("TOYR")) {
		return nil, false, codecs.NewError("toy", "magic", 0, codecs.ErrBadMagic)
	}
	q.got = append(q.got, b)
	return nil, true, nil
}
func (q *toyQuery) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	return toy{}.Decode(q.got, opt)
}

// toyServer is the demo's emulated toy server.
type toyServer struct{}

func (toyServer) Respond(q []byte, _ netip.AddrPort, _ time.Time) [][]byte {
	if string(q) != "TOYQ" {
		return nil
	}
	return [][]byte{[]byte("TOYR" + toyName)}
}

func init() {
	if os.Getenv(toyEnv) == "" {
		return
	}
	codecs.Register(toy{})
	server.Register(server.Protocol{Name: "toy", Ports: []int{27999, 27998}, Join: "toy://{addr}",
		Row: []string{"name", "players", "max", "hay"}})
	demo.Register(demo.Server{Protocol: "toy", New: func(int64, demo.Behavior) demo.Handler { return toyServer{} }})
}

// TestToyProtocol registers a protocol from this file alone and finds it
// in querylens protocols, in query's probe, in the demo, on the status
// page and badge, and in the browser page's protocol table.
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

	// The status page, its badge, and the browser page's table.
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rs := relay.New(relay.Config{AllowAddrs: own, CacheKey: codecs.QueryKey}, logger)
	defer rs.Shutdown(context.Background())
	h, err := web.New(web.Config{Exchanger: rs, Masters: []server.MasterSpec{{Protocol: "zandronum", Addr: d.Master()}}, Servers: []server.Ref{tg.Ref()}, Logger: logger})
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
	browse := get("/")
	for _, want := range []string{`"name":"toy","title":"Toy Protocol","default_port":27999,"join":"toy://{addr}","row":["name","players","max","hay"]`,
		`"protocol":"toy","addr":"` + tg.Addr + `"`} {
		if !strings.Contains(browse, want) {
			t.Errorf("browse page config lacks %s", want)
		}
	}
}
