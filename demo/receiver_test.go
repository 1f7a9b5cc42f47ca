package demo

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDiscordReceiver: the receiver answers as a Discord webhook does:
// a post with wait=true gets the message and its id, an edit of a
// message it has 200, of one it does not (deleted) 404, and a body that
// breaks querylens's rules (no allowed_mentions) 400.
func TestDiscordReceiver(t *testing.T) {
	rcv := NewDiscordReceiver()
	ts := httptest.NewServer(rcv)
	defer ts.Close()
	hook := ts.URL + "/api/webhooks/1/token"
	body := `{"embeds":[{"title":"a is down"}],"allowed_mentions":{"parse":[]}}`
	do := func(method, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := do("POST", hook, body); code != http.StatusNoContent {
		t.Errorf("post: %d", code)
	}
	code, got := do("POST", hook+"?wait=true", body)
	if code != 200 || !strings.Contains(got, `"id": "1002"`) {
		t.Errorf("post with wait: %d %s", code, got)
	}
	if code, _ := do("PATCH", hook+"/messages/1002", body); code != 200 {
		t.Errorf("edit: %d", code)
	}
	rcv.Delete("1002")
	if code, _ := do("PATCH", hook+"/messages/1002", body); code != http.StatusNotFound {
		t.Errorf("edit of a deleted message: %d", code)
	}
	if code, _ := do("POST", hook, `{"content":"@everyone"}`); code != http.StatusBadRequest {
		t.Errorf("a message without allowed_mentions: %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rcv.Wait(ctx, func(r []Received) bool { return len(r) == 3 }); err != nil {
		t.Fatal(err)
	}
	if r := rcv.Received(); r[0].Content() != "a is down" || r[2].Method != "PATCH" || r[2].Webhook != "1/token" {
		t.Errorf("received %+v", r)
	}
}

// TestDemoFlapping: Config.Flapping adds the flapping server at the
// address asked, out of Targets, among the demo's prefixes; an address
// off loopback is refused.
func TestDemoFlapping(t *testing.T) {
	ctx := context.Background()
	d, err := Start(ctx, Config{Servers: 1, Flapping: &FlapSchedule{Period: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, ok := d.Flapping()
	if !ok || f.Protocol != "quake3" || f.Addr == "" {
		t.Fatalf("flapping %+v %v", f, ok)
	}
	for _, x := range d.Targets() {
		if x.Addr == f.Addr {
			t.Error("the flapping server is among Targets")
		}
	}
	if _, err := Start(ctx, Config{Servers: 1, Flapping: &FlapSchedule{}, FlappingAddr: "192.0.2.1:27960"}); err == nil {
		t.Error("a flapping server off loopback was started")
	}
	if s := (FlapSchedule{Period: 8 * time.Second}).Defaults(); s.Down != 2400*time.Millisecond || s.Step != 280*time.Millisecond {
		t.Errorf("schedule %+v", s)
	}
}
