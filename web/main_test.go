package web_test

import (
	"os"
	"testing"

	"github.com/querylens/querylens/web/internal/fakeserver"
)

func TestMain(m *testing.M) {
	fakeserver.Register()
	code := m.Run()
	closeBrowser()
	os.Exit(code)
}
