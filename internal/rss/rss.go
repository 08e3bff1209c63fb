// Package rss reports the process's peak resident memory.
package rss

// Peak is the process's peak resident set size in bytes so far (the
// getrusage maximum), or 0 where the system does not report it.
func Peak() int64 { return peak() }

// ResetPeak starts a new peak: afterwards Status's peak is the largest
// resident size from now on (Linux: /proc/self/clear_refs). It reports
// whether the system allows it.
func ResetPeak() bool { return resetPeak() }

// Status returns the resident set size now and its peak since the
// process started or since ResetPeak (Linux: VmRSS and VmHWM), in bytes;
// 0 and 0 where the system does not report them.
func Status() (now, peak int64) { return status() }
