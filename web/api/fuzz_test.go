package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server"
	"github.com/querylens/querylens/web/api"
)

// refuseAll refuses every query at once, so that fuzzing asks nothing and
// waits for nothing.
type refuseAll struct{}

func (refuseAll) Exchange(context.Context, string, string, codecs.Query) (netquery.Result, error) {
	return netquery.Result{}, &wire.RefusedError{ID: 1, Code: wire.CodeDenied, Message: "fuzz: refused"}
}

// FuzzBatch feeds any body to POST /api/v1/servers: it never panics, and
// answers 200 with one entry per listed server, or 400/413 with an error
// naming a field.
func FuzzBatch(f *testing.F) {
	for _, seed := range []string{
		`{"servers":["webtest/10.0.0.1:7777","zandronum/203.0.113.7:10666?flags=0x1"]}`, // a good batch
		`{"servers":["a2s/[2001:db8::7]:27015","webtest/10.0.0.1:7777"]}`,               // IPv6
		`{"servers":[{"protocol":"webtest"}]}`,                                          // the object form, refused
		`{"servers":["webtest/10.0.0.1:7777?x=%zz"]}`,                                   // a bad option
		`{"servers":[]} []`, // two values
		`{"servers":null}`,  // no list
		``,                  // no body
	} {
		f.Add(seed)
	}
	h := api.New(api.Config{Exchanger: refuseAll{}})
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/api/v1/servers", strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200:
			var in api.BatchRequest
			var out api.BatchResponse
			if json.Unmarshal([]byte(body), &in) != nil || json.Unmarshal(rec.Body.Bytes(), &out) != nil || len(out.Servers) != len(in.Servers) {
				t.Fatalf("200 for %q: %s", body, rec.Body)
			}
			for i, s := range out.Servers {
				if !s.State.Valid() {
					t.Fatalf("servers[%d] has state %v", i, s.State)
				}
			}
		case 400, 413:
			var e api.Error
			if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error == "" || e.Field == "" {
				t.Fatalf("%d for %q without a named field: %s", rec.Code, body, rec.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}

// FuzzServer feeds any protocol, address and query to GET
// /api/v1/servers/…: 200 with a Summary, or 400 naming a field.
func FuzzServer(f *testing.F) {
	f.Add("webtest", "10.0.0.1:7777", "")
	f.Add("ogp", "203.0.113.7:7777", "version=0.04")
	f.Add("a2s", "[2001:db8::7]:27015", "")
	f.Add("nope", "x", "a=1&a=2")
	h := api.New(api.Config{Exchanger: refuseAll{}})
	f.Fuzz(func(t *testing.T, protocol, target, query string) {
		if !printable(protocol, "/?#%") || !printable(target, "/?#%") || (query != "" && !printable(query, "#")) {
			return // not one path segment each, or not a request line
		}
		if protocol == "." || protocol == ".." || target == "." || target == ".." {
			return // the mux redirects to the cleaned path
		}
		req := httptest.NewRequest("GET", "/api/v1/servers/"+protocol+"/"+target+"?"+query, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200:
			var s server.Summary
			if json.Unmarshal(rec.Body.Bytes(), &s) != nil || !s.State.Valid() {
				t.Fatalf("200: %s", rec.Body)
			}
		case 400:
			var e api.Error
			if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Field == "" {
				t.Fatalf("400 without a named field: %s", rec.Body)
			}
		default:
			t.Fatalf("status %d for %q %q %q: %s", rec.Code, protocol, target, query, rec.Body)
		}
	})
}

// printable reports whether s is non-empty visible ASCII without any byte
// of not.
func printable(s, not string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f || strings.IndexByte(not, s[i]) >= 0 {
			return false
		}
	}
	return s != ""
}
