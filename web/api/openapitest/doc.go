// Package openapitest checks the JSON API against its OpenAPI document
// (web/api/openapi.yaml): the document is valid, its State enum is
// server.States(), and real answers of /api/v1, the kept masters' lists and
// a demo through the relay validate against it.
//
// The document is OpenAPI 3.1, whose schemas are JSON Schema 2020-12:
// spec_test.go reads the OpenAPI layer (paths and their templates,
// operations, responses by status, headers, media types) and hands each
// schema to a JSON Schema validator (github.com/pb33f/jsonschema, which the
// alerts' webhook schema test uses too). Its document check refuses any
// key of that layer it does not read, so a part of the document added
// later is either checked here or fails the test. A whole OpenAPI
// validator library did the same before; compiled twice on every test run
// (for lint and with -race) it was a fifth of go tool task test's time on
// two cores.
//
// It holds only tests, apart from web/api's own, so that web/api's fuzz
// test binary (instrumented whole by go test -fuzz) links none of this.
package openapitest
