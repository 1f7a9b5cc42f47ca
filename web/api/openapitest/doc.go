// Package openapitest checks the JSON API against its OpenAPI document
// (web/api/openapi.yaml): the document is valid, its State enum is
// server.States(), and real answers of /api/v1, the kept masters' lists and
// a demo through the relay validate against it.
//
// It holds only tests, apart from web/api's own, so that web/api's fuzz
// test binary (instrumented whole by go test -fuzz) does not link the
// OpenAPI validator: building that instrumented took minutes.
package openapitest
