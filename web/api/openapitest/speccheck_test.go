package openapitest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// tinyDoc is a small OpenAPI document the cases below break one way each.
const tinyDoc = `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /things/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string}}
    get:
      operationId: getThing
      responses:
        "200":
          description: A thing.
          headers:
            Retry-After: {$ref: "#/components/headers/RetryAfter"}
            X-Must: {description: required, required: true, schema: {type: string}}
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
        4XX:
          description: An error.
          content:
            application/json:
              schema: {type: object, required: [error], properties: {error: {type: string}}}
        "204":
          description: Nothing.
  /things/new:
    get:
      operationId: newThing
      responses:
        default: {description: Anything., content: {text/plain: {schema: {type: string}}}}
components:
  headers:
    RetryAfter: {schema: {type: integer}}
  schemas:
    Thing:
      type: object
      additionalProperties: false
      required: [name, at]
      properties:
        name: {type: string, minLength: 1}
        at: {type: string, format: date-time}
`

// TestSpecCheck: the document check refuses each kind of broken
// document, saying where.
func TestSpecCheck(t *testing.T) {
	if s, err := parseSpec([]byte(tinyDoc)); err != nil {
		t.Fatal(err)
	} else if errs := s.check(); len(errs) > 0 {
		t.Fatalf("the tiny document: %v", errs)
	}
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"version", "openapi: 3.1.0", "openapi: 3.0.3", "want 3.1.x"},
		{"ref to nothing", `"#/components/schemas/Thing"`, `"#/components/schemas/Thong"`, "resolves to nothing"},
		{"ref outside", `"#/components/headers/RetryAfter"`, `"other.yaml#/x"`, "resolves to nothing"},
		{"key not read", "operationId: getThing", "operationId: getThing\n      callbackz: {}", `"callbackz" is not read`},
		{"top-level key not read", "info:", "extras: 1\ninfo:", `"extras" is not read`},
		{"bad schema", "minLength: 1", "minLength: -1", "/components/schemas/Thing"},
		{"template without parameter", "/things/{id}:", "/things/{id}/{part}:", "{part} has no path parameter"},
		{"parameter not in template", "/things/{id}:", "/things/{key}:", `path parameter "id" is not in`},
		{"path parameter optional", "{name: id, in: path, required: true,", "{name: id, in: path, required: false,", "required: true"},
		{"parameter nowhere", "in: path, required: true", "in: body, required: true", "want a name and in of"},
		{"duplicate operationId", "operationId: newThing", "operationId: getThing", `operationId "getThing" also at`},
		{"bad status key", `"204":`, `"2X4":`, `"2X4" is not a status`},
		{"response without description", "description: Nothing.", "summary: Nothing.", "no description"},
		{"media type not an object", "{text/plain: {schema: {type: string}}}", "{text/plain: 5}", "/content/text~1plain: not an object"},
		{"bad media type", "text/plain:", "text plain:", "/content/text plain"},
		{"operation not an object", "    get:\n      operationId: newThing", "    get: 5\n    put:\n      operationId: newThing", "/paths/~1things~1new/get: not an object"},
		{"no responses", "default: {description: Anything., content: {text/plain: {schema: {type: string}}}}", "", "no responses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tinyDoc, tc.from) {
				t.Fatalf("%q not in the document", tc.from)
			}
			s, err := parseSpec([]byte(strings.Replace(tinyDoc, tc.from, tc.to, 1)))
			if err != nil {
				t.Fatal(err)
			}
			errs := s.check()
			if !strings.Contains(strings.Join(errs, "\n"), tc.want) {
				t.Errorf("errors %q, want one with %q", errs, tc.want)
			}
		})
	}
}

// TestSpecValidateResponse: each way a response can break the document
// is refused, naming what was wrong; the good ones pass.
func TestSpecValidateResponse(t *testing.T) {
	s, err := parseSpec([]byte(tinyDoc))
	if err != nil {
		t.Fatal(err)
	}
	good := `{"name":"a","at":"2026-12-04T10:00:00Z"}`
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             map[string]string
		body, want         string // want "": valid
	}{
		{"good", "GET", "/things/1", 200, map[string]string{"X-Must": "y", "Content-Type": "application/json"}, good, ""},
		{"good with charset and Retry-After", "GET", "/things/1", 200, map[string]string{"X-Must": "y", "Retry-After": "5", "Content-Type": "application/json; charset=utf-8"}, good, ""},
		{"range status", "GET", "/things/1", 404, map[string]string{"Content-Type": "application/json"}, `{"error":"no"}`, ""},
		{"range status, bad body", "GET", "/things/1", 404, map[string]string{"Content-Type": "application/json"}, `{"err":"no"}`, "the body against"},
		{"literal path preferred", "GET", "/things/new", 200, map[string]string{"Content-Type": "text/plain"}, "hi", ""},
		{"no body declared", "GET", "/things/1", 204, nil, "x", "where the response declares none"},
		{"empty when none declared", "GET", "/things/1", 204, nil, "", ""},
		{"required header missing", "GET", "/things/1", 200, map[string]string{"Content-Type": "application/json"}, good, "no X-Must header"},
		{"header against its schema", "GET", "/things/1", 200, map[string]string{"X-Must": "y", "Retry-After": "soon", "Content-Type": "application/json"}, good, "header Retry-After"},
		{"undeclared status", "GET", "/things/1", 500, nil, "", "no response for the status"},
		{"undeclared method", "POST", "/things/1", 200, nil, "", "has no post operation"},
		{"undeclared path", "GET", "/other", 200, nil, "", "no path of the document matches"},
		{"empty template segment", "GET", "/things/", 200, nil, "", "no path of the document matches"},
		{"undeclared content type", "GET", "/things/1", 200, map[string]string{"X-Must": "y", "Content-Type": "text/html"}, good, "Content-Type text/html"},
		{"not JSON", "GET", "/things/1", 200, map[string]string{"X-Must": "y", "Content-Type": "application/json"}, "{", "not JSON"},
		{"field missing", "GET", "/things/1", 200, map[string]string{"X-Must": "y", "Content-Type": "application/json"}, `{"name":"a"}`, "the body against"},
		{"field not in the schema", "GET", "/things/1", 200, map[string]string{"X-Must": "y", "Content-Type": "application/json"}, `{"name":"a","at":"2026-12-04T10:00:00Z","x":1}`, "the body against"},
		{"format", "GET", "/things/1", 200, map[string]string{"X-Must": "y", "Content-Type": "application/json"}, `{"name":"a","at":"yesterday"}`, "the body against"},
		{"minLength", "GET", "/things/1", 200, map[string]string{"X-Must": "y", "Content-Type": "application/json"}, `{"name":"","at":"2026-12-04T10:00:00Z"}`, "the body against"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
			for k, v := range tc.header {
				resp.Header.Set(k, v)
			}
			errs := s.validateResponse(req, resp, []byte(tc.body))
			got := strings.Join(errs, "\n")
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("refused: %s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("errors %q, want one with %q", got, tc.want)
			}
		})
	}
}
