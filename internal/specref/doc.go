// Package specref holds no code: its test keeps the code's citations of the
// protocol reference inside the repository.
//
// The protocol reference is docs/protocols/ (see its README.md). Code and
// help text cite a page by its path from the repository root and, where it
// helps, a section by number or heading:
//
//	// The layout follows the flags the server returned (docs/protocols/zandronum.md 2.5).
//	// json.md's "info" is written as docs/protocols/json.md "info".
//
// TestCitations fails on a citation a clone cannot follow: the spec
// directory that sat beside the repository while the codecs were written
// (shared/spec/...), a page named without its docs/protocols/ path, a page
// that does not exist, or a section number or quoted heading the page does
// not have.
package specref
