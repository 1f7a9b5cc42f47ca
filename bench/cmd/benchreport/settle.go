package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/querylens/querylens/bench"
)

// A freshly started Chromium keeps both cores of the benchmark machine busy
// for ~0.5–0.8 s after its first blank page (its own start: profile, GPU
// and network processes, component registration). A page opened at once
// shares the machine with that, which a visitor's browser, already running
// when a link is opened, does not; the native floors and the start's floor
// page would be measured against a different machine than the page. So a
// browser is used only once its processes have settled (settleBrowser).
const (
	settleWindow = 250 * time.Millisecond // the window the browser's CPU time is read over
	settleIdle   = 25 * time.Millisecond  // at most this much CPU time in a window: settled (10 % of a core)
	settleMax    = 5 * time.Second        // settled or not, the benchmark goes on after this
)

// settleBrowser waits until the processes of process group pgid (a browser
// started by startBrowser) use at most settleIdle of CPU time in a
// settleWindow, or settleMax has passed. It reports how long it waited and
// whether the browser settled. Where /proc cannot be read it waits one
// settleMax.
func settleBrowser(pgid int) (time.Duration, bool) {
	start := time.Now()
	last, ok := groupCPU(pgid)
	if !ok {
		time.Sleep(settleMax)
		return settleMax, false
	}
	for time.Since(start) < settleMax {
		time.Sleep(settleWindow)
		now, ok := groupCPU(pgid)
		if !ok {
			break
		}
		if now-last <= settleIdle {
			return time.Since(start), true
		}
		last = now
	}
	return time.Since(start), false
}

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux everywhere it matters).
const clockTick = 10 * time.Millisecond

// groupCPU is the CPU time (user and system) used so far by the processes
// of process group pgid, from /proc. It is false where /proc has no such
// processes.
func groupCPU(pgid int) (time.Duration, bool) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return 0, false
	}
	var total time.Duration
	found := false
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended meanwhile
		}
		// The command name (field 2) is in parentheses and may hold
		// spaces: the fields are counted after its closing one.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		// f[0] is field 3 (state): pgrp is field 5, utime 14, stime 15.
		if len(f) < 13 {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err != nil || g != pgid {
			continue
		}
		u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
		s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		total += time.Duration(u+s) * clockTick
		found = true
	}
	return total, found
}

// settles keeps what settleBrowser found for the browsers a run started,
// for the sections' method text.
type settles struct {
	mu      sync.Mutex
	waits   []float64 // ms
	settled int
}

var browserSettles settles

func (s *settles) record(d time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, float64(d)/float64(time.Millisecond))
	if ok {
		s.settled++
	}
}

// String says the rule and how the run's browsers met it (the median wait,
// and how many settled before settleMax).
func (s *settles) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rule := fmt.Sprintf("its processes using at most %v of CPU time in %v, waited for up to %v after its first blank page", settleIdle, settleWindow, settleMax)
	if len(s.waits) == 0 {
		return rule
	}
	w := slices.Clone(s.waits)
	return fmt.Sprintf("%s: a median %.2f s, %d of the run's %d browsers settled", rule, bench.Median(w)/1000, s.settled, len(w))
}
