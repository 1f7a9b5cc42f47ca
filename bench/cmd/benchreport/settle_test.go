package main

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestSettleBrowser reads a process group's CPU time from /proc: an idle
// group (a sleeping child in a group of its own) settles in one window, a
// group that does not exist is reported as unreadable.
func TestSettleBrowser(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pgid := cmd.Process.Pid
	if _, ok := groupCPU(pgid); !ok {
		t.Fatalf("groupCPU(%d): the sleeping child's group was not found in /proc", pgid)
	}
	d, ok := settleBrowser(pgid)
	if !ok || d >= settleMax {
		t.Errorf("settleBrowser of an idle group = %v, %v; want settled within %v", d, ok, settleMax)
	}
	// A group id no process has (pids stay below 2^22 on Linux).
	if cpu, ok := groupCPU(1 << 23); ok {
		t.Errorf("groupCPU of a group with no process = %v, true; want false", cpu)
	}
	var s settles
	s.record(1200*time.Millisecond, true)
	s.record(800*time.Millisecond, false)
	if got, want := s.String(), "its processes using at most 25ms of CPU time in 250ms, waited for up to 5s after its first blank page: a median 1.00 s, 1 of the run's 2 browsers settled"; got != want {
		t.Errorf("settles = %q, want %q", got, want)
	}
}
