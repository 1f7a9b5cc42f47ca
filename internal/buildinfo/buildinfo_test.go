package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		main     string
		settings map[string]string
		want     string
	}{
		{"go install at a tag", "v1.4.0", nil, "v1.4.0"},
		{"pseudo-version", "v0.0.0-20261124160000-0123456789ab", nil, "v0.0.0-20261124160000-0123456789ab"},
		{"checkout, clean", "(devel)", map[string]string{"vcs.revision": "0123456789abcdef0123", "vcs.modified": "false"}, "0123456789ab"},
		{"checkout, dirty", "(devel)", map[string]string{"vcs.revision": "0123456789abcdef0123", "vcs.modified": "true"}, "0123456789ab-dirty"},
		{"short revision", "", map[string]string{"vcs.revision": "abc"}, "abc"},
		{"nothing known", "(devel)", nil, "devel"},
		{"empty", "", nil, "devel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/querylens/querylens", Version: tc.main}}
			for k, v := range tc.settings {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: k, Value: v})
			}
			if got := version(bi); got != tc.want {
				t.Errorf("version = %q, want %q", got, tc.want)
			}
		})
	}
	if Version() == "" || GoVersion() == "" {
		t.Error("empty Version or GoVersion")
	}
}

func TestShort(t *testing.T) {
	if got := Short("0123456789abcdef", 12); got != "0123456789ab" {
		t.Errorf("Short = %q", got)
	}
	if got := Short("abc", 12); got != "abc" {
		t.Errorf("Short = %q", got)
	}
}
