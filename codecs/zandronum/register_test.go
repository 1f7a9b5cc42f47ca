package zandronum

import (
	"slices"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
)

// TestMasterList plays the kept list's conversation (package masters
// drives it: Next, the exchange, Page) against what a master answers.
func TestMasterList(t *testing.T) {
	servers := multiServers(170, 4) // three packets
	packets := AppendMasterList(nil, servers)
	if len(packets) < 2 {
		t.Fatalf("the list fits %d packet(s); the test wants several", len(packets))
	}
	var want []string
	for _, s := range servers {
		want = append(want, s.String())
	}
	tests := []struct {
		name     string
		filter   string
		replies  [][]byte // fed to each request's query in turn; nil: no reply
		requests int      // requests Next gives
		addrs    []string
		end      bool
		err      string // in Page's error, or NewList's with filter
	}{
		{name: "the whole list, out of order", replies: permute(packets, 2, 0, 1), requests: 1, addrs: want, end: true},
		{name: "asked too soon", replies: [][]byte{AppendMasterDenied(nil, MasterIgnored)}, requests: 1, err: "refused the request: " + codecs.DeniedRateLimited},
		{name: "banned", replies: [][]byte{AppendMasterDenied(nil, MasterBanned)}, requests: 1, err: "refused the request: " + codecs.DeniedBanned},
		{name: "a packet missing", replies: packets[:1], requests: 1, addrs: want[:0], err: "did not end"},
		{name: "a filter", filter: "coop", err: "no filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := codecs.LookupDescription(Protocol)
			if err != nil || d.Master == nil || d.Master.NewList == nil || !d.Master.Kept {
				t.Fatalf("Zandronum's master is not kept: %v", err)
			}
			l, err := d.Master.NewList(tt.filter)
			if tt.filter != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("NewList(%q) = %v, want an error with %q", tt.filter, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// A request no reply answers is asked again.
			if l.Next() == nil {
				t.Fatal("no first request")
			}
			if addrs, end, err := l.Page(false); addrs != nil || end || err != nil {
				t.Fatalf("Page after no reply = %v, %v, %v; want the request again", addrs, end, err)
			}
			requests := 0
			var addrs []string
			var end bool
			for q := l.Next(); q != nil; q = l.Next() {
				requests++
				start := q.Start()
				if len(start) != 1 || !slices.Equal(start[0], AppendMasterRequest(nil)) {
					t.Fatalf("request %x, want the master request", start)
				}
				done := false
				for _, b := range tt.replies {
					_, done, _ = q.Feed(b)
				}
				addrs, end, err = l.Page(done)
				if err != nil || end {
					break
				}
			}
			if requests != tt.requests {
				t.Errorf("%d requests, want %d", requests, tt.requests)
			}
			if l.Next() != nil {
				t.Error("Next after the list's end gives another request")
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("Page's error %v, want %q", err, tt.err)
			}
			if end != tt.end || len(tt.addrs) > 0 && !slices.Equal(sorted(addrs), sorted(tt.addrs)) {
				t.Errorf("Page = %d addresses, end %v; want %d, end %v", len(addrs), end, len(tt.addrs), tt.end)
			}
		})
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
