package hostc

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
)

// Plan pointers the openmp wrapper reads after the per-argument pointers.
const (
	PvBlkMap      = iota // blocks grouped by colour
	PvOffset             // first element per block
	PvNElems             // elements per block
	PvColOffset          // first block of each colour in PvBlkMap
	PvOwnerOffset        // first block of each colour and owner piece in PvBlkMap (owner-compute plans)
	PvCount              // number of plan pointers
)

// OpenMP writes the openmp backend's translation unit. A loop that
// modifies nothing through a map is split evenly between threads over
// [op2_iv[IvStart], op2_iv[IvEnd]); a coloured loop runs the block colours
// [op2_iv[IvStart], op2_iv[IvEnd]) of the plan whose arrays follow the
// per-argument pointers (PvBlkMap...): with op2_iv[IvOwners] = 0 the blocks
// of each colour are shared among the threads by OpenMP; with an
// owner-compute plan (op2_iv[IvOwners] pieces) thread t runs the blocks of
// pieces t, t + nthreads, ... of each colour, in order. Global reductions
// accumulate per thread and are combined in thread order.
func OpenMP(l *core.Loop) (string, error) { return OpenMPLanes(l, 0) }

// OpenMPLanes is OpenMP with the SIMD variant of lanes lanes (lanes.go;
// 0: the scalar code): each thread runs its elements or blocks in chunks
// of lanes elements.
func OpenMPLanes(l *core.Loop, lanes int) (string, error) { return openMP(l, lanes, false, true) }

// OpenMPOneThread is OpenMPLanes for a backend of one thread: a loop
// that modifies data through a map runs uncoloured, its elements in
// order as the sequential code runs them (one thread makes no race), so
// that its increments and sums combine in the order tiles keep.
func OpenMPOneThread(l *core.Loop, lanes int) (string, error) {
	return openMP(l, lanes, false, false)
}

