package rss

import "syscall"

func peak() int64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return u.Maxrss * 1024 // kilobytes on Linux
}
