package probe_test

// Independent probes of the sparse-matrix feature (issue 23), written from
// the outside against the public API and kept as regression tests; the
// findings, all fixed, are in
// docs/history/probe-matrix-findings-2026-11-24.md.

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/testreq"
)

// openCLErr is the error of starting the opencl backend here (PoCL in CI).
var openCLErr = sync.OnceValue(func() error {
	_, err := op2.NewRuntime(op2.Config{Backend: "opencl"})
	return err
})

// haveOpenCL reports whether the opencl backend starts here. Probes that
// add opencl configurations only where it does are covered by
// TestProbeOpenCL, which records its absence.
func haveOpenCL() bool { return openCLErr() == nil }

// needOpenCL skips t when the opencl backend's driver or device is
// missing here, and fails it when OP2_REQUIRE names opencl or the backend
// fails for another reason.
func needOpenCL(t *testing.T) {
	t.Helper()
	testreq.Check(t, "opencl", openCLErr(), op2.ErrBackendUnavailable)
}

// TestProbeOpenCL records, as a skip (a failure under OP2_REQUIRE), that
// the probes leave their opencl configurations out.
func TestProbeOpenCL(t *testing.T) { needOpenCL(t) }

func iota32[T ~int32 | ~float64 | ~float32](n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(i)
	}
	return s
}

// probeConfigs are the backends and schemes the matrix probes run on:
// three host configurations, then (where PoCL or another OpenCL runtime
// is present) three device ones. In -short mode a test runs on one of
// each, picked by key (the test's or trial's name), so that the probes
// together still run every configuration while each compiles its loops
// for one host backend only (compiling dominates these tests' time).
func probeConfigs(key string) []op2.Config {
	th := 2
	if v, err := strconv.Atoi(os.Getenv("PROBE_THREADS")); err == nil {
		th = v
	}
	host := []op2.Config{
		{Backend: "sequential"},
		{Backend: "openmp", Threads: th, OpenMPScheme: "colour", BlockSize: 4, PlanCheck: true},
		{Backend: "openmp", Threads: th, OpenMPScheme: "owner", BlockSize: 8, PlanCheck: true},
	}
	var dev []op2.Config
	if haveOpenCL() && os.Getenv("PROBE_NO_OPENCL") == "" {
		dev = []op2.Config{
			{Backend: "opencl", DeviceScheme: "staged", BlockSize: 8, PlanCheck: true},
			{Backend: "opencl", DeviceScheme: "staged", DeviceLayout: "soa", BlockSize: 16, PlanCheck: true},
			{Backend: "opencl", DeviceScheme: "atomics", DeviceLayout: "soa", DeviceWorkGroupSize: 32}}
	}
	if !testing.Short() {
		return append(host, dev...)
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	k := int(h.Sum32() % 9)
	cfgs := []op2.Config{host[k%3]}
	if dev != nil {
		cfgs = append(cfgs, dev[k/3])
	}
	return cfgs
}

func cfgName(c op2.Config) string {
	return strings.Trim(fmt.Sprintf("%s-%s%s-%s", c.Backend, c.OpenMPScheme, c.DeviceScheme, c.DeviceLayout), "-")
}

// eachConfig runs f as a subtest per config, with its own runtime.
func eachConfig(t *testing.T, f func(t *testing.T, r *op2.Runtime)) {
	for _, cfg := range probeConfigs(t.Name()) {
		t.Run(cfgName(cfg), func(t *testing.T) {
			f(t, must(op2.NewRuntime(cfg)))
		})
	}
}

// probeFill is a kernel filling an NR×NC element matrix of T with
// values exact in binary floating point, differing per element and entry.
func probeFill(t string, nr, nc int) *op2.Kernel {
	return op2.NewKernel(fmt.Sprintf(`#define NR %d
#define NC %d
void pfill_%s_%d_%d(const int *e, %s *A) {
  for (int i = 0; i < NR; i++)
    for (int j = 0; j < NC; j++)
      A[i * NC + j] = (%s)((*e %% 7) + 1) * (%s)(i * NC + j + 1) * (%s)0.25;
}`, nr, nc, t, nr, nc, t, t, t, t), fmt.Sprintf("pfill_%s_%d_%d", t, nr, nc))
}

func fillValue(e, k int) float64 { return float64(e%7+1) * float64(k+1) * 0.25 }

// pairSpec describes one map pair's tables for the expected assembly.
type pairSpec struct {
	rows     []int32
	ra       int
	cols     []int32
	ca       int
	elements []int // the elements that run (nil: all)
}

// expectDense adds the element matrices of probeFill through ps into
// want (rd×cd blocks).
func expectDense(want [][]float64, ps pairSpec, rd, cd int) {
	n := len(ps.rows) / ps.ra
	els := ps.elements
	if els == nil {
		for e := 0; e < n; e++ {
			els = append(els, e)
		}
	}
	nr, nc := ps.ra*rd, ps.ca*cd
	for _, e := range els {
		for i := 0; i < nr; i++ {
			for j := 0; j < nc; j++ {
				r := int(ps.rows[e*ps.ra+i/rd])*rd + i%rd
				c := int(ps.cols[e*ps.ca+j/cd])*cd + j%cd
				want[r][c] += fillValue(e, i*nc+j)
			}
		}
	}
}

func zeros(r, c int) [][]float64 {
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
	}
	return out
}

func compareDense[T float32 | float64](t *testing.T, what string, got [][]T, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: row %d has %d columns, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if float64(got[i][j]) != want[i][j] {
				t.Fatalf("%s: A[%d][%d] = %v, want %v", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// TestProbeMatRepeatedEntries: an element whose row and column maps hold
// the same node twice adds both contributions (every backend).
func TestProbeMatRepeatedEntries(t *testing.T) {
	const nn = 6
	tab := []int32{0, 0, 1, 2, 3, 2, 4, 5, 5, 1, 1, 1, 3, 4, 0, 5, 5, 5, 2, 0, 2}
	n := len(tab) / 3
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(nn, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
		for _, dim := range []int{1, 3} {
			sp := must(op2.NewSparsity(nodes, dim, nodes, dim, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
			A := must(op2.NewMat[float64](sp, "A"))
			check(t, r.ParLoop(probeFill("double", 3*dim, 3*dim), cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
			want := zeros(nn*dim, nn*dim)
			expectDense(want, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, dim, dim)
			compareDense(t, fmt.Sprintf("dim %d", dim), must(A.Dense()), want)
		}
	})
}

// TestProbeMatFloat32Dim3: float32 matrices with 3×3 blocks and a
// rectangular pattern (rows dim 3, columns dim 2 on another set).
func TestProbeMatFloat32Dim3(t *testing.T) {
	tabN := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1}
	tabE := []int32{0, 1, 1, 2, 2, 0, 0, 2, 1, 1, 2, 0}
	n := 6
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(5, "nodes"))
		edges := must(op2.NewSet(3, "edges"))
		pcell := must(op2.NewMap(cells, nodes, 3, tabN, "pcell"))
		ecell := must(op2.NewMap(cells, edges, 2, tabE, "ecell"))
		// square, dim 3
		sp := must(op2.NewSparsity(nodes, 3, nodes, 3, []op2.MapPair{{Row: pcell, Col: pcell}}, "sq"))
		A := must(op2.NewMat[float32](sp, "A"))
		check(t, r.ParLoop(probeFill("float", 9, 9), cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		want := zeros(15, 15)
		expectDense(want, pairSpec{rows: tabN, ra: 3, cols: tabN, ca: 3}, 3, 3)
		compareDense(t, "square float32 dim 3", must(A.Dense()), want)
		// rectangular
		sr := must(op2.NewSparsity(nodes, 3, edges, 2, []op2.MapPair{{Row: pcell, Col: ecell}}, "rect"))
		B := must(op2.NewMat[float32](sr, "B"))
		check(t, r.ParLoop(probeFill("float", 9, 4), cells, op2.ArgIdx(), B.Arg(op2.Inc, pcell, ecell)))
		want = zeros(15, 6)
		expectDense(want, pairSpec{rows: tabN, ra: 3, cols: tabE, ca: 2}, 3, 2)
		compareDense(t, "rectangular float32", must(B.Dense()), want)
		// and its transpose: rows on edges, columns on nodes
		st := must(op2.NewSparsity(edges, 2, nodes, 3, []op2.MapPair{{Row: ecell, Col: pcell}}, "rectT"))
		C := must(op2.NewMat[float32](st, "C"))
		check(t, r.ParLoop(probeFill("float", 4, 9), cells, op2.ArgIdx(), C.Arg(op2.Inc, ecell, pcell)))
		want = zeros(6, 15)
		expectDense(want, pairSpec{rows: tabE, ra: 2, cols: tabN, ca: 3}, 2, 3)
		compareDense(t, "rectangular transposed float32", must(C.Dense()), want)
	})
}

const twoMatKernel = `
void two_mats(const int *e, double *A, float *B, double **res) {
  for (int i = 0; i < 9; i++) A[i] = (double)((*e % 7) + 1) * (double)(i + 1) * 0.25;
  for (int i = 0; i < 36; i++) B[i] = (float)((*e % 7) + 1) * (float)(i + 1) * 0.25f;
  for (int i = 0; i < 3; i++) res[i][0] += 1.0;
}`

// TestProbeMatTwoMatsAndDat: two matrices (float64 dim 1, float32 dim 2)
// and a Dat incremented through the same map, in one loop.
func TestProbeMatTwoMatsAndDat(t *testing.T) {
	tab := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1, 5, 6, 7, 7, 6, 5, 1, 5, 3}
	n := len(tab) / 3
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(8, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
		sp1 := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp1"))
		sp2 := must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp2"))
		A := must(op2.NewMat[float64](sp1, "A"))
		B := must(op2.NewMat[float32](sp2, "B"))
		res := must(op2.NewDat[float64](nodes, 1, nil, "res"))
		k := op2.NewKernel(twoMatKernel, "two_mats")
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell), B.Arg(op2.Inc, pcell, pcell), res.ArgVec(op2.Inc, pcell)))
		want := zeros(8, 8)
		expectDense(want, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, 1, 1)
		compareDense(t, "A", must(A.Dense()), want)
		want = zeros(16, 16)
		expectDense(want, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, 2, 2)
		compareDense(t, "B", must(B.Dense()), want)
		cnt := make([]float64, 8)
		for _, v := range tab {
			cnt[v]++
		}
		if got := res.DataRO(); !slices.Equal(got, cnt) {
			t.Fatalf("res = %v, want %v", got, cnt)
		}
	})
}

