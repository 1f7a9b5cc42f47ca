package relay

import (
	"net/netip"
	"slices"

	"github.com/querylens/querylens/relay/wire"
)

type rangeRule struct {
	prefix netip.Prefix
	rule   wire.Rule
}

// ruleOf pairs a prefix, as written, with its rule.
type ruleOf struct {
	prefix string
	rule   wire.Rule
}

func rules(pairs []ruleOf) []rangeRule {
	out := make([]rangeRule, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, rangeRule{netip.MustParsePrefix(p.prefix), p.rule})
	}
	return out
}

// The first matching range decides, so more specific ranges come first.
var (
	v4Rules = rules([]ruleOf{
		{"0.0.0.0/8", wire.RuleUnspecified},
		{"10.0.0.0/8", wire.RulePrivate},
		{"100.64.0.0/10", wire.RuleCGNAT},
		{"127.0.0.0/8", wire.RuleLoopback},
		{"169.254.0.0/16", wire.RuleLinkLocal},
		{"172.16.0.0/12", wire.RulePrivate},
		{"192.0.0.0/24", wire.RuleReserved},
		{"192.0.2.0/24", wire.RuleDocumentation},
		{"192.88.99.0/24", wire.Rule6to4},
		{"192.168.0.0/16", wire.RulePrivate},
		{"198.18.0.0/15", wire.RuleBenchmarking},
		{"198.51.100.0/24", wire.RuleDocumentation},
		{"203.0.113.0/24", wire.RuleDocumentation},
		{"224.0.0.0/4", wire.RuleMulticast},
		{"255.255.255.255/32", wire.RuleBroadcast},
		{"240.0.0.0/4", wire.RuleReserved},
	})
	v6Rules = rules([]ruleOf{
		{"::/128", wire.RuleUnspecified},
		{"::1/128", wire.RuleLoopback},
		{"::ffff:0:0/96", wire.RuleV4Mapped},
		{"::ffff:0:0:0/96", wire.RuleV4Mapped},
		{"::/96", wire.RuleV4Compatible},
		{"64:ff9b::/96", wire.RuleNAT64},
		{"64:ff9b:1::/48", wire.RuleNAT64},
		{"100::/64", wire.RuleDiscard},
		{"2001::/32", wire.RuleTeredo},
		{"2001:2::/48", wire.RuleBenchmarking},
		{"2001::/23", wire.RuleReserved},
		{"2001:db8::/32", wire.RuleDocumentation},
		{"2002::/16", wire.Rule6to4},
		{"3fff::/20", wire.RuleDocumentation},
		{"fc00::/7", wire.RuleUniqueLocal},
		{"fe80::/10", wire.RuleLinkLocal},
		{"fec0::/10", wire.RuleSiteLocal},
		{"ff00::/8", wire.RuleMulticast},
	})
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
)

// Policy decides which targets the relay may send to. It is a pure
// function of the address: it never sends or resolves anything.
type Policy struct {
	allow []netip.Prefix
	ports []uint16 // sorted
	exact map[netip.AddrPort]bool
}

// NewPolicy returns the policy for the given exceptions (Config.AllowTargets
// and Config.AllowPorts).
func NewPolicy(allowTargets []netip.Prefix, allowPorts []uint16) *Policy {
	p := &Policy{allow: slices.Clone(allowTargets), ports: slices.Clone(allowPorts)}
	for i, pr := range p.allow {
		p.allow[i] = pr.Masked()
	}
	slices.Sort(p.ports)
	return p
}

// allowAddrs returns p with the exact targets of Config.AllowAddrs allowed.
func (p *Policy) allowAddrs(addrs []netip.AddrPort) *Policy {
	if len(addrs) > 0 {
		p.exact = make(map[netip.AddrPort]bool, len(addrs))
		for _, a := range addrs {
			p.exact[a] = true
		}
	}
	return p
}

// own reports whether addr is one of Config.AllowAddrs, matched literally.
func (p *Policy) own(addr netip.AddrPort) bool { return p.exact[addr] }

// PolicyError is a refusal by a policy rule.
type PolicyError struct {
	Rule   wire.Rule
	Target string // the address, or the name that resolved to it
}

func (e *PolicyError) Error() string {
	return "relay: target " + e.Target + " refused by rule " + string(e.Rule)
}

// Check returns nil when addr may be queried, otherwise a *PolicyError
// naming the rule. Addresses inside an AllowTargets range pass the address
// rules (the port rules still apply), exact Config.AllowAddrs pass both;
// v4-mapped IPv6 forms are judged as IPv6, so ::ffff:127.0.0.1 is refused
// even when 127.0.0.0/8 is allowed. (The relay unmaps what a resolver
// returns before it calls Check: see resolveTarget.)
func (p *Policy) Check(addr netip.AddrPort) error {
	if p.own(addr) {
		return nil
	}
	if rule := p.addrRule(addr.Addr()); rule != "" {
		return &PolicyError{Rule: rule, Target: addr.String()}
	}
	if rule := p.checkPort(addr.Port()); rule != "" {
		return &PolicyError{Rule: rule, Target: addr.String()}
	}
	return nil
}

// checkPort returns the rule that refuses port, or "".
func (p *Policy) checkPort(port uint16) wire.Rule {
	switch {
	case port == 0:
		return wire.RulePortZero
	case port < 1024:
		if _, ok := slices.BinarySearch(p.ports, port); !ok {
			return wire.RuleWellKnownPort
		}
	}
	return ""
}

func (p *Policy) addrRule(a netip.Addr) wire.Rule {
	switch {
	case !a.IsValid():
		return wire.RuleInvalid
	case a.Zone() != "":
		return wire.RuleZoned
	}
	for _, pr := range p.allow {
		if pr.Contains(a) {
			return ""
		}
	}
	table := v4Rules
	if a.Is6() {
		table = v6Rules
	}
	for _, r := range table {
		if r.prefix.Contains(a) {
			return r.rule
		}
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return wire.RuleReserved
	}
	return ""
}
