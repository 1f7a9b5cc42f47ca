// Package buildinfo says which querylens this binary is, for `querylens
// version` and the pages' footer.
package buildinfo

import "runtime/debug"

// Version is the module version the binary was built as: the tag or
// pseudo-version `go install …@version` (or a go build in a clean checkout)
// records, else the VCS revision (12 hex digits, "-dirty" when the tree had
// changes), else "devel" (go test, or a build outside a checkout).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return version(bi)
}

func version(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// GoVersion is the toolchain that built the binary ("go1.26.8").
func GoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.GoVersion != "" {
		return bi.GoVersion
	}
	return "unknown"
}

// Short returns the first n characters of a hex digest, or all of it.
func Short(hexDigest string, n int) string {
	if len(hexDigest) > n {
		return hexDigest[:n]
	}
	return hexDigest
}