// openMP writes OpenMPLanes (colour: loops that modify data through a
// map are coloured), or with tiles OpenMPTiles.
func openMP(l *core.Loop, lanes int, tiles, colour bool) (string, error) {
	g, err := newGen(l, lanes)
	if err != nil {
		return "", err
	}
	g.Prelude(l)
	g.Printf("#include <omp.h>\n\n")
	if tiles {
		g.writeRunsRange(l)
	} else {
		g.writeRange(l)
	}
	g.EntryOpen(l)
	g.Printf("  const long long op2_start = op2_iv[%d], op2_end = op2_iv[%d];\n", IvStart, IvEnd)
	g.Printf("  const int op2_nthreads = (int)op2_iv[%d];\n", IvThreads)
	coloured := colour && l.NeedsColouring() && !tiles
	nargs := len(l.Args)
	if tiles {
		g.Printf("  const int *const op2_ru = (const int *)op2_pv[%d];\n", 2*nargs+PvTileRuns)
		g.Printf("  const int *const op2_to = (const int *)op2_pv[%d];\n", 2*nargs+PvTileOffsets)
	}
	if coloured {
		g.Printf("  const int *const op2_blkmap = (const int *)op2_pv[%d];\n", 2*nargs+PvBlkMap)
		g.Printf("  const int *const op2_offset = (const int *)op2_pv[%d];\n", 2*nargs+PvOffset)
		g.Printf("  const int *const op2_nelems = (const int *)op2_pv[%d];\n", 2*nargs+PvNElems)
		g.Printf("  const int *const op2_coloff = (const int *)op2_pv[%d];\n", 2*nargs+PvColOffset)
		g.Printf("  const int *const op2_ownoff = (const int *)op2_pv[%d];\n", 2*nargs+PvOwnerOffset)
		g.Printf("  const int op2_owners = (int)op2_iv[%d];\n", IvOwners)
	}
	// Per-thread partial results, one cache line apart.
	stride := func(a *core.Arg) int {
		per := 64 / a.Data.Type.Size()
		return (a.Data.Dim + per - 1) / per * per
	}
	var reductions []int
	for i := range l.Args {
		a := &l.Args[i]
		if !a.IsReduction() {
			continue
		}
		reductions = append(reductions, i)
		init := fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i])
		if a.Access == core.Inc {
			init = "0"
		}
		g.Printf("  %s *const op2_part%d = (%s *)aligned_alloc(64, sizeof(%s) * op2_nthreads * %d);\n", a.Data.Type.CName(), i, a.Data.Type.CName(), a.Data.Type.CName(), stride(a))
		g.Printf("  if (!op2_part%d) {", i)
		for _, j := range reductions[:len(reductions)-1] {
			g.Printf(" free(op2_part%d);", j)
		}
		g.Printf(" return 1; }\n")
		g.Printf("  for (int op2_t = 0; op2_t < op2_nthreads; op2_t++)\n    for (int op2_k = 0; op2_k < %d; op2_k++) op2_part%d[op2_t * %d + op2_k] = %s;\n",
			a.Data.Dim, i, stride(a), init)
	}
	reduce := func(i int) string { return fmt.Sprintf("op2_part%d + op2_tid * %d", i, stride(&l.Args[i])) }
	// op2_range fails only when it cannot allocate its pointer arrays;
	// a failure anywhere fails the loop.
	fails := RangeFails(l)
	call := func(first, last string) string {
		if tiles {
			first, last = "op2_to["+first+"]", "op2_to["+last+"], op2_ru"
		}
		c := RangeCall(l, first, last, reduce)
		if !fails {
			return "(void)" + c + ";"
		}
		return "if (" + c + ") {\n        #pragma omp atomic write\n        op2_failed = 1;\n      }"
	}
	if fails {
		g.Printf("  int op2_failed = 0;\n")
	}

	// The work of one thread. With one thread it runs without a parallel
	// region: the orphaned worksharing loop then binds to a team of one,
	// which costs far less than starting a region.
	var r Gen
	r.Printf("    const int op2_tid = omp_get_thread_num();\n    (void)op2_tid;\n")
	if coloured {
		r.Printf("    if (op2_owners > 0) {\n")
		r.Printf("      const int op2_nt = omp_get_num_threads();\n")
		r.Printf("      for (long long op2_c = op2_start; op2_c < op2_end; op2_c++) {\n")
		r.Printf("        for (int op2_p = op2_tid; op2_p < op2_owners; op2_p += op2_nt) {\n")
		r.Printf("          const int *const op2_o = op2_ownoff + op2_c * op2_owners + op2_p;\n")
		r.Printf("          for (int op2_b = op2_o[0]; op2_b < op2_o[1]; op2_b++) {\n")
		r.Printf("            const int op2_blk = op2_blkmap[op2_b];\n")
		r.Printf("            %s\n", call("op2_offset[op2_blk]", "(long long)op2_offset[op2_blk] + op2_nelems[op2_blk]"))
		r.Printf("          }\n        }\n")
		r.Printf("        if (op2_c + 1 < op2_end) {\n          #pragma omp barrier\n        }\n")
		r.Printf("      }\n")
		r.Printf("    } else {\n")
		r.Printf("      for (long long op2_c = op2_start; op2_c < op2_end; op2_c++) {\n")
		r.Printf("        #pragma omp for schedule(static)\n")
		r.Printf("        for (int op2_b = op2_coloff[op2_c]; op2_b < op2_coloff[op2_c + 1]; op2_b++) {\n")
		r.Printf("          const int op2_blk = op2_blkmap[op2_b];\n")
		r.Printf("          %s\n", call("op2_offset[op2_blk]", "(long long)op2_offset[op2_blk] + op2_nelems[op2_blk]"))
		r.Printf("        }\n      }\n    }\n")
	} else {
		r.Printf("    const int op2_nt = omp_get_num_threads();\n")
		r.Printf("    const long long op2_len = op2_end - op2_start;\n")
		r.Printf("    %s\n", call("op2_start + op2_len * op2_tid / op2_nt", "op2_start + op2_len * (op2_tid + 1) / op2_nt"))
	}
	g.Printf("  if (op2_nthreads > 1) {\n    #pragma omp parallel num_threads(op2_nthreads)\n    {\n%s    }\n  } else {\n%s  }\n", r.String(), r.String())
	if fails {
		g.Printf("  if (op2_failed) {")
		for _, i := range reductions {
			g.Printf(" free(op2_part%d);", i)
		}
		g.Printf(" return 1; }\n")
	}
	for _, i := range reductions {
		a := &l.Args[i]
		g.Printf("  for (int op2_t = 0; op2_t < op2_nthreads; op2_t++)\n    for (int op2_k = 0; op2_k < %d; op2_k++) { %s }\n",
			a.Data.Dim, Combine(a.Access, fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i]), fmt.Sprintf("op2_part%d[op2_t * %d + op2_k]", i, stride(a))))
		g.Printf("  free(op2_part%d);\n", i)
	}
	g.EntryClose(l)
	return g.String(), nil
}
