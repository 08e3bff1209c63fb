package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
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
// a path in /dev or /proc or leading there (/dev/stdout on a file), a link
// leading nowhere yet (its target is created), and a writable file in a
// folder that takes no new file. A file written in place is cut to what
// was written only at Commit; Commit and Abort otherwise only close it. A
// FIFO no process reads (the write would wait for ever), a socket and a
// file the program may not write are refused. A file replaced keeps its
// mode; a new one gets 0666 less the umask, as os.Create gives; another
// hard link to a replaced file keeps the old contents. A temporary file a
// killed program left is removed by a later write of the same path, once
// an hour old; a command that calls RemoveOnSignal removes its own when
// SIGINT, SIGTERM or SIGHUP stops it.
type Pending struct {
	f      *os.File
	path   string
	mode   os.FileMode
	direct bool // written in place
	trim   bool // a regular file written in place: cut at Commit
	done   bool
	forget func() // Track's, for the temporary file
}

// umask is the process's file mode creation mask, read once.
var umask = func() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}()

// Create starts writing the file at path whole (see Pending). Its error
// names path.
func Create(path string) (*Pending, error) {
	inPlace := func() (*Pending, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		fi, err := f.Stat()
		return &Pending{f: f, path: path, direct: true, trim: err == nil && fi.Mode().IsRegular()}, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	fi, err := os.Stat(path) // follows links, /proc's too
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory", path)
	case err == nil && fi.Mode()&os.ModeNamedPipe != 0:
		// Without O_NONBLOCK the open would wait for a reader, for ever.
		f, oerr := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if errors.Is(oerr, syscall.ENXIO) {
			return nil, fmt.Errorf("%s: a named pipe (FIFO) no process reads: start its reader first", path)
		}
		if oerr != nil {
			return nil, fmt.Errorf("%s: %w", path, oerr)
		}
		return &Pending{f: f, path: path, direct: true}, nil
	case err == nil && fi.Mode()&os.ModeSocket != 0:
		return nil, fmt.Errorf("%s: is a socket, not a file", path)
	case err == nil && !fi.Mode().IsRegular(), inSpecialFS(abs):
		return inPlace()
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", path, err)
	case err != nil:
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&os.ModeSymlink != 0 {
			return inPlace() // a link leading nowhere yet
		}
	}
	target := path
	mode := 0o666 &^ umask
	if err == nil {
		real, rerr := filepath.EvalSymlinks(path)
		if rerr != nil {
			return inPlace()
		}
		if realAbs, aerr := filepath.Abs(real); aerr != nil || inSpecialFS(realAbs) {
			return inPlace() // /dev/stdout leading to a file: the shell's
		}
		if syscall.Access(real, 2) != nil { // W_OK
			return nil, fmt.Errorf("%s: %w", path, fs.ErrPermission)
		}
		target, mode = real, fi.Mode().Perm()
	}
	f, cerr := newTemp(target)
	if cerr != nil {
		if err == nil && (errors.Is(cerr, syscall.EACCES) || errors.Is(cerr, syscall.EPERM) || errors.Is(cerr, syscall.EROFS)) {
			return inPlace() // the folder takes no new file; the file may be writable
		}
		return nil, fmt.Errorf("%s: %w", path, cerr)
	}
	return &Pending{f: f, path: target, mode: mode, forget: Track(f.Name())}, nil
}

// newTemp creates the temporary file of a write of target, beside it,
// and sweeps the stale ones of earlier writes.
func newTemp(target string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err == nil {
		sweepStale(target, f.Name())
	}
	return f, err
}

// staleAfter is how long a temporary file of a write must have gone
// unchanged before a later write of the same path removes it: a program
// killed while it wrote left it.
const staleAfter = time.Hour

// sweepStale removes the temporary files of earlier writes of target
// (but mine) unchanged for staleAfter.
func sweepStale(target, mine string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(target), "."+escapeGlob(filepath.Base(target))+".*.tmp"))
	for _, f := range old {
		if fi, err := os.Lstat(f); err == nil && f != mine && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleAfter {
			os.Remove(f)
		}
	}
}

// escapeGlob quotes the characters filepath.Match gives a meaning.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Replace starts writing the file at path whole, as Create, but replacing
// whatever is at path (a link, a device, a FIFO) rather than writing
// through it: for a file of GoOP2's own, such as the tuning file in the
// cache, whose name is its own. The file gets mode 0600, as the cache's
// files have.
func Replace(path string) (*Pending, error) {
	f, err := newTemp(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Pending{f: f, path: path, mode: 0o600, forget: Track(f.Name())}, nil
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
// file's. A file written in place then keeps the length the library
// gives it.
func (p *Pending) TempPath() string {
	p.trim = false
	return p.f.Name()
}

// Commit makes the data written the file at its path, after
// flushing it to the disk; on an error the temporary file is removed and
// the path keeps what it held. Commit after Commit or Abort does nothing.
func (p *Pending) Commit() error {
	if p.done {
		return nil
	}
	p.done = true
	if p.direct {
		var err error
		if p.trim { // what was there beyond what was written goes
			var at int64
			if at, err = p.f.Seek(0, io.SeekCurrent); err == nil {
				err = p.f.Truncate(at)
			}
		}
		if cerr := p.f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p.path, err)
		}
		return nil
	}
	defer p.forget()
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
	return WriteWith(path, "", func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// WriteWith writes the file at path whole or not at all (see Pending)
// with write. An error of write comes back as it is, with " (writing
// PATH)" added; an error of creating the file or of committing it names
// path and gets prefix and ": " before it, where prefix is not empty
// (a package's name, as its other errors begin).
func WriteWith(path, prefix string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err == nil {
		defer f.Abort() // a write that panics; after Commit: nothing
		if werr := write(f); werr != nil {
			return fmt.Errorf("%w (writing %s)", werr, path)
		}
		err = f.Commit()
	}
	if err != nil && prefix != "" {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	return err
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
		p.forget()
	}
}
