package main

import (
	"bytes"
	"context"
	"html"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/internal/toyproto"
	"github.com/querylens/querylens/internal/wasmmodule"
	"github.com/querylens/querylens/masters"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// toyEnv runs TestToyProtocol's checks in a child process, where the toy
// protocol is registered; the other tests never see it.
const toyEnv = "QUERYLENS_TOY_PROTOCOL"

func init() {
	if os.Getenv(toyEnv) == "" {
		return
	}
	toyproto.Register()
	demo.Register(demo.Server{Protocol: toyproto.Protocol, New: func(int64, demo.Behavior) demo.Handler { return toyproto.Server{} }})
}

// TestToyProtocol registers a protocol from its own package alone and finds it
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
	if got := relay.DefaultReplyCaps()["toy"]; got != (relay.ReplyCap{Bytes: toyproto.Cap.Bytes, Datagrams: toyproto.Cap.Datagrams}) {
		t.Errorf("relay.DefaultReplyCaps()[toy] = %+v, want %+v", got, toyproto.Cap)
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
	if tg.Addr == "" || tg.Name != toyproto.ServerName {
		t.Fatalf("no toy server among the demo's: %+v", d.Targets())
	}

	// querylens query, without -p: the probe finds the toy protocol.
	q, stderr, code := runWith(t, nil, "query", "--timeout", "2s", "--retries", "3", tg.Addr)
	if code != exitOK || q.Protocol != "toy" || !q.Detected || q.Info.Name != toyproto.ServerName {
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
	if code != exitOK || !strings.Contains(mout, `"servers":["`+toyproto.MasterListed+`"]`) {
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
	for _, want := range []string{`data-state="online"`, `data-protocol="toy"`, toyproto.ServerName, "Toy Protocol", `href="toy://` + tg.Addr + `"`} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	if badge := get(tg.Ref().PathBase() + "/badge.svg"); !strings.Contains(badge, "toy/"+toyproto.ServerName) || !strings.Contains(badge, "2/8") {
		t.Errorf("badge: %s", badge)
	}
	if api := get("/api/v1/servers/toy/" + tg.Addr); !strings.Contains(api, `"protocol":"toy"`) || !strings.Contains(api, toyproto.ServerName) ||
		!strings.Contains(api, `"join":"toy://`+tg.Addr+`"`) {
		t.Errorf("API answer: %s", api)
	}
	// The kept master's list, fetched through the relay by package
	// masters with the toy's own master conversation.
	if list := get("/api/v1/masters/toy/" + tg.Addr); !strings.Contains(list, `"complete":true`) ||
		!strings.Contains(list, `"address":"`+toyproto.MasterListed+`","key":"toy/`+toyproto.MasterListed+`","state":"refused"`) ||
		!strings.Contains(list, `"join":"toy://`+toyproto.MasterListed+`"`) {
		t.Errorf("kept master's list: %s", list)
	}
	// With the toy's module served beside the embedded ones (serve
	// --modules), a page loads it for the toy's rows.
	dir := t.TempDir()
	writeFakeModule(t, dir, wasmmodule.FamilyOf(toyproto.Codec{}), toyproto.Protocol)
	hm, err := web.New(web.Config{Exchanger: rs, Servers: []server.Ref{tg.Ref()}, Logger: logger, ModulesDir: dir})
	if err != nil {
		t.Fatalf("web.New with the toy's module: %v", err)
	}
	rec := httptest.NewRecorder()
	hm.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	toyModule := `"/static/` + regexp.QuoteMeta(strings.TrimSuffix(wasmmodule.FamilyName(wasmmodule.FamilyOf(toyproto.Codec{})), ".wasm")) + `\.[0-9a-f]{12}\.wasm"`
	boot := html.UnescapeString(rec.Body.String())
	if !regexp.MustCompile(`"` + toyproto.Protocol + `":` + toyModule).MatchString(boot) {
		t.Errorf("the browse page of a server serving the toy's module does not name it for the toy's rows")
	}
	if !regexp.MustCompile(`"wasm":` + toyModule).MatchString(boot) {
		t.Errorf("a browse page of a toy server alone does not load the toy's module first")
	}

	browse := get("/")
	for _, want := range []string{`"name":"toy","title":"Toy Protocol","default_port":27999,"master":{"options":{"master":"true"},"port":27997,"kept":true},"join":"toy://{addr}","row":["name","players","max","hay"],"minAskMs":1500}`,
		// The kept master, with its list's first part in the page's form
		// (browse.KeptList: the protocol left out as the master's).
		`{"protocol":"toy","addr":"` + tg.Addr + `","kept":true,"list":{"total":1,"complete":true,"servers":[{"address":"` + toyproto.MasterListed + `","state":"refused"`,
		`"protocol":"toy","addr":"` + tg.Addr + `"`} {
		if !strings.Contains(browse, want) {
			t.Errorf("browse page config lacks %s", want)
		}
	}
}
