package op2_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/randkernel"
)

// The randomised MPI conformance test: a multigrid-like mesh of five sets
// (fine nodes, coarse nodes, edges, a boundary set and a set of two
// elements, fewer than the ranks), maps between them (edges to fine nodes,
// fine to coarse nodes and back, boundary to fine nodes, the tiny set to
// coarse nodes, and two maps composed of those with NewComposedMap before
// Partition), random sequences of loops over every access mode and
// argument kind (direct, through one map column, through every column,
// Globals, index arguments, optional arguments on and off), with host
// changes between loops (Data on the ranks owning some elements only,
// DataWO, Zero, CopyTo), run on one rank in this process and then on 2, 3
// and 4 ranks with random partitions (uniformly random owners, an empty
// rank, one rank owning almost everything) and the built-in partitioners.
// Every value is a small integer, so results are exact in any order: every
// Global after every loop, on every rank, and every Dat at the end must
// be the same bits as on one rank. Each sequence ends by assembling a
// matrix from its Dats (randomMatrix), whose gathered entries and product
// must equal one rank's too.

// rmesh is the global mesh of the randomised test.
type rmesh struct {
	sizes map[string]int
	maps  []rmap
	xy    []float64 // coordinates of the fine nodes
}

type rmap struct {
	name, from, to string
	arity          int
	table          []int32
	composed       []int // a composed map's maps (indices, outer first); nil for the others
}

var rsets = []string{"fine", "coarse", "edges", "bnd", "tiny"}

func randomMPIMesh(seed uint64) *rmesh {
	rng := rand.New(rand.NewPCG(seed, 99))
	nf := 160 + rng.IntN(160)
	m := &rmesh{sizes: map[string]int{"fine": nf, "coarse": nf / 4, "edges": 2 * nf, "bnd": 12, "tiny": 2}}
	// Fine nodes on a strip, numbered at random, so that blocks are
	// scattered.
	perm := rng.Perm(nf)
	m.xy = make([]float64, 2*nf)
	for i, p := range perm {
		m.xy[2*p], m.xy[2*p+1] = float64(i%16), float64(i/16)
	}
	near := func(i int) int32 { return int32(perm[min(max(i+rng.IntN(7)-3, 0), nf-1)]) }
	add := func(name, from, to string, arity int, entry func(e, j int) int32) {
		mp := rmap{name: name, from: from, to: to, arity: arity}
		for e := range m.sizes[from] {
			for j := range arity {
				mp.table = append(mp.table, entry(e, j))
			}
		}
		m.maps = append(m.maps, mp)
	}
	add("e2f", "edges", "fine", 2, func(e, j int) int32 { return near(e / 2) })
	// Multigrid: each fine node restricts to the coarse node of its
	// quarter of the strip; each coarse node prolongs to four fine ones.
	inv := make([]int, nf)
	for i, p := range perm {
		inv[p] = i
	}
	nc := m.sizes["coarse"]
	add("f2c", "fine", "coarse", 1, func(e, j int) int32 { return int32(min(inv[e]/4, nc-1)) })
	add("c2f", "coarse", "fine", 4, func(e, j int) int32 { return near(4*e + j) })
	add("b2f", "bnd", "fine", 1, func(e, j int) int32 { return int32(rng.IntN(nf)) })
	add("t2c", "tiny", "coarse", 2, func(e, j int) int32 { return int32(rng.IntN(nc)) })
	// Composed maps (NewComposedMap before Partition): edges to coarse
	// nodes through the fine ones, and coarse to coarse through the
	// four fine nodes each prolongs to.
	compose := func(name string, outer, inner int) {
		o, in := m.maps[outer], m.maps[inner]
		mp := rmap{name: name, from: in.from, to: o.to, arity: in.arity * o.arity, composed: []int{outer, inner}}
		for _, t := range in.table {
			mp.table = append(mp.table, o.table[int(t)*o.arity:(int(t)+1)*o.arity]...)
		}
		m.maps = append(m.maps, mp)
	}
	compose("e2c", 1, 0)
	compose("c2c", 1, 2)
	return m
}

