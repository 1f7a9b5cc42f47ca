package demo_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/demo"
	"github.com/querylens/querylens/masters"
)

func gs1MasterDesc(t *testing.T) *codecs.MasterDescription {
	d, err := codecs.LookupDescription(gamespy1.Protocol)
	if err != nil || d.Master == nil || d.Master.Transport != codecs.TCP {
		t.Fatalf("gamespy1's master is not described as TCP: %v", err)
	}
	return d.Master
}

func startGS1Master(t *testing.T, m *demo.GameSpy1Master) string {
	t.Helper()
	ap, err := demo.ListenGameSpy1Master("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return ap.String()
}

func askGS1Master(t *testing.T, addr string, opts map[string]string, timeout time.Duration) (*codecs.Message, bool, error) {
	t.Helper()
	q, err := (&gamespy1.Codec{}).NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	res, xerr := masters.ExchangeStream(context.Background(), gs1MasterDesc(t), addr, q, masters.StreamConfig{Timeout: timeout})
	if xerr != nil {
		return nil, false, xerr
	}
	m, err := q.Result(codecs.DecodeOptions{})
	return m, res.Done, err
}

var gs1Servers = []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:7778"), netip.MustParseAddrPort("127.0.0.2:7788")}

// TestGameSpy1Master: the demo master lists its servers, as text and as
// records, to a client that answers its challenge, and refuses a wrong
// key with \error\.
func TestGameSpy1Master(t *testing.T) {
	addr := startGS1Master(t, &demo.GameSpy1Master{Servers: gs1Servers})
	for _, list := range []string{"text", "cmp"} {
		m, done, err := askGS1Master(t, addr, map[string]string{"master": "true", "gamename": "ut", "list": list}, 3*time.Second)
		if err != nil || !done || m.Kind != codecs.KindMasterList || strings.Join(m.Servers, " ") != "127.0.0.1:7778 127.0.0.2:7788" {
			t.Errorf("%s: %+v done=%v err=%v", list, m, done, err)
		}
	}
	m, done, err := askGS1Master(t, addr, map[string]string{"master": "true", "gamename": "ut", "key": "Wr0ngK"}, 3*time.Second)
	if err == nil || !done || m.Kind != codecs.KindMasterDenied || !strings.Contains(err.Error(), "validation failed") {
		t.Errorf("a wrong key: %+v done=%v err=%v", m, done, err)
	}
}

// TestGameSpy1MasterHostile: a master that never ends its list costs the
// conversation's timeout and no list; one with a cut record gives the
// whole records and an error at the cut one.
func TestGameSpy1MasterHostile(t *testing.T) {
	addr := startGS1Master(t, &demo.GameSpy1Master{Servers: gs1Servers, Behavior: demo.Endless})
	start := time.Now()
	m, done, err := askGS1Master(t, addr, map[string]string{"master": "true"}, 500*time.Millisecond)
	if done || err == nil || len(m.Servers) != 0 || time.Since(start) > 2*time.Second {
		t.Errorf("endless: %+v done=%v err=%v after %v", m, done, err, time.Since(start))
	}
	addr = startGS1Master(t, &demo.GameSpy1Master{Servers: gs1Servers, Behavior: demo.BadLength})
	m, done, err = askGS1Master(t, addr, map[string]string{"master": "true", "list": "cmp"}, 3*time.Second)
	if !done || !errors.Is(err, codecs.ErrShort) || len(m.Servers) != 2 {
		t.Errorf("cut record: %+v done=%v err=%v", m, done, err)
	}
	m, done, err = askGS1Master(t, addr, map[string]string{"master": "true"}, 3*time.Second)
	if !done || err == nil || len(m.Servers) != 2 {
		t.Errorf("cut text entry: %+v done=%v err=%v", m, done, err)
	}
}

// TestDemoGameSpy1Master: the demo's own master lists its GameSpy v1
// servers, not its fleet.
func TestDemoGameSpy1Master(t *testing.T) {
	d, err := demo.Start(context.Background(), demo.Config{GameSpy1Servers: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m, done, err := askGS1Master(t, d.GameSpy1Master(), map[string]string{"master": "true", "gamename": "ut"}, 3*time.Second)
	if err != nil || !done {
		t.Fatalf("%+v done=%v err=%v", m, done, err)
	}
	want := 0 // the fleet is not on its list
	for _, tg := range d.Targets() {
		if tg.Protocol == gamespy1.Protocol {
			want++
		}
	}
	if len(m.Servers) != want {
		t.Errorf("listed %d servers, want %d: %v", len(m.Servers), want, m.Servers)
	}
}
