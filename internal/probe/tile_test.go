package probe_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/randkernel"
)

// The sparse tiling probe (Config.Tile): random meshes of a few thousand
// elements on four sets with maps of arity 1 to 4, random sequences of
// loops (every access through direct, one-column and vector arguments,
// Globals, index arguments, optional arguments, component views, loops
// over subsets, Const.Set and Global.SetValue between recorded loops,
// host accesses), run in tiles of 1 to thousands of elements on the host
// backends with 1 to 3 threads, SIMD off/4/8 and fusion on/off, compared
// with the loops run at once on one process. Values are small integers,
// so every comparison is exact. tile_mpi_test.go runs the same
// sequences on 2 and 3 ranks.

// tpMesh is a random mesh: nodes on a strip of width 40 (numbered with
// local shuffles, so that consecutive numbers are near), edges, cells
// and boundary elements near them.
type tpMesh struct {
	sizes map[string]int
	maps  []tpMap
	xy    []float64 // node coordinates
	pos   []int     // each node's position on the strip
}

type tpMap struct {
	name, from, to string
	arity          int
	table          []int32
}

var tpSets = []string{"nodes", "edges", "cells", "bnd"}

func tpRandomMesh(seed uint64, n int) *tpMesh {
	rng := rand.New(rand.NewPCG(seed, 31))
	m := &tpMesh{sizes: map[string]int{"nodes": n, "edges": 2 * n, "cells": n / 2, "bnd": n / 16}}
	// inv[p] is the node at position p: positions shuffled within
	// windows of 24.
	inv := make([]int32, n)
	for i := range inv {
		inv[i] = int32(i)
	}
	for lo := 0; lo < n; lo += 24 {
		hi := min(lo+24, n)
		rng.Shuffle(hi-lo, func(i, j int) { inv[lo+i], inv[lo+j] = inv[lo+j], inv[lo+i] })
	}
	m.pos = make([]int, n)
	m.xy = make([]float64, 2*n)
	for p, v := range inv {
		m.pos[v] = p
		m.xy[2*v], m.xy[2*v+1] = float64(p%40), float64(p/40)
	}
	near := func(p, spread, size int) int { return min(max(p+rng.IntN(2*spread+1)-spread, 0), size-1) }
	add := func(name, from, to string, arity int, entry func(e, j int) int32) {
		mp := tpMap{name: name, from: from, to: to, arity: arity}
		for e := range m.sizes[from] {
			for j := range arity {
				mp.table = append(mp.table, entry(e, j))
			}
		}
		m.maps = append(m.maps, mp)
	}
	add("e2n", "edges", "nodes", 2, func(e, j int) int32 { return inv[near(e/2+40*j, 3, n)] })
	add("c2n", "cells", "nodes", 3, func(e, j int) int32 { return inv[near(2*e+j, 3, n)] })
	add("c2e", "cells", "edges", 4, func(e, j int) int32 { return int32(near(4*e+j, 4, 2*n)) })
	add("b2n", "bnd", "nodes", 1, func(e, j int) int32 { return inv[near(16*e+8, 8, n)] })
	add("n2c", "nodes", "cells", 1, func(e, j int) int32 { return int32(min(m.pos[e]/2, n/2-1)) })
	return m
}

// The Dats of every set: float64 of dim 1 and 2, int32 of dim 1. Views
// pass one component of "v".
type tpDat struct {
	name, typ string
	dim       int
}

var tpDats = []tpDat{{"a", "double", 1}, {"v", "double", 2}, {"i", "int", 1}}

// Globals: a float64 and an int32 of dim 2.
var tpGlobals = []tpDat{{"gs", "double", 1}, {"gi", "int", 2}}

// tpArg is one argument of a random loop.
type tpArg struct {
	Kind   string // direct, indirect, vector, global, idx, mapidx
	Dat    int
	View   int // 1 + the component of a view of "v"; 0: the whole Dat
	Map    int
	Col    int
	Access string
	Opt    int // 0 plain, 1 Opt(true), 2 Opt(false)
}

// tpOp is one loop, or an operation between loops (Host).
type tpOp struct {
	Set    string
	Subset bool // over the elements of Set whose declared number is a multiple of 3
	Args   []tpArg
	Const  bool // the kernel reads the Const tpk
	// Host: "poke" (Data on the element declared Pick), "read" (DataRO
	// or Gather: a sync point), "const" (tpk set to Value), "global" (gs
	// set to Value).
	Host  string
	Hset  string
	Hdat  int
	Pick  int
	Value int
}

