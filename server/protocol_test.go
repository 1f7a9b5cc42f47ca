package server

import (
	"slices"
	"testing"

	"github.com/querylens/querylens/codecs"
)

// TestProtocolOptions checks every registration's options against its
// codec: the list's and the master's are accepted by NewQuery, and each
// list option is one of the codec's, set to something other than its
// default (a default is asked anyway).
func TestProtocolOptions(t *testing.T) {
	for _, p := range Protocols() {
		t.Run(p.Name, func(t *testing.T) {
			c, err := codecs.Lookup(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Master != nil {
				if _, err := c.NewQuery(p.Master.Options); err != nil {
					t.Errorf("master options %v: %v", p.Master.Options, err)
				}
			}
			if p.List == nil {
				return
			}
			if _, err := c.NewQuery(p.List); err != nil {
				t.Errorf("list options %v: %v", p.List, err)
			}
			opts := c.Options()
			for k, v := range p.List {
				i := slices.IndexFunc(opts, func(o codecs.Option) bool { return o.Name == k })
				switch {
				case i < 0:
					t.Errorf("list option %q is not one of the codec's", k)
				case opts[i].Default == v:
					t.Errorf("list option %s=%s is the codec's default", k, v)
				}
			}
		})
	}
}

// TestListAsksWhatTheRowShows pins what the server list leaves to the
// status page, protocol by protocol.
func TestListAsksWhatTheRowShows(t *testing.T) {
	tests := []struct {
		protocol string
		list     map[string]string
	}{
		// INFO and PLAYER (the search reads player names); no RULES.
		{"a2s", map[string]string{"rules": "false"}},
		// \status\: UT's password is in the rules section, so no
		// cheaper query fills the row.
		{"gamespy1", nil},
		// The server fields and players; no team, rule, add-on or limit
		// lists.
		{"ogp", map[string]string{"teams": "false", "rules": "false", "addons": "false", "limits": "false"}},
		{"zandronum", nil},
		{"quake3", nil},
	}
	for _, tc := range tests {
		t.Run(tc.protocol, func(t *testing.T) {
			p, ok := LookupProtocol(tc.protocol)
			if !ok {
				t.Fatal("not registered")
			}
			if len(p.List) != len(tc.list) {
				t.Fatalf("List = %v, want %v", p.List, tc.list)
			}
			for k, v := range tc.list {
				if p.List[k] != v {
					t.Errorf("List[%s] = %q, want %q", k, p.List[k], v)
				}
			}
		})
	}
}
