package hostc

import (
	"fmt"
	"strconv"

	"github.com/goop2/op2/internal/core"
)

// Pointers the tile forms (SequentialTiles, OpenMPTiles) read after the
// per-argument pointers.
const (
	PvTileRuns    = iota // the loop's elements as runs of consecutive elements, tile by tile: start, end (int32 pairs)
	PvTileOffsets        // first run in PvTileRuns of each tile, and one past the last (int32)
	PvTileCount          // number of tile pointers
)

// RunsRange writes op2_range for runs of elements: it runs the kernel for
// the elements of runs op2_first, ..., op2_last - 1, in that order, run q
// being elements [op2_ru[2q], op2_ru[2q+1]) (see Range for the rest of
// its parameters). Each run is a plain range, which the compiler
// vectorises as it does Range's.
func (g *Gen) RunsRange(l *core.Loop) {
	g.ExtTables(l)
	g.rangeHead(l, ",\n    const int *restrict op2_ru")
	g.rangeBody(l, "  for (long long op2_q = op2_first; op2_q < op2_last; op2_q++)\n  for (long long op2_n = op2_ru[2 * op2_q]; op2_n < op2_ru[2 * op2_q + 1]; op2_n++) {\n", "op2_n")
}

// SequentialTiles writes the sequential backend's tile form of a loop,
// for sparse tiling of loop chains: the wrapper runs the elements of runs
// [op2_iv[IvStart], op2_iv[IvEnd]) of the run list (PvTileRuns), in
// order, and combines Global reductions into the
// Global after them, as Sequential does for a range.
func SequentialTiles(l *core.Loop) (string, error) {
	g := &Gen{}
	g.Prelude(l)
	g.RunsRange(l)
	g.EntryOpen(l)
	g.Printf("  const int *const op2_ru = (const int *)op2_pv[%d];\n", 2*len(l.Args)+PvTileRuns)
	for i := range l.Args {
		a := &l.Args[i]
		if a.IsReduction() {
			t := a.Data.Type.CName()
			init := fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i])
			if a.Access == core.Inc {
				init = "0"
			}
			g.Printf("  %s op2_r%d[%d];\n  for (int op2_k = 0; op2_k < %d; op2_k++) op2_r%d[op2_k] = %s;\n", t, i, a.Data.Dim, a.Data.Dim, i, init)
		}
	}
	g.Printf("  if (%s) return 1;\n", RangeCall(l, fmt.Sprintf("op2_iv[%d]", IvStart), fmt.Sprintf("op2_iv[%d], op2_ru", IvEnd),
		func(i int) string { return "op2_r" + strconv.Itoa(i) }))
	for i := range l.Args {
		a := &l.Args[i]
		if a.IsReduction() {
			g.Printf("  for (int op2_k = 0; op2_k < %d; op2_k++) { %s }\n", a.Data.Dim,
				Combine(a.Access, fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i]), fmt.Sprintf("op2_r%d[op2_k]", i)))
		}
	}
	g.EntryClose(l)
	return g.String(), nil
}

// OpenMPTiles writes the openmp backend's tile form of a loop, for sparse
// tiling of loop chains: the wrapper runs tiles [op2_iv[IvStart],
// op2_iv[IvEnd]) of the run list (PvTileRuns, delimited by
// PvTileOffsets), split evenly between op2_iv[IvThreads] threads, each
// thread running whole tiles, their elements in order. The tiles must
// touch disjoint data. Global reductions accumulate per thread and are
// combined in thread order, as OpenMP does.
func OpenMPTiles(l *core.Loop) (string, error) { return openMP(l, 0, true) }
