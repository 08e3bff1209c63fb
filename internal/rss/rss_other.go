//go:build !linux

package rss

func peak() int64 { return 0 }
