//go:build !unix

package deflate

import "time"

// processCPU is not measured here; the benchmark then omits the metric.
func processCPU() time.Duration { return 0 }