// TestProbeMatSameMatTwoPairs: one matrix passed twice in a loop through
// two different pairs whose row maps reach the same rows from different
// columns; both contributions must land, race-free.
func TestProbeMatSameMatTwoPairs(t *testing.T) {
	const n, nn = 40, 12
	tabP := make([]int32, 2*n)
	tabQ := make([]int32, 2*n)
	for e := 0; e < n; e++ {
		tabP[2*e], tabP[2*e+1] = int32(e%nn), int32((e+1)%nn)
		tabQ[2*e], tabQ[2*e+1] = int32((e*5+3)%nn), int32((e*7+1)%nn)
	}
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(nn, "nodes"))
		p := must(op2.NewMap(cells, nodes, 2, tabP, "p"))
		q := must(op2.NewMap(cells, nodes, 2, tabQ, "q"))
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: p, Col: p}, {Row: q, Col: q}, {Row: p, Col: q}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		k := op2.NewKernel(`void two(const int *e, double *A, double *B, double *C) {
  for (int i = 0; i < 4; i++) { double v = (double)((*e % 7) + 1) * (double)(i + 1) * 0.25; A[i] = v; B[i] = v; C[i] = v; }
}`, "two")
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, p, p), A.Arg(op2.Inc, q, q), A.Arg(op2.Inc, p, q)))
		want := zeros(nn, nn)
		expectDense(want, pairSpec{rows: tabP, ra: 2, cols: tabP, ca: 2}, 1, 1)
		expectDense(want, pairSpec{rows: tabQ, ra: 2, cols: tabQ, ca: 2}, 1, 1)
		expectDense(want, pairSpec{rows: tabP, ra: 2, cols: tabQ, ca: 2}, 1, 1)
		compareDense(t, "A", must(A.Dense()), want)
	})
}

// TestProbeMatEmpty: loops with a matrix over an empty set, an empty
// subset, and a sparsity whose pair has no elements; an empty rows set.
func TestProbeMatEmpty(t *testing.T) {
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		none := must(op2.NewSet(0, "none"))
		cells := must(op2.NewSet(3, "cells"))
		nodes := must(op2.NewSet(4, "nodes"))
		pnone := must(op2.NewMap(none, nodes, 2, nil, "pnone"))
		pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "pcell"))
		k := probeFill("double", 2, 2)
		// A pattern from an empty pair: the diagonal only.
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pnone, Col: pnone}, {Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		if err := r.ParLoop(k, none, op2.ArgIdx(), A.Arg(op2.Inc, pnone, pnone)); err != nil {
			t.Fatalf("loop over an empty set: %v", err)
		}
		sub := must(op2.NewSubset(cells, nil))
		if err := r.ParLoop(k, sub, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)); err != nil {
			t.Fatalf("loop over an empty subset: %v", err)
		}
		compareDense(t, "after empty loops", must(A.Dense()), zeros(4, 4))
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		want := zeros(4, 4)
		expectDense(want, pairSpec{rows: []int32{0, 1, 1, 2, 2, 3}, ra: 2, cols: []int32{0, 1, 1, 2, 2, 3}, ca: 2}, 1, 1)
		compareDense(t, "after the cells loop", must(A.Dense()), want)

		// Only an empty pair: a matrix with a diagonal and nothing else.
		sp0 := must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pnone, Col: pnone}}, "sp0"))
		B := must(op2.NewMat[float64](sp0, "B"))
		if err := r.ParLoop(probeFill("double", 4, 4), none, op2.ArgIdx(), B.Arg(op2.Inc, pnone, pnone)); err != nil {
			t.Fatalf("loop over an empty set, empty pair: %v", err)
		}
		check(t, B.ZeroRows([]int{0, 3}, 2))
		d := must(B.Dense())
		if d[0][0] != 2 || d[1][1] != 2 || d[7][7] != 2 || d[2][2] != 0 {
			t.Fatalf("ZeroRows on an empty-pair matrix: %v", d)
		}
		// An empty rows set, rectangular.
		sr := must(op2.NewSparsity(none, 1, nodes, 1, []op2.MapPair{{Row: must(op2.NewMap(none, none, 1, nil, "nn")), Col: pnone}}, "sr"))
		C := must(op2.NewMat[float32](sr, "C"))
		if rr, cc := sr.Shape(); rr != 0 || cc != 4 {
			t.Fatalf("shape %d×%d", rr, cc)
		}
		x := must(op2.NewDat[float32](nodes, 1, nil, "x"))
		y := must(op2.NewDat[float32](none, 1, nil, "y"))
		check(t, C.Mult(x, y))
		if d := must(C.Dense()); len(d) != 0 {
			t.Fatalf("dense of an empty matrix: %v", d)
		}
		check(t, C.Zero())
	})
}

// TestProbeMatOptional: a disabled optional matrix argument changes
// nothing; an enabled one assembles.
func TestProbeMatOptional(t *testing.T) {
	tab := []int32{0, 1, 1, 2, 2, 3, 3, 0}
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(4, "cells"))
		nodes := must(op2.NewSet(4, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 2, tab, "pcell"))
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		res := must(op2.NewDat[float64](nodes, 1, nil, "res"))
		k := op2.NewKernel(`void opt(const int *e, double *A, double *r) {
  if (A) for (int i = 0; i < 4; i++) A[i] = (double)((*e % 7) + 1) * (double)(i + 1) * 0.25;
  r[0] += 1;
}`, "opt")
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), op2.Opt(false, A.Arg(op2.Inc, pcell, pcell)), res.ArgMap(op2.Inc, pcell, 0)))
		compareDense(t, "disabled", must(A.Dense()), zeros(4, 4))
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), op2.Opt(true, A.Arg(op2.Inc, pcell, pcell)), res.ArgMap(op2.Inc, pcell, 0)))
		want := zeros(4, 4)
		expectDense(want, pairSpec{rows: tab, ra: 2, cols: tab, ca: 2}, 1, 1)
		compareDense(t, "enabled", must(A.Dense()), want)
		if !slices.Equal(res.DataRO(), []float64{2, 2, 2, 2}) {
			t.Fatalf("res = %v", res.DataRO())
		}
	})
}

// TestProbeMatLargestDeviceElement: an element matrix of exactly
// op2.MaxDeviceElementMatrixBytes (32×32 float64) runs everywhere.
func TestProbeMatLargestDeviceElement(t *testing.T) {
	const ar, n, nn = 32, 6, 40
	tab := make([]int32, 0, n*ar)
	for e := 0; e < n; e++ {
		for i := 0; i < ar; i++ {
			tab = append(tab, int32((e*3+i*7)%nn))
		}
	}
	if ar*ar*8 != op2.MaxDeviceElementMatrixBytes {
		t.Fatalf("limit changed: %d", op2.MaxDeviceElementMatrixBytes)
	}
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(nn, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, ar, tab, "pcell"))
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		check(t, r.ParLoop(probeFill("double", ar, ar), cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		want := zeros(nn, nn)
		expectDense(want, pairSpec{rows: tab, ra: ar, cols: tab, ca: ar}, 1, 1)
		compareDense(t, "A", must(A.Dense()), want)
	})
}

