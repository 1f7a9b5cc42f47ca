package web_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"golang.org/x/net/html"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web"
	ht "github.com/querylens/querylens/web/internal/htmltest"
)

// keptNow is a web.KeptLister whose lists have not been fetched yet when
// empty is set.
type keptNow struct {
	pageList
	empty bool
	asked []int // the limit of each Current
}

func (k *keptNow) Current(ctx context.Context, protocol, addr string, limit int) (server.MasterList, bool) {
	k.asked = append(k.asked, limit)
	if k.empty {
		return server.MasterList{}, false
	}
	return k.pageList.Current(ctx, protocol, addr, limit)
}

// firstRequest is the first request of protocol's query with opts, as hex
// datagrams: what the server builds for the page's worker to send ahead.
func firstRequest(t *testing.T, protocol string, opts map[string]string) []string {
	t.Helper()
	c, err := codecs.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, dg := range q.Start() {
		out = append(out, hex.EncodeToString(dg))
	}
	return out
}

// TestBrowseBoot: what the browser page's worker is told to ask at once.
// The configured servers come in lists, one per run of servers asked alike
// (protocol and options), each address once, with the first request the
// page's decoder would build when that is the same for every conversation
// (A2S's, Zandronum's: every UDP protocol's today), none when the relay
// writes it (Minecraft Java, over TCP); then the servers of the kept
// list the page comes with (the first web/pages/browse.KeptFirst of it),
// but the one the relay refuses and the one configured already (each
// server is asked once). Before the server has the list, the page
// comes without it and its worker asks only the configured servers.
func TestBrowseBoot(t *testing.T) {
	spec := server.MasterSpec{Protocol: "a2s", Addr: "127.0.0.1:27011", Filter: `\appid\440`, Kept: true}
	kept := &keptNow{pageList: pageList{t: t, spec: spec, shown: 1 << 20}}
	// The list lists a configured server too (10.0.0.1): asked once.
	for _, a := range []string{"10.2.0.1:27015", "10.2.0.2:27015", "10.0.0.1:27015", "10.2.0.3:27015"} {
		ref, err := server.New("a2s", a, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := server.Summary{Protocol: "a2s", Address: a, Key: ref.Key().String(), Status: ref.Path()}
		if a == "10.2.0.2:27015" {
			s.State = server.Refused
		}
		kept.servers = append(kept.servers, s)
	}
	refs := []server.Ref{
		{Protocol: "a2s", Addr: "10.0.0.1:27015"}, {Protocol: "a2s", Addr: "10.0.0.2:27015"},
		{Protocol: "zandronum", Addr: "10.0.0.3:10666"},
		{Protocol: "minecraft", Addr: "10.0.0.4:25565"},
		{Protocol: "a2s", Addr: "10.0.0.5:27015", Options: map[string]string{"players": "true"}},
	}
	h, err := web.New(web.Config{Exchanger: fakes, Masters: []server.MasterSpec{spec}, Servers: refs, MasterLists: kept})
	if err != nil {
		t.Fatal(err)
	}
	a2sList, _ := server.LookupProtocol("a2s")
	type list struct {
		Protocol  string
		Options   map[string]string
		TimeoutMs int
		Query     []string
		Targets   []string
	}
	configured := []list{
		{Protocol: "a2s", Options: a2sList.List, Query: firstRequest(t, "a2s", a2sList.List), Targets: []string{"10.0.0.1:27015", "10.0.0.2:27015"}},
		{Protocol: "zandronum", Query: firstRequest(t, "zandronum", nil), Targets: []string{"10.0.0.3:10666"}},
		{Protocol: "minecraft", Targets: []string{"10.0.0.4:25565"}},
		{Protocol: "a2s", Options: map[string]string{"players": "true"}, Query: firstRequest(t, "a2s", map[string]string{"players": "true"}), Targets: []string{"10.0.0.5:27015"}},
	}
	for _, tc := range []struct {
		name  string
		empty bool
		want  []list
		total int
	}{
		{"the list kept", false, append(slices.Clone(configured), list{Protocol: "a2s", Options: a2sList.List, Query: firstRequest(t, "a2s", a2sList.List),
			Targets: []string{"10.2.0.1:27015", "10.2.0.3:27015"}}), 4},
		{"no list yet", true, configured, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept.empty, kept.asked = tc.empty, nil
			rec := get(t, h, "/")
			if rec.Code != 200 {
				t.Fatalf("status %d", rec.Code)
			}
			d := ht.Parse(t, rec.Body.Bytes())
			var boot struct{ Lists []list }
			if err := json.Unmarshal([]byte(ht.Attr(d.Tags("html")[0], "data-boot")), &boot); err != nil {
				t.Fatal(err)
			}
			if len(boot.Lists) != len(tc.want) {
				t.Fatalf("boot lists %+v, want %+v", boot.Lists, tc.want)
			}
			for i, l := range boot.Lists {
				w := tc.want[i]
				if l.Protocol != w.Protocol || !slices.Equal(l.Targets, w.Targets) || !slices.Equal(l.Query, w.Query) || l.TimeoutMs != 3500 ||
					(w.Options != nil && !maps.Equal(l.Options, w.Options)) {
					t.Errorf("boot list %d = %+v, want %+v", i, l, w)
				}
			}
			if !slices.Equal(kept.asked, []int{1024}) {
				t.Errorf("the kept list asked with limit %v, want one ask of 1024", kept.asked)
			}
			scripts := ht.All(d.Root, func(n *html.Node) bool { return ht.Attr(n, "id") == "ql-config" })
			var cfg struct {
				Masters []struct {
					List *struct {
						Total   int
						Servers []struct{ Address, State string }
					}
				}
			}
			if len(scripts) != 1 {
				t.Fatal("no ql-config")
			}
			if err := json.Unmarshal([]byte(ht.Text(scripts[0])), &cfg); err != nil {
				t.Fatal(err)
			}
			switch {
			case len(cfg.Masters) != 1:
				t.Errorf("config masters %+v", cfg.Masters)
			case tc.total < 0 && cfg.Masters[0].List != nil:
				t.Errorf("the page came with a list %+v the server does not have", cfg.Masters[0].List)
			case tc.total >= 0 && (cfg.Masters[0].List == nil || cfg.Masters[0].List.Total != tc.total || len(cfg.Masters[0].List.Servers) != tc.total):
				t.Errorf("the page's kept list %+v, want the %d servers the server has (the refused one too: the page leaves it out)", cfg.Masters[0].List, tc.total)
			}
		})
	}
}
