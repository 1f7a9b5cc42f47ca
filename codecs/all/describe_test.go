package all_test

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
)

// TestDescriptions checks each protocol's description against its codec:
// the usual ports start with the DefaultPort, a master's default address
// is on its usual port and its options make a query, a kept master has a
// conversation, and a join link names the address.
func TestDescriptions(t *testing.T) {
	for _, c := range codecs.Protocols() {
		t.Run(c.Name(), func(t *testing.T) {
			d := codecs.DescriptionOf(c)
			if d.Name != c.Name() {
				t.Errorf("Name %q", d.Name)
			}
			if c.DefaultPort() != 0 && (len(d.Ports) == 0 || d.Ports[0] != c.DefaultPort()) {
				t.Errorf("Ports %v do not start with DefaultPort %d", d.Ports, c.DefaultPort())
			}
			if d.Join != "" && !strings.Contains(d.Join, "{addr}") {
				t.Errorf("Join %q has no {addr}", d.Join)
			}
			if d.MinAskMs < 0 || d.ReplyCap.Bytes < 0 || d.ReplyCap.Datagrams < 0 {
				t.Errorf("negative MinAskMs %d or ReplyCap %+v", d.MinAskMs, d.ReplyCap)
			}
			if _, err := c.NewQuery(d.List); err != nil {
				t.Errorf("List %v: %v", d.List, err)
			}
			m := d.Master
			if m == nil {
				return
			}
			if _, err := c.NewQuery(m.Options); err != nil {
				t.Errorf("Master.Options %v: %v", m.Options, err)
			}
			if m.Default != "" {
				_, port, err := net.SplitHostPort(m.Default)
				if err != nil || port != strconv.Itoa(m.Port) {
					t.Errorf("Master.Default %q is not on Master.Port %d", m.Default, m.Port)
				}
			}
			if m.Kept != (m.NewList != nil) {
				t.Errorf("Master.Kept %v but NewList set %v: a kept list needs its conversation", m.Kept, m.NewList != nil)
			}
			if m.NewList != nil {
				l, err := m.NewList("")
				if err != nil {
					t.Fatalf("NewList(\"\"): %v", err)
				}
				q := l.Next()
				if q == nil {
					t.Fatal("the list asks no page")
				}
				if m.ServerFirst != (len(q.Start()) == 0) {
					t.Fatalf("the list's first page sends %d messages first; ServerFirst %v", len(q.Start()), m.ServerFirst)
				}
				if m.Transport == codecs.TCP && (m.MessageLen == nil || m.ReplyCap.Bytes == 0) {
					t.Error("a TCP master without MessageLen or ReplyCap")
				}
				for _, b := range q.Start() {
					if err := c.CheckQuery(b); err != nil {
						t.Errorf("the list's request fails CheckQuery (the relay would refuse it): %v", err)
					}
				}
				// Nothing came: the same page is asked again.
				if addrs, end, err := l.Page(false); len(addrs) != 0 || end || err != nil {
					t.Errorf("Page without a reply = %v, %v, %v; want nothing", addrs, end, err)
				}
				if l.Next() == nil {
					t.Error("no page asked again after a page without a reply")
				}
			}
			if m.Filter != nil {
				opts, err := m.Filter("")
				if err != nil {
					t.Fatalf("Filter(\"\"): %v", err)
				}
				for k, v := range m.Options {
					if _, ok := opts[k]; !ok {
						opts[k] = v
					}
				}
				if _, err := c.NewQuery(opts); err != nil {
					t.Errorf("Filter(\"\") options %v: %v", opts, err)
				}
			}
		})
	}
}
