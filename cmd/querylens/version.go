package main

import (
	"io"
	"runtime"
	"strconv"

	"github.com/querylens/querylens/internal/buildinfo"
	"github.com/querylens/querylens/web"
)

// version prints the binary's version and the browser module built into
// it, the same facts as the pages' footer.
func (e *env) version(args []string) int {
	fs := newFlagSet(e, "version", "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 0 {
		return e.usageErr(fs, "unexpected argument "+strconv.Quote(pos[0]))
	}
	io.WriteString(e.stdout, "querylens "+buildinfo.Version()+" ("+buildinfo.GoVersion()+" "+runtime.GOOS+"/"+runtime.GOARCH+")\n")
	m, err := web.Module()
	if err != nil {
		io.WriteString(e.stderr, "querylens version: "+err.Error()+"\n")
		return exitFail
	}
	io.WriteString(e.stdout, "browser module "+m.SHA256[:12]+" (sha256 "+m.SHA256+")\n"+
		"  "+strconv.Itoa(m.Size)+" bytes, built by "+m.Go+"; sent as "+
		strconv.Itoa(m.Brotli.Size)+" bytes of br or "+strconv.Itoa(m.Gzip.Size)+" of gzip\n")
	return exitOK
}
