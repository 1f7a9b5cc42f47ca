package masters

import (
	"net/netip"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/quake3"
)

// FuzzQuake3Options: any filter is refused with an error or gives options
// the codec builds a master query from.
func FuzzQuake3Options(f *testing.F) {
	for _, s := range []string{
		"",                          // Quake III 1.32's own query
		"68 empty full",             // the same, spelled out
		"Xonotic 3 empty full",      // a DarkPlaces game
		"ext Xonotic 3 ipv4 ipv6",   // getserversExt
		"Xonotic",                   // no protocol number
		"ext 68",                    // getserversExt without a game
		"Q3 99999999999999999999 x", // a protocol number out of range
	} {
		f.Add(s)
	}
	c, _ := codecs.Lookup("quake3")
	f.Fuzz(func(t *testing.T, filter string) {
		opts, err := quake3.MasterOptions(filter)
		if err != nil {
			return
		}
		if _, err := c.NewQuery(opts); err != nil {
			t.Fatalf("Quake3Options(%q) = %v, which NewQuery refuses: %v", filter, opts, err)
		}
	})
}

// replyMaster answers every query with one fixed datagram.
type replyMaster []byte

func (r replyMaster) Respond([]byte, netip.AddrPort, time.Time) [][]byte { return [][]byte{r} }

// FuzzSteamPage: whatever a Steam master answers, the fetch ends, within
// the caps, without a panic, and lists only addresses that can be servers.
func FuzzSteamPage(f *testing.F) {
	f.Add(a2s.AppendMasterReply(nil, addrs(3), true))         // a whole list
	f.Add(a2s.AppendMasterReply(nil, addrs(3), false))        // a page that repeats forever
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 'f', 0x0a, 1, 2, 3}) // a cut entry
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 'I'})                // not a master's reply
	f.Fuzz(func(t *testing.T, reply []byte) {
		fn := newFakeNet(newFakeClock())
		fn.handlers[steamAddr] = replyMaster(reply)
		k := newKeeper(t, fn, func(c *Config) { c.MaxEntries = 1000; c.FirstWait = 10 * time.Second }, "a2s="+steamAddr)
		ml := listOf(t, k, "a2s", steamAddr, nil)
		if len(ml.Servers) > 1000 || ml.Pages > a2s.MaxMasterPages {
			t.Fatalf("%d servers in %d pages", len(ml.Servers), ml.Pages)
		}
		for _, s := range ml.Servers {
			ap, err := netip.ParseAddrPort(s.Address)
			if err != nil || ap.Port() == 0 || ap.Addr().IsUnspecified() || ap.Addr().IsMulticast() {
				t.Fatalf("listed %q", s.Address)
			}
		}
	})
}
