package main

import (
	"strings"
	"testing"

	"github.com/querylens/querylens/web"
)

func TestVersionCommand(t *testing.T) {
	m, err := web.Module()
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "", "version")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// devel under go test: no module version or VCS stamp in a test binary.
	for _, want := range []string{"querylens devel (go", "browser module " + m.SHA256[:12], m.SHA256, "built by " + m.Go} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, _, code := runCLI(t, "", "version", "extra"); code != exitUsage {
		t.Errorf("version extra: exit %d, want %d", code, exitUsage)
	}
}
