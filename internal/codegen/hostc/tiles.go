package hostc

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
)

// Pointers the tile forms (SequentialTiles, OpenMPTiles) read after the
// per-argument pointers.
const (
	PvTileRuns    = iota // the loop's elements as runs of consecutive elements, tile by tile: start, end (int32 pairs)
	PvTileOffsets        // first run in PvTileRuns of each tile, and one past the last (int32)
	PvTileParts          // the per-thread partial reduction results (OpenMPTiles' TileBegin)
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
// Global after them, as Sequential does for a range. TileBegin, TileRun
// and TileEnd (see OpenMPTiles) let a chain driver run the loop's tiles
// one by one with one thread's partial results, which it combines into
// the Globals once, after the last tile: the contributions then meet in
// the order, and with the association, of a run of the loop alone.
func SequentialTiles(l *core.Loop) (string, error) { return SequentialTilesLanes(l, 0) }

// SequentialTilesLanes is SequentialTiles with the SIMD variant of lanes
// lanes (0: the scalar code): each run runs its whole chunks of lanes
// elements in lanes and the rest with the scalar code (RunsRangeLanes),
// so the results are the scalar tile form's, bit for bit, except Global
// increments (as for SequentialLanes).
func SequentialTilesLanes(l *core.Loop, lanes int) (string, error) {
	g, err := newGen(l, lanes)
	if err != nil {
		return "", err
	}
	g.Prelude(l)
	g.writeRunsRange(l)
	g.EntryOpen(l)
	g.Printf("  const int *const op2_ru = (const int *)op2_pv[%d];\n", 2*len(l.Args)+PvTileRuns)
	g.sequentialEntry(l, fmt.Sprintf("op2_iv[%d], op2_ru", IvEnd))
	g.EntryClose(l)
	g.tileFunctions(l)
	return g.String(), nil
}

// Functions of the host tile forms besides EntryPoint, for a chain
// driver that runs every loop of a tiled chain in turn, tile by tile (on
// openmp in one parallel region):
//
//	void *op2_tile_begin(const long long *op2_iv, void *const *op2_pv);
//	int op2_tile(const long long *op2_iv, void *const *op2_pv, long long op2_t0, long long op2_t1, int op2_tid);
//	void op2_tile_end(const long long *op2_iv, void *const *op2_pv);
//
// op2_tile_begin allocates and initialises the per-thread partial results
// of the loop's Global reductions for op2_iv[IvThreads] threads (only
// for a loop with reductions; NULL when it cannot), which the caller
// stores at PvTileParts; op2_tile runs tiles [op2_t0, op2_t1) on the
// calling thread, thread op2_tid, returning 0 or 1 as op2_range does;
// op2_tile_end combines the partial results into the Globals in thread
// order and frees them.
const (
	TileBegin = "op2_tile_begin"
	TileRun   = "op2_tile"
	TileEnd   = "op2_tile_end"
)

// OpenMPTiles writes the openmp backend's tile form of a loop, for sparse
// tiling of loop chains: the wrapper runs tiles [op2_iv[IvStart],
// op2_iv[IvEnd]) of the run list (PvTileRuns, delimited by
// PvTileOffsets), split evenly between op2_iv[IvThreads] threads, each
// thread running whole tiles, their elements in order; TileBegin, TileRun
// and TileEnd let a driver run the loop's tiles from its own parallel
// region instead. The tiles that run at once must touch disjoint data.
// Global reductions accumulate per thread and are combined in thread
// order, as OpenMP does.
func OpenMPTiles(l *core.Loop) (string, error) { return OpenMPTilesLanes(l, 0) }

// OpenMPTilesLanes is OpenMPTiles with the SIMD variant of lanes lanes
// (0: the scalar code), in its entry point and in TileRun alike: each
// run of a tile runs as in SequentialTilesLanes.
func OpenMPTilesLanes(l *core.Loop, lanes int) (string, error) {
	src, err := openMP(l, lanes, true, false)
	if err != nil {
		return "", err
	}
	g := &Gen{}
	g.Printf("%s\n", src)
	g.tileFunctions(l)
	return g.String(), nil
}

// tileFunctions writes TileBegin, TileRun and TileEnd for l after its
// op2_range for runs (RunsRange or RunsRangeLanes).
func (g *Gen) tileFunctions(l *core.Loop) {
	ext := ""
	if l.Kernel.CXX {
		ext = "extern \"C\" "
	}
	nargs := len(l.Args)
	var reductions []int
	for i := range l.Args {
		if l.Args[i].IsReduction() {
			reductions = append(reductions, i)
		}
	}
	parts := func() {
		g.Printf("  const int op2_nthreads = (int)op2_iv[%d];\n  (void)op2_nthreads;\n", IvThreads)
		g.Printf("  size_t op2_o = 0;\n  (void)op2_o;\n")
		for _, i := range reductions {
			t := l.Args[i].Data.Type.CName()
			g.Printf("  %s *const op2_part%d = (%s *)(op2_parts + op2_o);\n", t, i, t)
			g.Printf("  op2_o += sizeof(%s) * op2_nthreads * %d;\n", t, partStride(&l.Args[i]))
		}
	}
	// op2_tile_begin
	g.Printf("%s__attribute__((visibility(\"default\")))\nvoid *%s(const long long *op2_iv, void *const *op2_pv)\n{\n", ext, TileBegin)
	g.Unpack(l)
	g.Printf("  size_t op2_bytes = 64;\n")
	for _, i := range reductions {
		g.Printf("  op2_bytes += sizeof(%s) * op2_iv[%d] * %d;\n", l.Args[i].Data.Type.CName(), IvThreads, partStride(&l.Args[i]))
	}
	g.Printf("  char *const op2_parts = (char *)aligned_alloc(64, (op2_bytes + 63) / 64 * 64);\n  if (!op2_parts) return 0;\n")
	parts()
	for _, i := range reductions {
		a := &l.Args[i]
		init := fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i])
		if a.Access == core.Inc {
			init = "0"
		}
		g.Printf("  for (int op2_t = 0; op2_t < op2_nthreads; op2_t++)\n    for (int op2_k = 0; op2_k < %d; op2_k++) op2_part%d[op2_t * %d + op2_k] = %s;\n",
			a.Data.Dim, i, partStride(a), init)
	}
	g.Printf("  return op2_parts;\n}\n\n")
	// op2_tile
	g.Printf("%s__attribute__((visibility(\"default\")))\nint %s(const long long *op2_iv, void *const *op2_pv, long long op2_t0, long long op2_t1, int op2_tid)\n{\n", ext, TileRun)
	g.Unpack(l)
	g.Printf("  const int *const op2_ru = (const int *)op2_pv[%d];\n", 2*nargs+PvTileRuns)
	g.Printf("  const int *const op2_to = (const int *)op2_pv[%d];\n", 2*nargs+PvTileOffsets)
	g.Printf("  char *const op2_parts = (char *)op2_pv[%d];\n  (void)op2_parts;\n", 2*nargs+PvTileParts)
	parts()
	g.Printf("  return %s;\n}\n\n", RangeCall(l, "op2_to[op2_t0]", "op2_to[op2_t1], op2_ru", func(i int) string {
		return fmt.Sprintf("op2_part%d + op2_tid * %d", i, partStride(&l.Args[i]))
	}))
	// op2_tile_end
	g.Printf("%s__attribute__((visibility(\"default\")))\nvoid %s(const long long *op2_iv, void *const *op2_pv)\n{\n", ext, TileEnd)
	g.Unpack(l)
	g.Printf("  char *const op2_parts = (char *)op2_pv[%d];\n  if (!op2_parts) return;\n", 2*nargs+PvTileParts)
	parts()
	for _, i := range reductions {
		a := &l.Args[i]
		g.Printf("  for (int op2_t = 0; op2_t < op2_nthreads; op2_t++)\n    for (int op2_k = 0; op2_k < %d; op2_k++) { %s }\n",
			a.Data.Dim, Combine(a.Access, fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i]), fmt.Sprintf("op2_part%d[op2_t * %d + op2_k]", i, partStride(a))))
	}
	g.Printf("  free(op2_parts);\n")
	if usesStdio(l) {
		g.Printf("  fflush(0);\n")
	}
	g.Printf("}\n")
}

// partStride is the distance, in values, between two threads' partial
// results of reduction argument a: its dim rounded up to a cache line.
func partStride(a *core.Arg) int {
	per := 64 / a.Data.Type.Size()
	return (a.Data.Dim + per - 1) / per * per
}
