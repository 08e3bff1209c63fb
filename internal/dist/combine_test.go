package dist

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestCombineMinMaxAsOneProcess: the ranks' MIN and MAX results combine
// as one process combines its partial results: of -0 and +0 the earlier
// rank's stays, and a NaN from a rank leaves the value (it gave +0 for
// the MAX of -0 on rank 0 and +0 on rank 1, where one process gives -0).
func TestCombineMinMaxAsOneProcess(t *testing.T) {
	neg0, nan := math.Copysign(0, -1), math.NaN()
	for _, c := range []struct {
		acc   core.Access
		ranks []float64
		want  float64
	}{
		{core.Max, []float64{neg0, 0}, neg0},
		{core.Min, []float64{0, neg0}, 0},
		{core.Max, []float64{1, nan, 0}, 1},
		{core.Min, []float64{1, nan, 2}, 1},
		{core.Max, []float64{1, 3, 2}, 3},
		{core.Inc, []float64{1, 2, 4}, 7},
	} {
		all := make([]byte, 8*len(c.ranks))
		for r, v := range c.ranks {
			binary.LittleEndian.PutUint64(all[8*r:], math.Float64bits(v))
		}
		dst := make([]byte, 8)
		combine(core.Float64, c.acc, dst, all)
		got := math.Float64frombits(binary.LittleEndian.Uint64(dst))
		if math.Float64bits(got) != math.Float64bits(c.want) {
			t.Errorf("%v of %v over the ranks: %v, want %v", c.acc, c.ranks, got, c.want)
		}
	}
}
