package testreq

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTB records how a helper ended tb: "skip", "fatal" or "" (returned).
type fakeTB struct {
	testing.TB
	how, msg string
}

type stop struct{}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.how, f.msg = "skip", fmt.Sprintf(format, args...)
	panic(stop{})
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.how, f.msg = "fatal", fmt.Sprintf(format, args...)
	panic(stop{})
}
func (f *fakeTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func run(f func(tb testing.TB)) *fakeTB {
	tb := &fakeTB{}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stop); !ok {
					panic(r)
				}
			}
		}()
		f(tb)
	}()
	return tb
}

var errMissing = errors.New("opencl: backend unavailable")

// TestCheck: a missing library skips, saying what to install, unless
// OP2_REQUIRE names it; an error that is not the sentinel always fails;
// nil passes.
func TestCheck(t *testing.T) {
	missing := fmt.Errorf("no platform: %w", errMissing)
	broken := errors.New("clBuildProgram: -11")
	cases := []struct {
		require, nvrtc, what string
		err                  error
		how, says            string
	}{
		{"", "", "opencl", nil, "", ""},
		{"", "", "opencl", missing, "skip", "apt-get install ocl-icd-libopencl1"},
		{"mpi,hdf5", "", "opencl", missing, "skip", "OP2_REQUIRE=opencl"},
		{"mpi, OpenCL ,hdf5", "", "opencl", missing, "fatal", "OP2_REQUIRE names opencl"},
		{"all", "", "opencl", missing, "fatal", "no platform"},
		{"", "", "opencl", broken, "fatal", "clBuildProgram"},
		{"opencl", "", "opencl", broken, "fatal", "clBuildProgram"},
		{"", "1", "nvrtc", missing, "fatal", "names nvrtc"},
		{"", "0", "nvrtc", missing, "skip", "libnvrtc"},
		{"opncl", "", "opencl", missing, "fatal", `unknown library "opncl"`},
		{"", "", "fortran", missing, "fatal", `unknown library "fortran"`},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/%s/%v", c.require, c.nvrtc, c.what, c.err), func(t *testing.T) {
			t.Setenv(Env, c.require)
			t.Setenv(NVRTCEnv, c.nvrtc)
			tb := run(func(tb testing.TB) { Check(tb, c.what, c.err, errMissing) })
			if tb.how != c.how || !strings.Contains(tb.msg, c.says) {
				t.Errorf("ended with %q %q, want %q containing %q", tb.how, tb.msg, c.how, c.says)
			}
		})
	}
}

// TestCommand: a program on the PATH gives its path; one not found
// skips (or fails where OP2_REQUIRE names what installs it); a name
// that is found but is no program (a directory) fails.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "op2-a-directory"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "op2-a-program"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	for _, c := range []struct {
		require, name, how, says string
	}{
		{"", "op2-a-program", "", ""},
		{"", "op2-no-such-program", "skip", "apt-get install gcc"},
		{"cc", "op2-no-such-program", "fatal", "OP2_REQUIRE names cc"},
		{"", filepath.Join(dir, "op2-a-directory"), "fatal", "not the error that says cc is missing"},
	} {
		t.Setenv(Env, c.require)
		var path string
		tb := run(func(tb testing.TB) { path = Command(tb, "cc", c.name) })
		if tb.how != c.how || !strings.Contains(tb.msg, c.says) || c.how == "" && path != filepath.Join(dir, c.name) {
			t.Errorf("%q with %s=%q: ended with %q %q (path %q), want %q containing %q", c.name, Env, c.require, tb.how, tb.msg, path, c.how, c.says)
		}
	}
}

// TestEveryLibraryHasAHint: each name says what to install.
func TestEveryLibraryHasAHint(t *testing.T) {
	for name, hint := range Libraries {
		if name != strings.ToLower(name) || hint == "" {
			t.Errorf("%q: %q", name, hint)
		}
	}
}
