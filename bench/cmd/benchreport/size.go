package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/internal/wasmbin"
	"github.com/querylens/querylens/internal/wasmmodule"
)

// sizeSection says where the browser module's bytes go. The shipped module
// is built with -ldflags="-s -w", which leaves out the wasm name section, so
// its functions have no names; this builds the same module a second time,
// as scripts/build-wasm.sh does but with -ldflags=-w only (the linker then
// writes the name section and nothing else changes), adds up the code bytes
// of each function by Go package, and puts the committed module's brotli
// size and its budget (internal/wasmmodule.Budget) beside them. The code
// section of the named build must be the committed module's, byte for byte
// in size: otherwise the committed module is stale and the section says so.
func sizeSection(ctx context.Context, e *env) (string, error) {
	gover, err := goLine(filepath.Join(e.root, "go.mod"))
	if err != nil {
		return "", err
	}
	named := filepath.Join(e.tmp, "querylens-names.wasm")
	buildEnv := []string{"GOTOOLCHAIN=go" + gover, "GOFLAGS=-mod=readonly", "GOEXPERIMENT=", "CGO_ENABLED=0", "GOOS=js", "GOARCH=wasm", "GOWASM="}
	if _, err := e.command(ctx, buildEnv, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-w", "-o", named, "./wasm"); err != nil {
		return "", err
	}
	list, err := e.command(ctx, buildEnv, "go", "list", "-deps", "-f", "{{.ImportPath}} {{.Name}}", "./wasm")
	if err != nil {
		return "", err
	}
	var paths []string
	mainPath := ""
	for l := range strings.SplitSeq(strings.TrimSpace(list), "\n") {
		path, name, _ := strings.Cut(l, " ")
		paths = append(paths, path)
		if name == "main" {
			mainPath = path
		}
	}
	b, err := os.ReadFile(named)
	if err != nil {
		return "", err
	}
	withNames, err := wasmbin.Parse(b)
	if err != nil {
		return "", errors.New(named + ": " + err.Error())
	}
	m, err := wasmmodule.Load(os.DirFS(filepath.Join(e.root, "web", "static")))
	if err != nil {
		return "", err
	}
	raw, err := m.Unbrotli()
	if err != nil {
		return "", err
	}
	shipped, err := wasmbin.Parse(raw)
	if err != nil {
		return "", errors.New(m.Manifest.Brotli.File + ": " + err.Error())
	}
	families := wasmmodule.Families(codecs.Protocols())
	body := sizeReport(m.Manifest, shipped, withNames, newPackageNamer(paths, mainPath), families)
	budget := wasmmodule.Budget(len(families))
	e.addGoal(m.Manifest.Brotli.Size <= budget, "the browser module as served, brotli",
		fmt.Sprintf("≤ %s + %s shared + %s capture reader + %s per protocol family (%s for %d)",
			groupDigits(wasmmodule.BudgetEmpty), groupDigits(wasmmodule.BudgetShared), groupDigits(wasmmodule.BudgetCapture),
			groupDigits(wasmmodule.BudgetPerFamily), groupDigits(budget), len(families)),
		groupDigits(m.Manifest.Brotli.Size)+" bytes (module "+groupDigits(m.Manifest.Size)+")")
	x, err := wasmmodule.LoadIndex(os.DirFS(filepath.Join(e.root, "web", "static")))
	if err != nil {
		return "", err
	}
	body += "\n" + modulesReport(x)
	worst, over := "", 0
	for _, m := range x.Modules[1:] {
		if d := m.Brotli - wasmmodule.FamilyBudget(); worst == "" || d > over {
			worst, over = m.Module, d
		}
	}
	if worst != "" {
		e.addGoal(over <= 0, "each protocol family's browser module as served, brotli",
			fmt.Sprintf("≤ %s + %s shared + %s for the family alone (%s)", groupDigits(wasmmodule.BudgetEmpty),
				groupDigits(wasmmodule.BudgetShared), groupDigits(wasmmodule.BudgetFamilyAlone), groupDigits(wasmmodule.FamilyBudget())),
			fmt.Sprintf("largest %s bytes (%s)", groupDigits(wasmmodule.FamilyBudget()+over), worst))
	}
	if withNames.CodeBytes() != shipped.CodeBytes() || len(withNames.Code) != len(shipped.Code) {
		return body, fmt.Errorf("the sources build to %d functions of %d code bytes, the committed module has %d of %d: run go tool task build:wasm first",
			len(withNames.Code), withNames.CodeBytes(), len(shipped.Code), shipped.CodeBytes())
	}
	shares, err := e.familyShares(ctx, families, m.Manifest.Size, m.Manifest.Brotli.Size)
	body += familySharesReport(e, shares)
	return body, err
}

