package relay_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/querylens/querylens/relay"
)

// The relay is an http.Handler; the program owns the http.Server.
func ExampleNew() {
	cfg := relay.Config{
		OriginPatterns: []string{"play.example.org"},
		AllowTargets:   []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, // a local demo server
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	srv := relay.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	mux := http.NewServeMux()
	mux.Handle("/relay", srv)
	mux.Handle("/metrics", srv.MetricsHandler())
	hs := &http.Server{Addr: "127.0.0.1:8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	_ = hs // hs.ListenAndServe(), then on exit:
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	hs.Shutdown(ctx)
}

func ExamplePolicy_Check() {
	p := relay.NewPolicy(nil, nil)
	for _, t := range []string{"198.51.100.7:10666", "10.0.0.7:10666", "[::ffff:8.8.8.8]:10666", "8.8.8.8:53", "8.8.8.8:10666"} {
		err := p.Check(netip.MustParseAddrPort(t))
		var pe *relay.PolicyError
		if errors.As(err, &pe) {
			fmt.Println(t, "refused:", pe.Rule)
		} else {
			fmt.Println(t, "allowed")
		}
	}
	// Output:
	// 198.51.100.7:10666 refused: documentation
	// 10.0.0.7:10666 refused: private
	// [::ffff:8.8.8.8]:10666 refused: v4-mapped
	// 8.8.8.8:53 refused: well-known-port
	// 8.8.8.8:10666 allowed
}
