package op2_test

import (
	"errors"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// subsetMesh is a ring of nodes with edges between neighbours and a few
// long edges, and a subset of the edges given unsorted, with duplicates.
type subsetMesh struct {
	nodes, edges *op2.Set
	e2n          *op2.Map
	table        []int32
	sub          *op2.Subset
	in           []bool // in[e]: edge e is in the subset
}

func newSubsetMesh(t *testing.T, nn, ne int, pick []int32) *subsetMesh {
	t.Helper()
	m := &subsetMesh{}
	m.nodes = must(op2.NewSet(nn, "nodes"))
	m.edges = must(op2.NewSet(ne, "edges"))
	rng := rand.New(rand.NewSource(7))
	m.table = make([]int32, 2*ne)
	for e := 0; e < ne; e++ {
		a := e % nn
		b := (a + 1) % nn
		if e%5 == 0 {
			b = rng.Intn(nn)
		}
		m.table[2*e], m.table[2*e+1] = int32(a), int32(b)
	}
	m.e2n = must(op2.NewMap(m.edges, m.nodes, 2, m.table, "e2n"))
	m.sub = must(op2.NewSubset(m.edges, pick))
	m.in = make([]bool, ne)
	for _, e := range pick {
		m.in[e] = true
	}
	return m
}

// subsetPick is every third edge and some others, unsorted, with duplicates.
func subsetPick(ne int) []int32 {
	var pick []int32
	for e := ne - 1; e >= 0; e-- {
		if e%3 == 0 || e%7 == 1 {
			pick = append(pick, int32(e))
		}
	}
	return append(pick, 0, 3, int32(ne-2), 0)
}

// TestSubsetLoops: loops over a subset give, on every backend, the Go
// reference's results: direct RW and WRITE touch the subset's elements
// only, increments through a map (by column and whole map) add only the
// subset's contributions, reads through a map and reductions see only the
// subset's elements.
func TestSubsetLoops(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		const nn, ne = 500, 1200
		m := newSubsetMesh(t, nn, ne, subsetPick(ne))
		w := must(op2.NewDat(m.edges, 2, iota32[float64](2*ne), "w"))
		flag := must(op2.NewDat(m.edges, 1, slices.Repeat([]int32{-1}, ne), "flag"))
		res := must(op2.NewDat[float64](m.nodes, 1, nil, "res"))
		resv := must(op2.NewDat[float64](m.nodes, 1, nil, "resv"))
		pos := must(op2.NewDat(m.nodes, 1, iota32[float64](nn), "pos"))
		length := must(op2.NewDat[float64](m.edges, 1, nil, "length"))
		sum := must(op2.NewGlobal(1, []float64{0.5}, "sum"))
		lo := must(op2.NewGlobal(1, []int32{1 << 30}, "lo"))
		hi := must(op2.NewGlobal(1, []int32{-1}, "hi"))
		count := must(op2.NewGlobal[int32](1, nil, "count"))

		// Direct RW and WRITE.
		rw := op2.NewKernel("void rw(double *w) { w[0] = 3 * w[0] + 1; w[1] -= 2; }", "rw")
		check(t, op2.ParLoop(rw, m.sub, w.Arg(op2.RW)))
		wr := op2.NewKernel("void wr(int *f) { *f = 1; }", "wr")
		check(t, op2.ParLoop(wr, m.sub, flag.Arg(op2.Write)))
		// Increments through each column, and through the whole map.
		inc := op2.NewKernel(`void inc(const double *w, double *a, double *b) { *a += w[0]; *b += w[1]; }`, "inc")
		check(t, op2.ParLoop(inc, m.sub, w.Arg(op2.Read), res.ArgMap(op2.Inc, m.e2n, 0), res.ArgMap(op2.Inc, m.e2n, 1)))
		incv := op2.NewKernel(`void incv(const double *w, double **r) { *r[0] += w[0]; *r[1] += w[1]; }`, "incv")
		check(t, op2.ParLoop(incv, m.sub, w.Arg(op2.Read), resv.ArgVec(op2.Inc, m.e2n)))
		// Reads through the map into a direct write.
		ln := op2.NewKernel(`void ln(const double **p, double *l) { *l = *p[1] - *p[0]; }`, "ln")
		check(t, op2.ParLoop(ln, m.sub, pos.ArgVec(op2.Read, m.e2n), length.Arg(op2.Write)))
		// Reductions.
		red := op2.NewKernel(`void red(const double *w, const int *f, const double *a, double *s, int *lo, int *hi, int *n) {
	*s += w[0] + *a;
	int v = (int)w[1];
	if (v < *lo) *lo = v;
	if (v > *hi) *hi = v;
	*n += *f;
}`, "red")
		check(t, op2.ParLoop(red, m.sub, w.Arg(op2.Read), flag.Arg(op2.Read), pos.ArgMap(op2.Read, m.e2n, 0),
			sum.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max), count.Arg(op2.Inc)))

		// The Go reference.
		wantW := iota32[float64](2 * ne)
		wantFlag := slices.Repeat([]int32{-1}, ne)
		wantRes := make([]float64, nn)
		wantLen := make([]float64, ne)
		wantSum, wantLo, wantHi, wantCount := 0.5, int32(1<<30), int32(-1), int32(0)
		for e := 0; e < ne; e++ {
			if !m.in[e] {
				continue
			}
			wantW[2*e] = 3*wantW[2*e] + 1
			wantW[2*e+1] -= 2
			wantFlag[e] = 1
			a, b := m.table[2*e], m.table[2*e+1]
			wantRes[a] += wantW[2*e]
			wantRes[b] += wantW[2*e+1]
			wantLen[e] = float64(b - a)
			wantSum += wantW[2*e] + float64(a)
			v := int32(wantW[2*e+1])
			wantLo, wantHi = min(wantLo, v), max(wantHi, v)
			wantCount++
		}
		equal := func(name string, got, want []float64) {
			t.Helper()
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s[%d] = %v, want %v", name, i, got[i], want[i])
					return
				}
			}
		}
		equal("w", w.DataRO(), wantW)
		if got := flag.DataRO(); !slices.Equal(got, wantFlag) {
			t.Errorf("flag after a WRITE over the subset differs from the reference")
		}
		equal("res", res.DataRO(), wantRes)
		equal("resv", resv.DataRO(), wantRes)
		equal("length", length.DataRO(), wantLen)
		if sum.Value() != wantSum || lo.Value() != wantLo || hi.Value() != wantHi || count.Value() != wantCount {
			t.Errorf("reductions: sum %v lo %v hi %v count %v; want %v %v %v %v",
				sum.Value(), lo.Value(), hi.Value(), count.Value(), wantSum, wantLo, wantHi, wantCount)
		}

		// The same loop over the whole set still runs every element.
		check(t, op2.ParLoop(wr, m.edges, flag.Arg(op2.Write)))
		if slices.Contains(flag.DataRO(), -1) {
			t.Errorf("loop over the whole set after the subset loops missed elements")
		}

		// An empty subset runs nothing; its reductions keep their values.
		empty := must(op2.NewSubset(m.edges, nil))
		check(t, op2.ParLoop(rw, empty, w.Arg(op2.RW)))
		check(t, op2.ParLoop(inc, empty, w.Arg(op2.Read), res.ArgMap(op2.Inc, m.e2n, 0), res.ArgMap(op2.Inc, m.e2n, 1)))
		count.SetValue(5)
		check(t, op2.ParLoop(red, empty, w.Arg(op2.Read), flag.Arg(op2.Read), pos.ArgMap(op2.Read, m.e2n, 0),
			sum.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max), count.Arg(op2.Inc)))
		equal("w after an empty subset", w.DataRO(), wantW)
		equal("res after an empty subset", res.DataRO(), wantRes)
		if count.Value() != 5 {
			t.Errorf("reduction over an empty subset: %v, want 5", count.Value())
		}
	})
}

