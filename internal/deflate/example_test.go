package deflate_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"

	"github.com/querylens/querylens/internal/deflate"
)

func ExampleGzip() {
	src := []byte(strings.Repeat("querylens decodes game-server replies in the page. ", 40))
	gz := deflate.Gzip(src)

	// Any gzip reader inflates it.
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		panic(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(src), "bytes in,", len(gz), "out, round trip:", bytes.Equal(out, src))
	// Output: 2040 bytes in, 81 out, round trip: true
}

func ExampleAppendGzip() {
	src := []byte(strings.Repeat("abc", 1000))
	// Fewer passes: faster, a little larger on real data.
	gz := deflate.AppendGzip(nil, src, deflate.Options{Iterations: 3})
	fmt.Println(len(gz))
	// Output: 41
}
