package deliver

import "net/netip"

// refusedRanges are the ranges PublicAddr refuses: nothing a webhook on
// the internet can be at, and everything on the operator's own networks.
var refusedRanges = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // this network, unspecified
		"10.0.0.0/8",      // private
		"100.64.0.0/10",   // CGNAT
		"127.0.0.0/8",     // loopback
		"169.254.0.0/16",  // link-local (cloud metadata lives here)
		"172.16.0.0/12",   // private
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"192.88.99.0/24",  // 6to4 relay anycast
		"192.168.0.0/16",  // private
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"224.0.0.0/4",     // multicast
		"240.0.0.0/4",     // reserved, and the broadcast address
		"::/96",           // unspecified, loopback, IPv4-compatible
		"::ffff:0:0:0/96", // IPv4-translated
		"64:ff9b::/96",    // NAT64: reaches IPv4 through a local translator
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard
		"2001::/23",       // IETF protocol assignments (Teredo, benchmarking, ORCHID)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4: reaches IPv4 addresses of any kind
		"3fff::/20",       // documentation
		"fc00::/7",        // unique local
		"fe80::/10",       // link-local
		"fec0::/10",       // site-local (deprecated)
		"ff00::/8",        // multicast
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// PublicAddr is the default address rule: it refuses loopback, private,
// link-local, multicast, unspecified, CGNAT, documentation, benchmarking
// and reserved ranges, the IPv6 spellings that reach IPv4 (mapped,
// compatible, translated, NAT64, 6to4, Teredo), zoned addresses, and
// anything outside global unicast. An IPv4-mapped IPv6 address is judged
// as the IPv4 address it maps.
func PublicAddr(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	if !a.IsGlobalUnicast() {
		return false
	}
	for _, p := range refusedRanges {
		if p.Contains(a) {
			return false
		}
	}
	if a.Is6() && !netip.MustParsePrefix("2000::/3").Contains(a) {
		return false
	}
	return true
}

// allowed is the rule of a Sender: the operator's WebhookAllow ranges
// first, then the injected rule.
func (s *Sender) allowed(a netip.Addr) bool {
	a = a.Unmap()
	if a.Zone() != "" {
		return false
	}
	for _, p := range s.cfg.WebhookAllow {
		if p.Contains(a) {
			return true
		}
	}
	return s.cfg.Allow(a)
}
