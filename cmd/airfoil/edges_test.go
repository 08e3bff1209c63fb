package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/regfile/regfiletest"
	"github.com/goop2/op2/internal/testreq"
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

// runMPICommand runs the airfoil command on np ranks under mpirun with
// args and returns the job's combined output and exit code.
func runMPICommand(t *testing.T, np int, args ...string) (string, int) {
	t.Helper()
	path, err := mpitest.Mpirun()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none", os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), "GOOP2_AIRFOIL_MAIN=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%d ranks: killed after 2 minutes:\n%s", np, out)
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
	nan := filepath.Join(t.TempDir(), "nan.dat")
	if err := os.WriteFile(nan, []byte("4 1 0 0\n0 0\n1 0\n1 nan\n0 1\n0 1 2 3\n"), 0o644); err != nil {
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
		{"NaN coordinate", []string{"-iters", "10", "-mesh", nan}, "-mesh " + nan + ": node 2 has coordinate NaN, not a finite number"},
		{"empty -vtk", []string{"-iters", "1", "-I", "4", "-J", "4", "-vtk", ""}, `-vtk "": an empty output path`},
		{"empty -dump-q", []string{"-iters", "1", "-I", "4", "-J", "4", "-dump-q="}, `-dump-q "": an empty output path`},
		{"empty -checkpoint", []string{"-iters", "1", "-I", "4", "-J", "4", "-checkpoint", ""}, `-checkpoint ""`},
		{"empty -write-mesh", []string{"-iters", "0", "-I", "4", "-J", "4", "-write-mesh", ""}, `-write-mesh ""`},
		{"checkpoint without iterations", []string{"-iters", "0", "-I", "4", "-J", "4", "-checkpoint", filepath.Join(t.TempDir(), "c.h5")},
			"-checkpoint with -iters 0"},
		{"unknown partitioner on one process", []string{"-iters", "1", "-I", "4", "-J", "4", "-partition", "foo"}, `-partition "foo"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, code := runCommand(t, c.args...)
			if code == 0 {
				t.Errorf("exit status 0, want non-zero; output %q", out)
			}
			if !strings.Contains(out, c.want) || strings.Count(out, "NaN") > strings.Count(c.want, "NaN") {
				t.Errorf("output %q, want a message mentioning %q", out, c.want)
			}
		})
	}
	if _, err := run(options{iters: 100, meshPath: empty}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no cells") {
		t.Errorf("run on a mesh without cells: error %v, want one saying it has no cells", err)
	}
}

// TestResumeAtLastIteration: a checkpoint written at the last iteration a
// later run asks for (-iters 101 -checkpoint-every 100, then -iters 100)
// leaves nothing to run: the run says so and succeeds, on one process and
// on two ranks, and prints no rms line; the verdict of OP2's reference run
// has no rms to judge and prints nothing.
func TestResumeAtLastIteration(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "run.ckpt")
	var out bytes.Buffer
	if _, err := run(options{backend: "sequential", ni: 8, nj: 8, iters: 101, checkpoint: ck, checkpointEvery: 100}, &out); err != nil {
		testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
	}
	want := "checkpoint " + ck + " is at iteration 100, the last asked for: no iterations left to run"
	got, code := runCommand(t, "-backend", "sequential", "-I", "8", "-J", "8", "-iters", "100", "-checkpoint", ck, "-elapsed")
	if code != 0 || !strings.Contains(got, want) || strings.Contains(got, " 100  ") {
		t.Errorf("resumed at the last iteration: exit %d, output\n%s\nwant exit 0 and %q, no rms line", code, got, want)
	}
	if _, err := mpitest.Mpirun(); err == nil {
		got, code := runMPICommand(t, 2, "-backend", "sequential", "-partition", "rcb", "-I", "8", "-J", "8", "-iters", "100", "-checkpoint", ck)
		if code != 0 || !strings.Contains(got, want) {
			t.Errorf("resumed at the last iteration on 2 ranks: exit %d, output\n%s\nwant exit 0 and %q", code, got, want)
		}
	}
	// A checkpoint past the iterations asked for: said once, prefixed once.
	got, code = runCommand(t, "-backend", "sequential", "-I", "8", "-J", "8", "-iters", "50", "-checkpoint", ck)
	if want := "airfoil: checkpoint " + ck + " is at iteration 100, past the 50 iterations asked for"; code == 0 || !strings.Contains(got, want) || strings.Contains(got, "airfoil: airfoil:") {
		t.Errorf("a checkpoint past -iters: exit %d, output\n%s\nwant a failure saying %q once", code, got, want)
	}
	for _, c := range []struct {
		iters, cells int
		rms          []float64
		want         string
	}{
		{1000, referenceCells, nil, ""},
		{1000, referenceCells, []float64{referenceRMS}, "PASSED"},
		{1000, referenceCells, []float64{2 * referenceRMS}, "FAILED"},
		{1000, 96, []float64{referenceRMS}, ""},
	} {
		var b bytes.Buffer
		verdict(&b, c.iters, c.cells, c.rms)
		if got := b.String(); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("verdict(%d, %d, %v) printed %q, want %q", c.iters, c.cells, c.rms, got, c.want)
		}
	}
}

// TestOutputOverInput: an output flag naming the mesh read (by the same
// path, ./ spelling or a link) or another output is refused, naming both
// flags, before anything is written: the mesh is left as it was.
func TestOutputOverInput(t *testing.T) {
	dir := t.TempDir()
	mi := filepath.Join(dir, "mi.dat")
	if _, err := run(options{backend: "sequential", ni: 4, nj: 4, writeMesh: mi}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.dat")
	if err := os.Symlink(mi, link); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(mi)
	if err != nil {
		t.Fatal(err)
	}
	dot := dir + "/./mi.dat"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-dump-q", mi}, "-dump-q and -mesh both name " + mi},
		{[]string{"-vtk", dot}, "-vtk " + dot + " and -mesh " + mi + " are the same file"},
		{[]string{"-write-mesh", link}, "-write-mesh " + link + " and -mesh"},
		{[]string{"-checkpoint", mi}, "-checkpoint and -mesh both name"},
		{[]string{"-dump-q", filepath.Join(dir, "q"), "-vtk", filepath.Join(dir, "q")}, "-vtk and -dump-q both name"},
	} {
		out, code := runCommand(t, append([]string{"-backend", "sequential", "-iters", "1", "-mesh", mi}, c.args...)...)
		if code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, output %q; want a refusal saying %q", c.args, code, out, c.want)
		}
		if after, err := os.ReadFile(mi); err != nil || !bytes.Equal(after, before) {
			t.Fatalf("%v changed the mesh file (%v)", c.args, err)
		}
	}
}

// TestStdoutError: a report that cannot be written (standard output a
// file open for reading only: every write fails) fails the command with a
// message on standard error, rather than exiting 0.
func TestStdoutError(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-backend", "sequential", "-I", "4", "-J", "4", "-iters", "100")
	cmd.Env = append(os.Environ(), "GOOP2_AIRFOIL_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = regfiletest.Unwritable(t), &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "airfoil: writing standard output:") {
		t.Errorf("stdout unwritable: %v, stderr %q; want exit status 1 and a message", err, stderr.String())
	}
}
