package netquery

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/internal/toyproto"
	"github.com/querylens/querylens/internal/toyproto/tcpserver"
)

func toyQuery(t *testing.T, target string) codecs.Query {
	t.Helper()
	d, _ := codecs.LookupDescription(toyproto.TCPProtocol)
	host, port, err := SplitTarget(d, target)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := d.TargetOptions(host, port, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := toyproto.TCPCodec{}.NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestTCPExchange(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    tcpserver.Mode
		players int
		done    bool
		capped  bool
		err     error
		fed     int
	}{
		{name: "answer", mode: tcpserver.Answer, players: 3, done: true, fed: 5},
		{name: "trickle", mode: tcpserver.Trickle, players: 1, done: true, fed: 3},
		{name: "endless is capped", mode: tcpserver.Endless, capped: true, fed: toyproto.TCPCap.Datagrams},
		{name: "garbled", mode: tcpserver.Garbled, err: ErrBadFraming, fed: 1},
		{name: "hang up inside a message", mode: tcpserver.HangUp, players: 4, err: ErrIncomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := tcpserver.Listen(tc.mode, tc.players)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			q := toyQuery(t, srv.Addr())
			res, err := (&TCP{}).Exchange(ctx, toyproto.TCPProtocol, srv.Addr(), q)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if res.Done != tc.done || res.Capped != tc.capped || res.Sent != 1 {
				t.Fatalf("result %+v", res)
			}
			if tc.fed > 0 && res.Received != tc.fed {
				t.Errorf("fed %d messages, want %d", res.Received, tc.fed)
			}
			if got := srv.Asked(); len(got) != 1 || got[0] != "Q"+srv.Addr() {
				t.Errorf("the server was asked %q", got)
			}
			if tc.done {
				m, err := q.Result(codecs.DecodeOptions{})
				if err != nil || m.Info.Name != toyproto.ServerName || m.Info.NumPlayers != tc.players {
					t.Errorf("Result = %+v, %v", m, err)
				}
			}
		})
	}
}

func TestTCPSilentServerTimesOut(t *testing.T) {
	srv, err := tcpserver.Listen(tcpserver.Silent, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res, err := (&TCP{Timeout: 100 * time.Millisecond}).Exchange(context.Background(), toyproto.TCPProtocol, srv.Addr(), toyQuery(t, srv.Addr()))
	if err != nil || res.Done || res.Received != 0 {
		t.Fatalf("Exchange = %+v, %v", res, err)
	}
}

func TestTCPCancelled(t *testing.T) {
	srv, err := tcpserver.Listen(tcpserver.Silent, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Asked()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := (&TCP{}).Exchange(ctx, toyproto.TCPProtocol, srv.Addr(), toyQuery(t, srv.Addr())); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestDirectPicksTheTransport(t *testing.T) {
	srv, err := tcpserver.Listen(tcpserver.Answer, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res, err := (&Direct{}).Exchange(context.Background(), toyproto.TCPProtocol, srv.Addr(), toyQuery(t, srv.Addr()))
	if err != nil || !res.Done {
		t.Fatalf("TCP through Direct: %+v, %v", res, err)
	}
	addr, _ := responder(t, 1, false)
	res, err = (&Direct{UDP: UDP{Timeout: 2 * time.Second}}).Exchange(context.Background(), "udp-test", addr, &countQuery{want: 1})
	if err != nil || !res.Done {
		t.Fatalf("UDP through Direct: %+v, %v", res, err)
	}
}

func TestSplitTarget(t *testing.T) {
	d, _ := codecs.LookupDescription(toyproto.TCPProtocol)
	for _, tc := range []struct {
		in   string
		host string
		port int
		bad  bool
	}{
		{in: "play.example.org:25000", host: "play.example.org", port: 25000},
		{in: "play.example.org", host: "play.example.org", port: toyproto.TCPPort},
		{in: "[2001:db8::1]:7", host: "2001:db8::1", port: 7},
		{in: "play.example.org:0", bad: true},
		{in: "", bad: true},
	} {
		host, port, err := SplitTarget(d, tc.in)
		if (err != nil) != tc.bad || host != tc.host || port != tc.port {
			t.Errorf("SplitTarget(%q) = %q, %d, %v", tc.in, host, port, err)
		}
	}
	if _, _, err := SplitTarget(codecs.Description{Name: "x", Ports: []int{1}}, "bare"); err == nil {
		t.Error("a bare name is taken for a protocol without SRV")
	}
	opts, err := d.TargetOptions("Play.Example.org", 25000, map[string]string{"host": "play.example.ORG"})
	if err != nil || opts["host"] != "play.example.ORG" || opts["port"] != strconv.Itoa(25000) {
		t.Errorf("TargetOptions = %v, %v", opts, err)
	}
	for _, bad := range []map[string]string{{"host": "other.example"}, {"port": "25001"}, {"port": "x"}} {
		if _, err := d.TargetOptions("play.example.org", 25000, bad); err == nil {
			t.Errorf("TargetOptions took %v", bad)
		}
	}
	if _, err := d.TargetOptions("a\r\nb", 1, nil); err == nil {
		t.Error("TargetOptions took a line break")
	}
}