// tpSequence makes n random operations: mostly loops, in runs that may
// be tiled, with assignments and host accesses between them.
func tpSequence(m *tpMesh, seed uint64, n int) []tpOp {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []tpOp
	for len(out) < n {
		switch rng.IntN(12) {
		case 0:
			set := tpSets[rng.IntN(len(tpSets))]
			out = append(out, tpOp{Host: []string{"poke", "read"}[rng.IntN(2)], Hset: set, Hdat: rng.IntN(len(tpDats)), Pick: rng.IntN(m.sizes[set])})
			continue
		case 1:
			out = append(out, tpOp{Host: "const", Value: rng.IntN(9)})
			continue
		case 2:
			out = append(out, tpOp{Host: "global", Value: rng.IntN(9)})
			continue
		}
		set := tpSets[rng.IntN(len(tpSets))]
		var from []int
		for k, mp := range m.maps {
			if mp.from == set {
				from = append(from, k)
			}
		}
		l := tpOp{Set: set, Subset: rng.IntN(6) == 0, Const: rng.IntN(4) == 0}
		used := map[string]bool{}
		for range 2 + rng.IntN(4) {
			a := tpArg{}
			switch k := rng.IntN(11); {
			case k < 3:
				a.Kind = "direct"
			case k < 6 && len(from) > 0:
				a.Kind = "indirect"
			case k < 8 && len(from) > 0:
				a.Kind = "vector"
			case k < 10:
				a.Kind = "global"
			case len(from) > 0 && rng.IntN(2) == 0:
				a.Kind = "mapidx"
			default:
				a.Kind = "idx"
			}
			if len(from) > 0 {
				a.Map = from[rng.IntN(len(from))]
				a.Col = rng.IntN(m.maps[a.Map].arity)
			}
			target := set
			if a.Kind == "indirect" || a.Kind == "vector" {
				target = m.maps[a.Map].to
			}
			switch a.Kind {
			case "direct":
				a.Access = []string{"Read", "Write", "RW", "Inc"}[rng.IntN(4)]
			case "indirect":
				a.Access = []string{"Read", "Read", "Write", "RW", "Inc", "Inc", "Min", "Max"}[rng.IntN(8)]
			case "vector":
				a.Access = []string{"Read", "Read", "RW", "Inc", "Inc", "Min", "Max"}[rng.IntN(7)]
			case "global":
				a.Access = []string{"Read", "Inc", "Min", "Max"}[rng.IntN(4)]
				a.Dat = rng.IntN(len(tpGlobals))
				if used["g"+fmt.Sprint(a.Dat)] {
					continue
				}
				used["g"+fmt.Sprint(a.Dat)] = true
			}
			if a.Kind == "direct" || a.Kind == "indirect" || a.Kind == "vector" {
				a.Dat = rng.IntN(len(tpDats))
				if a.Dat == 1 && a.Kind != "vector" && rng.IntN(3) == 0 {
					a.View = 1 + rng.IntN(2)
				}
				key := target + "." + tpDats[a.Dat].name
				if used[key] {
					continue
				}
				used[key] = true
			}
			if a.Kind != "idx" && a.Kind != "mapidx" && rng.IntN(6) == 0 {
				a.Opt = 1 + rng.IntN(2)
			}
			l.Args = append(l.Args, a)
			if a.Kind == "indirect" && a.Access == "Write" {
				// Every writer writes the same value: a function of
				// the target's number.
				l.Args = append(l.Args, tpArg{Kind: "mapidx", Map: a.Map, Col: a.Col})
			}
		}
		if len(l.Args) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// tpKernelSource is loop l's kernel: each value read adds to s; each
// value written is a small integer made from s, or, where several
// elements meet through a map, a contribution whose result does not
// depend on their order (randkernel). A view passes one component.
func tpKernelSource(m *tpMesh, l tpOp, name string) string {
	prelude := ""
	if l.Const {
		prelude = "  s += tpk;\n"
	}
	args := make([]randkernel.Arg, len(l.Args))
	for i, a := range l.Args {
		ka := randkernel.Arg{Kind: a.Kind, Access: a.Access, Type: "int", Dim: 1, Opt: a.Opt != 0}
		switch a.Kind {
		case "direct", "indirect", "vector":
			ka.Type, ka.Dim = tpDats[a.Dat].typ, tpDats[a.Dat].dim
			if a.View > 0 {
				ka.Dim = 1
			}
		case "global":
			ka.Type, ka.Dim = tpGlobals[a.Dat].typ, tpGlobals[a.Dat].dim
		}
		if a.Kind == "vector" {
			ka.Arity = m.maps[a.Map].arity
		}
		args[i] = ka
	}
	return randkernel.Source(name, args, prelude)
}

// tpKernels keeps each loop's kernel, so that runs share their programs.
var tpKernels sync.Map

func tpKernel(m *tpMesh, l tpOp, name string) *op2.Kernel {
	if k, ok := tpKernels.Load(name); ok {
		return k.(*op2.Kernel)
	}
	k, _ := tpKernels.LoadOrStore(name, op2.NewKernel(tpKernelSource(m, l, name), name))
	return k.(*op2.Kernel)
}

// tpWorld is a mesh declared (on one process, or partitioned on ranks)
// with its data: what a run of a sequence uses.
type tpWorld struct {
	m     *tpMesh
	sets  map[string]*op2.Set
	maps  []*op2.Map
	decl  map[string][]int32 // declared numbers of each set's elements here
	subs  map[string]*op2.Subset
	f     map[string]*op2.Dat[float64]
	i     map[string]*op2.Dat[int32]
	gs    *op2.Global[float64]
	gi    *op2.Global[int32]
	tpk   *op2.Const[float64]
	par   func(k *op2.Kernel, set op2.IterationSet, args ...op2.Arg) error
	gathe bool // read Dats with Gather (under MPI)
	// readInChain keeps "read" operations (Gather, then the Globals'
	// values) inside the chains, which they force.
	readInChain bool
}

// tpDeclare declares mesh m: all of it on one process (or rank 0 under
// MPI, with rankZero false meaning nothing; see tpPartition).
func tpDeclare(t *testing.T, m *tpMesh, all bool) *tpWorld {
	w := &tpWorld{m: m, sets: map[string]*op2.Set{}, decl: map[string][]int32{}, subs: map[string]*op2.Subset{}}
	for _, name := range tpSets {
		n := 0
		if all {
			n = m.sizes[name]
		}
		w.sets[name] = must(op2.NewSet(n, "tp_"+name))
	}
	for _, mp := range m.maps {
		var tab []int32
		if all {
			tab = mp.table
		}
		w.maps = append(w.maps, must(op2.NewMap(w.sets[mp.from], w.sets[mp.to], mp.arity, tab, mp.name)))
	}
	return w
}

// tpFinish makes the subsets (after a partition) and notes the declared
// numbers.
func (w *tpWorld) tpFinish(t *testing.T) {
	for _, name := range tpSets {
		s := w.sets[name]
		w.decl[name] = s.DeclaredNumbers()[:s.Size()]
		var idx []int32
		for e, g := range w.decl[name] {
			if g%3 == 0 {
				idx = append(idx, int32(e))
			}
		}
		w.subs[name] = must(op2.NewSubset(s, idx))
	}
}

// tpData makes fresh data for a run of sequence seed.
func (w *tpWorld) tpData(seed uint64) {
	w.f, w.i = map[string]*op2.Dat[float64]{}, map[string]*op2.Dat[int32]{}
	for _, name := range tpSets {
		g := w.decl[name]
		for _, d := range tpDats {
			key := name + "." + d.name
			if d.typ == "int" {
				v := make([]int32, len(g))
				for e, n := range g {
					v[e] = (n*7 + int32(seed)) % 23
				}
				w.i[key] = must(op2.NewDat(w.sets[name], 1, v, key))
				continue
			}
			v := make([]float64, len(g)*d.dim)
			for e, n := range g {
				for c := range d.dim {
					v[e*d.dim+c] = float64((int(n)*(3+c) + int(seed)) % 19)
				}
			}
			w.f[key] = must(op2.NewDat(w.sets[name], d.dim, v, key))
		}
	}
	w.gs = must(op2.NewGlobal(1, []float64{0}, "gs"))
	w.gi = must(op2.NewGlobal(2, []int32{0, 0}, "gi"))
}

// tpResult is what a run computes: the Globals at each sync point and
// every Dat at the end (declared order; empty on ranks other than 0).
type tpResult struct {
	Globals [][]float64
	Dats    map[string][]float64
}

func (w *tpWorld) globals() []float64 {
	g := slices.Clone(w.gs.DataRO())
	for _, v := range w.gi.DataRO() {
		g = append(g, float64(v))
	}
	return g
}

// issue issues loop number k of the sequence.
func (w *tpWorld) issue(seed uint64, k int, l tpOp) error {
	key := func(set string, d int) string { return set + "." + tpDats[d].name }
	var args []op2.Arg
	for _, a := range l.Args {
		set := l.Set
		if a.Kind == "indirect" || a.Kind == "vector" {
			set = w.m.maps[a.Map].to
		}
		acc := map[string]op2.Access{"Read": op2.Read, "Write": op2.Write, "RW": op2.RW, "Inc": op2.Inc, "Min": op2.Min, "Max": op2.Max}[a.Access]
		var arg op2.Arg
		mp := w.maps[a.Map]
		switch a.Kind {
		case "idx":
			arg = op2.ArgIdx()
		case "mapidx":
			arg = mp.ArgIdx(a.Col)
		case "global":
			if a.Dat == 0 {
				arg = w.gs.Arg(acc)
			} else {
				arg = w.gi.Arg(acc)
			}
		default:
			kk := key(set, a.Dat)
			if df := w.f[kk]; df != nil {
				if a.View > 0 {
					v := must(df.View(a.View - 1))
					switch a.Kind {
					case "direct":
						arg = v.Arg(acc)
					case "indirect":
						arg = v.ArgMap(acc, mp, a.Col)
					}
					break
				}
				switch a.Kind {
				case "direct":
					arg = df.Arg(acc)
				case "indirect":
					arg = df.ArgMap(acc, mp, a.Col)
				case "vector":
					arg = df.ArgVec(acc, mp)
				}
			} else {
				di := w.i[kk]
				switch a.Kind {
				case "direct":
					arg = di.Arg(acc)
				case "indirect":
					arg = di.ArgMap(acc, mp, a.Col)
				case "vector":
					arg = di.ArgVec(acc, mp)
				}
			}
		}
		if a.Opt != 0 {
			arg = op2.Opt(a.Opt == 1, arg)
		}
		args = append(args, arg)
	}
	var over op2.IterationSet = w.sets[l.Set]
	if l.Subset {
		over = w.subs[l.Set]
	}
	k2 := tpKernel(w.m, l, fmt.Sprintf("tp_%d_%d", seed, k))
	if err := w.par(k2, over, args...); err != nil {
		return fmt.Errorf("sequence %d loop %d:\n%s\n%w", seed, k, tpKernelSource(w.m, l, "k"), err)
	}
	return nil
}

// host does operation op between loops; under MPI (chained) it runs
// between chains.
func (w *tpWorld) host(op tpOp, res *tpResult) error {
	key := op.Hset + "." + tpDats[op.Hdat].name
	switch op.Host {
	case "poke":
		for e, g := range w.decl[op.Hset] {
			if int(g) != op.Pick {
				continue
			}
			if df := w.f[key]; df != nil {
				for c := range df.Dim() {
					df.Data()[e*df.Dim()+c] = float64(5 + c + int(g)%3)
				}
			} else {
				w.i[key].Data()[e] = 5 + g%3
			}
		}
	case "read":
		if w.gathe {
			if df := w.f[key]; df != nil {
				if _, err := df.Gather(); err != nil {
					return err
				}
			} else if _, err := w.i[key].Gather(); err != nil {
				return err
			}
		} else if df := w.f[key]; df != nil {
			_ = df.DataRO()
		} else {
			_ = w.i[key].DataRO()
		}
		res.Globals = append(res.Globals, w.globals())
	case "const":
		return w.tpk.Set(float64(op.Value))
	case "global":
		w.gs.SetValue(float64(op.Value))
	}
	return nil
}

// dats reads every Dat (Gather under MPI).
func (w *tpWorld) dats(res *tpResult) error {
	res.Dats = map[string][]float64{}
	for _, name := range tpSets {
		for _, d := range tpDats {
			key := name + "." + d.name
			var v []float64
			if df := w.f[key]; df != nil {
				if w.gathe {
					g, err := df.Gather()
					if err != nil {
						return err
					}
					v = g
				} else {
					v = slices.Clone(df.DataRO())
				}
			} else {
				var iv []int32
				if w.gathe {
					g, err := w.i[key].Gather()
					if err != nil {
						return err
					}
					iv = g
				} else {
					iv = w.i[key].DataRO()
				}
				for _, x := range iv {
					v = append(v, float64(x))
				}
			}
			res.Dats[key] = v
		}
	}
	return nil
}

// tpRun runs sequence ops on fresh data. chain, when not nil, records
// each run of operations between host accesses ("poke", "read") in one
// scope (op2.Chain under MPI); otherwise loops are issued as they come
// (recorded by a Lazy runtime, or run at once).
func (w *tpWorld) tpRun(t *testing.T, seed uint64, ops []tpOp, chain func(func() error) error) tpResult {
	t.Helper()
	w.tpData(seed)
	check(t, w.tpk.Set(1))
	var res tpResult
	for k := 0; k < len(ops); {
		splits := func(op tpOp) bool { return op.Host == "poke" || (op.Host == "read" && !w.readInChain) }
		end := k + 1
		if chain != nil && !splits(ops[k]) {
			for end < len(ops) && !splits(ops[end]) {
				end++
			}
		}
		body := func() error {
			for j := k; j < end; j++ {
				var err error
				if ops[j].Host != "" {
					err = w.host(ops[j], &res)
				} else {
					err = w.issue(seed, j, ops[j])
				}
				if err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		if chain != nil && end-k > 1 {
			err = chain(body)
		} else {
			err = body()
		}
		if err != nil {
			t.Fatal(err)
		}
		k = end
	}
	res.Globals = append(res.Globals, w.globals())
	check(t, w.dats(&res))
	return res
}

// tpCompare reports the differences between got and want.
func tpCompare(t *testing.T, what string, got, want tpResult) {
	t.Helper()
	if !slices.EqualFunc(got.Globals, want.Globals, slices.Equal) {
		t.Errorf("%s: Globals at the sync points %v, want %v", what, got.Globals, want.Globals)
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want.Dats {
			if !yield(k) {
				return
			}
		}
	}) {
		g, v := got.Dats[k], want.Dats[k]
		if !slices.Equal(g, v) {
			for e := range v {
				if e >= len(g) || g[e] != v[e] {
					t.Errorf("%s: Dat %s differs first at value %d: %v, want %v (of %d values)", what, k, e, g[min(e, len(g)-1)], v[e], len(v))
					break
				}
			}
		}
	}
}

// tpConfig is one configuration the sequences run in.
type tpConfig struct {
	name    string
	backend string
	threads int
	tile    int
	simd    string
	fusion  string
	scheme  string // openmp scheme
}

func (c tpConfig) config(lazy bool) op2.Config {
	simd := c.simd
	if simd == "" {
		simd = "off"
	}
	fusion := c.fusion
	if fusion == "" {
		fusion = "off"
	}
	return op2.Config{Backend: c.backend, Threads: c.threads, Tile: c.tile, SIMD: simd, Fusion: fusion, OpenMPScheme: c.scheme,
		Lazy: lazy, Timing: true, CacheDir: cacheDir}.Explicit("Lazy")
}

// tpCheckTimings checks the timing report of a run: every loop's Moved
// is positive and at most its Bytes, equal to them for loops that never
// ran tiled (tiled false: the whole runtime), and says whether a loop
// ran in tiles.
func tpCheckTimings(t *testing.T, what string, ts []op2.LoopTiming, tiled bool) bool {
	t.Helper()
	ran := false
	for _, lt := range ts {
		if lt.Tuned == "tiled" {
			ran = true
		}
		if lt.Calls == 0 {
			continue
		}
		if lt.Bytes > 0 && (lt.Moved <= 0 || lt.Moved > lt.Bytes*(1+1e-12)) {
			t.Errorf("%s: loop %s over %s: Moved %v, Bytes %v", what, lt.Kernel, lt.Set, lt.Moved, lt.Bytes)
		}
		if !tiled && lt.Moved != lt.Bytes {
			t.Errorf("%s: loop %s over %s never tiled: Moved %v != Bytes %v", what, lt.Kernel, lt.Set, lt.Moved, lt.Bytes)
		}
	}
	return ran
}

// tpSingle runs sequence seed on mesh m in one process: at once on
// sequential, then in every configuration, lazily, and compares.
func tpSingle(t *testing.T, m *tpMesh, seed uint64, nops int, cfgs []tpConfig) {
	w := tpDeclare(t, m, true)
	w.tpFinish(t)
	ops := tpSequence(m, seed, nops)
	eager := must(op2.NewRuntime(tpConfig{backend: "sequential"}.config(false)))
	w.tpk = must(op2.NewConstIn(eager, 1, []float64{1}, "tpk"))
	w.par = eager.ParLoop
	want := w.tpRun(t, seed, ops, nil)
	w.tpk.Remove()
	tpCheckTimings(t, "at once", eager.Timings(), false)
	for _, c := range cfgs {
		r := must(op2.NewRuntime(c.config(true)))
		w.tpk = must(op2.NewConstIn(r, 1, []float64{1}, "tpk"))
		w.par = r.ParLoop
		got := w.tpRun(t, seed, ops, nil)
		w.tpk.Remove()
		check(t, r.Wait())
		what := fmt.Sprintf("sequence %d, %s", seed, c.name)
		tpCompare(t, what, got, want)
		ntiled := 0
		for _, lt := range r.Timings() {
			if lt.Tuned == "tiled" {
				ntiled++
			}
		}
		t.Logf("%s: %d of %d loops last ran in tiles", what, ntiled, len(r.Timings()))
		if ran := tpCheckTimings(t, what, r.Timings(), true); !ran && c.tile > 0 {
			t.Errorf("%s: no loop ran in tiles", what)
		}
	}
}

var tpQuick = []tpConfig{
	{name: "sequential tile 1", backend: "sequential", tile: 1},
	{name: "sequential tile 37 simd 8 fusion", backend: "sequential", tile: 37, simd: "8", fusion: "on"},
	{name: "openmp 3 threads tile 200 simd 4", backend: "openmp", threads: 3, tile: 200, simd: "4"},
}

var tpMore = []tpConfig{
	{name: "sequential tile 5000", backend: "sequential", tile: 5000},
	{name: "sequential tile 64 simd 4", backend: "sequential", tile: 64, simd: "4"},
	{name: "openmp 1 thread tile 16", backend: "openmp", threads: 1, tile: 16},
	{name: "openmp 2 threads tile 3 fusion", backend: "openmp", threads: 2, tile: 3, fusion: "on"},
	{name: "openmp 2 threads tile 1000 simd 8 colour", backend: "openmp", threads: 2, tile: 1000, simd: "8", scheme: "colour"},
}

// tpRandomSequences are the sequences TestTileProbeRandom runs without
// -short: one per run, by rotation (each one's loops compile anew in
// every configuration, some 50 s on a loaded 2-core machine).
var tpRandomSequences = []uint64{2, 3}

// TestTileProbeRandom: random sequences on a random mesh of 1500 nodes
// (4000 without -short, in more configurations) give the bits of the
// loops run at once in every configuration.
func TestTileProbeRandom(t *testing.T) {
	n, seeds, cfgs := 1500, []uint64{1}, tpQuick
	if !testing.Short() {
		n, seeds, cfgs = 4000, pick(probeRotation(t), tpRandomSequences, 1), append(slices.Clone(tpQuick), tpMore...)
	}
	m := tpRandomMesh(5, n)
	for _, seed := range seeds {
		t.Run(fmt.Sprint("sequence", seed), func(t *testing.T) { tpSingle(t, m, seed, 16, cfgs) })
	}
}

// TestTileProbeRefused: a loop refused in the middle of a lazily
// recorded run (a dim mismatch) is not recorded; the loops around it run
// in tiles, with the results of running them at once.
func TestTileProbeRefused(t *testing.T) {
	m := tpRandomMesh(9, 600)
	bad := op2.NewKernel("void tp_bad(double *x) { x[0] = 1; }", "tp_bad")
	run := func(cfg op2.Config) (tpResult, []op2.LoopTiming) {
		w := tpDeclare(t, m, true)
		w.tpFinish(t)
		r := must(op2.NewRuntime(cfg))
		w.tpk = must(op2.NewConstIn(r, 1, []float64{1}, "tpk"))
		defer w.tpk.Remove()
		w.par = r.ParLoop
		ops := tpSequence(m, 4, 8)
		w.tpData(4)
		for k, op := range ops {
			if op.Host != "" {
				continue
			}
			check(t, w.issue(4, k, op))
			if k == 3 {
				err := r.ParLoop(bad, w.sets["nodes"], w.f["nodes.v"].Arg(op2.Write), w.f["nodes.a"].Arg(op2.Write))
				if err == nil {
					t.Fatal("a loop whose kernel does not match its arguments was accepted")
				}
			}
		}
		check(t, r.Wait())
		var res tpResult
		res.Globals = append(res.Globals, w.globals())
		check(t, w.dats(&res))
		return res, r.Timings()
	}
	want, _ := run(tpConfig{backend: "sequential"}.config(false))
	got, ts := run(tpConfig{backend: "sequential", tile: 8}.config(true))
	tpCompare(t, "a refused loop among tiled ones", got, want)
	if !tpCheckTimings(t, "refused", ts, true) {
		t.Error("no loop ran in tiles")
	}
}

// TestTileProbeCompileError: a loop whose kernel does not compile,
// recorded among tiled loops, fails when recorded; the recorded loops
// before and after it run (in tiles) as at once.
func TestTileProbeCompileError(t *testing.T) {
	m := tpRandomMesh(9, 600)
	bad := op2.NewKernel("void tp_nocompile(double *x) { x[0] = undeclared_name; }", "tp_nocompile")
	for _, backend := range []string{"sequential", "openmp"} {
		t.Run(backend, func(t *testing.T) {
			run := func(cfg op2.Config, chain bool) tpResult {
				w := tpDeclare(t, m, true)
				w.tpFinish(t)
				r := must(op2.NewRuntime(cfg))
				w.tpk = must(op2.NewConstIn(r, 1, []float64{1}, "tpk"))
				defer w.tpk.Remove()
				w.par = r.ParLoop
				ops := tpSequence(m, 6, 8)
				w.tpData(6)
				body := func() error {
					for k, op := range ops {
						if op.Host != "" {
							continue
						}
						if err := w.issue(6, k, op); err != nil {
							return err
						}
						if k == 2 {
							err := r.ParLoop(bad, w.sets["cells"], w.f["cells.a"].Arg(op2.Write))
							if err == nil || !strings.Contains(err.Error(), "undeclared_name") {
								t.Errorf("a kernel that does not compile: %v", err)
							}
						}
					}
					return nil
				}
				if chain {
					check(t, r.Chain(body))
				} else {
					check(t, body())
				}
				check(t, r.Wait())
				var res tpResult
				res.Globals = append(res.Globals, w.globals())
				check(t, w.dats(&res))
				return res
			}
			want := run(tpConfig{backend: "sequential"}.config(false), false)
			c := tpConfig{backend: backend, threads: 2, tile: 16}.config(false)
			got := run(c, true)
			tpCompare(t, "a kernel failing to compile among chained tiled loops", got, want)
		})
	}
}

// TestTileProbeMovedAtMostBytes: a tiled loop's Moved (its share of the
// bytes its chain moves) is at most its Bytes, and the chain's Moved at
// most the loops' Bytes: the chain model counts each Dat once for the
// chain, which never moves more than the loops apart. Two chains broke it
// (Moved 1.17–1.25× Bytes, found by TestTileProbeRandom): a Dat read at
// a few elements by one loop and written at all of them by the next was
// counted read and written at all of them; a view of one component of a
// dim-2 Dat was counted with both components.
func TestTileProbeMovedAtMostBytes(t *testing.T) {
	const n = 400
	nodes := must(op2.NewSet(n, "mb_nodes"))
	bnd := must(op2.NewSet(n/20, "mb_bnd"))
	tab := make([]int32, n/20)
	for i := range tab {
		tab[i] = int32(20 * i)
	}
	b2n := must(op2.NewMap(bnd, nodes, 1, tab, "mb_b2n"))
	readFew := op2.NewKernel("void mb_readfew(const double *a, double *s) { *s = *a; }", "mb_readfew")
	writeAll := op2.NewKernel("void mb_writeall(double *a, const double *b) { *a = *b + 1; }", "mb_writeall")
	viewCopy := op2.NewKernel("void mb_view(const double *v, double *b) { *b = *v; }", "mb_view")
	viewWhole := op2.NewKernel("void mb_whole(const double *c, const double *v, double *b) { *b = *c + v[0]; }", "mb_whole")
	for _, c := range []struct {
		name  string
		loops func(a, b *op2.Dat[float64], v *op2.Dat[float64], s *op2.Dat[float64]) [][]op2.Arg
	}{
		{"read at a few elements, then written at all", func(a, b, v, s *op2.Dat[float64]) [][]op2.Arg {
			return [][]op2.Arg{{a.ArgMap(op2.Read, b2n, 0), s.Arg(op2.Write)}, {a.Arg(op2.Write), b.Arg(op2.Read)}}
		}},
		{"a view of one component", func(a, b, v, s *op2.Dat[float64]) [][]op2.Arg {
			return [][]op2.Arg{{must(v.View(1)).Arg(op2.Read), b.Arg(op2.Write)}, {a.Arg(op2.Write), b.Arg(op2.Read)}}
		}},
		{"a view, then the whole Dat", func(a, b, v, s *op2.Dat[float64]) [][]op2.Arg {
			return [][]op2.Arg{{must(v.View(1)).Arg(op2.Read), v.Arg(op2.Read), b.Arg(op2.Write)}, {a.Arg(op2.Write), b.Arg(op2.Read)}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := must(op2.NewRuntime(op2.Config{Backend: "sequential", Tile: 16, Lazy: true, Timing: true, CacheDir: cacheDir}))
			a := must(op2.NewDat[float64](nodes, 1, nil, "a"))
			b := must(op2.NewDat[float64](nodes, 1, nil, "b"))
			v := must(op2.NewDat[float64](nodes, 2, nil, "v"))
			s := must(op2.NewDat[float64](bnd, 1, nil, "s"))
			args := c.loops(a, b, v, s)
			kernels := []*op2.Kernel{readFew, writeAll}
			sets := []*op2.Set{bnd, nodes}
			switch c.name {
			case "a view of one component":
				kernels[0], sets[0] = viewCopy, nodes
			case "a view, then the whole Dat":
				kernels[0], sets[0] = viewWhole, nodes
			}
			for i := range args {
				check(t, r.ParLoop(kernels[i], sets[i], args[i]...))
			}
			check(t, r.Wait())
			var bytes, moved float64
			for _, lt := range r.Timings() {
				if lt.Tuned != "tiled" {
					t.Fatalf("loop %s did not run in tiles", lt.Kernel)
				}
				bytes += lt.Bytes
				moved += lt.Moved
				if lt.Moved > lt.Bytes {
					t.Errorf("loop %s: Moved %v > Bytes %v", lt.Kernel, lt.Moved, lt.Bytes)
				}
			}
			if moved > bytes {
				t.Errorf("the chain moves %v bytes, its loops %v", moved, bytes)
			}
		})
	}
}

// tpSmallMesh is a ring of n nodes and n edges (edge e joins e and
// e+1), its data integer-valued.
func tpSmallMesh(t *testing.T, n int) (*op2.Set, *op2.Set, *op2.Map) {
	nodes := must(op2.NewSet(n, "sm_nodes"))
	edges := must(op2.NewSet(n, "sm_edges"))
	tab := make([]int32, 2*n)
	for e := range n {
		tab[2*e], tab[2*e+1] = int32(e), int32((e+1)%n)
	}
	return nodes, edges, must(op2.NewMap(edges, nodes, 2, tab, "sm_e2n"))
}

var (
	smGather  = op2.NewKernel("void sm_gather(const double **x, double *y) { *y = fmod(x[0][0] + 2 * x[1][0], 97.0); }", "sm_gather")
	smScatter = op2.NewKernel("void sm_scatter(const double *y, double **x) { x[0][0] += fmod(*y, 5.0); x[1][0] += 1; }", "sm_scatter")
	smNode    = op2.NewKernel("void sm_node(double *x, double *g) { *x = fmod(*x, 89.0); *g += *x; }", "sm_node")
)

// TestTileProbeEdgeCases: chains with a loop over an empty set or an
// empty subset, more loops than MaxRecordedLoops (the queue runs when
// full), and loops of two lazy runtimes interleaved on the same Dats (a
// tiled run takes the loops of one runtime): the results of the loops
// run at once.
func TestTileProbeEdgeCases(t *testing.T) {
	const n = 700
	nodes, edges, e2n := tpSmallMesh(t, n)
	empty := must(op2.NewSet(0, "sm_empty"))
	emptySub := must(op2.NewSubset(edges, nil))
	odd := make([]int32, 0, n/2)
	for e := 1; e < n; e += 2 {
		odd = append(odd, int32(e))
	}
	oddSub := must(op2.NewSubset(edges, odd))
	ez := must(op2.NewDat[float64](empty, 1, nil, "ez"))
	kEmpty := op2.NewKernel("void sm_empty(double *z, double *g) { *z = 1; *g += 1; }", "sm_empty")
	type data struct {
		x, y *op2.Dat[float64]
		g    *op2.Global[float64]
	}
	fresh := func() data {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i * 7 % 31)
		}
		return data{must(op2.NewDat(nodes, 1, xs, "x")), must(op2.NewDat[float64](edges, 1, nil, "y")), must(op2.NewGlobal(1, []float64{0}, "g"))}
	}
	steps := func(d data, k int) (*op2.Kernel, op2.IterationSet, []op2.Arg) {
		switch k % 5 {
		case 0:
			return smGather, edges, []op2.Arg{d.x.ArgVec(op2.Read, e2n), d.y.Arg(op2.Write)}
		case 1:
			return kEmpty, empty, []op2.Arg{ez.Arg(op2.Write), d.g.Arg(op2.Inc)}
		case 2:
			return smScatter, oddSub, []op2.Arg{d.y.Arg(op2.Read), d.x.ArgVec(op2.Inc, e2n)}
		case 3:
			return smScatter, emptySub, []op2.Arg{d.y.Arg(op2.Read), d.x.ArgVec(op2.Inc, e2n)}
		}
		return smNode, nodes, []op2.Arg{d.x.Arg(op2.RW), d.g.Arg(op2.Inc)}
	}
	result := func(d data) []float64 { return append(slices.Clone(d.x.DataRO()), d.g.Value()) }
	for _, c := range []struct {
		name  string
		loops int
		cfg   tpConfig
	}{
		{"empty sets, sequential", 10, tpConfig{backend: "sequential", tile: 32}},
		{"empty sets, openmp", 10, tpConfig{backend: "openmp", threads: 3, tile: 7, simd: "4"}},
		{"past MaxRecordedLoops", op2.MaxRecordedLoops + 7, tpConfig{backend: "sequential", tile: 64}},
	} {
		t.Run(c.name, func(t *testing.T) {
			eager := must(op2.NewRuntime(tpConfig{backend: "sequential"}.config(false)))
			lazy := must(op2.NewRuntime(c.cfg.config(true)))
			dw, dg := fresh(), fresh()
			// The eager loops first: one run at once forces the
			// recorded loops.
			for k := range c.loops {
				kk, set, args := steps(dw, k)
				check(t, eager.ParLoop(kk, set, args...))
			}
			for k := range c.loops {
				kk, set, args := steps(dg, k)
				check(t, lazy.ParLoop(kk, set, args...))
			}
			check(t, lazy.Wait())
			if got, want := result(dg), result(dw); !slices.Equal(got, want) {
				t.Errorf("x and g differ from the loops run at once:\n got %v\nwant %v", got[:8], want[:8])
			}
			if !tpCheckTimings(t, c.name, lazy.Timings(), true) {
				t.Error("no loop ran in tiles")
			}
		})
	}
	t.Run("two runtimes interleaved", func(t *testing.T) {
		eager := must(op2.NewRuntime(tpConfig{backend: "sequential"}.config(false)))
		a := must(op2.NewRuntime(tpConfig{backend: "sequential", tile: 16}.config(true)))
		b := must(op2.NewRuntime(tpConfig{backend: "openmp", threads: 2, tile: 40}.config(true)))
		dw, dg := fresh(), fresh()
		for k := range 30 {
			kk, set, args := steps(dw, k)
			check(t, eager.ParLoop(kk, set, args...))
		}
		for k := range 30 {
			r := a
			if k/3%2 == 1 {
				r = b
			}
			kk, set, args := steps(dg, k)
			check(t, r.ParLoop(kk, set, args...))
		}
		check(t, a.Wait())
		check(t, b.Wait())
		if got, want := result(dg), result(dw); !slices.Equal(got, want) {
			t.Errorf("x and g differ from the loops run at once:\n got %v\nwant %v", got[:8], want[:8])
		}
		if !tpCheckTimings(t, "runtime a", a.Timings(), true) || !tpCheckTimings(t, "runtime b", b.Timings(), true) {
			t.Error("a runtime ran no loop in tiles")
		}
	})
}

// TestTileProbeMixedKinds: C++ kernels, and a matrix assembly in the
// middle of a run of loops (matrix loops run loop by loop), between
// tiled loops: the results of the loops run at once.
func TestTileProbeMixedKinds(t *testing.T) {
	const n = 500
	nodes, edges, e2n := tpSmallMesh(t, n)
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: e2n, Col: e2n}}, "mk_sp"))
	cxx := op2.NewKernel("template <typename T> static T twice(T v) { return 2 * v; }\nextern \"C\" void mk_cxx(double *x, double *g) { *x = fmod(twice(*x) + 1, 97.0); *g += *x; }", "mk_cxx").CXX()
	asm := op2.NewKernel("void mk_asm(const double **x, double *A) { A[0] = x[0][0]; A[1] = -1; A[2] = -1; A[3] = x[1][0] + 1; }", "mk_asm")
	run := func(cfg op2.Config) ([]float64, [][]float64, bool) {
		r := must(op2.NewRuntime(cfg))
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i % 13)
		}
		x := must(op2.NewDat(nodes, 1, xs, "x"))
		y := must(op2.NewDat[float64](edges, 1, nil, "y"))
		g := must(op2.NewGlobal(1, []float64{0}, "g"))
		A := must(op2.NewMat[float64](sp, "mk_A"))
		check(t, r.ParLoop(smGather, edges, x.ArgVec(op2.Read, e2n), y.Arg(op2.Write)))
		check(t, r.ParLoop(smScatter, edges, y.Arg(op2.Read), x.ArgVec(op2.Inc, e2n)))
		check(t, r.ParLoop(cxx, nodes, x.Arg(op2.RW), g.Arg(op2.Inc)))
		check(t, r.ParLoop(asm, edges, x.ArgVec(op2.Read, e2n), A.Arg(op2.Inc, e2n, e2n)))
		check(t, r.ParLoop(smGather, edges, x.ArgVec(op2.Read, e2n), y.Arg(op2.Write)))
		check(t, r.ParLoop(smScatter, edges, y.Arg(op2.Read), x.ArgVec(op2.Inc, e2n)))
		check(t, r.Wait())
		tiled := slices.ContainsFunc(r.Timings(), func(lt op2.LoopTiming) bool { return lt.Tuned == "tiled" })
		return append(slices.Clone(x.DataRO()), g.Value()), must(A.Dense()), tiled
	}
	wx, wa, _ := run(tpConfig{backend: "sequential"}.config(false))
	for _, c := range []tpConfig{{backend: "sequential", tile: 16}, {backend: "openmp", threads: 2, tile: 50, simd: "8"}} {
		x, a, tiled := run(c.config(true))
		if !slices.Equal(x, wx) || !slices.EqualFunc(a, wa, slices.Equal) {
			t.Errorf("%s tile %d: x %v A[0] %v, want %v %v", c.backend, c.tile, x[:6], a[0][:3], wx[:6], wa[0][:3])
		}
		if !tiled {
			t.Errorf("%s: no loop ran in tiles", c.backend)
		}
	}
}

