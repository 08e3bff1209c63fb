package op2_test

import (
	"errors"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// members returns the sorted elements e of [0,n) with in(e).
func members(n int, in func(e int32) bool) []int32 {
	out := []int32{}
	for e := int32(0); e < int32(n); e++ {
		if in(e) {
			out = append(out, e)
		}
	}
	return out
}

// TestSubsetOfSubset: the indices of a subset of a subset are positions in
// the parent subset; the result is a subset of the underlying set holding
// the composed elements, sorted, without duplicates, to any depth.
func TestSubsetOfSubset(t *testing.T) {
	set := must(op2.NewSet(20, "cells"))
	parent := must(op2.NewSubset(set, []int32{19, 4, 7, 4, 0, 11, 15})) // [0 4 7 11 15 19]
	for _, c := range []struct {
		name      string
		positions []int32
		want      []int32
	}{
		{"all", []int32{0, 1, 2, 3, 4, 5}, []int32{0, 4, 7, 11, 15, 19}},
		{"unsorted with duplicates", []int32{5, 1, 3, 1, 5}, []int32{4, 11, 19}},
		{"one", []int32{2}, []int32{7}},
		{"none", nil, []int32{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub := must(op2.NewSubset(parent, c.positions))
			if got := sub.Indices(); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("indices %v, want %v", got, c.want)
			}
			if sub.Set() != set || sub.Size() != len(c.want) || sub.Name() != "cells[subset]" {
				t.Errorf("Set %v, Size %d, Name %q", sub.Set(), sub.Size(), sub.Name())
			}
		})
	}
	// Three levels: positions compose all the way down.
	ss := must(op2.NewSubset(parent, []int32{1, 2, 4, 5})) // [4 7 15 19]
	sss := must(op2.NewSubset(ss, []int32{3, 0}))          // [4 19]
	if got := sss.Indices(); !slices.Equal(got, []int32{4, 19}) || sss.Set() != set {
		t.Errorf("subset of a subset of a subset: %v of %v, want [4 19] of cells", got, sss.Set())
	}

	for _, c := range []struct {
		idx  []int32
		want string
	}{
		{[]int32{0, 6}, `op2: subset of subset of set "cells" (6 of 20 elements): index 6 (position 1) is outside the subset's positions [0,6)`},
		{[]int32{-1}, `index -1 (position 0) is outside the subset's positions [0,6)`},
		{[]int32{1, 2, 19}, `index 19 (position 2) is outside the subset's positions`},
	} {
		if _, err := op2.NewSubset(parent, c.idx); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSubset(subset, %v): %v, want an error containing %q", c.idx, err, c.want)
		}
	}
	var nilSub *op2.Subset
	if _, err := op2.NewSubset(nilSub, []int32{0}); err == nil || !strings.Contains(err.Error(), "set is nil") {
		t.Errorf("NewSubset(nil subset): %v", err)
	}
	var nilSet *op2.Set
	if _, err := op2.NewSubset(nilSet, []int32{0}); err == nil || !strings.Contains(err.Error(), "set is nil") {
		t.Errorf("NewSubset(nil *Set): %v", err)
	}
}