// TestProbeMatBackendSwitch: a matrix assembled on the device, then
// incremented by a host loop after op2.Use("sequential"), then again on
// the device: every contribution counts (the device copy comes home and
// goes back).
func TestProbeMatBackendSwitch(t *testing.T) {
	needOpenCL(t)
	tab := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4}
	cells := must(op2.NewSet(5, "cells"))
	nodes := must(op2.NewSet(5, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
	sp := must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	k := probeFill("double", 6, 6)
	one := zeros(10, 10)
	expectDense(one, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, 2, 2)
	scaled := func(s float64) [][]float64 {
		out := zeros(10, 10)
		for i := range out {
			for j := range out[i] {
				out[i][j] = s * one[i][j]
			}
		}
		return out
	}
	defer op2.Use("sequential")
	steps := []string{"opencl", "sequential", "openmp", "opencl", "opencl"}
	for _, b := range steps {
		check(t, op2.Use(b))
		check(t, op2.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
	}
	compareDense(t, "after switching", must(A.Dense()), scaled(float64(len(steps))))
	// Two device runtimes (staged, atomics) alternating.
	rs := must(op2.NewRuntime(op2.Config{Backend: "opencl", DeviceScheme: "staged"}))
	ra := must(op2.NewRuntime(op2.Config{Backend: "opencl", DeviceScheme: "atomics"}))
	check(t, A.Zero())
	for i := 0; i < 4; i++ {
		r := rs
		if i%2 == 1 {
			r = ra
		}
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
	}
	compareDense(t, "after two device runtimes", must(A.Dense()), scaled(4))
}

// TestProbeMatHostEditsThenDevice: ZeroRows and Zero on a matrix whose
// values are on the device, followed by device assembly: the device must
// see the host's edits.
func TestProbeMatHostEditsThenDevice(t *testing.T) {
	tab := []int32{0, 1, 1, 2, 2, 3, 3, 0}
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(4, "cells"))
		nodes := must(op2.NewSet(4, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 2, tab, "pcell"))
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		k := probeFill("double", 2, 2)
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		check(t, A.ZeroRows([]int{1}, 100))
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		want := zeros(4, 4)
		expectDense(want, pairSpec{rows: tab, ra: 2, cols: tab, ca: 2}, 1, 1)
		w2 := zeros(4, 4)
		for i := range want {
			for j := range want[i] {
				w2[i][j] = 2 * want[i][j]
				if i == 1 {
					w2[i][j] = want[i][j]
					if j == 1 {
						w2[i][j] += 100
					}
				}
			}
		}
		compareDense(t, "ZeroRows between assemblies", must(A.Dense()), w2)
		// Values after Zero on the device, then assembly.
		check(t, A.Zero())
		_, _, vals, err := A.Values()
		check(t, err)
		for _, v := range vals {
			if v != 0 {
				t.Fatalf("after Zero: %v", vals)
			}
		}
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		compareDense(t, "after Zero and assembly", must(A.Dense()), want)
		// Mult with x written on the device, y then read on the device.
		x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
		y := must(op2.NewDat[float64](nodes, 1, nil, "y"))
		setK := op2.NewKernel(`void setx(const int *i, double *x) { x[0] = (double)(*i) - 1.5; }`, "setx")
		check(t, r.ParLoop(setK, nodes, op2.ArgIdx(), x.Arg(op2.Write)))
		check(t, A.Mult(x, y))
		sum := must(op2.NewGlobal[float64](1, nil, "sum"))
		sumK := op2.NewKernel(`void sumy(const double *y, double *s) { s[0] += y[0]; }`, "sumy")
		check(t, r.ParLoop(sumK, nodes, y.Arg(op2.Read), sum.Arg(op2.Inc)))
		var ws float64
		for i := range want {
			for j := range want[i] {
				ws += want[i][j] * (float64(j) - 1.5)
			}
		}
		if sum.Value() != ws {
			t.Fatalf("sum of A x = %v, want %v", sum.Value(), ws)
		}
	})
}

// TestProbeMatWriteShared: WRITE where several elements write the same
// entries, all with the same value (a function of the row and column
// nodes), is deterministic on every backend.
func TestProbeMatWriteShared(t *testing.T) {
	tab := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1, 5, 6, 7, 7, 6, 5, 1, 5, 3}
	n := len(tab) / 3
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(8, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
		id := must(op2.NewDat(nodes, 1, iota32[float64](8), "id"))
		sp := must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		k := op2.NewKernel(`void wr(const double **id, double *A) {
  for (int i = 0; i < 6; i++) for (int j = 0; j < 6; j++)
    A[i * 6 + j] = id[i / 2][0] * 100 + (i % 2) * 10 + id[j / 2][0] * 1000 + (j % 2) + 1;
}`, "wr")
		// Start from garbage: WRITE must store, not add.
		check(t, r.ParLoop(probeFill("double", 6, 6), cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		check(t, r.ParLoop(k, cells, id.ArgVec(op2.Read, pcell), A.Arg(op2.Write, pcell, pcell)))
		got := must(A.Dense())
		for e := 0; e < n; e++ {
			for i := 0; i < 6; i++ {
				for j := 0; j < 6; j++ {
					ri, cj := int(tab[e*3+i/2]), int(tab[e*3+j/2])
					w := float64(ri)*100 + float64(i%2)*10 + float64(cj)*1000 + float64(j%2) + 1
					if g := got[ri*2+i%2][cj*2+j%2]; g != w {
						t.Fatalf("A[%d][%d] = %v, want %v", ri*2+i%2, cj*2+j%2, g, w)
					}
				}
			}
		}
	})
}

// TestProbeMatWithRWDat: a matrix assembled in a loop that also writes a
// Dat through the row map (RW, one column) and increments another.
func TestProbeMatWithRWDat(t *testing.T) {
	tab := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1, 5, 6, 7, 7, 6, 5, 1, 5, 3}
	n := len(tab) / 3
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(8, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		cnt := must(op2.NewDat[float64](nodes, 1, nil, "cnt"))
		inc := must(op2.NewDat[float64](nodes, 1, nil, "inc"))
		k := op2.NewKernel(`void mixed(const int *e, double *A, double *c, double **inc) {
  for (int i = 0; i < 9; i++) A[i] = (double)((*e % 7) + 1) * (double)(i + 1) * 0.25;
  c[0] += 1;
  for (int i = 0; i < 3; i++) inc[i][0] += 2;
}`, "mixed")
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell), cnt.ArgMap(op2.RW, pcell, 0), inc.ArgVec(op2.Inc, pcell)))
		want := zeros(8, 8)
		expectDense(want, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, 1, 1)
		compareDense(t, "A", must(A.Dense()), want)
		wc, wi := make([]float64, 8), make([]float64, 8)
		for e := 0; e < n; e++ {
			wc[tab[3*e]]++
			for i := 0; i < 3; i++ {
				wi[tab[3*e+i]] += 2
			}
		}
		if !slices.Equal(cnt.DataRO(), wc) || !slices.Equal(inc.DataRO(), wi) {
			t.Fatalf("cnt %v want %v; inc %v want %v", cnt.DataRO(), wc, inc.DataRO(), wi)
		}
	})
}

// TestProbeMatCacheTwoSparsities: the same kernel and loop shape with
// two sparsities of different patterns (and a subset of one) must not
// mix their offsets.
func TestProbeMatCacheTwoSparsities(t *testing.T) {
	tab1 := []int32{0, 1, 1, 2, 2, 3, 3, 4, 4, 5}
	tab2 := []int32{5, 0, 4, 1, 3, 2, 2, 5, 1, 0}
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(5, "cells"))
		nodes := must(op2.NewSet(6, "nodes"))
		p1 := must(op2.NewMap(cells, nodes, 2, tab1, "p1"))
		p2 := must(op2.NewMap(cells, nodes, 2, tab2, "p2"))
		sp1 := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: p1, Col: p1}}, "sp1"))
		sp2 := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: p2, Col: p2}}, "sp2"))
		A := must(op2.NewMat[float64](sp1, "A"))
		B := must(op2.NewMat[float64](sp2, "B"))
		k := probeFill("double", 2, 2)
		for i := 0; i < 2; i++ {
			check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, p1, p1)))
			check(t, r.ParLoop(k, cells, op2.ArgIdx(), B.Arg(op2.Inc, p2, p2)))
		}
		sub := must(op2.NewSubset(cells, []int32{4, 1}))
		check(t, r.ParLoop(k, sub, op2.ArgIdx(), A.Arg(op2.Inc, p1, p1)))
		check(t, r.ParLoop(k, sub, op2.ArgIdx(), B.Arg(op2.Inc, p2, p2)))
		for _, c := range []struct {
			M   *op2.Mat[float64]
			tab []int32
		}{{A, tab1}, {B, tab2}} {
			want := zeros(6, 6)
			expectDense(want, pairSpec{rows: c.tab, ra: 2, cols: c.tab, ca: 2}, 1, 1)
			expectDense(want, pairSpec{rows: c.tab, ra: 2, cols: c.tab, ca: 2}, 1, 1)
			expectDense(want, pairSpec{rows: c.tab, ra: 2, cols: c.tab, ca: 2, elements: []int{1, 4}}, 1, 1)
			compareDense(t, c.M.Name(), must(c.M.Dense()), want)
		}
	})
}

