package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/regfile/regfiletest"
)

func TestMain(m *testing.M) {
	if os.Getenv("GOOP2_OP2BENCH_MAIN") == "1" {
		main() // as the command, for tests of its exit status
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStdoutError: a report that cannot be written to standard output
// fails op2bench with status 1 and a message, rather than exiting 0 with
// the report lost.
func TestStdoutError(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-gmsh-read", "../../mesh/gmsh/testdata/box-41-binary.msh")
	cmd.Env = append(os.Environ(), "GOOP2_OP2BENCH_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = regfiletest.Unwritable(t), &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "op2bench: writing the report to standard output:") {
		t.Errorf("stdout unwritable: %v, stderr %q; want exit status 1 and a message", err, stderr.String())
	}
}
