package farm

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/demo"
)

// TestStreamFarm: QueryAll asks a stream protocol's servers over TCP, each
// conversation completing, and reads every byte the servers wrote; a
// server's host must be a loopback address.
func TestStreamFarm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		host func(int) string
	}{
		{"one address", nil},
		{"an address each", func(i int) string { return "127.0.3." + strconv.Itoa(i+1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 5
			f, err := StartTCP(ctx, n, func(i int) demo.StreamHandler {
				return demo.NewMinecraft(int64(i), demo.MinecraftVanilla, demo.Normal)
			}, tc.host)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			out, err := QueryAll(ctx, "minecraft", nil, f.Targets(), 2, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			q, r := f.Counts()
			if out.Done != n || out.Received != n || out.Players == 0 || q != n || r != n || out.Bytes != f.Bytes() || out.Bytes == 0 {
				t.Fatalf("outcome %+v; servers answered %d queries with %d replies, %d bytes", out, q, r, f.Bytes())
			}
			f.Reset()
			if q, r := f.Counts(); q != 0 || r != 0 || f.Bytes() != 0 {
				t.Fatalf("after Reset: %d, %d, %d", q, r, f.Bytes())
			}
		})
	}
	if f, err := StartTCP(ctx, 1, func(int) demo.StreamHandler { return demo.NewMinecraft(1, demo.MinecraftVanilla, demo.Normal) },
		func(int) string { return "192.0.2.1" }); err == nil {
		f.Close()
		t.Fatal("a server on 192.0.2.1: no error")
	}
}
