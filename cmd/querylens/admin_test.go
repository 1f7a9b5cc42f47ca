package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeAdminToken: serve --admin-token opens /api/v1/watches on the
// history database that querylens watch add wrote; a request without
// the token gets 401, and serve without a token has no such path.
func TestServeAdminToken(t *testing.T) {
	data := t.TempDir()
	const token = "serve-adm1n-t0ken"
	out, errb, code := runCLI(t, "", "watch", "add", "--data", data, "--id", "duel", "--down",
		"--discord", "https://discord.com/api/webhooks/123/"+hookToken, "zandronum/127.0.0.1:10666")
	if code != exitOK {
		t.Fatalf("watch add: %d\n%s%s", code, out, errb)
	}
	get := func(base, auth string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/api/v1/watches", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name, token, auth string
		status            int
		has               string
	}{
		{"no token configured", "", token, 404, ""},
		{"no token sent", token, "", 401, ""},
		{"right token", token, token, 200, `"url":"https://discord.com/api/webhooks/123/***"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := serveOptions{addr: "127.0.0.1:0", adminToken: tc.token}
			o.history = historyOptions{enabled: true, data: data, dataSet: true, every: time.Minute, idle: time.Hour, max: 10, budget: 10}
			base, logs, stop := serveFor(t, o)
			status, body := get(base, tc.auth)
			stop()
			if status != tc.status || !strings.Contains(body, tc.has) {
				t.Fatalf("status %d, want %d (with %q): %s", status, tc.status, tc.has, body)
			}
			noLeak(t, "the answer", body)
			noLeak(t, "serve's output", logs.String())
			if strings.Contains(body, token) || strings.Contains(logs.String(), token) {
				t.Fatal("the admin token was shown")
			}
		})
	}
}
