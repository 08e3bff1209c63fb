package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestDefaultCacheDir: the default cache is per user, also when HOME is
// unset (services, cron, containers): never a directory shared by all
// users.
func TestDefaultCacheDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("OP2_CACHE_DIR", "")

	t.Setenv("HOME", "/home/someone")
	if got, want := DefaultCacheDir(), "/home/someone/.cache/goop2"; got != want {
		t.Errorf("with HOME set: %q, want %q", got, want)
	}
	t.Setenv("HOME", "")
	want := filepath.Join(tmp, fmt.Sprintf("goop2-%d", os.Geteuid()))
	if got := DefaultCacheDir(); got != want {
		t.Errorf("without HOME: %q, want %q", got, want)
	}
	cfg, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CacheDir != want {
		t.Errorf("ConfigFromEnv without HOME: CacheDir %q, want %q", cfg.CacheDir, want)
	}
}

// TestOpenUnknownIsUnavailable: an unknown backend name matches
// ErrBackendUnavailable, names the registered backends, and its message
// does not start with "op2: " (package op2 adds that).
func TestOpenUnknownIsUnavailable(t *testing.T) {
	_, err := Open("no-such-backend", &Config{})
	if !errors.Is(err, core.ErrBackendUnavailable) {
		t.Fatalf("error %v does not match ErrBackendUnavailable", err)
	}
	if msg := err.Error(); msg != fmt.Sprintf("unknown backend %q (available: %s)", "no-such-backend", strings.Join(Backends(), ", ")) {
		t.Errorf("message %q", msg)
	}
	if core.Unavailable(nil) != nil {
		t.Error("Unavailable(nil) is not nil")
	}
}
