//go:build js

package bench

import (
	"syscall/js"
	"time"
)

// ProcessCPU is the CPU time (user and system, every thread: the engine's
// compiler and collector threads too) the JS host process has used, from
// node's process.cpuUsage(); 0 where there is none (a browser).
func ProcessCPU() time.Duration {
	p := js.Global().Get("process")
	if p.Type() != js.TypeObject || p.Get("cpuUsage").Type() != js.TypeFunction {
		return 0
	}
	u := p.Call("cpuUsage")
	return time.Duration(u.Get("user").Float()+u.Get("system").Float()) * time.Microsecond
}
