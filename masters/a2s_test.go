package masters

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const testKey = "0123456789ABCDEF0123456789ABCDEF"

func TestWebAPI(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		body     string
		listed   int
		complete bool
		err      string
	}{
		{"list", 200, `{"response":{"servers":[{"addr":"203.0.113.1:27015","gameport":27015,"name":"a"},{"addr":"203.0.113.2:27016"},{"addr":"nonsense"},{"addr":"203.0.113.1:27015"}]}}`, 2, true, ""},
		{"empty", 200, `{"response":{}}`, 0, true, ""},
		{"bad key", 403, `<html>Forbidden</html>`, 0, false, "403 Forbidden (is --steam-web-api-key right?)"},
		{"bad json", 200, `{"response":`, 0, false, "does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *http.Request
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer api.Close()
			var logs bytes.Buffer
			fn := newFakeNet(newFakeClock())
			k := newKeeper(t, fn, func(c *Config) {
				c.SteamWebAPIKey, c.steamWebAPI = testKey, api.URL
				c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			}, "a2s="+steamAddr+`?filter=\appid\440`)
			ml := listOf(t, k, "a2s", steamAddr, nil)
			if got == nil || got.URL.Path != "/IGameServersService/GetServerList/v1/" || got.URL.Query().Get("key") != testKey ||
				got.URL.Query().Get("filter") != `\appid\440` || got.URL.Query().Get("limit") != "100000" {
				t.Fatalf("request %v", got)
			}
			if len(ml.Servers) != tc.listed || ml.Complete != tc.complete || !strings.Contains(ml.Error, tc.err) {
				t.Errorf("%d servers, complete %v, error %q; want %d, %v, %q", len(ml.Servers), ml.Complete, ml.Error, tc.listed, tc.complete, tc.err)
			}
			if len(fn.requests(steamAddr)) != 0 {
				t.Error("the UDP master was asked too")
			}
			if strings.Contains(logs.String(), testKey) || strings.Contains(ml.Error, testKey) {
				t.Errorf("the key leaked: %s %s", logs.String(), ml.Error)
			}
		})
	}
}

// TestWebAPIDown: a Web API that does not answer gives an error without
// the URL (which holds the key).
func TestWebAPIDown(t *testing.T) {
	api := httptest.NewServer(http.NotFoundHandler())
	url := api.URL
	api.Close()
	fn := newFakeNet(newFakeClock())
	k := newKeeper(t, fn, func(c *Config) { c.SteamWebAPIKey, c.steamWebAPI = testKey, url }, "a2s="+steamAddr)
	ml := listOf(t, k, "a2s", steamAddr, nil)
	if ml.Error != "the Steam Web API did not answer" || strings.Contains(ml.Error, testKey) {
		t.Errorf("error %q", ml.Error)
	}
}