// TestProbeMatRefusedLoops: misuse is refused with errors naming the
// loop, argument, maps and sets, and nothing changes, also while the
// matrix's values are on a device.
func TestProbeMatRefusedLoops(t *testing.T) {
	tabN := []int32{0, 1, 1, 2, 2, 3}
	tabE := []int32{0, 1, 1}
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(3, "cells"))
		nodes := must(op2.NewSet(4, "nodes"))
		edges := must(op2.NewSet(2, "edges"))
		pcell := must(op2.NewMap(cells, nodes, 2, tabN, "pcell"))
		ecell := must(op2.NewMap(cells, edges, 1, tabE, "ecell"))
		sp := must(op2.NewSparsity(nodes, 1, edges, 2, []op2.MapPair{{Row: pcell, Col: ecell}}, "rect"))
		A := must(op2.NewMat[float64](sp, "A"))
		good := probeFill("double", 2, 2)
		check(t, r.ParLoop(good, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, ecell)))
		before := must(A.Dense())
		if r, c := sp.Shape(); r != 4 || c != 4 {
			t.Fatalf("shape %d×%d", r, c)
		}
		tests := []struct {
			name string
			k    *op2.Kernel
			args []op2.Arg
			want []string
		}{
			{"swapped maps", good, []op2.Arg{op2.ArgIdx(), A.Arg(op2.Inc, ecell, pcell)}, []string{`row map "ecell"`, `column map "pcell"`, "not one of the sparsity's map pairs"}},
			{"min access", good, []op2.Arg{op2.ArgIdx(), A.Arg(op2.Min, pcell, ecell)}, []string{"MIN", "not allowed for a matrix"}},
			{"rw access", good, []op2.Arg{op2.ArgIdx(), A.Arg(op2.RW, pcell, ecell)}, []string{"not allowed for a matrix"}},
			{"nil row map", good, []op2.Arg{op2.ArgIdx(), A.Arg(op2.Inc, nil, ecell)}, []string{"must not be nil"}},
			{"write and inc", op2.NewKernel(`void wi(const int *e, double *A, double *B) {}`, "wi"), []op2.Arg{op2.ArgIdx(), A.Arg(op2.Inc, pcell, ecell), A.Arg(op2.Write, pcell, ecell)}, []string{"only with INC"}},
			{"too few params", op2.NewKernel(`void few(double *A) { A[0] = 1; }`, "few"), []op2.Arg{op2.ArgIdx(), A.Arg(op2.Inc, pcell, ecell)}, []string{"few"}},
			{"float kernel", op2.NewKernel(`void fk(const int *e, float *A) { A[0] = 1; }`, "fk"), []op2.Arg{op2.ArgIdx(), A.Arg(op2.Inc, pcell, ecell)}, []string{"float32"}},
		}
		for _, tc := range tests {
			err := r.ParLoop(tc.k, cells, tc.args...)
			if err == nil {
				t.Errorf("%s: accepted", tc.name)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v; want it to contain %q", tc.name, err, w)
				}
			}
			compareDense(t, "after "+tc.name, must(A.Dense()), toF64(before))
			// back onto the device, if there is one
			check(t, r.ParLoop(good, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, ecell)))
			check(t, r.ParLoop(op2.NewKernel(`void neg(const int *e, double *A) { for (int i = 0; i < 4; i++) A[i] = -(double)((*e % 7) + 1) * (double)(i + 1) * 0.25; }`, "neg"), cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, ecell)))
		}
		// A loop over another set than the maps'.
		if err := r.ParLoop(good, edges, op2.ArgIdx(), A.Arg(op2.Inc, pcell, ecell)); err == nil || !strings.Contains(err.Error(), `goes from set "cells"`) {
			t.Errorf("wrong set: %v", err)
		}
		compareDense(t, "after all", must(A.Dense()), toF64(before))
	})
}

func toF64[T float32 | float64](d [][]T) [][]float64 {
	out := make([][]float64, len(d))
	for i := range d {
		out[i] = make([]float64, len(d[i]))
		for j := range d[i] {
			out[i][j] = float64(d[i][j])
		}
	}
	return out
}

// diagMatrix is a matrix with a tridiagonal-ish pattern over n nodes
// whose entries are given by f(i, j) (i, j nodes, |i-j| <= 1).
func tridiag(t *testing.T, r *op2.Runtime, n int, f func(i, j int) float64) (*op2.Set, *op2.Mat[float64]) {
	edges := must(op2.NewSet(n-1, "edges"))
	nodes := must(op2.NewSet(n, "nodes"))
	tab := make([]int32, 0, 2*(n-1))
	for e := 0; e < n-1; e++ {
		tab = append(tab, int32(e), int32(e+1))
	}
	pedge := must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pedge, Col: pedge}}, "tri"))
	A := must(op2.NewMat[float64](sp, "A"))
	// Assemble via WRITE with the values given per node pair.
	vals := make([]float64, 4*(n-1))
	for e := 0; e < n-1; e++ {
		vals[4*e+0], vals[4*e+1], vals[4*e+2], vals[4*e+3] = f(e, e), f(e, e+1), f(e+1, e), f(e+1, e+1)
	}
	v := must(op2.NewDat(edges, 4, vals, "vals"))
	k := op2.NewKernel(`void put(const double *v, double *A) { for (int i = 0; i < 4; i++) A[i] = v[i]; }`, "put")
	if r == nil {
		check(t, op2.ParLoop(k, edges, v.Arg(op2.Read), A.Arg(op2.Write, pedge, pedge)))
	} else {
		check(t, r.ParLoop(k, edges, v.Arg(op2.Read), A.Arg(op2.Write, pedge, pedge)))
	}
	return nodes, A
}

// TestProbeSolverBadMatrices: solves that cannot succeed end with an
// error value or Converged false, never a panic, a hang or a claimed
// convergence (indefinite, NaN and singular matrices). Whether a NaN
// stops the solve promptly with an error is TestProbeSolverNaN's.
func TestProbeSolverBadMatrices(t *testing.T) {
	const n = 8
	// symmetric indefinite: diagonal alternating ±2, off-diagonal 0.5
	nodes, A := tridiag(t, nil, n, func(i, j int) float64 {
		if i == j {
			return float64(1-2*(i%2)) * 2
		}
		return 0.5
	})
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	b := must(op2.NewDat(nodes, 1, iota32[float64](n), "b"))
	info, err := must(op2.NewSolver(op2.SolverOptions{})).Solve(A, x, b)
	t.Logf("CG on an indefinite matrix: %+v, %v", info, err)
	// NaN in the matrix.
	N := nanTridiag(t, n)
	x2 := must(op2.NewDat[float64](N.nodes, 1, nil, "x"))
	b2 := must(op2.NewDat(N.nodes, 1, iota32[float64](n), "b"))
	for _, method := range []string{"cg", "bicgstab"} {
		info, err := must(op2.NewSolver(op2.SolverOptions{Method: method, MaxIts: 200})).Solve(N.A, x2, b2)
		t.Logf("%s on a NaN matrix: %+v, %v", method, info, err)
		if err == nil && info.Converged {
			t.Errorf("%s converged on a NaN matrix: %+v", method, info)
		}
	}
	// Singular (zero row and column 5) without Jacobi, b inconsistent.
	nodes4, Z := tridiag(t, nil, n, func(i, j int) float64 {
		if i == 5 || j == 5 {
			return 0
		}
		if i == j {
			return 4
		}
		return -1
	})
	x4 := must(op2.NewDat[float64](nodes4, 1, nil, "x"))
	b4 := must(op2.NewDat(nodes4, 1, iota32[float64](n), "b"))
	for _, method := range []string{"cg", "bicgstab"} {
		info, err := must(op2.NewSolver(op2.SolverOptions{Method: method, Precond: "none", MaxIts: 200})).Solve(Z, x4, b4)
		t.Logf("%s on a singular matrix: %+v, %v", method, info, err)
		if err == nil && info.Converged {
			t.Errorf("%s converged on a singular system with an inconsistent b: %+v", method, info)
		}
	}
}

