package alerts

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test vector of Standard Webhooks' own libraries.
func TestSignVector(t *testing.T) {
	sig, err := Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; sig != want {
		t.Fatalf("got %s, want %s", sig, want)
	}
}

func TestParseSecret(t *testing.T) {
	for _, s := range []string{"", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!!!", "whsec_c2hvcnQ="} {
		_, err := ParseSecret(s)
		if !errors.Is(err, ErrSecret) {
			t.Errorf("ParseSecret(%q): %v", s, err)
		}
		if len(s) > len(SecretPrefix) && err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("error carries the secret: %v", err)
		}
	}
	s, err := NewSecret(bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseSecret(s); err != nil {
		t.Fatal(err)
	}
}

// TestSignStandardWebhooks has the reference library verify what Sign
// signs. It needs node and `npm ci --prefix tools/standardwebhooks`; it
// skips without them, except in CI.
func TestSignStandardWebhooks(t *testing.T) {
	dir := filepath.Join("..", "tools", "standardwebhooks")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or the reference library is missing (npm ci --prefix tools/standardwebhooks): %v", err)
		}
		t.Skipf("node or the reference library is missing (npm ci --prefix tools/standardwebhooks): %v", err)
	}
	secret, err := NewSecret(bytes.NewReader(bytes.Repeat([]byte("k3y"), 11)))
	if err != nil {
		t.Fatal(err)
	}
	type signed struct {
		Secret  string            `json:"secret"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	var cases []signed
	var names []string
	for _, e := range append(sampleEvents(), hostileEvents()...) {
		m := Render(DestWebhook, e)
		h, err := WebhookHeaders(secret, m.ID, time.Now(), m.Body)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, signed{secret, h, string(m.Body)})
		names = append(names, string(e.Kind)+" "+e.Watch)
	}
	// Each must fail once changed: a byte of the body, the id, the time.
	good := cases[0]
	bad := []signed{good, good, good}
	bad[0].Body += " "
	bad[1].Headers = map[string]string{"webhook-id": "msg_other", "webhook-timestamp": good.Headers["webhook-timestamp"], "webhook-signature": good.Headers["webhook-signature"]}
	bad[2].Headers = map[string]string{"webhook-id": good.Headers["webhook-id"], "webhook-timestamp": "1", "webhook-signature": good.Headers["webhook-signature"]}
	in, err := json.Marshal(append(cases, bad...))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "verify.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verify.mjs: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cases)+len(bad) {
		t.Fatalf("%d answers for %d messages: %s", len(lines), len(cases)+len(bad), out)
	}
	for i, l := range lines {
		switch {
		case i < len(cases) && l != "ok":
			t.Errorf("%s: the reference library says %q", names[i], l)
		case i >= len(cases) && l == "ok":
			t.Errorf("altered message %d verifies", i-len(cases))
		}
	}
}
