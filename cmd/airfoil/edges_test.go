package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCommand runs the airfoil command (this test binary acting as it) with
// args and returns its combined output and exit code.
func runCommand(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GOOP2_AIRFOIL_MAIN=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return string(out), 0
}

// TestBadArgumentsFail: a negative iteration count or a mesh without cells
// is refused with a message and a non-zero exit status, never a silent
// success or NaN output.
func TestBadArgumentsFail(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "nocells.dat")
	if err := os.WriteFile(empty, []byte("1 0 0 0\n0.0 0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"negative iterations", []string{"-iters", "-1", "-I", "4", "-J", "4"}, "-iters -1"},
		{"very negative iterations", []string{"-iters", "-1000000", "-I", "4", "-J", "4"}, "must not be negative"},
		{"mesh without cells", []string{"-iters", "100", "-mesh", empty}, "no cells"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, code := runCommand(t, c.args...)
			if code == 0 {
				t.Errorf("exit status 0, want non-zero; output %q", out)
			}
			if !strings.Contains(out, c.want) || strings.Contains(out, "NaN") {
				t.Errorf("output %q, want a message mentioning %q", out, c.want)
			}
		})
	}
	if _, err := run(options{iters: 100, meshPath: empty}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no cells") {
		t.Errorf("run on a mesh without cells: error %v, want one saying it has no cells", err)
	}
}
