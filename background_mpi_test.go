package op2_test

import (
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// TestBackgroundBuildsAtOnceOnRanks: on several MPI ranks the fused loop
// of a chain under Fusion "auto" is built at once, not in the background:
// every rank runs it at the first forcing, since the ranks must run the
// same loops.
func TestBackgroundBuildsAtOnceOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	const n = 8
	nodes, _ := declareRing(t, n)
	x := must(op2.NewDat(nodes, 1, []float64{1, 2, 3, 4, 5, 6, 7, 8}, "x"))
	y := must(op2.NewDat[float64](nodes, 1, nil, "y"))
	must(op2.Partition(op2.BlockPartitioner()))
	r := must(op2.NewRuntime(op2.Config{Timing: true}))
	k1 := op2.NewKernel("void bgm_a(double *x) { x[0] = x[0] * 1.5 + 0.25; }", "bgm_a")
	k2 := op2.NewKernel("void bgm_b(const double *x, double *y) { y[0] = x[0] - 1; }", "bgm_b")
	check(t, r.Chain(func() error {
		check(t, r.ParLoop(k1, nodes, x.Arg(op2.RW)))
		return r.ParLoop(k2, nodes, x.Arg(op2.Read), y.Arg(op2.Write))
	}))
	fused := false
	for _, lt := range r.Timings() {
		fused = fused || strings.HasPrefix(lt.Kernel, "fused_")
	}
	if !fused {
		t.Errorf("rank %d: the chain's first run did not fuse: %+v", op2.Rank(), r.Timings())
	}
	check(t, op2.Finalize())
}
