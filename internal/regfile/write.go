package regfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Pending is a file being written whole: its data goes to a new
// temporary file next to its path, which Commit renames into place. Until
// then, and after Abort or a failed Commit, the path keeps what it held
// (nothing, or the earlier file): a write that fails half way (a full
// disk) leaves no partial file that looks whole. A new temporary file,
// rather than a name chosen in advance, cannot be a FIFO left there.
//
// A path that is a link is written as the file it leads to (the link
// stays), and one that is not a regular file (/dev/stdout, a FIFO) is
// written in place, as it cannot be replaced: Commit and Abort then only
// close it.
type Pending struct {
	f      *os.File
	path   string
	direct bool // written in place
	done   bool
}

// Create starts writing the file at path whole (see Pending). Its error
// names path.
func Create(path string) (*Pending, error) {
	target := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real
		if fi, err := os.Stat(real); err == nil && !fi.Mode().IsRegular() {
			if fi.IsDir() {
				return nil, fmt.Errorf("%s: is a directory", path)
			}
			f, err := os.OpenFile(real, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return &Pending{f: f, path: path, direct: true}, nil
		}
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Pending{f: f, path: target}, nil
}

// Write writes b to the file (io.Writer).
func (p *Pending) Write(b []byte) (int, error) { return p.f.Write(b) }

// TempPath returns the temporary file's path, for a library that writes
// a file by its path (CGNS): what it writes there before Commit is the
// file's.
func (p *Pending) TempPath() string { return p.f.Name() }

// Commit makes the data written the file at its path (mode 0644), after
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
	err := p.f.Chmod(0o644)
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
