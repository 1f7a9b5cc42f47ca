package web_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/querylens/querylens/web/internal/fakeserver"
)

// TestMain registers the fake protocol, shares one browser between the
// browser tests, and fails the run when a test leaves a goroutine behind
// (checked after the browser is closed, as goleak.VerifyTestMain does).
func TestMain(m *testing.M) {
	fakeserver.Register()
	code := m.Run()
	closeBrowser()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