// TestSubsetAlgebra: Union, Intersection and Difference of subsets of one
// set (and of a subset with the set itself) hold what Go computes from
// membership; empty results are subsets too.
func TestSubsetAlgebra(t *testing.T) {
	const n = 200
	set := must(op2.NewSet(n, "edges"))
	rng := rand.New(rand.NewSource(3))
	random := func(p float64) []int32 {
		var idx []int32
		for e := range n {
			if rng.Float64() < p {
				idx = append(idx, int32(e), int32(e)) // duplicates too
			}
		}
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		return idx
	}
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	for _, c := range []struct {
		name  string
		a, b  []int32 // nil b with whole: the set itself
		whole bool
	}{
		{"random", random(0.3), random(0.5), false},
		{"disjoint", []int32{1, 3, 5}, []int32{0, 2, 4, 199}, false},
		{"equal", []int32{7, 8, 9}, []int32{9, 8, 7}, false},
		{"a inside b", []int32{10, 20}, []int32{5, 10, 15, 20, 25}, false},
		{"a empty", nil, []int32{1, 2}, false},
		{"both empty", nil, nil, false},
		{"b everything", random(0.2), all, false},
		{"with the set", random(0.4), nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := must(op2.NewSubset(set, c.a))
			var other op2.IterationSet = set
			inB := make([]bool, n)
			if c.whole {
				for i := range inB {
					inB[i] = true
				}
			} else {
				other = must(op2.NewSubset(set, c.b))
				for _, e := range c.b {
					inB[e] = true
				}
			}
			inA := make([]bool, n)
			for _, e := range c.a {
				inA[e] = true
			}
			for _, op := range []struct {
				name string
				f    func(op2.IterationSet) (*op2.Subset, error)
				in   func(e int32) bool
			}{
				{"union", a.Union, func(e int32) bool { return inA[e] || inB[e] }},
				{"intersection", a.Intersection, func(e int32) bool { return inA[e] && inB[e] }},
				{"difference", a.Difference, func(e int32) bool { return inA[e] && !inB[e] }},
			} {
				got := must(op.f(other))
				want := members(n, op.in)
				if idx := got.Indices(); !slices.Equal(idx, want) && !(len(idx) == 0 && len(want) == 0) {
					t.Errorf("%s: %v, want %v", op.name, idx, want)
				}
				if got.Set() != set || got.Size() != len(want) {
					t.Errorf("%s: Set %v, Size %d", op.name, got.Set(), got.Size())
				}
			}
		})
	}

	// Subsets of subsets combine with subsets of the set.
	p := must(op2.NewSubset(set, []int32{2, 4, 6, 8}))
	q := must(op2.NewSubset(p, []int32{1, 3})) // [4 8]
	r := must(op2.NewSubset(set, []int32{8, 9}))
	if u := must(q.Union(r)).Indices(); !slices.Equal(u, []int32{4, 8, 9}) {
		t.Errorf("subset of a subset ∪ subset: %v", u)
	}
	if d := must(p.Difference(q)).Indices(); !slices.Equal(d, []int32{2, 6}) {
		t.Errorf("subset − its subset of a subset: %v", d)
	}

	// Every backend, cuda included (compile-only here), generates the
	// loops over derived subsets: they are plain subsets of the set.
	nodes := must(op2.NewSet(n+1, "nodes"))
	tab := make([]int32, 2*n)
	for e := range n {
		tab[2*e], tab[2*e+1] = int32(e), int32(e+1)
	}
	e2n := must(op2.NewMap(set, nodes, 2, tab, "e2n"))
	w := must(op2.NewDat[float64](set, 1, nil, "w"))
	res := must(op2.NewDat[float64](nodes, 1, nil, "res"))
	k := op2.NewKernel("void inc(double *w, double *a, double *b) { *w += 1; *a += *w; *b += *w; }", "inc")
	for _, s := range []*op2.Subset{q, must(q.Union(r)), must(p.Intersection(r)), must(p.Difference(q))} {
		for _, b := range []string{"sequential", "openmp", "opencl", "cuda"} {
			src, err := op2.Generate(b, k, s, w.Arg(op2.RW), res.ArgMap(op2.Inc, e2n, 0), res.ArgMap(op2.Inc, e2n, 1))
			if err != nil || !strings.Contains(src, "inc") {
				t.Errorf("Generate(%s) over %v: %v", b, s, err)
			}
		}
	}
}

// TestSubsetAlgebraErrors: operands must be subsets of one set (or that
// set); the error names both.
func TestSubsetAlgebraErrors(t *testing.T) {
	cells := must(op2.NewSet(10, "cells"))
	other := must(op2.NewSet(10, "other"))
	a := must(op2.NewSubset(cells, []int32{1, 2, 3, 4}))
	b := must(op2.NewSubset(other, []int32{1, 2}))
	var nilSub *op2.Subset
	for _, c := range []struct {
		name string
		f    func() (*op2.Subset, error)
		want string
	}{
		{"union", func() (*op2.Subset, error) { return a.Union(b) },
			`op2: union of subset of set "cells" (4 of 10 elements) and subset of set "other" (2 of 10 elements): they are not subsets of one set`},
		{"intersection", func() (*op2.Subset, error) { return a.Intersection(b) },
			`op2: intersection of subset of set "cells" (4 of 10 elements) and subset of set "other"`},
		{"difference with another set", func() (*op2.Subset, error) { return a.Difference(other) },
			`op2: difference of subset of set "cells" (4 of 10 elements) and set "other" (10 elements): they are not subsets of one set`},
		{"nil other", func() (*op2.Subset, error) { return a.Union(nil) }, `union of subset of set "cells" (4 of 10 elements) and a nil set or subset`},
		{"nil other subset", func() (*op2.Subset, error) { return a.Union(nilSub) }, `and a nil set or subset`},
		{"nil receiver", func() (*op2.Subset, error) { return nilSub.Intersection(a) }, `intersection of subsets: the subset is nil`},
	} {
		if s, err := c.f(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, %v; want an error containing %q", c.name, s, err, c.want)
		}
	}
}

