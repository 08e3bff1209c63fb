package regfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/regfile/regfiletest"
)

// TestErrWriter: the first failed write is remembered and later writes
// are refused with it; a writer that never failed has no error.
func TestErrWriter(t *testing.T) {
	var b strings.Builder
	ok := &ErrWriter{W: &b}
	fmt.Fprintf(ok, "a %d\n", 1)
	if ok.Err() != nil || b.String() != "a 1\n" {
		t.Errorf("%q, %v", b.String(), ok.Err())
	}
	w := &ErrWriter{W: regfiletest.Unwritable(t)}
	fmt.Fprintln(w, "lost")
	first := w.Err()
	if first == nil {
		t.Fatal("a write to a read-only file did not fail")
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, first) {
		t.Errorf("a later write: %v, want %v", err, first)
	}
}
