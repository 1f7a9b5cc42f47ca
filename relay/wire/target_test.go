package wire

import (
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	cases := []struct {
		in   string
		addr string // expected literal, or
		name string // expected name
		bad  bool
	}{
		{in: "1.2.3.4:10666", addr: "1.2.3.4:10666"},
		{in: "[2001:4860::8888]:27960", addr: "[2001:4860::8888]:27960"},
		{in: "[::ffff:1.2.3.4]:1", addr: "[::ffff:1.2.3.4]:1"},
		{in: "master.zandronum.com:15300", name: "master.zandronum.com"},
		{in: "Master.Example.:15300", name: "master.example"},
		{in: "my_host-1.example:1024", name: "my_host-1.example"},
		{in: "1.2.3.4", bad: true},
		{in: "1.2.3.4:", bad: true},
		{in: "1.2.3.4:65536", bad: true},
		{in: "1.2.3.4:-1", bad: true},
		{in: "1.2.3.4:+80", bad: true},
		{in: "1.2.3.4:0x50", bad: true},
		{in: "1.2.3.4:010", bad: true},
		{in: "1.2.3.4:00", bad: true},
		{in: "::1:10666", bad: true},
		{in: "[::1:10666", bad: true},
		{in: "[1.2.3.4]:10666", bad: true},
		{in: "[fe80::1%eth0]:10666", bad: true},
		{in: ":10666", bad: true},
		{in: "2130706433:80", bad: true},
		{in: "127.1:10666", bad: true},
		{in: "0x7f.0.0.1:10666", bad: true},
		{in: "01.02.03.04:10666", bad: true},
		{in: "-bad.example:10666", bad: true},
		{in: "a..b:10666", bad: true},
		{in: "sp ace:10666", bad: true},
		{in: "host/evil:10666", bad: true},
		{in: strings.Repeat("a", 64) + ".example:10666", bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			tg, err := ParseTarget(tc.in)
			addr, name := tg.Addr, tg.Name
			switch {
			case tc.bad:
				if err == nil {
					t.Fatalf("ParseTarget(%q) = %v %q, want an error", tc.in, addr, name)
				}
			case err != nil:
				t.Fatal(err)
			case tc.addr != "" && (addr.String() != tc.addr || tg.String() != tc.addr):
				t.Fatalf("addr %v (%s), want %s", addr, tg, tc.addr)
			case tc.name != "" && name != tc.name:
				t.Fatalf("name %q, want %q", name, tc.name)
			}
		})
	}
}