type tridiagSystem struct {
	nodes *op2.Set
	A     *op2.Mat[float64]
}

// nanTridiag is 4 on the diagonal, -1 off it, and a NaN at (3, 4).
func nanTridiag(t *testing.T, n int) tridiagSystem {
	nodes, A := tridiag(t, nil, n, func(i, j int) float64 {
		if i == 3 && j == 4 {
			return math.NaN()
		}
		if i == j {
			return 4
		}
		return -1
	})
	return tridiagSystem{nodes, A}
}

// TestProbeMatTuneCheckNewLoop: assembly with the auto-tuner on, in
// check mode, and through a Loop object (NewLoop / Compute) repeatedly.
func TestProbeMatTuneCheckNewLoop(t *testing.T) {
	tab := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1, 5, 6, 7, 7, 6, 5, 1, 5, 3}
	n := len(tab) / 3
	for _, cfg := range probeConfigs(t.Name()) {
		for _, mode := range []string{"tune", "check", "newloop", "timing"} {
			c := cfg
			c.CacheDir = t.TempDir()
			switch mode {
			case "tune":
				c.Tune = true
			case "check":
				c.Check = true
			case "timing":
				c.Timing = true
			}
			t.Run(cfgName(cfg)+"/"+mode, func(t *testing.T) {
				r := must(op2.NewRuntime(c))
				t.Cleanup(func() { r.Close() }) // its builds end before c.CacheDir is removed
				cells := must(op2.NewSet(n, "cells"))
				nodes := must(op2.NewSet(8, "nodes"))
				pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
				sp := must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
				A := must(op2.NewMat[float64](sp, "A"))
				k := probeFill("double", 6, 6)
				const calls = 12
				if mode == "newloop" {
					lp := must(r.NewLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
					for range calls {
						check(t, lp.Compute())
					}
				} else {
					for range calls {
						check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
					}
				}
				want := zeros(16, 16)
				for range calls {
					expectDense(want, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, 2, 2)
				}
				compareDense(t, mode, must(A.Dense()), want)
				if mode == "timing" {
					var sb strings.Builder
					check(t, r.WriteTimingTable(&sb))
					check(t, r.WriteTimingJSON(&sb))
					if !strings.Contains(sb.String(), "pfill_double_6_6") {
						t.Errorf("timing table without the loop:\n%s", sb.String())
					}
				}
			})
		}
	}
}

// TestProbeSparsityScalarOverflow (finding 4, fixed): a sparsity whose
// scalar nonzeros reach 2^31 passed NewSparsity's MaxDataBytes check,
// and Sparsity.CSR (and so Mat.Values) then panicked converting to
// int32. NewSparsity now refuses it with an error. Cheap: 7 blocks of
// 2^15×2^15; in full runs also the original 8·2^20 blocks of 16×16
// (2^31 exactly).
func TestProbeSparsityScalarOverflow(t *testing.T) {
	refused := func(t *testing.T, rows *op2.Set, dim int, pairs []op2.MapPair) {
		t.Helper()
		var sp *op2.Sparsity
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("NewSparsity panicked: %v", p)
				}
			}()
			sp, err = op2.NewSparsity(rows, dim, rows, dim, pairs, "big")
		}()
		if err == nil {
			t.Fatalf("NewSparsity accepted %d scalar nonzeros (more than int32 indexes)", sp.NNZ())
		}
		if !strings.Contains(err.Error(), "scalar nonzeros") {
			t.Fatalf("NewSparsity: %v; want it to say the scalar nonzeros do not fit", err)
		}
	}
	cells := must(op2.NewSet(2, "cells"))
	nodes := must(op2.NewSet(3, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2}, "pcell"))
	refused(t, nodes, 1<<15, []op2.MapPair{{Row: pcell, Col: pcell}})
	if testing.Short() {
		t.Log("the 8M-block pattern only in full runs")
		return
	}
	const nc, ar, dim = 1 << 17, 8, 16
	bcells := must(op2.NewSet(nc, "cells"))
	bnodes := must(op2.NewSet(nc*ar, "nodes"))
	bmap := must(op2.NewMap(bcells, bnodes, ar, iota32[int32](nc*ar), "pcell"))
	refused(t, bnodes, dim, []op2.MapPair{{Row: bmap, Col: bmap}})
}

// TestProbeMatArgOrderAndMapIdx: Dats through the same maps before the
// matrix arguments, a map index argument, and matrices on two row sets
// (nodes, edges) in one loop.
func TestProbeMatArgOrderAndMapIdx(t *testing.T) {
	tabN := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1}
	tabE := []int32{0, 1, 1, 2, 2, 0, 0, 2, 1, 1, 2, 0}
	n := 6
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(5, "nodes"))
		edges := must(op2.NewSet(3, "edges"))
		pcell := must(op2.NewMap(cells, nodes, 3, tabN, "pcell"))
		ecell := must(op2.NewMap(cells, edges, 2, tabE, "ecell"))
		spN := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "spN"))
		spE := must(op2.NewSparsity(edges, 2, nodes, 1, []op2.MapPair{{Row: ecell, Col: pcell}}, "spE"))
		A := must(op2.NewMat[float64](spN, "A"))
		B := must(op2.NewMat[float64](spE, "B"))
		res := must(op2.NewDat[float64](nodes, 1, nil, "res"))
		er := must(op2.NewDat[float64](edges, 1, nil, "er"))
		k := op2.NewKernel(`void order(double **res, const int *n1, double *er, const int *e, double *A, double *B) {
  for (int i = 0; i < 3; i++) res[i][0] += 1;
  er[0] += (double)(*n1);
  for (int i = 0; i < 9; i++) A[i] = (double)((*e % 7) + 1) * (double)(i + 1) * 0.25;
  for (int i = 0; i < 12; i++) B[i] = (double)((*e % 7) + 1) * (double)(i + 1) * 0.25;
}`, "order")
		check(t, r.ParLoop(k, cells, res.ArgVec(op2.Inc, pcell), pcell.ArgIdx(1), er.ArgMap(op2.Inc, ecell, 1), op2.ArgIdx(),
			A.Arg(op2.Inc, pcell, pcell), B.Arg(op2.Inc, ecell, pcell)))
		want := zeros(5, 5)
		expectDense(want, pairSpec{rows: tabN, ra: 3, cols: tabN, ca: 3}, 1, 1)
		compareDense(t, "A", must(A.Dense()), want)
		want = zeros(6, 5)
		expectDense(want, pairSpec{rows: tabE, ra: 2, cols: tabN, ca: 3}, 2, 1)
		compareDense(t, "B", must(B.Dense()), want)
		wr, we := make([]float64, 5), make([]float64, 3)
		for e := 0; e < n; e++ {
			for i := 0; i < 3; i++ {
				wr[tabN[3*e+i]]++
			}
			we[tabE[2*e+1]] += float64(tabN[3*e+1])
		}
		if !slices.Equal(res.DataRO(), wr) || !slices.Equal(er.DataRO(), we) {
			t.Fatalf("res %v want %v; er %v want %v", res.DataRO(), wr, er.DataRO(), we)
		}
	})
}

// TestProbeMatWithLargeDats: a matrix assembled alongside Dats too large
// for private copies or staging (dim 50 INC through the whole map, dim
// 200 RW through one column), so that the device code calls the kernel
// in colour order.
func TestProbeMatWithLargeDats(t *testing.T) {
	tab := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1, 5, 6, 7, 7, 6, 5, 1, 5, 3}
	n := len(tab) / 3
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(8, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		big := must(op2.NewDat[float64](nodes, 50, nil, "big"))
		huge := must(op2.NewDat[float64](nodes, 200, nil, "huge"))
		k := op2.NewKernel(`void large(const int *e, double **big, double *huge, double *A) {
  for (int i = 0; i < 3; i++) for (int k = 0; k < 50; k++) big[i][k] += k;
  for (int k = 0; k < 200; k++) huge[k] += 1;
  for (int i = 0; i < 9; i++) A[i] = (double)((*e % 7) + 1) * (double)(i + 1) * 0.25;
}`, "large")
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), big.ArgVec(op2.Inc, pcell), huge.ArgMap(op2.RW, pcell, 2), A.Arg(op2.Inc, pcell, pcell)))
		want := zeros(8, 8)
		expectDense(want, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, 1, 1)
		compareDense(t, "A", must(A.Dense()), want)
		cnt, cnt2 := make([]float64, 8), make([]float64, 8)
		for e := 0; e < n; e++ {
			for i := 0; i < 3; i++ {
				cnt[tab[3*e+i]]++
			}
			cnt2[tab[3*e+2]]++
		}
		bd, hd := big.DataRO(), huge.DataRO()
		for v := 0; v < 8; v++ {
			if bd[v*50+7] != 7*cnt[v] || hd[v*200+199] != cnt2[v] {
				t.Fatalf("node %d: big %v want %v, huge %v want %v", v, bd[v*50+7], 7*cnt[v], hd[v*200+199], cnt2[v])
			}
		}
	})
}