// TestSubsetLoopObject: NewLoop and Generate take a subset too.
func TestSubsetLoopObject(t *testing.T) {
	set := must(op2.NewSet(10, "s"))
	x := must(op2.NewDat[int32](set, 1, nil, "x"))
	sub := must(op2.NewSubset(set, []int32{2, 4, 6}))
	k := op2.NewKernel("void one(int *x) { *x += 1; }", "one")
	lp := must(op2.NewLoop(k, sub, x.Arg(op2.RW)))
	check(t, lp.Compute())
	check(t, lp.Compute())
	if got, want := x.DataRO(), []int32{0, 0, 2, 0, 2, 0, 2, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("loop object over a subset, run twice: %v, want %v", got, want)
	}
	for _, b := range []string{"sequential", "openmp", "opencl", "cuda"} {
		src, err := op2.Generate(b, k, sub, x.Arg(op2.RW))
		if err != nil || !strings.Contains(src, "one") {
			t.Errorf("Generate(%s) over a subset: %v", b, err)
		}
	}
}

// TestSubsetErrors: indices are checked against the set, named with their
// position; unsorted indices and duplicates are accepted; loops over a
// subset check their arguments against the parent set.
func TestSubsetErrors(t *testing.T) {
	set := must(op2.NewSet(10, "cells"))
	other := must(op2.NewSet(10, "other"))
	for _, c := range []struct {
		idx  []int32
		want string
	}{
		{[]int32{1, 2, 10}, `subset of set "cells": index 10 (position 2) is outside the set's elements [0,10)`},
		{[]int32{4, -1}, `subset of set "cells": index -1 (position 1) is outside`},
	} {
		if _, err := op2.NewSubset(set, c.idx); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSubset(%v): %v, want an error containing %q", c.idx, err, c.want)
		}
	}
	if _, err := op2.NewSubset(nil, []int32{0}); err == nil {
		t.Errorf("NewSubset(nil set): no error")
	}
	sub := must(op2.NewSubset(set, []int32{9, 3, 3, 0, 9, 5}))
	if got := sub.Indices(); !slices.Equal(got, []int32{0, 3, 5, 9}) {
		t.Errorf("Indices = %v, want sorted, without duplicates", got)
	}
	if sub.Size() != 4 || sub.Set() != set || sub.Name() != "cells[subset]" {
		t.Errorf("Size %d, Set %v, Name %q", sub.Size(), sub.Set(), sub.Name())
	}

	k := op2.NewKernel("void one(int *x) { *x += 1; }", "one")
	y := must(op2.NewDat[int32](other, 1, nil, "y"))
	var le *op2.LoopError
	err := op2.ParLoop(k, sub, y.Arg(op2.RW))
	if !errors.As(err, &le) || !strings.Contains(err.Error(), `lives on set "other", not on the loop's set "cells"`) {
		t.Errorf("dat on another set over a subset: %v", err)
	}
	var nilSub *op2.Subset
	if err := op2.ParLoop(k, nilSub, y.Arg(op2.RW)); !errors.As(err, &le) || !strings.Contains(err.Error(), "iteration set is nil") {
		t.Errorf("nil subset: %v", err)
	}
}

