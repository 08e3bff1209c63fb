// Package regfiletest makes, for tests of GoOP2's readers, the paths that
// name something other than a regular file: a FIFO, a symbolic link to
// /dev/zero, a directory. A reader given one must return at once with an
// error naming the path and what it is. Unwritable gives a file every
// write to fails, for writers' errors.
package regfiletest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Special is a path that is not a regular file and what an error refusing
// it says.
type Special struct {
	Name string // for test names: "fifo", "link to /dev/zero", "directory"
	Path string
	Want string // what the refusal says after the path
}

// Make creates, in a fresh temporary directory, a FIFO, a symbolic link to
// /dev/zero and a directory, each called name with a prefix.
func Make(t testing.TB, name string) []Special {
	t.Helper()
	dir := t.TempDir()
	s := []Special{
		{"fifo", filepath.Join(dir, "fifo-"+name), "is a named pipe (FIFO), not a regular file"},
		{"link to /dev/zero", filepath.Join(dir, "zero-"+name), "(a link to /dev/zero) is a character device, not a regular file"},
		{"directory", filepath.Join(dir, "dir-"+name), "is a directory, not a regular file"},
	}
	if err := syscall.Mkfifo(s[0].Path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", s[1].Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(s[2].Path, 0o700); err != nil {
		t.Fatal(err)
	}
	return s
}

// Refused runs read (a reader given s.Path) and fails the test unless it
// returns within a few seconds with an error that names s.Path and says
// what it is. A reader that blocks (a FIFO opened for reading waits for a
// writer) fails the test instead of hanging it; its goroutine is left
// blocked.
func Refused(t testing.TB, s Special, read func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- read() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("%s %s accepted", s.Name, s.Path)
		} else if !strings.Contains(err.Error(), s.Path+" "+s.Want) {
			t.Errorf("%s: error %q does not say %q", s.Name, err, s.Path+" "+s.Want)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("%s %s: the reader still blocks after 10s", s.Name, s.Path)
	}
}

// Unwritable returns a file open for reading only, closed when t ends:
// every write to it fails (EBADF), as writes to standard output fail on
// a full disk or a closed pipe.
func Unwritable(t testing.TB) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "unwritable")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
