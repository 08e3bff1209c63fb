package cgns

import (
	"errors"
	"strings"
	"testing"
)

// TestMissingLibrary: a library file that is not there is ErrUnavailable
// naming what to install, remembered for the next call; the system's
// library, when present, loads.
func TestMissingLibrary(t *testing.T) {
	t.Setenv(LibraryEnv, "/nonexistent/libcgns.so.3.4")
	err := Load()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), Install) {
		t.Fatalf("Load = %v, want ErrUnavailable saying %q", err, Install)
	}
	if again := Load(); again == nil || again.Error() != err.Error() {
		t.Errorf("second Load = %v, want %v", again, err)
	}
}
