package openapitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pb33f/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/querylens/querylens/web/api"
)

// docURL is the location openapi.yaml is known by to the schema compiler:
// every schema of the document is compiled from a JSON pointer into it,
// so that its $refs ("#/components/schemas/Summary") resolve in it.
const docURL = "urn:querylens:openapi.json"

// spec is openapi.yaml (OpenAPI 3.1) read as JSON values. Its schemas are
// JSON Schema 2020-12, compiled and applied by jsonschema; the OpenAPI
// layer around them (paths, operations, responses, headers, media types)
// is read here, and the document check refuses any part of it this file
// does not read, so that nothing in the document goes unchecked.
type spec struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema // by JSON pointer
}

// loadDoc parses the document: YAML into JSON values.
func loadDoc(t *testing.T) *spec {
	t.Helper()
	s, err := parseSpec(api.OpenAPI)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	return s
}

func parseSpec(src []byte) (*spec, error) {
	var y any
	if err := yaml.Unmarshal(src, &y); err != nil {
		return nil, err
	}
	// Through JSON, so that numbers and maps are what the schema
	// compiler takes (json.Number, map[string]any).
	b, err := json.Marshal(y)
	if err != nil {
		return nil, fmt.Errorf("not JSON-shaped: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document is a %T, not an object", v)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, doc); err != nil {
		return nil, err
	}
	return &spec{doc: doc, compiler: c, compiled: map[string]*jsonschema.Schema{}}, nil
}

// newValidator checks the document itself and returns it.
func newValidator(t *testing.T) *spec {
	t.Helper()
	s := loadDoc(t)
	if errs := s.check(); len(errs) > 0 {
		for _, e := range errs {
			t.Errorf("openapi.yaml: %s", e)
		}
		t.FailNow()
	}
	return s
}

// escape and unescape are a JSON pointer's part, written and read.
var (
	escape   = strings.NewReplacer("~", "~0", "/", "~1")
	unescape = strings.NewReplacer("~1", "/", "~0", "~")
)

// pointer is a JSON pointer from its unescaped parts.
func pointer(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(escape.Replace(p))
	}
	return b.String()
}

