package web_test

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/querylens/querylens/relay"
	"github.com/querylens/querylens/web"
	"github.com/querylens/querylens/web/internal/fakeserver"
	ht "github.com/querylens/querylens/web/internal/htmltest"
)

// TestStatusPageRefusesWhatRelayRefuses runs the status page over a real
// relay that may reach 127.0.0.0/8 and a webtest server on loopback: the
// plain address answers, and every IPv6 spelling of it is refused by the
// relay's policy as written, with nothing sent.
func TestStatusPageRefusesWhatRelayRefuses(t *testing.T) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			_, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			got.Add(1)
			pc.WriteToUDPAddrPort([]byte("Rloopback|MAP01|0|8|"), from)
		}
	}()
	defer func() { pc.Close(); <-done }()
	port := strconv.Itoa(int(netip.MustParseAddrPort(pc.LocalAddr().String()).Port()))

	rs := relay.New(relay.Config{AllowTargets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, nil)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rs.Shutdown(ctx)
	}()
	// Refusals come back at once and the allowed address's reply ends its
	// query: the bound is never waited for, and a loaded -race run cannot
	// outlast it.
	h, err := web.New(web.Config{Exchanger: rs, PublicURL: "https://ql.example.org", StatusTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, state string }{
		{"[::ffff:127.0.0.1]:" + port, "refused"},
		{"[::ffff:7f00:1]:" + port, "refused"},
		{"[::127.0.0.1]:" + port, "refused"},
		{"[64:ff9b::127.0.0.1]:" + port, "refused"},
		{"127.0.0.1:" + port, "online"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			rec := get(t, h, "/s/"+fakeserver.Protocol+"/"+tc.target)
			if rec.Code != 200 {
				t.Fatalf("status %d", rec.Code)
			}
			d := ht.Parse(t, rec.Body.Bytes())
			if s := ht.Attr(d.TestID(t, "status"), "data-state"); s != tc.state {
				t.Fatalf("data-state %q, want %q (%s)", s, tc.state, ht.Text(d.TestID(t, "status-detail")))
			}
		})
	}
	if n := got.Load(); n != 1 {
		t.Fatalf("the server received %d queries, want 1 (the allowed address only)", n)
	}
}
