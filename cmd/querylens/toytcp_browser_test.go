package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/querylens/querylens/internal/toyproto"
	"github.com/querylens/querylens/internal/toyproto/tcpserver"
	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
)

// tcpModule is the TCP toy's browser module, built once per test binary.
var tcpModule struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

// TestBrowserToyTCP: a server of a stream protocol (the TCP toy) shows
// online on the browse page, its module asking the relay with EXCHANGE and
// decoding the CHUNKs; the relay, not the page, put the server's real
// address in the query; its status page, asked in process
// (relay.Server.ExchangeOptions), shows it too. Needs chromium and go (the
// module is built by the test).
func TestBrowserToyTCP(t *testing.T) {
	if os.Getenv(toyTCPEnv) == "" {
		if chromiumPath() == "" {
			if os.Getenv("CI") != "" {
				t.Fatal("chromium not found, and CI is set: install it (apt-get install -y chromium)")
			}
			t.Skip("chromium not found; install it with apt-get install -y chromium")
		}
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("go is not on PATH: the test builds the TCP toy's browser module (scripts/build-wasm.sh --family)")
		}
		tcpModule.once.Do(func() {
			if tcpModule.dir, tcpModule.err = os.MkdirTemp("", "querylens-toytcp-modules-"); tcpModule.err != nil {
				return
			}
			cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "build-wasm.sh"), "--family",
				"github.com/querylens/querylens/internal/toyproto/tcpmodule", "--out", tcpModule.dir)
			tcpModule.out, tcpModule.err = cmd.CombinedOutput()
		})
		if tcpModule.err != nil {
			t.Fatalf("build the TCP toy's module: %v\n%s", tcpModule.err, tcpModule.out)
		}
		t.Cleanup(func() { os.RemoveAll(tcpModule.dir) })
		cmd := exec.Command(os.Args[0], "-test.run=^TestBrowserToyTCP$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), toyTCPEnv+"=1", toyModulesEnv+"="+tcpModule.dir)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestBrowserToyTCP") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	srv, err := tcpserver.Listen(tcpserver.Answer, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	fast := shared.Rate{PerSecond: 10000, Burst: 10000}
	rs := relay.New(relay.Config{AllowAddrs: []netip.AddrPort{netip.MustParseAddrPort(srv.Addr())},
		Loopback: &relay.ClientLimits{ConnRate: fast, IPRate: fast, MaxInFlight: 1024, QueueFrames: 4096, QueueBytes: 1 << 20}}, logger)
	defer rs.Shutdown(context.Background())
	ref := server.Ref{Protocol: toyproto.TCPProtocol, Addr: srv.Addr()}
	h, err := web.New(web.Config{Servers: []server.Ref{ref}, Exchanger: rs, Logger: logger, ModulesDir: os.Getenv(toyModulesEnv)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/relay", rs)
	mux.Handle("/", h)
	ts := httptest.NewServer(mux)
	defer ts.Close()

	tab := browserTab(t)
	if err := chromedp.Do(tab, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, tab, "the TCP toy's row online with its name and players",
		`(globalThis.querylensBrowse?.view() ?? []).some(r => r.state === "online" && r.name === `+jsQuote(toyproto.ServerName)+` && r.players === 2)`, 60*time.Second)
	if got := srv.Asked(); !slices.Contains(got, "Q"+srv.Addr()) || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "localhost") }) {
		t.Errorf("the server was asked %q; want its own address, from the relay", got)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(ts.URL+ref.Path())); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, tab, "the TCP toy's status page online", `document.body.innerText.includes(`+jsQuote(toyproto.ServerName)+`)`, 20*time.Second)
}
