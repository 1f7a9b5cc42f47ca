package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/querylens/querylens/internal/toyproto"
	"github.com/querylens/querylens/internal/toyproto/tcpserver"
	"github.com/querylens/querylens/relay"
)

// toyTCPEnv runs TestQueryTCP's checks in a child process, where the TCP
// toy (a stream protocol) is registered; the other tests never see it.
const toyTCPEnv = "QUERYLENS_TOY_TCP_PROTOCOL"

func init() {
	if os.Getenv(toyTCPEnv) != "" {
		toyproto.RegisterTCP()
	}
}

// TestQueryTCP asks a stream protocol's server with querylens query: over
// TCP, the target put in the query as written, and an option naming
// another server refused.
func TestQueryTCP(t *testing.T) {
	if os.Getenv(toyTCPEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestQueryTCP$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), toyTCPEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestQueryTCP")) {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	srv, err := tcpserver.Listen(tcpserver.Answer, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out, errOut, code := runCLI(t, "", "query", "-p", toyproto.TCPProtocol, srv.Addr())
	if code != exitOK || !strings.Contains(out, `"name":"`+toyproto.ServerName+`"`) || !strings.Contains(out, `"num_players":2`) {
		t.Fatalf("query (%d): %s %s", code, out, errOut)
	}
	if got := srv.Asked(); len(got) != 1 || got[0] != "Q"+srv.Addr() {
		t.Errorf("the server was asked %q", got)
	}
	if _, errOut, code := runCLI(t, "", "query", "-p", toyproto.TCPProtocol, "-o", "host=elsewhere.example", srv.Addr()); code != exitUsage || !strings.Contains(errOut, "not the target's host") {
		t.Errorf("query with another host (%d): %s", code, errOut)
	}

	// decode cuts a stream protocol's reply, given whole, into its messages.
	stream := append(toyproto.TCPMessage("R"+toyproto.ServerName), toyproto.TCPMessage("P")...)
	stream = append(stream, toyproto.TCPMessage("E")...)
	out, errOut, code = runCLI(t, "", "decode", "-p", toyproto.TCPProtocol, hex.EncodeToString(stream))
	if code != exitOK || !strings.Contains(out, `"num_players":1`) {
		t.Errorf("decode of a stream (%d): %s %s", code, out, errOut)
	}

	// Through a relay, which holds the conversation itself.
	rs := relay.New(relay.Config{AllowTargets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, nil)
	ts := httptest.NewServer(rs)
	defer ts.Close()
	defer rs.Shutdown(context.Background())
	url := "ws" + strings.TrimPrefix(ts.URL, "http")
	out, errOut, code = runCLI(t, "", "query", "-p", toyproto.TCPProtocol, "--relay", url, srv.Addr())
	if code != exitOK || !strings.Contains(out, `"name":"`+toyproto.ServerName+`"`) || !strings.Contains(out, `"num_players":2`) {
		t.Fatalf("query --relay (%d): %s %s", code, out, errOut)
	}
	if got := srv.Asked(); len(got) != 2 || got[1] != "Q"+srv.Addr() {
		t.Errorf("the server was asked %q", got)
	}
	// A closed port: the relay ends the exchange (refused) without a byte.
	out, errOut, code = runCLI(t, "", "query", "-p", toyproto.TCPProtocol, "--relay", url, "-o", "players=false", "127.0.0.2:1")
	if code == exitOK {
		t.Errorf("query --relay to a closed port (%d): %s %s", code, out, errOut)
	}
}
