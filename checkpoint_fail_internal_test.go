package op2

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
)

// TestCheckpointOneRankCannotRead: on 2 ranks, rank 1 cannot bring a
// Global's or a Dat's values to the host (a device copy that fails):
// Checkpoint fails on every rank, naming it on rank 1, and no rank waits
// for ever (rank 1 returned before the reduction of the fingerprints
// that the other ranks went on to).
func TestCheckpointOneRankCannotRead(t *testing.T) {
	const whatEnv, pathEnv = "OP2_TEST_CKPT_FAIL", "OP2_TEST_CKPT_FILE"
	if mpitest.InRanks() {
		set, _ := NewSet(4, "s")
		d, _ := NewDat(set, 1, []float64{1, 2, 3, 4}, "x")
		g, _ := NewGlobal(1, []float64{7}, "g")
		if _, err := Partition(BlockPartitioner()); err != nil {
			t.Fatal(err)
		}
		bad := &g.s
		if os.Getenv(whatEnv) == "dat" {
			bad = &d.s
		}
		if Rank() == 1 {
			bad.Dev, bad.State = failingBuffer{errors.New("device lost")}, core.StateDevice
		}
		err := Checkpoint(os.Getenv(pathEnv), nil)
		switch {
		case err == nil:
			t.Errorf("rank %d: no error", Rank())
		case Rank() == 1 && !strings.Contains(err.Error(), "device lost"):
			t.Errorf("rank 1: %v, want the device's error", err)
		}
		if Rank() == 1 {
			bad.Dev, bad.State = nil, core.StateHost
		}
		if err := Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	testreq.Check(t, "hdf5", h5.Load(), h5.ErrNoHDF5)
	for _, what := range []string{"global", "dat"} {
		t.Run(what, func(t *testing.T) {
			mpitest.Run(t, 2, time.Minute, whatEnv+"="+what, pathEnv+"="+filepath.Join(t.TempDir(), "c.ckpt"))
		})
	}
}
