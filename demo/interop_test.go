package demo

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The interop tests ask the emulated servers with clients written
// independently of querylens (GameDig, qstat) and compare what each client
// reports with what our decoder reads from the same replies. Each test
// also runs the client once more through mutatingProxy, which changes one
// field of a reply on its way to the client: the comparison must then
// fail, which shows it looks at that field at all.

// gameDigDir is where `npm ci --prefix tools/gamedig` installs GameDig.
var gameDigDir = filepath.Join("..", "tools", "gamedig")

// needGameDig returns node's path, or skips the test where node or
// GameDig is missing (fails it in CI, which installs both).
func needGameDig(t *testing.T) string {
	t.Helper()
	return needNodePackage(t, "gamedig", "GameDig")
}

// needNodePackage returns node's path, or skips the test where node or
// the npm package pkg (called name) is missing from tools/gamedig; in CI,
// which installs them (npm ci --prefix tools/gamedig), it fails it.
func needNodePackage(t *testing.T, pkg, name string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(gameDigDir, "node_modules", pkg, "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (run npm ci --prefix tools/gamedig): %v", name, err)
		}
		t.Skipf("%s is not installed (npm ci --prefix tools/gamedig): %v", name, err)
	}
	return node
}

// runGameDig runs tools/gamedig/query.mjs with args (HOST PORT [TYPE
// [rules]]) within 30 s and returns the line of JSON it printed.
func runGameDig(t *testing.T, node string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"query.mjs"}, args...)...)
	cmd.Dir = gameDigDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gamedig %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// hostPort splits a loopback "127.0.0.1:port" for query.mjs.
func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return host, port
}

// mutatingProxy forwards datagrams between clients and the server at
// target, both on loopback, passing every reply through reply on its way
// (reply may be nil, and may return the datagram unchanged); queries go
// through as sent. Each client address gets its own socket towards
// the server, so the server tells the clients apart as it would without
// the proxy. It returns the address clients should ask, and how many
// replies reply changed; it stops with the test.
func mutatingProxy(t *testing.T, target string, reply func([]byte) []byte) (addr string, changed func() int) {
	t.Helper()
	to, err := netip.ParseAddrPort(target)
	if err != nil || !to.Addr().IsLoopback() {
		t.Fatalf("mutatingProxy: %q is not a loopback address (%v)", target, err)
	}
	front, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		backs    = map[netip.AddrPort]*net.UDPConn{}
		nChanged int
		wg       sync.WaitGroup
	)
	// back relays the server's replies to client from its own socket.
	back := func(client netip.AddrPort) (*net.UDPConn, error) {
		mu.Lock()
		defer mu.Unlock()
		if c := backs[client]; c != nil {
			return c, nil
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return nil, err
		}
		backs[client] = c
		wg.Go(func() {
			buf := make([]byte, 65536)
			for {
				n, from, err := c.ReadFromUDPAddrPort(buf)
				if err != nil {
					return // closed
				}
				if from != to {
					continue
				}
				r := append([]byte(nil), buf[:n]...)
				m := r
				if reply != nil {
					m = reply(slices.Clone(r))
				}
				if !bytes.Equal(m, r) {
					mu.Lock()
					nChanged++
					mu.Unlock()
				}
				front.WriteToUDPAddrPort(m, client)
			}
		})
		return c, nil
	}
	wg.Go(func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := front.ReadFromUDPAddrPort(buf)
			if err != nil {
				return // closed
			}
			if !from.Addr().Unmap().IsLoopback() {
				continue
			}
			c, err := back(from)
			if err != nil {
				continue
			}
			c.WriteToUDPAddrPort(buf[:n], to)
		}
	})
	t.Cleanup(func() {
		front.Close()
		mu.Lock()
		for _, c := range backs {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return front.LocalAddr().String(), func() int {
		mu.Lock()
		defer mu.Unlock()
		return nChanged
	}
}

// replaceOnce returns a mutate function for mutatingProxy that replaces
// the first old in a reply with new (of the same length, so that lengths
// and offsets stay right).
func replaceOnce(old, new string) func([]byte) []byte {
	if len(old) != len(new) || old == new {
		panic("replaceOnce: " + old + " and " + new + " must differ and have one length")
	}
	return func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
}

// renamed is name with its first letter changed: a player name of the
// same length that the server did not send.
func renamed(name string) string {
	if name == "" {
		return name
	}
	c := byte('X')
	if name[0] == 'X' {
		c = 'Y'
	}
	return string(c) + name[1:]
}

// playerRow is one player as another client and we are compared: name,
// score and ping (-1 where the protocol has none), and the team as text
// ("" for none).
type playerRow struct {
	name        string
	score, ping int
	team        string
}

// comparePlayers says how the players client read differ from ours, in
// any order: nothing when they are the same.
func comparePlayers(client string, ours, theirs []playerRow) []string {
	sorted := func(rs []playerRow) []playerRow {
		rs = slices.Clone(rs)
		slices.SortFunc(rs, func(a, b playerRow) int {
			if c := strings.Compare(a.name, b.name); c != 0 {
				return c
			}
			return a.score - b.score
		})
		return rs
	}
	text := func(rs []playerRow) string {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(r.name + ":" + strconv.Itoa(r.score) + ":" + strconv.Itoa(r.ping) + ":" + r.team + " ")
		}
		return b.String()
	}
	if o, th := sorted(ours), sorted(theirs); !slices.Equal(o, th) {
		return []string{"players: " + client + " " + text(th) + "; ours " + text(o)}
	}
	return nil
}
