package spawn

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// openPlain opens a file as a C library does: without close-on-exec.
func openPlain(t *testing.T) (fd int, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "held")
	fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	return fd, path
}

// holding is a command that succeeds when it has the file at path open.
func holding(path string) *exec.Cmd {
	return exec.Command("/bin/sh", "-c", `for f in /proc/self/fd/*; do [ "$(readlink "$f")" = "$1" ] && exit 0; done; exit 1`, "sh", path)
}

// holds reports whether a child started by start has the file at path
// open.
func holds(t *testing.T, path string, start func(*exec.Cmd) error) bool {
	t.Helper()
	cmd := holding(path)
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	return cmd.Wait() == nil
}

// TestStartInheritsNothing: a child Start starts holds no descriptor the
// program opened without close-on-exec, and the program's other children
// still inherit it.
func TestStartInheritsNothing(t *testing.T) {
	fd, path := openPlain(t)
	if holds(t, path, Start) {
		t.Errorf("a child of Start has descriptor %d open", fd)
	}
	if !holds(t, path, (*exec.Cmd).Start) {
		t.Errorf("after Start, a child of the program no longer inherits descriptor %d", fd)
	}
}

// TestOpeningHoldsStartOff: a Start waits for Opening's hold, and a
// descriptor opened under the hold does not reach its child. (Without
// the hold, Start could look at the program's descriptors before a C
// library opened one and start the child after: the child inherited
// it, with the file's lock.)
func TestOpeningHoldsStartOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held")
	release := Opening()
	started := make(chan bool)
	go func() {
		cmd := holding(path)
		err := Start(cmd)
		started <- err == nil && cmd.Wait() == nil
	}()
	time.Sleep(50 * time.Millisecond) // Start is waiting for the hold
	select {
	case <-started:
		t.Fatal("Start did not wait for Opening's hold")
	default:
	}
	fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_RDWR, 0o600) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	release()
	if <-started {
		t.Errorf("descriptor %d, opened under Opening, reached Start's child", fd)
	}
}
