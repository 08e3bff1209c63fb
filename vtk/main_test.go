package vtk_test

import (
	"os"
	"testing"

	"github.com/goop2/op2/internal/testcache"
)

// TestMain gives the package's tests, and the ranks its MPI tests start
// (which inherit OP2_CACHE_DIR), a private cache of compiled loops.
func TestMain(m *testing.M) { os.Exit(testcache.Run(m, "goop2-vtk-test-")) }
