//go:build js && wasm && !family

package main

import (
	"strconv"
	"syscall/js"

	"github.com/querylens/querylens/pcapng"
)

// pcapng(packets, app?) → Uint8Array
//
// packets: [{time (ms since the Unix epoch), direction "sent"|"received",
// target "host:port", data Uint8Array, comment?}]
func pcapngFile(args []js.Value) any {
	list := arg(args, 0)
	if list.Type() != js.TypeObject || !jsArray.Call("isArray", list).Bool() {
		return usageError("pcapng: want an array of packets")
	}
	app := stringArg(args, 1)
	if app == "" {
		app = "querylens " + buildVersion()
	}
	pkts := make([]pcapng.Packet, 0, list.Length())
	for i := 0; i < list.Length(); i++ {
		v := list.Index(i)
		data, ok := bytesFromJS(v.Get("data"))
		if !ok {
			return usageError("pcapng: packet " + strconv.Itoa(i) + " has no data Uint8Array")
		}
		target := v.Get("target")
		p := pcapng.Packet{Data: data}
		if ms := v.Get("time"); ms.Type() == js.TypeNumber {
			p.Micros = int64(ms.Float() * 1000)
		}
		if v.Get("direction").String() == "received" {
			p.Direction = pcapng.Received
		}
		if c := v.Get("comment"); c.Type() == js.TypeString {
			p.Comment = c.String()
		}
		if target.Type() == js.TypeString {
			var resolved bool
			p.Target, resolved = pcapng.ParseEndpoint(target.String())
			if !resolved {
				if p.Comment != "" {
					p.Comment += "; "
				}
				p.Comment += "target " + target.String()
			}
		}
		pkts = append(pkts, p)
	}
	return bytesToJS(pcapng.Append(nil, app, pkts))
}