// goLine returns the version on go.mod's go line ("1.26.8"), the toolchain
// scripts/build-wasm.sh builds with.
func goLine(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "go" {
			return f[1], nil
		}
	}
	return "", errors.New(gomod + " has no go line")
}

// sizeOtherPackages is how many packages outside this module the table
// names; the rest are summed in one row.
const sizeOtherPackages = 2

// sizeReport writes the section's markdown: the module and its budget,
// then the code bytes of each package (every package of this module, the
// largest others, the rest in one row).
func sizeReport(man wasmmodule.Manifest, shipped, named wasmbin.Module, pkgs *packageNamer, families []string) string {
	var sb strings.Builder
	budget := wasmmodule.Budget(len(families))
	fmt.Fprintf(&sb, "`go run ./bench/cmd/benchreport -only size`: the committed module (web/static/querylens.wasm.json), "+
		"and where its code goes, from the same module built again with `-ldflags=-w` instead of `-s -w` so that the "+
		"linker writes the wasm name section (the code section is the same: %s functions, %s bytes).\n\n",
		groupDigits(len(named.Code)), groupDigits(named.CodeBytes()))
	mt := newTable("", "bytes")
	mt.add("module, uncompressed", groupDigits(man.Size))
	mt.add("code section", groupDigits(shipped.CodeBytes()))
	mt.add("data section", groupDigits(shipped.SectionBytes(wasmbin.Data)))
	mt.add("gzip (the fallback; no budget)", groupDigits(man.Gzip.Size))
	mt.add("**brotli (what browsers download)**", "**"+groupDigits(man.Brotli.Size)+"**")
	mt.add(fmt.Sprintf("budget: %s + %s shared + %s capture reader + %d × %s per protocol family",
		groupDigits(wasmmodule.BudgetEmpty), groupDigits(wasmmodule.BudgetShared), groupDigits(wasmmodule.BudgetCapture),
		len(families), groupDigits(wasmmodule.BudgetPerFamily)), groupDigits(budget))
	mt.add("headroom", groupDigits(budget-man.Brotli.Size))
	sb.WriteString(mt.String() + "\n")
	short := make([]string, len(families))
	for i, f := range families {
		short[i] = "`" + strings.TrimPrefix(f, modulePath+"/") + "`"
	}
	fmt.Fprintf(&sb, "Protocol families (codec packages registered): %s.\n\n", strings.Join(short, ", "))

	sb.WriteString("Code bytes per Go package (function bodies in the code section; uncompressed):\n\n")
	pt := newTable("package", "functions", "code bytes", "share")
	total := named.CodeBytes()
	row := func(name string, p pkgSize) {
		pt.add(name, groupDigits(p.funcs), groupDigits(p.bytes), fmt.Sprintf("%.1f%%", 100*float64(p.bytes)/float64(max(total, 1))))
	}
	var ours, others, small pkgSize
	var rest []pkgSize
	nsmall := 0
	for _, p := range packageSizes(named, pkgs) {
		if p.pkg == modulePath || strings.HasPrefix(p.pkg, modulePath+"/") {
			ours.funcs, ours.bytes = ours.funcs+p.funcs, ours.bytes+p.bytes
			// The module's packages under 1 % of the code share a row,
			// so that the section stays short as packages are added.
			if 100*p.bytes < total {
				small.funcs, small.bytes = small.funcs+p.funcs, small.bytes+p.bytes
				nsmall++
				continue
			}
			row("`"+strings.TrimPrefix(p.pkg, modulePath+"/")+"`", p)
		} else {
			rest = append(rest, p)
		}
	}
	if nsmall > 0 {
		row(strconv.Itoa(nsmall)+" smaller packages of this module", small)
	}
	row("**this module, all packages**", ours)
	for i, p := range rest {
		if i < sizeOtherPackages {
			row("`"+p.pkg+"`", p)
			continue
		}
		others.funcs, others.bytes = others.funcs+p.funcs, others.bytes+p.bytes
	}
	if n := len(rest) - sizeOtherPackages; n > 0 {
		row(strconv.Itoa(n)+" other packages", others)
	}
	row("**all**", pkgSize{funcs: len(named.Code), bytes: total})
	sb.WriteString(pt.String())
	return sb.String()
}

