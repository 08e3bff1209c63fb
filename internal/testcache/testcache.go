// Package testcache gives a package's tests a private cache of compiled
// loops, so that they neither read nor fill the user's cache and their
// compile counts are their own.
package testcache

import (
	"fmt"
	"os"
	"testing"

	"github.com/goop2/op2/internal/exec"
)

// Run runs m's tests with OP2_CACHE_DIR set to a new folder in the
// temporary directory (its name starting with prefix) unless the
// environment sets it already, removes the folder afterwards (once the
// programs building in the background are done or dropped:
// exec.EndAllBuilds), and returns the tests' exit code, for TestMain to
// pass to os.Exit.
func Run(m *testing.M, prefix string) int {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test cache:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	defer exec.EndAllBuilds() // before dir is removed
	if os.Getenv("OP2_CACHE_DIR") == "" {
		os.Setenv("OP2_CACHE_DIR", dir)
	}
	return m.Run()
}
