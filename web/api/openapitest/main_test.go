package openapitest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/querylens/querylens/web/internal/fakeserver"
)

func TestMain(m *testing.M) {
	fakeserver.Register()
	goleak.VerifyTestMain(m)
}