// TestDerivedSubsetLoops: loops over subsets of subsets and over unions,
// intersections and differences give, on every backend with the plans
// checked, the Go reference's results: a direct RW touches the derived
// subset's elements only, an INC through a map adds only their
// contributions, and a WRITE through ArgIdx sees the parent set's numbers.
func TestDerivedSubsetLoops(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		const nn, ne = 300, 700
		r := must(op2.NewRuntime(op2.Config{Backend: op2.Backend(), PlanCheck: true}))
		m := newSubsetMesh(t, nn, ne, subsetPick(ne))
		var pickB []int32
		for e := 100; e < 500; e += 2 {
			pickB = append(pickB, int32(e))
		}
		b := must(op2.NewSubset(m.edges, pickB))
		inB := make([]bool, ne)
		for _, e := range pickB {
			inB[e] = true
		}
		parentIdx := m.sub.Indices()
		var pos []int32
		for p := len(parentIdx) - 1; p >= 0; p -= 3 {
			pos = append(pos, int32(p), int32(p))
		}
		ss := must(op2.NewSubset(m.sub, pos))
		inSS := make([]bool, ne)
		for _, p := range pos {
			inSS[parentIdx[p]] = true
		}
		ssIdx := ss.Indices()
		sss := must(op2.NewSubset(ss, []int32{0, int32(len(ssIdx) - 1), 2}))
		inSSS := make([]bool, ne)
		for _, p := range []int{0, len(ssIdx) - 1, 2} {
			inSSS[ssIdx[p]] = true
		}
		for _, c := range []struct {
			name string
			sub  *op2.Subset
			in   func(e int32) bool
		}{
			{"subset of subset", ss, func(e int32) bool { return inSS[e] }},
			{"subset of subset of subset", sss, func(e int32) bool { return inSSS[e] }},
			{"union", must(m.sub.Union(b)), func(e int32) bool { return m.in[e] || inB[e] }},
			{"intersection", must(m.sub.Intersection(b)), func(e int32) bool { return m.in[e] && inB[e] }},
			{"difference", must(m.sub.Difference(b)), func(e int32) bool { return m.in[e] && !inB[e] }},
			{"other difference", must(b.Difference(m.sub)), func(e int32) bool { return inB[e] && !m.in[e] }},
			{"union of subset of subset", must(ss.Union(b)), func(e int32) bool { return inSS[e] || inB[e] }},
			{"union with the set", must(b.Union(m.edges)), func(e int32) bool { return true }},
			{"empty difference", must(m.sub.Difference(m.edges)), func(e int32) bool { return false }},
		} {
			t.Run(c.name, func(t *testing.T) {
				if got, want := c.sub.Indices(), members(ne, c.in); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("indices %v, want %v", got, want)
				}
				w := must(op2.NewDat(m.edges, 1, iota32[float64](ne), "w"))
				id := must(op2.NewDat(m.edges, 1, slices.Repeat([]int32{-1}, ne), "id"))
				res := must(op2.NewDat[float64](m.nodes, 1, nil, "res"))
				rw := op2.NewKernel("void rw(double *w) { *w = 2 * *w + 1; }", "rw")
				check(t, r.ParLoop(rw, c.sub, w.Arg(op2.RW)))
				inc := op2.NewKernel("void inc(const double *w, double *a, double *b) { *a += *w; *b += 1; }", "inc")
				check(t, r.ParLoop(inc, c.sub, w.Arg(op2.Read), res.ArgMap(op2.Inc, m.e2n, 0), res.ArgMap(op2.Inc, m.e2n, 1)))
				idk := op2.NewKernel("void idk(const int *i, int *d) { *d = *i; }", "idk")
				check(t, r.ParLoop(idk, c.sub, op2.ArgIdx(), id.Arg(op2.Write)))

				wantW := iota32[float64](ne)
				wantID := slices.Repeat([]int32{-1}, ne)
				wantRes := make([]float64, nn)
				for e := int32(0); e < ne; e++ {
					if !c.in(e) {
						continue
					}
					wantW[e] = 2*wantW[e] + 1
					wantID[e] = e
					wantRes[m.table[2*e]] += wantW[e]
					wantRes[m.table[2*e+1]]++
				}
				if !slices.Equal(w.DataRO(), wantW) {
					t.Errorf("direct RW differs from the reference")
				}
				if !slices.Equal(res.DataRO(), wantRes) {
					t.Errorf("INC through the map differs from the reference")
				}
				if !slices.Equal(id.DataRO(), wantID) {
					t.Errorf("ArgIdx differs from the reference")
				}
			})
		}
		// A loop over a derived subset checks its arguments against the
		// underlying set.
		otherSet := must(op2.NewSet(ne, "other"))
		z := must(op2.NewDat[float64](otherSet, 1, nil, "z"))
		var le *op2.LoopError
		err := r.ParLoop(op2.NewKernel("void rw(double *w) { *w = 2 * *w + 1; }", "rw"), ss, z.Arg(op2.RW))
		if !errors.As(err, &le) || !strings.Contains(err.Error(), `not on the loop's set "edges"`) {
			t.Errorf("dat on another set over a subset of a subset: %v", err)
		}
	})
}

