package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBadFlags: op2bench refuses flags that conflict or that the
// sections they reach cannot run with, naming them, with status 2 and
// before it runs or prints anything.
func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-schemes-only", "-scheme-rounds", "0"}, "-scheme-rounds 0: want at least 1 with -schemes-only"},
		{[]string{"-schemes-only", "-scheme-rounds", "-1"}, "-scheme-rounds -1: want at least 1 with -schemes-only"},
		{[]string{"-schemes-only", "-scheme-iters", "0", "-scheme-rounds", "1"}, "-scheme-iters 0: want at least 1"},
		{[]string{"-scheme-rounds", "-1"}, "-scheme-rounds -1: want at least 0"},
		{[]string{"-scheme-iters", "0"}, "-scheme-iters 0: want at least 1"},
		{[]string{"-chains-only", "-chains-rounds", "0"}, "-chains-rounds 0: want at least 1"},
		{[]string{"-chains-only", "-chains-iters", "0"}, "-chains-iters 0: want at least 1"},
		{[]string{"-chains", "-chains-iters", "-3"}, "-chains-iters -3: want at least 1"},
		{[]string{"-chains-only", "-chains-tile", "-1"}, "-chains-tile -1: want at least 0"},
	} {
		// A flag let through starts the benchmark: the timeout ends it.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], tc.args...)
		cmd.Env = append(os.Environ(), "GOOP2_OP2BENCH_MAIN=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.HasPrefix(stderr.String(), "op2bench: ") || !strings.Contains(stderr.String(), tc.want) || stdout.Len() > 0 {
			t.Errorf("op2bench %s: %v, stderr %q, stdout %q; want exit status 2, nothing printed, and a message saying %q",
				strings.Join(tc.args, " "), err, stderr.String(), stdout.String(), tc.want)
		}
		cancel()
	}
}
