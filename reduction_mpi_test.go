package op2_test

import (
	"fmt"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// TestReductionsOnRanks: Global reductions of every size combine across
// 2 and 3 ranks, those larger than what travels with the loop's identity
// (112 bytes) included, for Inc, Min and Max and float64, int32 and
// int64, repeated (the buffers are reused).
func TestReductionsOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		for _, ranks := range []int{2, 3} {
			t.Run(fmt.Sprint(ranks), func(t *testing.T) { mpitest.Run(t, ranks, 2*time.Minute) })
		}
		return
	}
	const n = 8 // nodes per rank
	nodes, _ := declareRing(t, n)
	r, total := op2.Rank(), n*op2.Ranks()
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(r*n + i) // the node's global number
	}
	xd := must(op2.NewDat(nodes, 1, x, "x"))
	must(op2.Partition(op2.BlockPartitioner()))
	for _, dim := range []int{1, 14, 15, 300} {
		sum := must(op2.NewGlobal(dim, make([]float64, dim), "sum"))
		lo := must(op2.NewGlobal(dim, make([]int32, dim), "lo"))
		hi := must(op2.NewGlobal(dim, make([]int64, dim), "hi"))
		k := op2.NewKernel(fmt.Sprintf(`void red%d(const double *x, double *s, int *lo, long long *hi) {
	for (int k = 0; k < %d; k++) { s[k] += *x * (k + 1); lo[k] = lo[k] < (int)*x + k ? lo[k] : (int)*x + k; hi[k] = hi[k] > (long long)*x * (k + 1) ? hi[k] : (long long)*x * (k + 1); }
}`, dim, dim), fmt.Sprintf("red%d", dim))
		for rep := range 2 {
			clear(sum.Data())
			for i := range lo.Data() {
				lo.Data()[i] = 1 << 30
			}
			clear(hi.Data())
			check(t, op2.ParLoop(k, nodes, xd.Arg(op2.Read), sum.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max)))
			s, l, h := sum.Data(), lo.Data(), hi.Data()
			for j := range dim {
				want := float64(total*(total-1)/2) * float64(j+1)
				if s[j] != want || l[j] != int32(j) || h[j] != int64(total-1)*int64(j+1) {
					t.Fatalf("rank %d dim %d round %d: [%d] sum %v min %v max %v; want %v %v %v", r, dim, rep, j, s[j], l[j], h[j], want, j, int64(total-1)*int64(j+1))
				}
			}
		}
	}
	check(t, op2.Finalize())
}