// TestDerivedSubsetsRenumber: subsets of subsets and subset algebra
// declared before Renumber follow their set: loops over them after it
// give the results of the declared numbering, and algebra after it gives
// the same elements (in the new numbering).
func TestDerivedSubsetsRenumber(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		m := newGridMesh(t, 9, 7, 5)
		ne, nn := m.edges.Size(), m.nodes.Size()
		var pickB []int32
		for e := 1; e < ne; e += 4 {
			pickB = append(pickB, int32(e))
		}
		b := must(op2.NewSubset(m.edges, pickB))
		subs := map[string]*op2.Subset{
			"subset of subset": must(op2.NewSubset(m.sub, []int32{0, 2, 4, 6, 8, 10, 12})),
			"union":            must(m.sub.Union(b)),
			"intersection":     must(m.sub.Intersection(b)),
			"difference":       must(m.sub.Difference(b)),
		}
		declared := map[string][]int32{} // each subset's elements, declared numbers
		for name, s := range subs {
			declared[name] = s.Indices()
		}
		w := must(op2.NewDat(m.edges, 1, iota32[float64](ne), "w"))
		res := must(op2.NewDat[float64](m.nodes, 1, nil, "res"))

		info := must(op2.Renumber(op2.RCMOrdering(m.pedge)))
		if !slices.Contains(info.Sets, "edges") {
			t.Fatalf("edges not renumbered: %v", info.Sets)
		}
		decl := m.edges.DeclaredNumbers()
		toDecl := func(idx []int32) []int32 {
			out := make([]int32, len(idx))
			for i, e := range idx {
				out[i] = decl[e]
			}
			slices.Sort(out)
			return out
		}
		if got := toDecl(must(m.sub.Union(b)).Indices()); !slices.Equal(got, declared["union"]) {
			t.Errorf("union after Renumber holds %v (declared), want %v", got, declared["union"])
		}

		r := must(op2.NewRuntime(op2.Config{Backend: op2.Backend(), PlanCheck: true}))
		rw := op2.NewKernel("void rw(double *w) { *w = 2 * *w + 1; }", "rw")
		inc := op2.NewKernel("void inc(const double *w, double *a, double *b) { *a += *w; *b += 1; }", "inc")
		wantW := iota32[float64](ne)
		wantRes := make([]float64, nn)
		pedge := m.table["pedge"]
		for _, name := range []string{"subset of subset", "union", "intersection", "difference"} {
			s := subs[name]
			if got := toDecl(s.Indices()); !slices.Equal(got, declared[name]) {
				t.Errorf("%s after Renumber holds %v (declared), want %v", name, got, declared[name])
			}
			check(t, r.ParLoop(rw, s, w.Arg(op2.RW)))
			check(t, r.ParLoop(inc, s, w.Arg(op2.Read), res.ArgMap(op2.Inc, m.pedge, 0), res.ArgMap(op2.Inc, m.pedge, 1)))
			for _, e := range declared[name] {
				wantW[e] = 2*wantW[e] + 1
			}
			for _, e := range declared[name] {
				wantRes[pedge[2*e]] += wantW[e]
				wantRes[pedge[2*e+1]]++
			}
		}
		if got := must(w.Gather()); !slices.Equal(got, wantW) {
			t.Errorf("direct RW over derived subsets after Renumber: %v, want %v", got, wantW)
		}
		if got := must(res.Gather()); !slices.Equal(got, wantRes) {
			t.Errorf("INC over derived subsets after Renumber: %v, want %v", got, wantRes)
		}
	})
}