// TestProbeSparsityHugeDims (finding 5, fixed): block dims near
// op2.MaxDim overflowed int64 in NewSparsity's size check (NNZ()
// negative) and NewMat then panicked. They are refused with an error,
// without a panic.
func TestProbeSparsityHugeDims(t *testing.T) {
	cells := must(op2.NewSet(2, "cells"))
	nodes := must(op2.NewSet(3, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2}, "pcell"))
	for _, d := range [][2]int{{op2.MaxDim, op2.MaxDim}, {op2.MaxDim, 1}, {1, op2.MaxDim}, {1 << 16, 1 << 16}} {
		t.Run(fmt.Sprintf("%dx%d", d[0], d[1]), func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v", p)
				}
			}()
			sp, err := op2.NewSparsity(nodes, d[0], nodes, d[1], []op2.MapPair{{Row: pcell, Col: pcell}}, "huge")
			if err == nil {
				t.Fatalf("NewSparsity accepted 7 blocks of %d×%d: NNZ() = %d", d[0], d[1], sp.NNZ())
			}
			if !strings.Contains(err.Error(), "scalar") {
				t.Fatalf("NewSparsity: %v; want it to say the scalar nonzeros (or rows and columns) do not fit", err)
			}
		})
	}
}

// TestProbeMatRandomShapes: random meshes and shapes (arities 1-4 on
// each side, block dims 1-3, square or rectangular, float32 or float64,
// whole set or subset, block sizes), on every config, against the
// assembly computed in Go: bit for bit. Each run takes 6 trials (4 with
// -short) from a seed that moves by one a run (the rotation; with
// OP2_PROBE_ROTATION=all 12 trials from seed 99, as every run once did).
// PROBE_SEED and PROBE_TRIALS set them.
func TestProbeMatRandomShapes(t *testing.T) {
	trials, seed := 4, uint64(99)
	if !testing.Short() {
		trials = 6
		if r := probeRotation(t); r.all {
			trials = 12
		} else {
			seed += uint64(r.n)
		}
	}
	if v, err := strconv.Atoi(os.Getenv("PROBE_TRIALS")); err == nil {
		trials = v
	}
	if v, err := strconv.ParseUint(os.Getenv("PROBE_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("%d trials from seed %d", trials, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for trial := 0; trial < trials; trial++ {
		ra, ca := 1+rng.IntN(4), 1+rng.IntN(4)
		rd, cd := 1+rng.IntN(3), 1+rng.IntN(3)
		square := rng.IntN(2) == 0
		if square {
			ca, cd = ra, rd
		}
		f32 := rng.IntN(2) == 0
		n := rng.IntN(120)
		nr := ra + rng.IntN(40)
		nc := nr
		if !square {
			nc = ca + rng.IntN(40)
		}
		rtab := make([]int32, n*ra)
		for i := range rtab {
			rtab[i] = int32(rng.IntN(nr))
		}
		ctab, sameMap := rtab, true
		if !square || rng.IntN(2) == 0 {
			sameMap = false
			ctab = make([]int32, n*ca)
			for i := range ctab {
				ctab[i] = int32(rng.IntN(nc))
			}
		}
		var subset []int32
		var els []int
		useSub := rng.IntN(3) == 0
		if useSub {
			for e := 0; e < n; e++ {
				if rng.IntN(2) == 0 {
					subset = append(subset, int32(e))
					els = append(els, e)
				}
			}
			if els == nil {
				els = []int{}
			}
		}
		bs := []int{0, 1, 3, 8, 32}[rng.IntN(5)]
		want := zeros(nr*rd, nc*cd)
		expectDense(want, pairSpec{rows: rtab, ra: ra, cols: ctab, ca: ca, elements: els}, rd, cd)
		name := fmt.Sprintf("trial%d/n%d-r%dx%d-c%dx%d-sq%v-f32%v-sub%v-bs%d", trial, n, ra, rd, ca, cd, square, f32, useSub, bs)
		for _, cfg := range probeConfigs(name) {
			if cfg.BlockSize != 0 {
				cfg.BlockSize = bs
			}
			t.Run(name+"/"+cfgName(cfg), func(t *testing.T) {
				r := must(op2.NewRuntime(cfg))
				cells := must(op2.NewSet(n, "cells"))
				rows := must(op2.NewSet(nr, "rows"))
				cols := rows
				if !square {
					cols = must(op2.NewSet(nc, "cols"))
				}
				rm := must(op2.NewMap(cells, rows, ra, rtab, "rm"))
				cm := rm
				if !sameMap {
					cm = must(op2.NewMap(cells, cols, ca, ctab, "cm"))
				}
				sp := must(op2.NewSparsity(rows, rd, cols, cd, []op2.MapPair{{Row: rm, Col: cm}}, "sp"))
				var over op2.IterationSet = cells
				if useSub {
					over = must(op2.NewSubset(cells, subset))
				}
				typ := "double"
				if f32 {
					typ = "float"
				}
				k := probeFill(typ, ra*rd, ca*cd)
				if f32 {
					A := must(op2.NewMat[float32](sp, "A"))
					check(t, r.ParLoop(k, over, op2.ArgIdx(), A.Arg(op2.Inc, rm, cm)))
					compareDense(t, "A", must(A.Dense()), want)
				} else {
					A := must(op2.NewMat[float64](sp, "A"))
					check(t, r.ParLoop(k, over, op2.ArgIdx(), A.Arg(op2.Inc, rm, cm)))
					compareDense(t, "A", must(A.Dense()), want)
				}
			})
		}
	}
}

// TestProbeMatLargeMesh: a larger random mesh (many blocks, block and
// thread colours, work groups), float32 dim 2, every config.
func TestProbeMatLargeMesh(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 000-element mesh on every configuration: full runs only")
	}
	const n, nn, ar = 30000, 9000, 3
	rng := rand.New(rand.NewPCG(5, 6))
	tab := make([]int32, 0, n*ar)
	for e := 0; e < n; e++ {
		base := rng.IntN(nn - 20)
		for _, v := range rng.Perm(20)[:ar] {
			tab = append(tab, int32(base+v))
		}
	}
	type rc struct{ r, c int }
	want := map[rc]float64{}
	for e := 0; e < n; e++ {
		for i := 0; i < 6; i++ {
			for j := 0; j < 6; j++ {
				want[rc{int(tab[e*ar+i/2])*2 + i%2, int(tab[e*ar+j/2])*2 + j%2}] += fillValue(e, i*6+j)
			}
		}
	}
	for _, cfg := range probeConfigs(t.Name()) {
		cfg.BlockSize = 0
		t.Run(cfgName(cfg), func(t *testing.T) {
			r := must(op2.NewRuntime(cfg))
			cells := must(op2.NewSet(n, "cells"))
			nodes := must(op2.NewSet(nn, "nodes"))
			pcell := must(op2.NewMap(cells, nodes, ar, tab, "pcell"))
			sp := must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
			A := must(op2.NewMat[float32](sp, "A"))
			check(t, r.ParLoop(probeFill("float", 6, 6), cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
			rowptr, colidx, vals, err := A.Values()
			check(t, err)
			for i := 0; i+1 < len(rowptr); i++ {
				for k := rowptr[i]; k < rowptr[i+1]; k++ {
					if w := want[rc{i, int(colidx[k])}]; float64(vals[k]) != w {
						t.Fatalf("A[%d][%d] = %v, want %v", i, colidx[k], vals[k], w)
					}
				}
			}
		})
	}
}

// TestProbeMatSameArgTwice: one matrix passed twice through the same
// pair (both INC): both element matrices are added.
func TestProbeMatSameArgTwice(t *testing.T) {
	tab := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1, 5, 6, 7, 7, 6, 5, 1, 5, 3}
	n := len(tab) / 3
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(8, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		k := op2.NewKernel(`void twice(const int *e, double *A, void *B) {
  for (int i = 0; i < 9; i++) { A[i] = (double)((*e % 7) + 1) * (double)(i + 1) * 0.25; ((double *)B)[i] = 2 * A[i]; }
}`, "twice")
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell), A.Arg(op2.Inc, pcell, pcell)))
		want := zeros(8, 8)
		for range 3 {
			expectDense(want, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, 1, 1)
		}
		compareDense(t, "A", must(A.Dense()), want)
	})
}

