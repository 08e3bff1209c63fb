package regfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Pending is a file being written whole: its data goes to a new
// temporary file next to its path, which Commit renames into place. Until
// then, and after Abort or a failed Commit, the path keeps what it held
// (nothing, or the earlier file): a write that fails half way (a full
// disk) leaves no partial file that looks whole. A new temporary file,
// rather than a name chosen in advance, cannot be a FIFO left there.
//
// A path that is a link is written as the file it leads to (the link
// stays). Written in place, as before, where the file cannot be replaced:
// a device, a pipe or FIFO that a process reads (/dev/stdout on a pipe),
// a path through /dev or /proc, a link leading nowhere yet (its target is
// created), and a file in a folder where no new file can be made; Commit
// and Abort then only close it. A FIFO no process reads (it would block
// the write for ever) or a socket is replaced by the file. A file
// replaced keeps its mode (a new one gets 0644); another hard link to it
// keeps the old contents.
type Pending struct {
	f      *os.File
	path   string
	mode   os.FileMode
	direct bool // written in place
	done   bool
}

// Create starts writing the file at path whole (see Pending). Its error
// names path.
func Create(path string) (*Pending, error) {
	inPlace := func() (*Pending, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &Pending{f: f, path: path, direct: true}, nil
	}
	fi, err := os.Stat(path) // follows links, /proc's too
	replace := false         // a FIFO nobody reads, a socket
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory", path)
	case err == nil && fi.Mode()&os.ModeNamedPipe != 0:
		// Without O_NONBLOCK the open waits for a reader, for ever.
		f, oerr := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if oerr == nil {
			return &Pending{f: f, path: path, direct: true}, nil
		}
		if !errors.Is(oerr, syscall.ENXIO) {
			return nil, fmt.Errorf("%s: %w", path, oerr)
		}
		replace = true
	case err == nil && fi.Mode()&os.ModeSocket != 0:
		replace = true
	case err == nil && !fi.Mode().IsRegular():
		return inPlace()
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", path, err)
	case err != nil:
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&os.ModeSymlink != 0 {
			return inPlace() // a link leading nowhere yet
		}
	}
	target := path
	if err == nil {
		real, rerr := filepath.EvalSymlinks(path)
		if rerr != nil {
			return inPlace()
		}
		target = real
	}
	if abs, aerr := filepath.Abs(target); aerr != nil || inSpecialFS(abs) {
		if replace {
			return nil, fmt.Errorf("%s: a pipe no process reads", path)
		}
		return inPlace()
	}
	mode := os.FileMode(0o644)
	if err == nil && !replace {
		mode = fi.Mode().Perm()
	}
	f, cerr := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if cerr != nil {
		if err == nil {
			return inPlace() // the folder takes no new file; the file may be writable
		}
		return nil, fmt.Errorf("%s: %w", path, cerr)
	}
	return &Pending{f: f, path: target, mode: mode}, nil
}

// Replace starts writing the file at path whole, as Create, but replacing
// whatever is at path (a link, a device, a FIFO) rather than writing
// through it: for a file of GoOP2's own, such as the tuning file in the
// cache, whose name is its own.
func Replace(path string) (*Pending, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Pending{f: f, path: path, mode: 0o644}, nil
}

// inSpecialFS reports whether abs is in /dev or /proc, whose files are
// written in place.
func inSpecialFS(abs string) bool {
	for _, dir := range []string{"/dev/", "/proc/"} {
		if strings.HasPrefix(abs, dir) {
			return true
		}
	}
	return false
}

// Write writes b to the file (io.Writer).
func (p *Pending) Write(b []byte) (int, error) { return p.f.Write(b) }

// TempPath returns the temporary file's path, for a library that writes
// a file by its path (CGNS): what it writes there before Commit is the
// file's.
func (p *Pending) TempPath() string { return p.f.Name() }

// Commit makes the data written the file at its path, after
// flushing it to the disk; on an error the temporary file is removed and
// the path keeps what it held. Commit after Commit or Abort does nothing.
func (p *Pending) Commit() error {
	if p.done {
		return nil
	}
	p.done = true
	if p.direct {
		if err := p.f.Close(); err != nil {
			return fmt.Errorf("%s: %w", p.path, err)
		}
		return nil
	}
	err := p.f.Chmod(p.mode)
	if err == nil {
		err = p.f.Sync() // a full disk may show only here
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.f.Name(), p.path)
	}
	if err != nil {
		os.Remove(p.f.Name())
		return fmt.Errorf("%s: %w", p.path, err)
	}
	return nil
}

// WriteFile writes b to the file at path whole or not at all (see
// Pending).
func WriteFile(path string, b []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}

// Abort drops what was written: the path keeps what it held. Abort after
// Commit or Abort does nothing.
func (p *Pending) Abort() {
	if p.done {
		return
	}
	p.done = true
	p.f.Close()
	if !p.direct {
		os.Remove(p.f.Name())
	}
}
