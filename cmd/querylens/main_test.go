package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind (a probe's
// losing conversations, serve's listeners, the demo's servers). The one
// goroutine it lets run on is the web package's static-file compressor:
// started when the pages' files load, it gzips each file once and ends by
// itself, bounded by the files embedded, and a short test (the toy
// protocol's child process) can end before it does.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/querylens/querylens/web.gzipAll"))
}
