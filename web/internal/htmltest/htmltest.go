// Package htmltest reads rendered pages the way the tests need to: parse
// with golang.org/x/net/html and select elements by data-testid, tag and
// attribute, instead of matching strings.
package htmltest

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Doc is a parsed page.
type Doc struct{ Root *html.Node }

// Parse parses b or fails the test.
func Parse(t testing.TB, b []byte) Doc {
	t.Helper()
	n, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parse HTML: %v", err)
	}
	return Doc{n}
}

// All returns the elements for which match is true, in document order.
func All(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

// Attr returns the value of attribute key, or "".
func Attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// HasAttr reports whether n carries attribute key.
func HasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// Text is the text content of n with runs of white space collapsed.
func Text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// TestIDs returns every element with data-testid id.
func (d Doc) TestIDs(id string) []*html.Node {
	return All(d.Root, func(n *html.Node) bool { return Attr(n, "data-testid") == id })
}

// TestID returns the one element with data-testid id, failing the test
// when there is none or more than one.
func (d Doc) TestID(t testing.TB, id string) *html.Node {
	t.Helper()
	ns := d.TestIDs(id)
	if len(ns) != 1 {
		t.Fatalf("want one element with data-testid=%q, found %d", id, len(ns))
	}
	return ns[0]
}

// Meta returns the content of <meta property=key> or <meta name=key>, and
// whether such a tag exists.
func (d Doc) Meta(key string) (string, bool) {
	ns := All(d.Root, func(n *html.Node) bool {
		return n.Data == "meta" && (Attr(n, "property") == key || Attr(n, "name") == key)
	})
	if len(ns) == 0 {
		return "", false
	}
	return Attr(ns[0], "content"), true
}

// Tags returns the elements named tag.
func (d Doc) Tags(tag string) []*html.Node {
	return All(d.Root, func(n *html.Node) bool { return n.Data == tag })
}
