//go:build !linux

package rss

func peak() int64 { return 0 }

func resetPeak() bool { return false }

func status() (now, peak int64) { return 0, 0 }