// at is the value at JSON pointer ptr, or nil.
func (s *spec) at(ptr string) any {
	var v any = s.doc
	if ptr == "" {
		return v
	}
	for _, p := range strings.Split(ptr[1:], "/") {
		p = unescape.Replace(p)
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// deref follows an object's $ref (OpenAPI's, outside the schemas) to the
// object and its pointer.
func (s *spec) deref(ptr string) (map[string]any, string, error) {
	for range 8 {
		m, ok := s.at(ptr).(map[string]any)
		if !ok {
			return nil, ptr, fmt.Errorf("%s: not an object", ptr)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, ptr, nil
		}
		if !strings.HasPrefix(ref, "#/") {
			return nil, ptr, fmt.Errorf("%s: $ref %q is not in the document", ptr, ref)
		}
		ptr = ref[1:]
	}
	return nil, ptr, fmt.Errorf("%s: $ref chain too long", ptr)
}

// schema compiles the schema at ptr once.
func (s *spec) schema(ptr string) (*jsonschema.Schema, error) {
	if sch, ok := s.compiled[ptr]; ok {
		return sch, nil
	}
	frag := url.PathEscape(ptr)
	frag = strings.ReplaceAll(frag, "%2F", "/")
	sch, err := s.compiler.Compile(docURL + "#" + frag)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", ptr, err)
	}
	s.compiled[ptr] = sch
	return sch, nil
}

// methods are the operations a path item may hold.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// keys says which keys of obj (at ptr) are not among allowed (extensions,
// "x-…", aside).
func keys(ptr string, obj map[string]any, allowed ...string) []string {
	var errs []string
	for k := range obj {
		if !slices.Contains(allowed, k) && !strings.HasPrefix(k, "x-") {
			errs = append(errs, fmt.Sprintf("%s: %q is not read by the API's tests", ptr, k))
		}
	}
	slices.Sort(errs)
	return errs
}

// check is the document check: the parts of OpenAPI 3.1 the document
// uses, each where it may be; every $ref resolves; every schema compiles
// (against JSON Schema 2020-12's metaschema); path templates and path
// parameters agree; operationIds are unique.
func (s *spec) check() []string {
	var errs []string
	if v, _ := s.doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		errs = append(errs, fmt.Sprintf("openapi %q: want 3.1.x", v))
	}
	errs = append(errs, keys("", s.doc, "openapi", "info", "servers", "paths", "webhooks", "components", "security", "tags", "externalDocs", "jsonSchemaDialect")...)
	if info, ok := s.doc["info"].(map[string]any); !ok || info["title"] == nil || info["version"] == nil {
		errs = append(errs, "info: want title and version")
	}
	// Every $ref, schemas' included, points into the document.
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				if !strings.HasPrefix(ref, "#/") || s.at(ref[1:]) == nil {
					errs = append(errs, fmt.Sprintf("%s: $ref %q resolves to nothing", ptr, ref))
				}
			}
			for k, e := range x {
				walk(ptr+pointer(k), e)
			}
		case []any:
			for i, e := range x {
				walk(ptr+pointer(strconv.Itoa(i)), e)
			}
		}
	}
	walk("", s.doc)
	comps, _ := s.doc["components"].(map[string]any)
	errs = append(errs, keys("/components", comps, "schemas", "responses", "parameters", "requestBodies", "headers", "securitySchemes", "examples", "links", "callbacks", "pathItems")...)
	if schemas, ok := comps["schemas"].(map[string]any); ok {
		for name := range schemas {
			if _, err := s.schema(pointer("components", "schemas", name)); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	ids := map[string]string{}
	for _, group := range []string{"paths", "webhooks"} {
		items, _ := s.doc[group].(map[string]any)
		if group == "paths" && len(items) == 0 {
			errs = append(errs, "no paths")
		}
		for path := range items {
			item, itemPtr, err := s.deref(pointer(group, path))
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			errs = append(errs, keys(itemPtr, item, append(slices.Clone(methods), "summary", "description", "parameters", "servers")...)...)
			if group == "paths" && !strings.HasPrefix(path, "/") {
				errs = append(errs, fmt.Sprintf("%s: a path begins with /", itemPtr))
			}
			for _, m := range methods {
				if _, ok := item[m]; ok {
					errs = append(errs, s.checkOperation(group, path, itemPtr, m, ids)...)
				}
			}
		}
	}
	slices.Sort(errs)
	return slices.Compact(errs)
}

// checkOperation checks the operation m of the path item at itemPtr (of
// group, under path): its keys, its operationId unique (ids, by pointer),
// its parameters, request body and responses.
func (s *spec) checkOperation(group, path, itemPtr, m string, ids map[string]string) []string {
	opPtr := itemPtr + pointer(m)
	op, ok := s.at(opPtr).(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: not an object", opPtr)}
	}
	errs := keys(opPtr, op, "operationId", "summary", "description", "parameters", "requestBody", "responses", "security", "tags", "deprecated", "servers", "callbacks", "externalDocs")
	if id, ok := op["operationId"].(string); ok {
		if prev, dup := ids[id]; dup {
			errs = append(errs, fmt.Sprintf("%s: operationId %q also at %s", opPtr, id, prev))
		}
		ids[id] = opPtr
	}
	errs = append(errs, s.checkParams(group, path, itemPtr, opPtr)...)
	if _, ok := op["requestBody"]; ok {
		rb, rbPtr, err := s.deref(opPtr + pointer("requestBody"))
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			errs = append(errs, keys(rbPtr, rb, "description", "content", "required")...)
			errs = append(errs, s.checkContent(rbPtr)...)
		}
	}
	resps, _ := op["responses"].(map[string]any)
	if len(resps) == 0 {
		errs = append(errs, fmt.Sprintf("%s: no responses", opPtr))
	}
	for code := range resps {
		if !isStatusKey(code) {
			errs = append(errs, fmt.Sprintf("%s: response key %q is not a status, NXX or default", opPtr, code))
		}
		errs = append(errs, s.checkResponse(opPtr+pointer("responses", code))...)
	}
	return errs
}