// TestTileProbeEmptyFirst: a tiled run whose first loop (which seeds the
// tiles) is over an empty set or an empty subset: the results of the
// loops run at once.
func TestTileProbeEmptyFirst(t *testing.T) {
	const n = 300
	nodes, edges, e2n := tpSmallMesh(t, n)
	empty := must(op2.NewSet(0, "sm_empty"))
	ez := must(op2.NewDat[float64](empty, 1, nil, "ez"))
	kEmpty := op2.NewKernel("void sm_empty2(double *z) { *z = 1; }", "sm_empty2")
	emptySub := must(op2.NewSubset(edges, nil))
	for _, variant := range []string{"emptyset", "emptysubset"} {
		for _, cfg := range []tpConfig{{backend: "sequential", tile: 8}, {backend: "openmp", threads: 2, tile: 8}} {
			var res [][]float64
			for _, lazy := range []bool{false, true} {
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = float64(i % 7)
				}
				x := must(op2.NewDat(nodes, 1, xs, "x"))
				y := must(op2.NewDat[float64](edges, 1, nil, "y"))
				g := must(op2.NewGlobal(1, []float64{0}, "g"))
				c := cfg
				if !lazy {
					c = tpConfig{backend: "sequential"}
				}
				r := must(op2.NewRuntime(c.config(lazy)))
				if variant == "emptyset" {
					check(t, r.ParLoop(kEmpty, empty, ez.Arg(op2.Write)))
				} else {
					check(t, r.ParLoop(smScatter, emptySub, y.Arg(op2.Read), x.ArgVec(op2.Inc, e2n)))
				}
				check(t, r.ParLoop(smGather, edges, x.ArgVec(op2.Read, e2n), y.Arg(op2.Write)))
				check(t, r.ParLoop(smScatter, edges, y.Arg(op2.Read), x.ArgVec(op2.Inc, e2n)))
				check(t, r.ParLoop(smNode, nodes, x.Arg(op2.RW), g.Arg(op2.Inc)))
				check(t, r.Wait())
				res = append(res, append(slices.Clone(x.DataRO()), g.Value()))
				if lazy && !tpCheckTimings(t, variant, r.Timings(), true) {
					t.Errorf("%s %s: no loop ran in tiles", variant, cfg.backend)
				}
			}
			if !slices.Equal(res[0], res[1]) {
				t.Errorf("%s %s: x and g %v, at once %v", variant, cfg.backend, res[1][:6], res[0][:6])
			}
		}
	}
}

