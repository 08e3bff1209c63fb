// Package regfile opens and reads the files GoOP2 reads — meshes, dumps,
// HDF5 and VTK files, the tuning file, cache entries — so that a path
// naming something other than a regular file cannot hang or exhaust the
// process: a named pipe (FIFO) would block the open or the read for ever,
// a link to /dev/zero or /dev/urandom would read without end, a socket or
// a directory cannot be read at all. Such paths are refused, before they
// are opened, with an error naming the path and what it is; the file is
// then opened without blocking and checked again (it may have been
// replaced in between), and reading stops at the size it had when it was
// opened. It also writes the files GoOP2 writes whole or not at all
// (Pending, WriteWith, WriteFile): to a temporary file renamed into place;
// and it tells when two paths name one file (SameFile), so that a program
// refuses an output that would overwrite one of its inputs
// (CheckOutputs), or an output flag given empty (EmptyOutput).
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotRegular is matched (errors.Is) by the errors that refuse a path
// that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched (errors.Is) by the errors that refuse a file
// larger than its reader allows.
var ErrTooLarge = errors.New("file too large")

// NotRegularError refuses a path that is not a regular file.
type NotRegularError struct {
	Path   string // the path given
	Target string // where a symbolic link leads, when Path is one
	Kind   string // what it is: "a named pipe (FIFO)", "a character device", ...
}

func (e *NotRegularError) Error() string {
	if e.Target != "" {
		return fmt.Sprintf("%s (a link to %s) is %s, not a regular file", e.Path, e.Target, e.Kind)
	}
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.Kind)
}

// Is makes the error match ErrNotRegular.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Kind says what a file of mode m is, for messages: "a regular file", "a
// directory", "a named pipe (FIFO)", "a character device", "a block
// device", "a socket", "a symbolic link", or "an irregular file".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}

// Check returns nil when fi, the description of path, is a regular file,
// and else a *NotRegularError naming path, what it is and, for a symbolic
// link that was followed, where it leads.
func Check(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	e := &NotRegularError{Path: path, Kind: Kind(fi.Mode())}
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 && fi.Mode()&fs.ModeSymlink == 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			e.Target = target
		}
	}
	return e
}

// Stat describes the file at path, following symbolic links, and refuses
// one that is not a regular file (see Check). It is for readers that hand
// the path to a library (HDF5) rather than open it themselves.
func Stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := Check(path, fi); err != nil {
		return nil, err
	}
	return fi, nil
}

// File is a regular file open for reading, and its size when it was
// opened.
type File struct {
	*os.File
	Size int64
}

// Open opens the regular file at path for reading, following symbolic
// links. Anything else is refused before it is opened (opening a FIFO
// blocks until a writer comes, opening a device may act on it), and the
// open itself does not block, so a FIFO swapped in after the check is
// still refused.
func Open(path string) (*File, error) {
	return open(path, 0)
}

// OpenNoFollow is Open for a path whose last element must not be a
// symbolic link (cache entries): a link is refused, not followed.
func OpenNoFollow(path string) (*File, error) {
	return open(path, syscall.O_NOFOLLOW)
}

func open(path string, flags int) (*File, error) {
	stat := os.Stat
	if flags&syscall.O_NOFOLLOW != 0 {
		stat = os.Lstat
	}
	fi, err := stat(path)
	if err != nil {
		return nil, err
	}
	if err := Check(path, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = Check(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{File: f, Size: fi.Size()}, nil
}

// Reader returns a reader of the file's contents that stops at the size
// it had when it was opened, however much is appended meanwhile.
func (f *File) Reader() io.Reader { return io.LimitReader(f.File, f.Size) }

// ReadAll reads the file's contents, the size it had when it was opened;
// a file that shrank or grew meanwhile (another process writing it) is
// an error.
func (f *File) ReadAll() ([]byte, error) {
	b := make([]byte, f.Size+1)
	n, err := io.ReadFull(f.File, b)
	switch {
	case err == nil:
		return nil, fmt.Errorf("%s grew beyond its %d bytes while it was read", f.Name(), f.Size)
	case errors.Is(err, io.ErrUnexpectedEOF) && int64(n) == f.Size, errors.Is(err, io.EOF) && f.Size == 0:
		return b[:n], nil
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%s shrank from %d to %d bytes while it was read", f.Name(), f.Size, n)
	}
	return nil, err
}

// ReadFile reads the whole regular file at path (see Open). A file of
// more than limit bytes is refused before it is read, with an error
// matching ErrTooLarge; a negative limit allows any size.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if limit >= 0 && f.Size > limit {
		return nil, &TooLargeError{Path: path, Size: f.Size, Limit: limit}
	}
	return f.ReadAll()
}

// TooLargeError refuses a file larger than its reader allows.
type TooLargeError struct {
	Path        string
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, more than the %d bytes it may hold", e.Path, e.Size, e.Limit)
}

// Is makes the error match ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }
