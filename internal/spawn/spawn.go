// Package spawn starts child processes that hold none of the program's
// files open, and lets C libraries open files without a child catching
// the descriptor on its way.
//
// Go opens its files close-on-exec; C libraries may not: libhdf5 opens a
// file without the mark, and a compiler started in the background (lazy
// mode's fused loops) that inherited the descriptor held the file's lock
// after File.Close, so that opening the file again failed until the
// compiler had exited.
package spawn

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// starting is held by Start for writing, from its look at the program's
// descriptors until the child has started, and by Opening for reading,
// so that a descriptor a C library opens is either seen and marked by
// Start or made after the child has started.
var starting sync.RWMutex

// Start starts cmd with none of the program's descriptors above 2 open
// in it. The descriptors without the close-on-exec mark get it while cmd
// starts and lose it again after (those still open on the same file), so
// that the children the program starts itself inherit what they did.
// Starts are serialised. A descriptor opened while cmd starts by a C
// call that Opening does not cover may still reach the child.
func Start(cmd *exec.Cmd) error {
	starting.Lock()
	defer starting.Unlock()
	type marked struct {
		fd       int
		dev, ino uint64
	}
	var fds []marked
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range ents {
			fd, err := strconv.Atoi(e.Name())
			if err != nil || fd <= 2 {
				continue
			}
			flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
			var st syscall.Stat_t
			if errno != 0 || flags&syscall.FD_CLOEXEC != 0 || syscall.Fstat(fd, &st) != nil {
				continue
			}
			syscall.CloseOnExec(fd)
			fds = append(fds, marked{fd, st.Dev, st.Ino})
		}
	}
	err := cmd.Start()
	for _, m := range fds {
		var st syscall.Stat_t
		if syscall.Fstat(m.fd, &st) == nil && st.Dev == m.dev && st.Ino == m.ino {
			syscall.Syscall(syscall.SYS_FCNTL, uintptr(m.fd), syscall.F_SETFD, 0)
		}
	}
	return err
}

// Opening holds Start off while a C library opens a file (a descriptor
// without close-on-exec) until the returned function is called:
//
//	defer spawn.Opening()()
//
// The hold must not span anything that starts a process (a compile):
// Start would wait for it for ever, and so would a second hold taken by
// the goroutine holding one while a Start waits. Holds by different
// goroutines may overlap.
func Opening() (release func()) {
	starting.RLock()
	return starting.RUnlock
}
