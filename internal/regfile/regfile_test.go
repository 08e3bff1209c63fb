package regfile

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// special makes, in a fresh directory, each kind of path that is not a
// regular file and returns them by name.
func special(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{
		"fifo":          filepath.Join(dir, "fifo"),
		"dir":           filepath.Join(dir, "dir"),
		"link to zero":  filepath.Join(dir, "zero"),
		"link to fifo":  filepath.Join(dir, "fifolink"),
		"char device":   "/dev/zero",
		"endless":       "/dev/urandom",
		"socket":        filepath.Join(dir, "sock"),
		"dangling link": filepath.Join(dir, "dangling"),
	}
	if err := syscall.Mkfifo(paths["fifo"], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		os.Mkdir(paths["dir"], 0o700),
		os.Symlink("/dev/zero", paths["link to zero"]),
		os.Symlink(paths["fifo"], paths["link to fifo"]),
		os.Symlink(filepath.Join(dir, "nowhere"), paths["dangling link"]),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("unix", paths["socket"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return paths
}

// TestRefusesSpecialFiles: FIFOs, devices (directly or through a link),
// sockets and directories are refused at once by every reader, with an
// error naming the path and what it is; nothing blocks.
func TestRefusesSpecialFiles(t *testing.T) {
	want := map[string]string{
		"fifo": "is a named pipe (FIFO)", "dir": "is a directory", "link to zero": "(a link to /dev/zero) is a character device",
		"link to fifo": "is a named pipe (FIFO)", "char device": "is a character device", "endless": "is a character device",
		"socket": "is a socket",
	}
	readers := map[string]func(string) error{
		"Open":         func(p string) error { f, err := Open(p); closeIf(f); return err },
		"OpenNoFollow": func(p string) error { f, err := OpenNoFollow(p); closeIf(f); return err },
		"ReadFile":     func(p string) error { _, err := ReadFile(p, -1); return err },
		"ReadFile 10":  func(p string) error { _, err := ReadFile(p, 10); return err },
		"Stat":         func(p string) error { _, err := Stat(p); return err },
	}
	for name, path := range special(t) {
		for rname, read := range readers {
			done := make(chan error, 1)
			go func() { done <- read(path) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s of %s (%s) blocks", rname, name, path)
			}
			switch {
			case name == "dangling link" && rname != "OpenNoFollow":
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s of %s: %v, want not exist", rname, name, err)
				}
			case err == nil:
				t.Errorf("%s of %s (%s) accepted", rname, name, path)
			case rname == "OpenNoFollow" && strings.Contains(name, "link"):
				if !strings.Contains(err.Error(), path+" is a symbolic link, not a regular file") || !errors.Is(err, ErrNotRegular) {
					t.Errorf("%s of %s: %v", rname, name, err)
				}
			case !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want[name]):
				t.Errorf("%s of %s: error %q does not match ErrNotRegular or say %q and %q", rname, name, err, path, want[name])
			}
		}
	}
}

func closeIf(f *File) {
	if f != nil {
		f.Close()
	}
}

// TestReadsRegularFiles: a regular file (directly or through a link) is
// read whole; one larger than the limit is refused before it is read; a
// reader stops at the size the file had when it was opened.
func TestReadsRegularFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	link := filepath.Join(dir, "link")
	empty := filepath.Join(dir, "empty")
	for _, err := range []error{os.WriteFile(path, []byte("hello"), 0o600), os.Symlink(path, link), os.WriteFile(empty, nil, 0o600)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path  string
		limit int64
		want  string
		err   error
	}{
		{path, -1, "hello", nil},
		{path, 5, "hello", nil},
		{link, 5, "hello", nil},
		{empty, 0, "", nil},
		{path, 4, "", ErrTooLarge},
		{filepath.Join(dir, "missing"), -1, "", os.ErrNotExist},
	} {
		b, err := ReadFile(tc.path, tc.limit)
		if !errors.Is(err, tc.err) || string(b) != tc.want {
			t.Errorf("ReadFile(%s, %d) = %q, %v; want %q, %v", tc.path, tc.limit, b, err, tc.want, tc.err)
		}
	}
	if _, err := ReadFile(path, 4); err == nil || !strings.Contains(err.Error(), path+" is 5 bytes, more than the 4") {
		t.Errorf("too large: %v", err)
	}

	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(path, []byte("hello, world"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAll(); err == nil || !strings.Contains(err.Error(), "grew") {
		t.Errorf("ReadAll of a file that grew: %v", err)
	}
	f.Seek(0, 0)
	if b, err := io.ReadAll(f.Reader()); err != nil || string(b) != "hello" {
		t.Errorf("Reader of a file that grew read %q, %v; want the 5 bytes it had", b, err)
	}
	if err := os.WriteFile(path, []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.Seek(0, 0)
	if _, err := f.ReadAll(); err == nil || !strings.Contains(err.Error(), "shrank from 5 to 2 bytes") {
		t.Errorf("ReadAll of a file that shrank: %v", err)
	}
}