// TestSubsetPlanColoursSubsetOnly: the execution plan of an indirect loop
// over a subset colours the subset's elements only. Every edge but the
// subset's increments node 0, so the whole set needs a colour per edge (one
// element per block); the subset's edges touch distinct nodes and need one.
func TestSubsetPlanColoursSubsetOnly(t *testing.T) {
	for _, b := range allBackends {
		if b == "sequential" {
			continue // no plan
		}
		t.Run(b, func(t *testing.T) {
			// staged: the atomics scheme (cuda's default) colours nothing.
			// Loops run at once, so that the plan is made before the
			// colours are read.
			r := must(op2.NewRuntime(op2.Config{Backend: b, BlockSize: 1, PlanCheck: true, DeviceScheme: "staged"}.Explicit("Lazy")))
			const ne = 40
			nodes := must(op2.NewSet(2*ne+1, "nodes"))
			edges := must(op2.NewSet(ne, "edges"))
			table := make([]int32, 0, 2*ne)
			var pick []int32
			for e := 0; e < ne; e++ {
				if e%4 == 0 {
					table = append(table, int32(2*e+1), int32(2*e+2))
					pick = append(pick, int32(e))
				} else {
					table = append(table, 0, int32(2*e+1))
				}
			}
			e2n := must(op2.NewMap(edges, nodes, 2, table, "e2n"))
			sub := must(op2.NewSubset(edges, pick))
			res := must(op2.NewDat[int32](nodes, 1, nil, "res"))
			k := op2.NewKernel("void two(int *a, int *b) { *a += 1; *b += 2; }", "two")
			colours := map[string]int{}
			op2.OnLaunch(r, func(set string, _, last int, c bool) {
				if c {
					colours[set] = max(colours[set], last)
				}
			})
			check(t, r.ParLoop(k, sub, res.ArgMap(op2.Inc, e2n, 0), res.ArgMap(op2.Inc, e2n, 1)))
			check(t, r.ParLoop(k, edges, res.ArgMap(op2.Inc, e2n, 0), res.ArgMap(op2.Inc, e2n, 1)))
			if colours[sub.Name()] != 1 || colours["edges"] < ne*3/4 {
				t.Errorf("block colours: subset %d, whole set %d; want 1 and at least %d", colours[sub.Name()], colours["edges"], ne*3/4)
			}
			got := res.DataRO()
			want := make([]int32, 2*ne+1)
			for e := 0; e < ne; e++ {
				n := 1
				if e%4 == 0 {
					n = 2
				}
				want[table[2*e]] += int32(n)
				want[table[2*e+1]] += int32(2 * n)
			}
			if !slices.Equal(got, want) {
				t.Errorf("res = %v, want %v", got, want)
			}
		})
	}
}
