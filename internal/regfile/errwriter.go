package regfile

import "io"

// ErrWriter passes writes on to W until one fails, and remembers that
// first error (Err); later writes return it without writing. A program
// writes its report to standard output through one and checks Err
// before it exits, so that a report that could not be written (a full
// disk, a closed pipe, /dev/full) fails the program rather than being
// lost in silence.
type ErrWriter struct {
	W   io.Writer
	err error
}

// Write writes p to W, unless an earlier write failed.
func (w *ErrWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.W.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	w.err = err
	return n, err
}

// Err is the first error a write returned, nil if none.
func (w *ErrWriter) Err() error { return w.err }
