package hostc

import (
	"fmt"
	"strconv"

	"github.com/goop2/op2/internal/core"
)

// Sequential writes the sequential backend's translation unit: prelude,
// kernel and a wrapper that loops over [op2_iv[IvStart], op2_iv[IvEnd]).
// Global reductions accumulate into local copies, combined into the Global
// after the loop.
func Sequential(l *core.Loop) (string, error) { return SequentialLanes(l, 0) }

// SequentialLanes is Sequential with the SIMD variant of lanes lanes
// (lanes.go; 0: the scalar code).
func SequentialLanes(l *core.Loop, lanes int) (string, error) {
	g, err := newGen(l, lanes)
	if err != nil {
		return "", err
	}
	g.Prelude(l)
	g.writeRange(l)
	g.EntryOpen(l)
	g.sequentialEntry(l, fmt.Sprintf("op2_iv[%d]", IvEnd))
	g.EntryClose(l)
	return g.String(), nil
}

// sequentialEntry writes the sequential entry point's body: local
// accumulators for the Global reductions, the call of op2_range from
// op2_iv[IvStart] with end (the range's end and any further arguments
// of the range function), and the accumulators combined into the Globals.
func (g *Gen) sequentialEntry(l *core.Loop, end string) {
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
	g.Printf("  if (%s) return 1;\n", RangeCall(l, fmt.Sprintf("op2_iv[%d]", IvStart), end,
		func(i int) string { return "op2_r" + strconv.Itoa(i) }))
	// Each accumulator started from the identity (or the Global's value for
	// MIN and MAX), so a Global passed twice gets both contributions.
	for i := range l.Args {
		a := &l.Args[i]
		if a.IsReduction() {
			g.Printf("  for (int op2_k = 0; op2_k < %d; op2_k++) { %s }\n", a.Data.Dim,
				Combine(a.Access, fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i]), fmt.Sprintf("op2_r%d[op2_k]", i)))
		}
	}
}

// newGen returns a generator for l's translation unit, with lanes SIMD
// lanes (0: scalar code).
func newGen(l *core.Loop, lanes int) (*Gen, error) {
	g := &Gen{Lanes: lanes}
	if lanes == 0 {
		return g, nil
	}
	if lanes%4 != 0 || lanes > 8 {
		return nil, fmt.Errorf("%s: %d SIMD lanes (want 4 or 8)", l.Name(), lanes)
	}
	if err := laneArgsCheck(l); err != nil {
		return nil, fmt.Errorf("%s: no SIMD lanes: %w", l.Name(), err)
	}
	form, err := LaneKernel(l, lanes)
	if err != nil {
		return nil, fmt.Errorf("%s: no SIMD lanes: %w", l.Name(), err)
	}
	g.Lane = form
	return g, nil
}

// writeRunsRange writes op2_range for runs of elements (the tile
// forms): the scalar code, or the SIMD variant.
func (g *Gen) writeRunsRange(l *core.Loop) {
	if g.Lanes > 0 {
		g.RunsRangeLanes(l, g.Lanes)
		return
	}
	g.RunsRange(l)
}

// writeRange writes op2_range: the scalar code, or the SIMD variant.
func (g *Gen) writeRange(l *core.Loop) {
	if g.Lanes > 0 {
		g.RangeLanes(l, g.Lanes)
		return
	}
	g.Range(l)
}
