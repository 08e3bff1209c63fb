package regfile

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// inFlight holds the files being written that a program stopped by a
// signal should not leave behind: the temporary files of Pending writes
// and the paths Track registered, each with how many writes hold it.
var inFlight struct {
	sync.Mutex
	paths map[string]int
}

// Track registers path, a file being written under a temporary name
// (a checkpoint's ".partial"), so that a signal RemoveOnSignal handles
// removes it; forget undoes it, once the file is renamed into place or
// removed. It costs a map entry: a program that never calls
// RemoveOnSignal only keeps the list.
func Track(path string) (forget func()) {
	inFlight.Lock()
	if inFlight.paths == nil {
		inFlight.paths = map[string]int{}
	}
	inFlight.paths[path]++
	inFlight.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			inFlight.Lock()
			if inFlight.paths[path]--; inFlight.paths[path] <= 0 {
				delete(inFlight.paths, path)
			}
			inFlight.Unlock()
		})
	}
}

// stopSignals are the signals RemoveOnSignal handles: an interrupt
// (^C), a termination (kill, mpirun stopping a job) and a hang-up.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// RemoveOnSignal makes a program that SIGINT, SIGTERM or SIGHUP stops
// remove the files it was writing (Pending's temporary files, Track's
// paths) first; it then dies of the signal as it would have (a shell
// sees status 128 + the signal's number). A signal the program was
// started ignoring (a background job of a script ignores SIGINT) stays
// ignored. It is for commands: a library's user may handle these
// signals itself.
func RemoveOnSignal() {
	var sigs []os.Signal
	for _, s := range stopSignals {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) == 0 {
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, sigs...)
	go func() {
		s := <-c
		removeInFlight()
		signal.Reset(sigs...)
		syscall.Kill(os.Getpid(), s.(syscall.Signal))
	}()
}

// removeInFlight removes every file inFlight holds. The lock stays held:
// the program is about to die, and no write may start a file meanwhile.
func removeInFlight() {
	inFlight.Lock()
	for p := range inFlight.paths {
		os.Remove(p)
	}
}