// modulesReport is the table of the modules a page may load: the
// combined one and each protocol family's (web/static/querylens.modules.json),
// with their sizes and each one's brotli against the combined module's.
func modulesReport(x wasmmodule.Index) string {
	var sb strings.Builder
	sb.WriteString("The modules a page may load (web/static/querylens.modules.json): the combined one, which the inspector, " +
		"detection and a browse page of several families load, and one per protocol family (`-tags family`: no capture " +
		"reader, pcapng writer or Huffman call), which a browse page of one family loads (docs/architecture.md, \"The browser modules\"):\n\n")
	t := newTable("module", "protocols", "raw", "gzip", "brotli", "budget", "brotli vs combined", "share: brotli over no family")
	all := x.Modules[0].Brotli
	for _, m := range x.Modules {
		budget, share := wasmmodule.Budget(len(m.Families)), ""
		if !m.Combined {
			budget = wasmmodule.FamilyBudget()
			if x.Base != nil {
				share = groupDigits(m.Brotli-x.Base.Brotli) + " (of " + groupDigits(wasmmodule.BudgetFamilyAlone) + ")"
			}
		}
		t.add("`"+m.Module+"`", strconv.Itoa(len(m.Protocols)), groupDigits(m.Size), groupDigits(m.Gzip), groupDigits(m.Brotli),
			groupDigits(budget), fmt.Sprintf("%.0f%%", 100*float64(m.Brotli)/float64(max(all, 1))), share)
	}
	if b := x.Base; b != nil {
		t.add("no family (codecs alone; measured, not sent)", "0", groupDigits(b.Size), groupDigits(b.Gzip), groupDigits(b.Brotli),
			groupDigits(wasmmodule.BudgetEmpty+wasmmodule.BudgetShared), fmt.Sprintf("%.0f%%", 100*float64(b.Brotli)/float64(max(all, 1))), "")
	}
	sb.WriteString(t.String())
	return sb.String()
}

// modulePath is this repository's module.
const modulePath = "github.com/querylens/querylens"

// groupDigits writes n with thousands separators: 639,479.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// pkgSize is the code of one Go package.
type pkgSize struct {
	pkg          string
	funcs, bytes int
}

// packageSizes adds up the code bytes by package, largest first.
func packageSizes(m wasmbin.Module, pkgs *packageNamer) []pkgSize {
	by := map[string]*pkgSize{}
	for i, n := range m.Code {
		name, ok := m.Names[m.Imports+i]
		pkg := "(unnamed)"
		if ok {
			pkg = pkgs.packageOf(name)
		}
		p := by[pkg]
		if p == nil {
			p = &pkgSize{pkg: pkg}
			by[pkg] = p
		}
		p.funcs++
		p.bytes += n
	}
	out := make([]pkgSize, 0, len(by))
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b pkgSize) int {
		if a.bytes != b.bytes {
			return b.bytes - a.bytes
		}
		return strings.Compare(a.pkg, b.pkg)
	})
	return out
}

// linkerName is how the Go linker names a function of package path in the
// wasm name section: every byte other than a letter, digit, '_' or '.'
// becomes '_' (cmd/link/internal/wasm's nameRegexp), so
// "github.com/x/y.(*T).M" is written "github.com_x_y.__T_.M".
func linkerName(path string) string {
	b := []byte(path)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// packageNamer maps the linker's function names back to package paths.
// A name's package cannot be read off the name alone ('/' became '_', and
// paths hold dots), so it is the longest package of the build whose
// linkerName, followed by '.', starts the name. The main package's
// functions are named "main.…". Symbols the compiler makes for types
// ("type:.eq.…", written "type_.eq.…") and functions of no package are
// grouped under parenthesised labels.
type packageNamer struct {
	prefixes []struct{ prefix, path string } // longest prefix first
}

// newPackageNamer takes the import paths of the packages linked in, and the
// main package's.
func newPackageNamer(paths []string, mainPath string) *packageNamer {
	n := &packageNamer{}
	for _, p := range paths {
		prefix := linkerName(p) + "."
		if p == mainPath {
			prefix = "main."
		}
		n.prefixes = append(n.prefixes, struct{ prefix, path string }{prefix, p})
	}
	slices.SortFunc(n.prefixes, func(a, b struct{ prefix, path string }) int { return len(b.prefix) - len(a.prefix) })
	return n
}

func (n *packageNamer) packageOf(name string) string {
	for _, p := range n.prefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.path
		}
	}
	if strings.HasPrefix(name, "type_.") || strings.HasPrefix(name, "go_.") {
		return "(compiler-generated)"
	}
	return "(no package)"
}
