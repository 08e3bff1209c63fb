// Package rss reports the process's peak resident memory.
package rss

// Peak is the process's peak resident set size in bytes so far (the
// getrusage maximum), or 0 where the system does not report it.
func Peak() int64 { return peak() }