// The data of every set: a float64 of dim 1 and 2 and an int32 of dim 1.
type rdat struct {
	name string
	typ  string // "double" or "int"
	dim  int
}

var rdats = []rdat{{"a", "double", 1}, {"b", "double", 2}, {"i", "int", 1}}

// Globals every loop may use.
var rglobals = []rdat{{"gs", "double", 1}, {"gi", "int", 2}}

// rarg is one argument of a random loop.
type rarg struct {
	Kind   string // "direct", "indirect", "vector", "global", "idx", "mapidx"
	Dat    int    // index into rdats (or rglobals)
	Map    int    // index into the mesh's maps
	Col    int
	Access string
	Opt    int // 0: plain; 1: op2.Opt(true, ...); 2: op2.Opt(false, ...)
}

// rloop is one random loop, or a host operation when Host is not "".
type rloop struct {
	Set  string
	Args []rarg
	Host string // "poke", "wo", "zero", "copy"
	Hset string
	Hdat int
	Pick []int // poke: the elements (global numbers) changed
}

// randomLoops makes a sequence of n loops and host operations.
func randomLoops(m *rmesh, seed uint64, n int) []rloop {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []rloop
	for len(out) < n {
		if rng.IntN(4) == 0 {
			op := []string{"poke", "poke", "wo", "zero", "copy"}[rng.IntN(5)]
			set := rsets[rng.IntN(len(rsets))]
			l := rloop{Host: op, Hset: set, Hdat: rng.IntN(len(rdats))}
			if op == "poke" {
				l.Pick = []int{rng.IntN(m.sizes[set]), rng.IntN(m.sizes[set])}
			}
			out = append(out, l)
			continue
		}
		set := rsets[rng.IntN(len(rsets))]
		var from []int
		for k, mp := range m.maps {
			if mp.from == set {
				from = append(from, k)
			}
		}
		l := rloop{Set: set}
		used := map[string]bool{}
		for range 2 + rng.IntN(4) {
			a := rarg{}
			switch k := rng.IntN(10); {
			case k < 3:
				a.Kind = "direct"
			case k < 6 && len(from) > 0:
				a.Kind = "indirect"
			case k < 7 && len(from) > 0:
				a.Kind = "vector"
			case k < 9:
				a.Kind = "global"
			case k == 9 && len(from) > 0 && rng.IntN(2) == 0:
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
				a.Access = []string{"Read", "RW", "Inc", "Min", "Max"}[rng.IntN(5)]
			case "global":
				a.Access = []string{"Read", "Inc", "Min", "Max"}[rng.IntN(4)]
				a.Dat = rng.IntN(len(rglobals))
				if used["g"+strconv.Itoa(a.Dat)] {
					continue
				}
				used["g"+strconv.Itoa(a.Dat)] = true
			}
			if a.Kind == "direct" || a.Kind == "indirect" || a.Kind == "vector" {
				a.Dat = rng.IntN(len(rdats))
				key := target + "." + rdats[a.Dat].name
				if used[key] {
					continue
				}
				used[key] = true
			}
			if a.Kind != "idx" && a.Kind != "mapidx" && rng.IntN(5) == 0 {
				a.Opt = 1 + rng.IntN(2)
			}
			l.Args = append(l.Args, a)
			if a.Kind == "indirect" && a.Access == "Write" {
				// The value written is a function of the target's
				// number, so that every writer writes the same.
				l.Args = append(l.Args, rarg{Kind: "mapidx", Map: a.Map, Col: a.Col})
			}
		}
		if len(l.Args) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// kernelSource is the C kernel of loop l (number k) and its name: every
// value read adds to s, a small integer; every value written is a small
// integer made from s, or, through a map where several elements meet, a
// contribution that does not depend on their order (randkernel).
func kernelSource(m *rmesh, l rloop, k int) (string, string) {
	name := fmt.Sprintf("rk%d", k)
	args := make([]randkernel.Arg, len(l.Args))
	for i, a := range l.Args {
		ka := randkernel.Arg{Kind: a.Kind, Access: a.Access, Type: "int", Dim: 1, Opt: a.Opt != 0}
		switch a.Kind {
		case "direct", "indirect", "vector":
			ka.Type, ka.Dim = rdats[a.Dat].typ, rdats[a.Dat].dim
		case "global":
			ka.Type, ka.Dim = rglobals[a.Dat].typ, rglobals[a.Dat].dim
		}
		if a.Kind == "vector" {
			ka.Arity = m.maps[a.Map].arity
		}
		args[i] = ka
	}
	return randkernel.Source(name, args, ""), name
}

// rresult is what a run of the randomised test computes: every Global
// after every loop, and every Dat, gathered, at the end of each sequence.
type rresult struct {
	Globals [][]float64
	Dats    map[string][]float64
}

// runRandomMPI declares the mesh (each rank its block, or rank 0 all of
// it), partitions it, runs every sequence on backend and returns what it
// computed (the Dats on rank 0 only).
func runRandomMPI(t *testing.T, meshSeed uint64, seqSeeds []uint64, partitioner string, rankZero bool, backends []string, chained bool) map[string][]rresult {
	r, ranks := op2.Rank(), op2.Ranks()
	m := randomMPIMesh(meshSeed)
	part := func(n int) (int, int) { return block(n, r, ranks, rankZero) }
	sets := map[string]*op2.Set{}
	for _, name := range rsets {
		lo, hi := part(m.sizes[name])
		sets[name] = must(op2.NewSet(hi-lo, name))
	}
	maps := make([]*op2.Map, len(m.maps))
	for k, mp := range m.maps {
		lo, hi := part(m.sizes[mp.from])
		if mp.composed != nil {
			// Collective: each rank fetches the rows its block needs.
			maps[k] = must(op2.NewComposedMap(mp.name, maps[mp.composed[0]], maps[mp.composed[1]]))
			if got, want := maps[k].Values(), mp.table[lo*mp.arity:hi*mp.arity]; !slices.Equal(got, want) {
				t.Fatalf("rank %d: composed map %s: block %v, want %v", r, mp.name, got, want)
			}
			continue
		}
		maps[k] = must(op2.NewMap(sets[mp.from], sets[mp.to], mp.arity, mp.table[lo*mp.arity:hi*mp.arity], mp.name))
	}
	lo, hi := part(m.sizes["fine"])
	xy := must(op2.NewDat(sets["fine"], 2, m.xy[2*lo:2*hi], "xy"))
	// The owners of the fine nodes for the partitions given as owners.
	rng := rand.New(rand.NewPCG(meshSeed, uint64(ranks)))
	owners := make([]int32, m.sizes["fine"])
	for e := range owners {
		switch partitioner {
		case "random":
			owners[e] = int32(rng.IntN(ranks))
		case "empty": // the last rank owns nothing
			owners[e] = int32(rng.IntN(max(ranks-1, 1)))
		case "lopsided": // rank 0 owns almost everything
			if rng.IntN(8) == 0 {
				owners[e] = int32(1 + rng.IntN(max(ranks-1, 1)))
			}
			owners[e] = min(owners[e], int32(ranks-1))
		}
	}
	own := must(op2.NewDat(sets["fine"], 1, owners[lo:hi], "owners"))
	var p op2.Partitioner
	switch partitioner {
	case "block":
		p = op2.BlockPartitioner()
	case "rcb":
		p = op2.RCBPartitioner(xy)
	case "metis":
		p = op2.METISPartitioner(maps[0])
	case "ptscotch":
		p = op2.PTScotchPartitioner(maps[0])
	default:
		p = op2.OwnerPartitioner(own)
	}
	if _, err := op2.Partition(p); err != nil {
		t.Fatal(err)
	}
	for k, mp := range m.maps {
		if mp.composed == nil {
			continue
		}
		// The composed maps were distributed like the others.
		if got := must(maps[k].Gather()); r == 0 && !slices.Equal(got, mp.table) {
			t.Fatalf("composed map %s gathered after Partition: %v, want %v", mp.name, got, mp.table)
		}
		if _, err := op2.NewComposedMap("late", maps[mp.composed[0]], maps[mp.composed[1]]); ranks > 1 && (err == nil || !strings.Contains(err.Error(), `composed map "late" declared after Partition`)) {
			t.Fatalf("rank %d: a composed map declared after Partition: %v", r, err)
		}
	}
	decl := map[string][]int32{}
	for name, s := range sets {
		decl[name] = s.DeclaredNumbers()
	}
	out := map[string][]rresult{}
	for _, backend := range backends {
		check(t, op2.Use(backend))
		for _, seed := range seqSeeds {
			out[backend] = append(out[backend], runRandomSequence(t, m, sets, maps, decl, seed, chained))
		}
	}
	return out
}

// runRandomSequence runs one sequence on fresh data. When chained is set,
// each run of loops between host operations is one Chain, and the
// Globals are read at its end only (the entries of its other loops are
// nil).
func runRandomSequence(t *testing.T, m *rmesh, sets map[string]*op2.Set, opmaps []*op2.Map, decl map[string][]int32, seed uint64, chained bool) rresult {
	type dats struct {
		f map[string]*op2.Dat[float64]
		i map[string]*op2.Dat[int32]
	}
	d := dats{f: map[string]*op2.Dat[float64]{}, i: map[string]*op2.Dat[int32]{}}
	key := func(set string, k int) string { return set + "." + rdats[k].name }
	for _, name := range rsets {
		g := decl[name]
		for k, rd := range rdats {
			if rd.typ == "int" {
				v := make([]int32, len(g)*rd.dim)
				for e, n := range g {
					v[e] = (n*7 + int32(seed)) % 23
				}
				d.i[key(name, k)] = must(op2.NewDat(sets[name], rd.dim, v, key(name, k)))
				continue
			}
			v := make([]float64, len(g)*rd.dim)
			for e, n := range g {
				for c := range rd.dim {
					v[e*rd.dim+c] = float64((int(n)*(3+c) + int(seed)) % 19)
				}
			}
			d.f[key(name, k)] = must(op2.NewDat(sets[name], rd.dim, v, key(name, k)))
		}
	}
	gs := must(op2.NewGlobal(1, []float64{0}, "gs"))
	gi := must(op2.NewGlobal(2, []int32{0, 0}, "gi"))
	var res rresult
	globals := func() []float64 {
		g := gs.DataRO()
		for _, v := range gi.DataRO() {
			g = append(g, float64(v))
		}
		return g
	}
	loops := randomLoops(m, seed, 18)
	for k := 0; k < len(loops); {
		if l := loops[k]; l.Host != "" {
			hostOperation(t, l, d.f, d.i, decl[l.Hset], key(l.Hset, l.Hdat))
			k++
			continue
		}
		if !chained {
			issueRandomLoop(t, m, sets, opmaps, d.f, d.i, gs, gi, seed, k, loops[k])
			res.Globals = append(res.Globals, globals())
			k++
			continue
		}
		end := k
		for end < len(loops) && loops[end].Host == "" {
			end++
		}
		check(t, op2.Chain(func() error {
			for j := k; j < end; j++ {
				issueRandomLoop(t, m, sets, opmaps, d.f, d.i, gs, gi, seed, j, loops[j])
				res.Globals = append(res.Globals, nil)
			}
			return nil
		}))
		res.Globals[len(res.Globals)-1] = globals()
		k = end
	}
	res.Dats = map[string][]float64{}
	randomMatrix(t, sets, opmaps, d.f, res.Dats, chained)
	// Gather is collective: every rank gathers the same Dats in the same
	// order.
	for _, k := range slices.Sorted(maps.Keys(d.f)) {
		res.Dats[k] = must(d.f[k].Gather())
	}
	for _, k := range slices.Sorted(maps.Keys(d.i)) {
		v := must(d.i[k].Gather())
		f := make([]float64, len(v))
		for i := range v {
			f[i] = float64(v[i])
		}
		res.Dats[k] = f
	}
	return res
}

// issueRandomLoop issues loop k of a random sequence (recorded in a
// Chain, or run at once).
func issueRandomLoop(t *testing.T, m *rmesh, sets map[string]*op2.Set, opmaps []*op2.Map, df map[string]*op2.Dat[float64], di map[string]*op2.Dat[int32], gs *op2.Global[float64], gi *op2.Global[int32], seed uint64, k int, l rloop) {
	t.Helper()
	key := func(set string, k int) string { return set + "." + rdats[k].name }
	src, name := kernelSource(m, l, int(seed)*1000+k)
	var args []op2.Arg
	for _, a := range l.Args {
		var arg op2.Arg
		set := l.Set
		if a.Kind == "indirect" || a.Kind == "vector" {
			set = m.maps[a.Map].to
		}
		acc := map[string]op2.Access{"Read": op2.Read, "Write": op2.Write, "RW": op2.RW, "Inc": op2.Inc, "Min": op2.Min, "Max": op2.Max}[a.Access]
		switch a.Kind {
		case "idx":
			arg = op2.ArgIdx()
		case "mapidx":
			arg = opmaps[a.Map].ArgIdx(a.Col)
		case "global":
			if a.Dat == 0 {
				arg = gs.Arg(acc)
			} else {
				arg = gi.Arg(acc)
			}
		default:
			kk := key(set, a.Dat)
			switch df, di := df[kk], di[kk]; a.Kind {
			case "direct":
				arg = pick(df, di, func(x *op2.Dat[float64]) op2.Arg { return x.Arg(acc) }, func(x *op2.Dat[int32]) op2.Arg { return x.Arg(acc) })
			case "indirect":
				arg = pick(df, di, func(x *op2.Dat[float64]) op2.Arg { return x.ArgMap(acc, opmaps[a.Map], a.Col) },
					func(x *op2.Dat[int32]) op2.Arg { return x.ArgMap(acc, opmaps[a.Map], a.Col) })
			case "vector":
				arg = pick(df, di, func(x *op2.Dat[float64]) op2.Arg { return x.ArgVec(acc, opmaps[a.Map]) },
					func(x *op2.Dat[int32]) op2.Arg { return x.ArgVec(acc, opmaps[a.Map]) })
			}
		}
		if a.Opt != 0 {
			arg = op2.Opt(a.Opt == 1, arg)
		}
		args = append(args, arg)
	}
	if err := op2.ParLoop(op2.NewKernel(src, name), sets[l.Set], args...); err != nil {
		t.Fatalf("rank %d: sequence %d loop %d:\n%s\n%v", op2.Rank(), seed, k, src, err)
	}
}

// randomMatrix assembles, from the sequence's final data, a matrix on the
// fine nodes through the edges (their map permuted) and the boundary map (element values that
// depend on the Dats, small integers: exact in any order), multiplies it
// with fine.a, and does the same on the coarse nodes through the composed
// map c2c, and records the nonzeros (rank 0: the whole matrix, as
// row, column, value triples in the declared numbering) and the product
// in out. Every rank calls it: Dense, Mult and Gather are collective.
// When chained is set, the assembly loops of the first matrix are
// recorded in a Chain.
func randomMatrix(t *testing.T, sets map[string]*op2.Set, opmaps []*op2.Map, f map[string]*op2.Dat[float64], out map[string][]float64, chained bool) {
	var e2f, b2f, c2c *op2.Map
	for _, mp := range opmaps {
		switch mp.Name() {
		case "e2f":
			e2f = mp
		case "b2f":
			b2f = mp
		case "c2c":
			c2c = mp
		}
	}
	fine := sets["fine"]
	// The edges' map with its columns swapped, made after Partition
	// from each rank's part (NewPermutedMap).
	e2f = must(op2.NewPermutedMap(e2f, []int{1, 0}, "e2f swapped"))
	sp := must(op2.NewSparsity(fine, 1, fine, 1, []op2.MapPair{{Row: e2f, Col: e2f}, {Row: b2f, Col: b2f}}, "rsp"))
	A := must(op2.NewMat[float64](sp, "rA"))
	emat := op2.NewKernel(`void emat(const double **a, double *A) {
  A[0] = 1 + a[0][0]; A[1] = -a[1][0]; A[2] = -a[0][0] - 1; A[3] = 2 + a[1][0];
}`, "emat")
	bmat := op2.NewKernel("void bmat(const double *b, double *A) { A[0] = 3 + b[1]; }", "bmat")
	assemble := func() error {
		check(t, op2.ParLoop(emat, sets["edges"], f["fine.a"].ArgVec(op2.Read, e2f), A.Arg(op2.Inc, e2f, e2f)))
		check(t, op2.ParLoop(bmat, sets["bnd"], f["fine.b"].ArgMap(op2.Read, b2f, 0), A.Arg(op2.Inc, b2f, b2f)))
		return nil
	}
	if chained { // the assembly loops recorded, and run at the chain's end
		check(t, op2.Chain(assemble))
	} else {
		check(t, assemble())
	}
	y := must(op2.NewDat[float64](fine, 1, nil, "ry"))
	// The product reads a clone of fine.a through the columns, so the
	// clone's halo must be right.
	check(t, A.Mult(must(f["fine.a"].Clone("ra")), y))
	out["matrix y"] = must(y.Gather())
	var nz []float64
	for i, row := range must(A.Dense()) {
		for j, v := range row {
			if v != 0 {
				nz = append(nz, float64(i), float64(j), v)
			}
		}
	}
	if op2.Rank() == 0 {
		out["matrix"] = nz
	}
	// A matrix on the coarse nodes through the composed map c2c, whose
	// rows repeat nodes (entries of one element add up).
	spc := must(op2.NewSparsity(sets["coarse"], 1, sets["coarse"], 1, []op2.MapPair{{Row: c2c, Col: c2c}}, "rspc"))
	C := must(op2.NewMat[float64](spc, "rC"))
	cmat := op2.NewKernel(`void cmat(const double **a, double *A) {
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) A[i * 4 + j] = (i == j ? 4 : -1) + a[i][0] - 2 * a[j][0];
}`, "cmat")
	check(t, op2.ParLoop(cmat, sets["coarse"], f["coarse.a"].ArgVec(op2.Read, c2c), C.Arg(op2.Inc, c2c, c2c)))
	yc := must(op2.NewDat[float64](sets["coarse"], 1, nil, "ryc"))
	check(t, C.Mult(must(f["coarse.a"].Clone("rca")), yc))
	out["composed matrix y"] = must(yc.Gather())
	nz = nil
	for i, row := range must(C.Dense()) {
		for j, v := range row {
			if v != 0 {
				nz = append(nz, float64(i), float64(j), v)
			}
		}
	}
	if op2.Rank() == 0 {
		out["composed matrix"] = nz
	}
}

func pick(df *op2.Dat[float64], di *op2.Dat[int32], f func(*op2.Dat[float64]) op2.Arg, i func(*op2.Dat[int32]) op2.Arg) op2.Arg {
	if df != nil {
		return f(df)
	}
	return i(di)
}

// hostOperation changes a Dat on the host: "poke" sets the values of two
// elements (a rank owning neither does not touch the Dat), "wo" rewrites
// every value with DataWO, "zero" zeroes it, "copy" copies another Dat of
// the set over it. decl holds the global numbers of the rank's elements.
func hostOperation(t *testing.T, l rloop, f map[string]*op2.Dat[float64], i map[string]*op2.Dat[int32], decl []int32, key string) {
	df, di := f[key], i[key]
	dim := rdats[l.Hdat].dim
	switch l.Host {
	case "poke":
		for e, g := range decl {
			if !slices.Contains(l.Pick, int(g)) {
				continue
			}
			for c := range dim {
				if df != nil {
					df.Data()[e*dim+c] = float64(5 + c + int(g)%3)
				} else {
					di.Data()[e*dim+c] = int32(5 + c + int(g)%3)
				}
			}
		}
	case "wo":
		if df != nil {
			v := df.DataWO()
			for e, g := range decl {
				for c := range dim {
					v[e*dim+c] = float64((int(g) + c) % 11)
				}
			}
		} else {
			v := di.DataWO()
			for e, g := range decl {
				v[e] = (g + 1) % 11
			}
		}
	case "zero":
		if df != nil {
			check(t, df.Zero())
		} else {
			check(t, di.Zero())
		}
	case "copy":
		// Copy the other float Dat of the same dim (a to a, b to b:
		// itself) or, for an int Dat, from itself.
		if df != nil {
			tmp := must(op2.NewDat[float64](df.Set(), dim, nil, "tmp"))
			check(t, df.CopyTo(tmp))
			check(t, op2.ParLoop(op2.NewKernel(fmt.Sprintf("void rdouble%d(double *x) { for (int c = 0; c < %d; c++) x[c] = fmod(2 * x[c], 97.0); }", dim, dim), fmt.Sprintf("rdouble%d", dim)),
				tmp.Set(), tmp.Arg(op2.RW)))
			check(t, tmp.CopyTo(df))
		} else {
			tmp := must(op2.NewDat[int32](di.Set(), dim, nil, "tmp"))
			check(t, di.CopyTo(tmp))
			check(t, tmp.CopyTo(di))
		}
	}
}

// mpiRandomRun is one job of the randomised test.
type mpiRandomRun struct {
	ranks       int
	meshSeed    uint64
	partitioner string // block, rcb, metis, or owners: random, empty, lopsided
	rankZero    bool
}

var mpiRandomSequences = []uint64{1, 2, 3}

func TestMPIRandomAgreesWithOneRank(t *testing.T) {
	runs := []mpiRandomRun{{2, 1, "random", false}, {3, 2, "empty", true}, {4, 1, "lopsided", false}, {3, 2, "ptscotch", true}}
	if !testing.Short() {
		runs = append(runs, mpiRandomRun{4, 2, "random", true}, mpiRandomRun{3, 1, "metis", false},
			mpiRandomRun{2, 2, "empty", false}, mpiRandomRun{4, 2, "rcb", false}, mpiRandomRun{3, 1, "block", true})
	}
	randomAgreesWithOneRank(t, runs, false, nil)
}

// TestMPIRandomOnDeviceAgreesWithOneRank runs random sequences on opencl
// under MPI: Dats current on the device, on the host or on both (host
// writes between loops) meet in one exchange, whose rows cross between
// host and device through the device's message memory, with the same
// bits as one rank.
func TestMPIRandomOnDeviceAgreesWithOneRank(t *testing.T) {
	if !mpitest.InRanks() {
		needBackend(t, "opencl")
	}
	runs := []mpiRandomRun{{3, 1, "random", false}, {2, 2, "metis", true}}
	randomAgreesWithOneRank(t, runs, false, []string{"opencl"})
}

// TestMPIRandomChainsAgreeWithOneRank runs the randomised sequences with
// each run of loops between host operations recorded in a Chain, on 2 and
// 3 ranks: the Globals at each chain's end and the Dats at the end are
// the same bits as one rank's running every loop at once.
func TestMPIRandomChainsAgreeWithOneRank(t *testing.T) {
	runs := []mpiRandomRun{{2, 1, "random", false}, {3, 2, "empty", true}}
	if !testing.Short() {
		runs = append(runs, mpiRandomRun{3, 1, "metis", false}, mpiRandomRun{2, 2, "lopsided", true})
	}
	randomAgreesWithOneRank(t, runs, true, nil)
}

// TestMPIRandomTiledChainsAgreeWithOneRank is
// TestMPIRandomChainsAgreeWithOneRank with the chains run in sparse
// tiles of 4 elements (OP2_TILE), their boundaries loop by loop around
// the exchanges: the same bits as one rank's loops run at once (the
// kernels' values are small integers, exact in any order).
func TestMPIRandomTiledChainsAgreeWithOneRank(t *testing.T) {
	runs := []mpiRandomRun{{2, 1, "random", false}, {3, 2, "empty", true}}
	randomAgreesWithOneRank(t, runs, true, nil, "OP2_TILE=4")
}

// randomAgreesWithOneRank runs the randomised test's runs (in the ranks:
// its part of one), the sequences chained or not, on backends (nil: the
// host's, sequential only with -short) against one rank's sequences run
// loop by loop. env is added to the ranks' environment; with OP2_TILE
// set, each rank checks that chains ran in tiles.
func randomAgreesWithOneRank(t *testing.T, runs []mpiRandomRun, chained bool, backends []string, env ...string) {
	if backends == nil {
		backends = []string{"sequential"}
		if !testing.Short() {
			backends = hostBackends
		}
	}
	if mpitest.InRanks() && os.Getenv("OP2_MPI_BACKENDS") != "" {
		backends = strings.Split(os.Getenv("OP2_MPI_BACKENDS"), ",")
	}
	if mpitest.InRanks() {
		var want map[string][]rresult
		b, err := os.ReadFile(os.Getenv("OP2_MPI_EXPECT"))
		check(t, err)
		check(t, json.Unmarshal(b, &want))
		seed, _ := strconv.ParseUint(os.Getenv("OP2_MPI_MESH_SEED"), 10, 64)
		got := runRandomMPI(t, seed, mpiRandomSequences, os.Getenv("OP2_MPI_PARTITIONER"), os.Getenv("OP2_MPI_RANK_ZERO") != "", backends, chained)
		for _, backend := range backends {
			for s, g := range got[backend] {
				w := want["sequential"][s]
				for k := range w.Globals {
					if g.Globals[k] != nil && !slices.Equal(g.Globals[k], w.Globals[k]) {
						t.Fatalf("rank %d of %d, %s, sequence %d: Globals after loop %d are %v, want %v (one rank)", op2.Rank(), op2.Ranks(), backend, mpiRandomSequences[s], k, g.Globals[k], w.Globals[k])
					}
				}
				if op2.Rank() != 0 {
					continue
				}
				for name, v := range w.Dats {
					if !slices.Equal(g.Dats[name], v) {
						t.Errorf("%d ranks, %s, sequence %d: dat %s differs from one rank:\n got %v\nwant %v", op2.Ranks(), backend, mpiRandomSequences[s], name, g.Dats[name], v)
					}
				}
			}
		}
		if os.Getenv("OP2_TILE") != "" && op2.Ranks() > 1 && op2.TiledDistributedRuns() == 0 {
			t.Errorf("rank %d of %d: no chain ran in tiles", op2.Rank(), op2.Ranks())
		}
		check(t, op2.Finalize())
		return
	}
	expect := map[uint64]string{}
	cache := os.Getenv("OP2_CACHE_DIR") // the ranks share this process's compiled loops
	for _, r := range runs {
		if _, ok := expect[r.meshSeed]; !ok {
			want := runRandomMPI(t, r.meshSeed, mpiRandomSequences, "block", true, []string{"sequential"}, false)
			path := filepath.Join(t.TempDir(), fmt.Sprintf("want-%d.json", r.meshSeed))
			check(t, os.WriteFile(path, must(json.Marshal(want)), 0o600))
			expect[r.meshSeed] = path
		}
		zero := ""
		if r.rankZero {
			zero = "1"
		}
		// Chains fuse every run of loops that fuses (and plan their
		// exchanges for the fused loops).
		fusion := "OP2_FUSION=off"
		if chained {
			fusion = "OP2_FUSION=on"
		}
		t.Run(fmt.Sprintf("%d-ranks-mesh%d-%s-rank0decl%v", r.ranks, r.meshSeed, r.partitioner, r.rankZero), func(t *testing.T) {
			mpiRun(t, r.ranks, 4*time.Minute, append([]string{"OP2_MPI_EXPECT=" + expect[r.meshSeed], "OP2_MPI_MESH_SEED=" + strconv.FormatUint(r.meshSeed, 10),
				"OP2_MPI_PARTITIONER=" + r.partitioner, "OP2_MPI_RANK_ZERO=" + zero, "OP2_TEST_CACHE_DIR=" + cache, "OP2_MPI_TIMEOUT=120s", fusion,
				"OP2_MPI_BACKENDS=" + strings.Join(backends, ",")}, env...)...)
		})
	}
}