// TestProbeMatAfterRenumber (finding 6, fixed): Renumber (allowed before
// any loop and sparsity) with a subset and a Dat declared before it,
// then a sparsity, and assembly over the whole set and the subset.
// ArgIdx passes declared numbers after Renumber. Dense and Gather give
// the declared numbering on one process, as Dat.Gather does (and as
// under MPI); Values stays in the local, new numbering; Mult agrees with
// Dense and gathered vectors.
func TestProbeMatAfterRenumber(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n, nn = 60, 30
	tab := make([]int32, 0, 3*n)
	for e := 0; e < n; e++ {
		for _, v := range rng.Perm(nn)[:3] {
			tab = append(tab, int32(v))
		}
	}
	xv := make([]float64, nn)
	for i := range xv {
		xv[i] = float64(rng.IntN(9) - 4)
	}
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(nn, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
		x := must(op2.NewDat(nodes, 1, xv, "x"))
		subDecl := []int32{0, 5, 7, 11, 40, 59}
		sub := must(op2.NewSubset(cells, subDecl))
		must(op2.Renumber(op2.RCMOrdering(pcell)))
		newTab := pcell.Values()
		cellDecl := cells.DeclaredNumbers()
		nodeDecl := nodes.DeclaredNumbers()
		if slices.Equal(newTab, tab) {
			t.Fatal("Renumber kept the numbering; the probe proves nothing")
		}
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		k := probeFill("double", 3, 3)
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		check(t, r.ParLoop(k, sub, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		// The matrix in both numberings; elements valued by their
		// declared numbers (ArgIdx).
		inSub := map[int32]bool{}
		for _, e := range subDecl {
			inSub[e] = true
		}
		wantNew, wantDecl := zeros(nn, nn), zeros(nn, nn)
		for e := 0; e < n; e++ {
			d := int(cellDecl[e])
			times := 1.0
			if inSub[int32(d)] {
				times = 2
			}
			for i := 0; i < 3; i++ {
				for j := 0; j < 3; j++ {
					v := times * fillValue(d, i*3+j)
					ri, cj := newTab[3*e+i], newTab[3*e+j]
					wantNew[ri][cj] += v
					wantDecl[nodeDecl[ri]][nodeDecl[cj]] += v
				}
			}
		}
		compareDense(t, "Dense (declared numbering)", must(A.Dense()), wantDecl)
		rowptr, colidx, vals, err := A.Gather()
		check(t, err)
		compareDense(t, "Gather (declared numbering)", csrDense(rowptr, colidx, vals, nn), wantDecl)
		rowptr, colidx, vals, err = A.Values()
		check(t, err)
		compareDense(t, "Values (new numbering)", csrDense(rowptr, colidx, vals, nn), wantNew)
		// y = A x with x declared before Renumber: gathered, y is Dense
		// times the declared x (exact: small dyadic values).
		y := must(op2.NewDat[float64](nodes, 1, nil, "y"))
		check(t, A.Mult(x, y))
		if xg := must(x.Gather()); !slices.Equal(xg, xv) {
			t.Fatalf("x.Gather() = %v, declared %v", xg, xv)
		}
		yg := must(y.Gather())
		for i := range wantDecl {
			var s float64
			for j, a := range wantDecl[i] {
				s += a * xv[j]
			}
			if yg[i] != s {
				t.Fatalf("(A x)[%d] gathered = %v; Dense times the declared x gives %v", i, yg[i], s)
			}
		}
	})
}

// csrDense expands compressed rows with n columns.
func csrDense[T float32 | float64](rowptr, colidx []int32, vals []T, n int) [][]T {
	out := make([][]T, len(rowptr)-1)
	for i := range out {
		out[i] = make([]T, n)
		for k := rowptr[i]; k < rowptr[i+1]; k++ {
			out[i][colidx[k]] = vals[k]
		}
	}
	return out
}

// TestProbeMatLargestElementBigGroups (finding 1, fixed): the largest
// device element matrix (32×32 float64, 8 KiB per work item) assembles
// right in work groups of up to 256 items. In groups of 512 or 1024
// (allowed sizes) PoCL used to die with SIGSEGV (a work group's private
// element matrices live on one thread's 8 MiB stack); now the loop is
// refused with an error naming the largest size that fits, and the
// matrix is left as it was.
func TestProbeMatLargestElementBigGroups(t *testing.T) {
	needOpenCL(t)
	const ar, n, nn = 32, 300, 200
	rng := rand.New(rand.NewPCG(8, 9))
	tab := make([]int32, 0, n*ar)
	for e := 0; e < n; e++ {
		for _, v := range rng.Perm(nn)[:ar] {
			tab = append(tab, int32(v))
		}
	}
	want := zeros(nn, nn)
	expectDense(want, pairSpec{rows: tab, ra: ar, cols: tab, ca: ar}, 1, 1)
	for _, wg := range []int{256, 512, 1024} {
		for _, scheme := range []string{"staged", "atomics"} {
			t.Run(fmt.Sprintf("wg%d-%s", wg, scheme), func(t *testing.T) {
				needOpenCL(t)
				r, err := op2.NewRuntime(op2.Config{Backend: "opencl", DeviceScheme: scheme, DeviceWorkGroupSize: wg})
				if err != nil {
					t.Skipf("work-group size %d: %v", wg, err)
				}
				cells := must(op2.NewSet(n, "cells"))
				nodes := must(op2.NewSet(nn, "nodes"))
				pcell := must(op2.NewMap(cells, nodes, ar, tab, "pcell"))
				sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
				A := must(op2.NewMat[float64](sp, "A"))
				err = r.ParLoop(probeFill("double", ar, ar), cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell))
				if wg <= 256 {
					check(t, err)
					compareDense(t, "A", must(A.Dense()), want)
					return
				}
				if err == nil || !strings.Contains(err.Error(), "use a device work-group size of at most 256") {
					t.Fatalf("32×32 float64 element matrices in work groups of %d: %v; want an error naming 256", wg, err)
				}
				compareDense(t, "A after the refused loop", must(A.Dense()), zeros(nn, nn))
			})
		}
	}
}

// TestProbeMatManyPairs: a rectangular sparsity from eight map pairs
// over three iteration sets (one empty; arities 1 to 4), each assembled
// by its own loop.
func TestProbeMatManyPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const nr, nc = 25, 17
	type spec struct {
		set    int
		ra, ca int
		rt, ct []int32
	}
	sizes := []int{30, 0, 12}
	var specs []spec
	for k := 0; k < 8; k++ {
		s := spec{set: k % 3, ra: 1 + rng.IntN(4), ca: 1 + rng.IntN(4)}
		n := sizes[s.set]
		for i := 0; i < n*s.ra; i++ {
			s.rt = append(s.rt, int32(rng.IntN(nr)))
		}
		for i := 0; i < n*s.ca; i++ {
			s.ct = append(s.ct, int32(rng.IntN(nc)))
		}
		specs = append(specs, s)
	}
	// In -short mode only four of the pairs are assembled (each loop
	// compiles its own kernel); the sparsity keeps all eight.
	assembled := func(k int) bool { return !testing.Short() || k < 3 || k == 5 }
	want := zeros(nr*2, nc*3)
	for k, s := range specs {
		if len(s.rt) > 0 && assembled(k) {
			expectDense(want, pairSpec{rows: s.rt, ra: s.ra, cols: s.ct, ca: s.ca}, 2, 3)
		}
	}
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		rows := must(op2.NewSet(nr, "rows"))
		cols := must(op2.NewSet(nc, "cols"))
		var iters []*op2.Set
		for i, n := range sizes {
			iters = append(iters, must(op2.NewSet(n, fmt.Sprintf("it%d", i))))
		}
		var pairs []op2.MapPair
		for k, s := range specs {
			pairs = append(pairs, op2.MapPair{
				Row: must(op2.NewMap(iters[s.set], rows, s.ra, s.rt, fmt.Sprintf("r%d", k))),
				Col: must(op2.NewMap(iters[s.set], cols, s.ca, s.ct, fmt.Sprintf("c%d", k)))})
		}
		sp := must(op2.NewSparsity(rows, 2, cols, 3, pairs, "many"))
		A := must(op2.NewMat[float64](sp, "A"))
		for k, s := range specs {
			if !assembled(k) {
				continue
			}
			check(t, r.ParLoop(probeFill("double", s.ra*2, s.ca*3), iters[s.set], op2.ArgIdx(), A.Arg(op2.Inc, pairs[k].Row, pairs[k].Col)))
		}
		compareDense(t, "A", must(A.Dense()), want)
	})
}

