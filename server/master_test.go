package server

import "testing"

func TestParseMasterSpec(t *testing.T) {
	tests := []struct {
		in   string
		want MasterSpec
		err  bool
	}{
		{in: "master.zandronum.com:15300", want: MasterSpec{Protocol: "zandronum", Addr: "master.zandronum.com:15300", Kept: true}},
		{in: "zandronum=127.0.0.1:15300?label=QZandronum", want: MasterSpec{Protocol: "zandronum", Addr: "127.0.0.1:15300", Label: "QZandronum", Kept: true}},
		{in: `a2s=127.0.0.1:27011?filter=\appid\440`, want: MasterSpec{Protocol: "a2s", Addr: "127.0.0.1:27011", Filter: `\appid\440`, Kept: true}},
		{in: "[::1]:27950", want: MasterSpec{Protocol: "zandronum", Addr: "[::1]:27950", Kept: true}},
		{in: "quake3=[::1]:27950", want: MasterSpec{Protocol: "quake3", Addr: "[::1]:27950", Kept: true}},
		{in: "gamespy1=127.0.0.1:28900?filter=deusex", want: MasterSpec{Protocol: "gamespy1", Addr: "127.0.0.1:28900", Filter: "deusex", Kept: true}}, // a TCP master, kept
		{in: "gamespy2=127.0.0.1:28900", err: true}, // no master
		{in: "nope=127.0.0.1:1", err: true},
		{in: "a2s=nohostport", err: true},
		{in: "a2s=127.0.0.1:27011?filter=a&filter=b", err: true},
		{in: "a2s=127.0.0.1:27011?colour=red", err: true},
	}
	for _, tt := range tests {
		got, err := ParseMasterSpec(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ParseMasterSpec(%q): err %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if err == nil && got != tt.want {
			t.Errorf("ParseMasterSpec(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if err == nil {
			back, err := ParseMasterSpec(got.String())
			if err != nil || back != got {
				t.Errorf("%q: String %q reads back as %+v, %v", tt.in, got.String(), back, err)
			}
		}
	}
}

func TestDefaultMasters(t *testing.T) {
	ms := DefaultMasters()
	if len(ms) != 5 || ms[0].Protocol != "zandronum" || ms[1].Label != "QZandronum" || ms[2].Protocol != "quake3" || !ms[2].Kept ||
		ms[3].Label != "Xonotic" || ms[4].Label != "OpenArena" {
		t.Fatalf("DefaultMasters() = %+v", ms)
	}
	if ms[0].Addr != defaultOf("zandronum") {
		t.Errorf("Zandronum's default master %s, the protocol table says %s", ms[0].Addr, defaultOf("zandronum"))
	}
}

func defaultOf(protocol string) string {
	p, _ := LookupProtocol(protocol)
	return p.Master.Default
}