// checkResponse checks the response at ptr: its keys, its description,
// its headers and their schemas, its media types.
func (s *spec) checkResponse(ptr string) []string {
	r, rPtr, err := s.deref(ptr)
	if err != nil {
		return []string{err.Error()}
	}
	errs := keys(rPtr, r, "description", "headers", "content", "links")
	if _, ok := r["description"].(string); !ok {
		errs = append(errs, fmt.Sprintf("%s: no description", rPtr))
	}
	hs, herrs := s.headers(rPtr, r)
	errs = append(errs, herrs...)
	for _, h := range hs {
		errs = append(errs, keys(h.ptr, h.obj, "description", "required", "schema", "deprecated", "example", "examples", "style", "explode")...)
		if _, ok := h.obj["schema"]; ok {
			if _, err := s.schema(h.ptr + pointer("schema")); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	return append(errs, s.checkContent(rPtr)...)
}

// header is a response's header object, its $ref followed.
type header struct {
	ptr string
	obj map[string]any
}

// headers are the header objects of the response r at rPtr by name, and
// the errors of those that do not resolve.
func (s *spec) headers(rPtr string, r map[string]any) (map[string]header, []string) {
	out := map[string]header{}
	var errs []string
	hs, _ := r["headers"].(map[string]any)
	for name := range hs {
		obj, ptr, err := s.deref(rPtr + pointer("headers", name))
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out[name] = header{ptr, obj}
	}
	return out, errs
}

// checkParams checks an operation's parameters and its path item's: each
// where it may be, each schema compiling, every path template's name a
// required path parameter and every path parameter in the template.
func (s *spec) checkParams(group, path, itemPtr, opPtr string) []string {
	var errs []string
	inPath := map[string]bool{}
	for _, ptr := range []string{itemPtr, opPtr} {
		list, _ := s.at(ptr + "/parameters").([]any)
		for i := range list {
			p, pPtr, err := s.deref(ptr + pointer("parameters", strconv.Itoa(i)))
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			errs = append(errs, keys(pPtr, p, "name", "in", "description", "required", "deprecated", "schema", "style", "explode", "allowReserved", "example", "examples", "content", "allowEmptyValue")...)
			name, _ := p["name"].(string)
			in, _ := p["in"].(string)
			if name == "" || !slices.Contains([]string{"path", "query", "header", "cookie"}, in) {
				errs = append(errs, fmt.Sprintf("%s: want a name and in of path, query, header or cookie", pPtr))
			}
			if in == "path" {
				inPath[name] = true
				if p["required"] != true {
					errs = append(errs, fmt.Sprintf("%s: a path parameter is required: true", pPtr))
				}
			}
			if _, ok := p["schema"]; ok {
				if _, err := s.schema(pPtr + pointer("schema")); err != nil {
					errs = append(errs, err.Error())
				}
			}
		}
	}
	if group != "paths" {
		return errs
	}
	var tmpl []string
	for _, seg := range strings.Split(path, "/") {
		if n, ok := templateName(seg); ok {
			tmpl = append(tmpl, n)
		}
	}
	for _, n := range tmpl {
		if !inPath[n] {
			errs = append(errs, fmt.Sprintf("%s: {%s} has no path parameter", opPtr, n))
		}
	}
	for n := range inPath {
		if !slices.Contains(tmpl, n) {
			errs = append(errs, fmt.Sprintf("%s: path parameter %q is not in %s", opPtr, n, path))
		}
	}
	return errs
}

// checkContent checks a response's or request body's media types: each a
// media type, each schema compiling.
func (s *spec) checkContent(ptr string) []string {
	var errs []string
	content, _ := s.at(ptr + "/content").(map[string]any)
	for mt, v := range content {
		mPtr := ptr + pointer("content", mt)
		if _, _, err := mime.ParseMediaType(mt); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", mPtr, err))
		}
		m, ok := v.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: not an object", mPtr))
			continue
		}
		errs = append(errs, keys(mPtr, m, "schema", "example", "examples", "encoding")...)
		if _, ok := m["schema"]; ok {
			if _, err := s.schema(mPtr + pointer("schema")); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	return errs
}

// templateName is the name of a path template's segment ("{id}": "id").
func templateName(seg string) (string, bool) {
	if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

// isStatusKey says whether k is a key of responses: a status, a range
// ("4XX") or "default".
func isStatusKey(k string) bool {
	switch {
	case k == "default":
		return true
	case len(k) == 3 && k[0] >= '1' && k[0] <= '5' && k[1:] == "XX":
		return true
	case len(k) == 3:
		n, err := strconv.Atoi(k)
		return err == nil && n >= 100 && n <= 599
	}
	return false
}

// match finds the path template of path: segments equal or a template's
// {name}; of several, the one with most literal segments.
func (s *spec) match(path string) (string, bool) {
	paths, _ := s.doc["paths"].(map[string]any)
	segs := strings.Split(path, "/")
	best, bestLit := "", -1
	for tmpl := range paths {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		lit, ok := 0, true
		for i, t := range ts {
			if _, isVar := templateName(t); isVar {
				if segs[i] == "" {
					ok = false
					break
				}
				continue
			}
			if t != segs[i] {
				ok = false
				break
			}
			lit++
		}
		if ok && (lit > bestLit || lit == bestLit && tmpl < best) {
			best, bestLit = tmpl, lit
		}
	}
	return best, bestLit >= 0
}

// validateResponse checks one response to req against the document: its
// path and method have an operation, its status a response, its headers
// those the response requires (and their schemas), its body a media type
// the response declares, and a JSON body that media type's schema.
func (s *spec) validateResponse(req *http.Request, resp *http.Response, body []byte) []string {
	tmpl, ok := s.match(req.URL.Path)
	if !ok {
		return []string{fmt.Sprintf("%s %s: no path of the document matches", req.Method, req.URL.Path)}
	}
	item, itemPtr, err := s.deref(pointer("paths", tmpl))
	if err != nil {
		return []string{err.Error()}
	}
	m := strings.ToLower(req.Method)
	if _, ok := item[m]; !ok {
		return []string{fmt.Sprintf("%s %s: %s has no %s operation", req.Method, req.URL.Path, tmpl, m)}
	}
	opPtr := itemPtr + pointer(m)
	resps, _ := s.at(opPtr + "/responses").(map[string]any)
	code := strconv.Itoa(resp.StatusCode)
	key := ""
	for _, k := range []string{code, code[:1] + "XX", "default"} {
		if _, ok := resps[k]; ok {
			key = k
			break
		}
	}
	where := fmt.Sprintf("%s %s → %d", req.Method, req.URL.Path, resp.StatusCode)
	if key == "" {
		return []string{fmt.Sprintf("%s: the operation (%s %s) has no response for the status", where, req.Method, tmpl)}
	}
	r, rPtr, err := s.deref(opPtr + pointer("responses", key))
	if err != nil {
		return []string{err.Error()}
	}
	hs, errs := s.headers(rPtr, r)
	for name, h := range hs {
		vals := resp.Header.Values(name)
		if len(vals) == 0 {
			if h.obj["required"] == true {
				errs = append(errs, fmt.Sprintf("%s: no %s header, which the response requires", where, name))
			}
			continue
		}
		if _, ok := h.obj["schema"]; !ok {
			continue
		}
		sch, err := s.schema(h.ptr + pointer("schema"))
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if err := sch.Validate(headerValue(s.at(h.ptr+"/schema/type"), vals[0])); err != nil {
			errs = append(errs, fmt.Sprintf("%s: header %s %q: %v", where, name, vals[0], err))
		}
	}
	content, _ := r["content"].(map[string]any)
	if len(content) == 0 {
		if len(body) > 0 && req.Method != http.MethodHead {
			errs = append(errs, fmt.Sprintf("%s: a body of %d bytes, where the response declares none", where, len(body)))
		}
		return errs
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return append(errs, fmt.Sprintf("%s: Content-Type %q: %v", where, ct, err))
	}
	if _, ok := content[mt]; !ok {
		var want []string
		for k := range content {
			want = append(want, k)
		}
		slices.Sort(want)
		return append(errs, fmt.Sprintf("%s: Content-Type %s, where the response declares %s", where, mt, strings.Join(want, ", ")))
	}
	mPtr := rPtr + pointer("content", mt)
	media, _ := content[mt].(map[string]any)
	if _, ok := media["schema"]; !ok || req.Method == http.MethodHead {
		return errs
	}
	if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return errs
	}
	sch, err := s.schema(mPtr + pointer("schema"))
	if err != nil {
		return append(errs, err.Error())
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return append(errs, fmt.Sprintf("%s: the body is not JSON: %v", where, err))
	}
	if err := sch.Validate(v); err != nil {
		errs = append(errs, fmt.Sprintf("%s: the body against %s: %v", where, mPtr, err))
	}
	return errs
}

// headerValue is a header's text as the value its schema's type reads: an
// integer or a number where the schema says so (a header is text on the
// wire), the text otherwise.
func headerValue(typ any, text string) any {
	if typ == "integer" || typ == "number" {
		if _, err := strconv.ParseFloat(text, 64); err == nil {
			return json.Number(text)
		}
	}
	return text
}

// validate checks the exchange's response against the document.
func (x exchange) validate(s *spec) []string {
	return s.validateResponse(x.req, x.resp, x.body)
}