// TestTileProbeMixed: loops over a mixed set (one loop per block) and
// through a mixed map, recorded among plain loops: tiled, the results of
// the loops run at once.
func TestTileProbeMixed(t *testing.T) {
	const n = 400
	nodes, edges, e2n := tpSmallMesh(t, n)
	self := must(op2.NewMap(edges, edges, 1, iota32n(n), "mx_self"))
	space := must(op2.NewMixedSet([]*op2.Set{nodes, edges}, "mx_space"))
	dofs := must(op2.NewMixedMap([]*op2.Map{e2n, self}, "mx_dofs"))
	twice := op2.NewKernel("void mx_twice(double *v, double *s) { v[0] = fmod(2 * v[0] + 1, 97.0); s[0] += v[0]; }", "mx_twice")
	count := op2.NewKernel("void mx_count(double **p1, double **p0) { *p1[0] += 1; *p1[1] += 2; *p0[0] += 3; }", "mx_count")
	run := func(cfg op2.Config) ([][]float64, float64, bool) {
		r := must(op2.NewRuntime(cfg))
		vals := make([]float64, 2*n)
		for i := range vals {
			vals[i] = float64(i % 11)
		}
		v := must(op2.NewMixedDat(space, []int{1, 1}, vals, "mx_v"))
		x := must(op2.NewDat(nodes, 1, vals[:n], "x"))
		y := must(op2.NewDat[float64](edges, 1, nil, "y"))
		sum := must(op2.NewGlobal[float64](1, nil, "sum"))
		check(t, r.ParLoop(smGather, edges, x.ArgVec(op2.Read, e2n), y.Arg(op2.Write)))
		check(t, r.ParLoop(count, edges, v.ArgVec(op2.Inc, dofs)))
		check(t, r.ParLoop(smScatter, edges, y.Arg(op2.Read), x.ArgVec(op2.Inc, e2n)))
		check(t, r.ParLoop(twice, space, v.Arg(op2.RW), sum.Arg(op2.Inc)))
		check(t, r.ParLoop(count, edges, v.ArgVec(op2.Inc, dofs)))
		check(t, r.Wait())
		tiled := slices.ContainsFunc(r.Timings(), func(lt op2.LoopTiming) bool { return lt.Tuned == "tiled" })
		return append(v.DataRO(), x.DataRO()), sum.Value(), tiled
	}
	wv, ws, _ := run(tpConfig{backend: "sequential"}.config(false))
	for _, c := range []tpConfig{{backend: "sequential", tile: 8}, {backend: "openmp", threads: 3, tile: 30, simd: "4"}} {
		v, s, tiled := run(c.config(true))
		if !slices.EqualFunc(v, wv, slices.Equal) || s != ws {
			t.Errorf("%s: v %v sum %v, at once %v %v", c.backend, v[0][:6], s, wv[0][:6], ws)
		}
		if !tiled {
			t.Errorf("%s: no loop ran in tiles", c.backend)
		}
	}
}

func iota32n(n int) []int32 {
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(i)
	}
	return v
}