// TestProbeSparsityBadInputs: nil and out-of-range inputs give errors,
// never panics.
func TestProbeSparsityBadInputs(t *testing.T) {
	cells := must(op2.NewSet(2, "cells"))
	nodes := must(op2.NewSet(3, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2}, "pcell"))
	cases := []struct {
		name       string
		rows, cols *op2.Set
		rd, cd     int
		pairs      []op2.MapPair
		want       string
	}{
		{"nil rows", nil, nodes, 1, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "must not be nil"},
		{"nil map", nodes, nodes, 1, 1, []op2.MapPair{{Row: pcell, Col: nil}}, "must not be nil"},
		{"dim 0", nodes, nodes, 0, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "block dims"},
		{"negative dim", nodes, nodes, 1, -3, []op2.MapPair{{Row: pcell, Col: pcell}}, "block dims"},
	}
	for _, c := range cases {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panic %v", c.name, p)
				}
			}()
			_, err := op2.NewSparsity(c.rows, c.rd, c.cols, c.cd, c.pairs, "bad")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want %q", c.name, err, c.want)
			}
		}()
	}
	if _, err := op2.NewMat[float64](nil, "M"); err == nil {
		t.Errorf("NewMat(nil) accepted")
	}
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	if err := A.Mult(nil, nil); err == nil {
		t.Errorf("Mult(nil, nil) accepted")
	}
	if err := A.ZeroRows([]int{-1}, 1); err == nil {
		t.Errorf("ZeroRows(-1) accepted")
	}
	if err := A.ZeroRows(nil, 1); err != nil {
		t.Errorf("ZeroRows(nil): %v", err)
	}
	s := must(op2.NewSolver(op2.SolverOptions{}))
	if _, err := s.Solve(nil, nil, nil); err == nil {
		t.Errorf("Solve(nil...) accepted")
	}
	for _, o := range []op2.SolverOptions{{Method: "gmres"}, {Precond: "ilu"}, {RTol: -1}, {ATol: math.NaN()}, {MaxIts: -1}} {
		if _, err := op2.NewSolver(o); err == nil {
			t.Errorf("NewSolver(%+v) accepted", o)
		}
	}
}

// TestProbeMatConcurrent: loops assembling a matrix on one goroutine
// while others read it (Values, Dense, State, Mult) and zero it: no data
// race (run with -race), no crash, and the final assembly is right.
func TestProbeMatConcurrent(t *testing.T) {
	tab := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1, 5, 6, 7, 7, 6, 5, 1, 5, 3}
	n := len(tab) / 3
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(8, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		k := probeFill("double", 3, 3)
		done := make(chan struct{})
		errs := make(chan error, 4)
		for g := 0; g < 2; g++ {
			go func() {
				x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
				y := must(op2.NewDat[float64](nodes, 1, nil, "y"))
				for {
					select {
					case <-done:
						errs <- nil
						return
					default:
					}
					if _, _, _, err := A.Values(); err != nil {
						errs <- err
						return
					}
					_ = A.State()
					if err := A.Mult(x, y); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		for i := 0; i < 30; i++ {
			if err := r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)); err != nil {
				t.Error(err)
			}
			if i%10 == 9 {
				check(t, A.Zero())
			}
		}
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
		close(done)
		for g := 0; g < 2; g++ {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		want := zeros(8, 8)
		expectDense(want, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, 1, 1)
		compareDense(t, "A", must(A.Dense()), want)
	})
}

// TestProbeMatWithReductions: a matrix assembled in a loop that also
// reduces into Globals (sum and max) and reads a Global.
func TestProbeMatWithReductions(t *testing.T) {
	tab := []int32{0, 1, 2, 1, 2, 3, 3, 4, 0, 4, 2, 1, 0, 3, 4, 2, 0, 1, 5, 6, 7, 7, 6, 5, 1, 5, 3}
	n := len(tab) / 3
	eachConfig(t, func(t *testing.T, r *op2.Runtime) {
		cells := must(op2.NewSet(n, "cells"))
		nodes := must(op2.NewSet(8, "nodes"))
		pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
		sp := must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		A := must(op2.NewMat[float64](sp, "A"))
		scale := must(op2.NewGlobal(1, []float64{2}, "scale"))
		sum := must(op2.NewGlobal[float64](1, nil, "sum"))
		mx := must(op2.NewGlobal(1, []float64{-1}, "mx"))
		k := op2.NewKernel(`void red(const int *e, const double *s, double *A, double *sum, double *mx) {
  for (int i = 0; i < 36; i++) {
    A[i] = s[0] * (double)((*e % 7) + 1) * (double)(i + 1) * 0.25;
    sum[0] += A[i];
    if (A[i] > mx[0]) mx[0] = A[i];
  }
}`, "red")
		check(t, r.ParLoop(k, cells, op2.ArgIdx(), scale.Arg(op2.Read), A.Arg(op2.Inc, pcell, pcell), sum.Arg(op2.Inc), mx.Arg(op2.Max)))
		want := zeros(16, 16)
		expectDense(want, pairSpec{rows: tab, ra: 3, cols: tab, ca: 3}, 2, 2)
		var ws, wm float64
		for i := range want {
			for j := range want[i] {
				want[i][j] *= 2
				ws += want[i][j]
			}
		}
		for e := 0; e < n; e++ {
			wm = max(wm, 2*fillValue(e, 35))
		}
		compareDense(t, "A", must(A.Dense()), want)
		if sum.Value() != ws || mx.Value() != wm {
			t.Fatalf("sum %v want %v, max %v want %v", sum.Value(), ws, mx.Value(), wm)
		}
	})
}

// TestProbeMatTwoBigElementsWG512 (finding 1, fixed): two 32×32 float64
// matrices in one loop (8 KiB each, 16 KiB per work item) in work groups
// of 512 killed PoCL with SIGSEGV. The device limit is now the sum over
// a loop's matrix arguments: that loop is refused on opencl (any work-
// group size) and runs on a host backend; two 22×22 matrices (7744
// bytes together) run in groups of 256 and are refused in groups of 512
// with an error naming 256. A refused loop changes nothing.
func TestProbeMatTwoBigElementsWG512(t *testing.T) {
	needOpenCL(t)
	const n, nn = 60, 200
	twoBig := func(ar int) *op2.Kernel {
		name := fmt.Sprintf("two_big_%d", ar)
		return op2.NewKernel(fmt.Sprintf(`void %s(const int *e, double *A, double *B) {
  for (int i = 0; i < %d; i++) { A[i] = (double)((*e %% 7) + 1) * (double)(i + 1) * 0.25; B[i] = 2 * A[i]; }
}`, name, ar*ar), name)
	}
	for _, tc := range []struct {
		ar      int
		backend string
		wg      int
		want    string // "" when the loop runs
	}{
		{32, "opencl", 512, "assemble on a host backend"},
		{32, "opencl", 0, "assemble on a host backend"},
		{32, "sequential", 0, ""},
		{22, "opencl", 512, "use a device work-group size of at most 256"},
		{22, "opencl", 256, ""},
	} {
		t.Run(fmt.Sprintf("%dx%d-%s-wg%d", tc.ar, tc.ar, tc.backend, tc.wg), func(t *testing.T) {
			tab := make([]int32, 0, n*tc.ar)
			for e := 0; e < n; e++ {
				for i := 0; i < tc.ar; i++ {
					tab = append(tab, int32((e*7+i*3)%nn))
				}
			}
			if tc.backend == "opencl" {
				needOpenCL(t)
			}
			r, err := op2.NewRuntime(op2.Config{Backend: tc.backend, DeviceWorkGroupSize: tc.wg})
			if err != nil {
				t.Skipf("work-group size %d: %v", tc.wg, err)
			}
			cells := must(op2.NewSet(n, "cells"))
			nodes := must(op2.NewSet(nn, "nodes"))
			pcell := must(op2.NewMap(cells, nodes, tc.ar, tab, "pcell"))
			sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
			A := must(op2.NewMat[float64](sp, "A"))
			B := must(op2.NewMat[float64](sp, "B"))
			err = r.ParLoop(twoBig(tc.ar), cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell), B.Arg(op2.Inc, pcell, pcell))
			want := zeros(nn, nn)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("two %d×%d float64 element matrices: %v; want an error containing %q", tc.ar, tc.ar, err, tc.want)
				}
				compareDense(t, "A after the refused loop", must(A.Dense()), want)
				compareDense(t, "B after the refused loop", must(B.Dense()), want)
				return
			}
			check(t, err)
			expectDense(want, pairSpec{rows: tab, ra: tc.ar, cols: tab, ca: tc.ar}, 1, 1)
			compareDense(t, "A", must(A.Dense()), want)
			for i := range want {
				for j := range want[i] {
					want[i][j] *= 2
				}
			}
			compareDense(t, "B", must(B.Dense()), want)
		})
	}
}
