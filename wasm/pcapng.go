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
// target "host:port", data Uint8Array, comment?, transport?, stream?}]
//
// transport "tcp" writes data as bytes of a TCP connection with target
// (pcapng.Packet.TCP): the packets of one stream (a number per exchange)
// are one connection. transport "udp" or none writes a UDP datagram.
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
		switch t := v.Get("transport"); {
		case t.Type() == js.TypeUndefined || t.Type() == js.TypeNull:
		case t.Type() == js.TypeString && t.String() == "udp":
		case t.Type() == js.TypeString && t.String() == "tcp":
			p.TCP = true
			s := v.Get("stream")
			if s.Type() != js.TypeNumber || s.Float() != float64(int(s.Float())) || s.Int() < 0 {
				return usageError("pcapng: packet " + strconv.Itoa(i) + " is TCP without a stream number (a whole number, 0 or more)")
			}
			p.Stream = s.Int()
		default:
			return usageError("pcapng: packet " + strconv.Itoa(i) + "'s transport is not \"udp\" or \"tcp\"")
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
