//go:build js && wasm

package main

import (
	"errors"
	"syscall/js"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/server/ident"
)

// The server model (package ident) for the pages, so that they build a
// status link, read a typed address and order a detection with the code
// the server uses.
func registerRef(ns js.Value) {
	ns.Set("ref", fn(refCall))
	ns.Set("paths", fn(paths))
	ns.Set("hostPort", fn(hostPort))
}

// ref(protocol, addr, options) → {protocol, addr, options, path} | {error}
//
// The server's identity as ident.New checks it: the address canonical,
// echo options left out; path is its status page.
func refCall(args []js.Value) any {
	r, err := ident.New(stringArg(args, 0), stringArg(args, 1), optionsFromJS(arg(args, 2)))
	if err != nil {
		return refError(err)
	}
	opts := make(codecs.Object, 0, len(r.Options))
	for _, k := range ident.SortedKeys(r.Options) {
		opts = opts.Add(k, r.Options[k])
	}
	return object(make(codecs.Object, 0, 4).Add("protocol", r.Protocol).Add("addr", r.Addr).Add("options", opts).
		Add("path", r.Path()))
}

// paths(protocol, addrs, options) → paths
//
// The status pages of many servers of one protocol, all with the same
// options (a master's list, the rows a page adds at once), in one call:
// addrs has one address a line and the result one path a line, empty where
// ident.New refuses the server. Each call into the module costs far more
// than spelling a path, so a list of thousands pays it once, not per row.
func paths(args []js.Value) any {
	protocol, addrs, opts := stringArg(args, 0), stringArg(args, 1), optionsFromJS(arg(args, 2))
	b := make([]byte, 0, len(addrs)+len(addrs)/2)
	for start := 0; start <= len(addrs); {
		end := start
		for end < len(addrs) && addrs[end] != '\n' {
			end++
		}
		if start > 0 {
			b = append(b, '\n')
		}
		if r, err := ident.New(protocol, addrs[start:end], opts); err == nil {
			b = append(b, r.Path()...)
		}
		start = end + 1
	}
	return string(b)
}

// hostPort(text, defaultPort) → "host:port" | {error}
func hostPort(args []js.Value) any {
	port := 0
	if p := arg(args, 1); p.Type() == js.TypeNumber {
		port = p.Int()
	}
	addr, err := ident.HostPort(stringArg(args, 0), port)
	if err != nil {
		return refError(err)
	}
	return addr
}

// refError is the failure object of a spelling ident refused: the codec's
// error for a bad option value, else the part it names.
func refError(err error) js.Value {
	if _, ok := errors.AsType[*codecs.Error](err); ok {
		return errorValue(err, nil)
	}
	e := make(codecs.Object, 0, 2)
	if ie, ok := errors.AsType[*ident.Error](err); ok {
		e = e.Add("field", ie.Part)
	}
	return object(make(codecs.Object, 0, 1).Add("error", e.Add("message", err.Error())))
}
