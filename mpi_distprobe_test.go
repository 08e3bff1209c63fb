package op2_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/dist/disttest"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/randkernel"
	"github.com/goop2/op2/internal/testreq"
)

// The distribution probe: random meshes that are no grid (random sets,
// empty ones and ones with fewer elements than ranks; maps of arity 1 to
// 6 between random sets, with repeated, constant and widely spread
// targets; Dats of every C type, double, float, int and long long, of
// dims 1 to 7, some declared without values), declared in random blocks,
// on rank 0 or on the last rank, numbered from 0 or beyond 2³¹
// (NewMap64), partitioned by every partitioner on 1 to 4 ranks, then
// random loops through the maps with every access, Globals of every type
// reduced: every Global after every loop, on every rank, every Dat
// gathered and every map gathered must be the same bits as one
// process's (the values are small integers: exact in any order).
// Halfway, each run restores a checkpoint written by one process or on
// another number of ranks.

// dpTypes are the C types of the probe's Dats and Globals.
var dpTypes = []string{"double", "float", "int", "long long"}

// dpSizes are their sizes in bytes.
var dpSizes = []int{8, 4, 4, 8}

// dpMesh is a probe mesh in global numbering, with its loops.
type dpMesh struct {
	Sizes []int
	Maps  []dpMap
	Dats  []dpDat // on the sets
	Glob  []dpDat // Globals (Set unused)
	Loops []dpLoop
	// CoordSet's elements have coordinates (dim CoordDim) for RCB;
	// PartMap is the map METIS and PT-Scotch partition by (-1: none).
	CoordSet, CoordDim, PartMap int
	// Idx is set when the loops may have index arguments.
	Idx bool
}

type dpMap struct {
	From, To, Arity int
	Table           []int32
}

// dpDat is a Dat or Global: its set, type (index into dpTypes) and dim.
// A Dat declared Zero has no values (zeros): dpZeroUntouched, or
// dpZeroTouched when rank 0 reads its block (Data) before Partition, so
// that the ranks disagree on whether it is in use.
type dpDat struct {
	Set, Type, Dim int
	Zero           int
}

// The ways a probe Dat is declared.
const (
	dpWithValues = iota
	dpZeroUntouched
	dpZeroTouched
)

// dpArg is one argument of a probe loop: Kind as randkernel's.
type dpArg struct {
	Kind, Access  string
	Dat, Map, Col int
}

type dpLoop struct {
	Set  int
	Args []dpArg
}

// dpCase is one distributed run of the probe.
type dpCase struct {
	Seed  uint64
	Ranks int
	// Method is block, rcb, metis, ptscotch, or owners given: random
	// (anywhere), empty (the last rank owns nothing) or one (rank 0
	// owns everything).
	Method string
	// Decl is where the mesh is declared: blocks (random cuts, some
	// empty), rank0 or last.
	Decl string
	// Base numbers the mesh from beyond 2³¹ (maps by NewMap64).
	Base bool
}

func (c dpCase) String() string {
	return fmt.Sprintf("seed%d-%dranks-%s-%s-base%v", c.Seed, c.Ranks, c.Method, c.Decl, c.Base)
}

// dpBase is the first global number of the meshes numbered beyond 2³¹.
const dpBase = 1<<31 + 4321

// randomDPMesh makes the probe mesh of seed; without idx, its loops use
// no index arguments (refused on sets numbered beyond int32).
func randomDPMesh(seed uint64, idx bool) *dpMesh {
	rng := rand.New(rand.NewPCG(seed, 31))
	m := &dpMesh{PartMap: -1, Idx: idx}
	for range 2 + rng.IntN(3) {
		n := 0
		switch rng.IntN(6) {
		case 0:
		case 1:
			n = 1 + rng.IntN(3) // fewer elements than ranks
		case 2, 3:
			n = 5 + rng.IntN(40)
		default:
			n = 60 + rng.IntN(140)
		}
		m.Sizes = append(m.Sizes, n)
	}
	for range 1 + rng.IntN(5) {
		from := rng.IntN(len(m.Sizes))
		var to []int
		for s, n := range m.Sizes {
			if n > 0 || m.Sizes[from] == 0 {
				to = append(to, s)
			}
		}
		if len(to) == 0 {
			continue
		}
		mp := dpMap{From: from, To: to[rng.IntN(len(to))], Arity: 1 + rng.IntN(6)}
		nf, nt := m.Sizes[mp.From], m.Sizes[mp.To]
		mp.Table = disttest.RandomTable(rng, nf, nt, mp.Arity)
		m.Maps = append(m.Maps, mp)
	}
	for s := range m.Sizes {
		for range 1 + rng.IntN(3) {
			d := dpDat{Set: s, Type: rng.IntN(len(dpTypes)), Dim: 1 + rng.IntN(7)}
			if rng.IntN(4) == 0 {
				d.Zero = 1 + rng.IntN(2)
			}
			m.Dats = append(m.Dats, d)
		}
	}
	for ty := range dpTypes {
		m.Glob = append(m.Glob, dpDat{Type: ty, Dim: 1 + rng.IntN(3)})
	}
	m.CoordSet, m.CoordDim = rng.IntN(len(m.Sizes)), 1+rng.IntN(3)
	if len(m.Maps) > 0 {
		m.PartMap = rng.IntN(len(m.Maps))
	}
	for len(m.Loops) < 10 {
		l := dpLoop{Set: rng.IntN(len(m.Sizes))}
		var from []int
		for k, mp := range m.Maps {
			if mp.From == l.Set {
				from = append(from, k)
			}
		}
		used := map[string]bool{}
		for range 1 + rng.IntN(4) {
			a := dpArg{Kind: "direct"}
			switch k := rng.IntN(10); {
			case k < 4 && len(from) > 0:
				a.Kind = "indirect"
			case k < 6 && len(from) > 0:
				a.Kind = "vector"
			case k < 8:
				a.Kind = "global"
			case k == 8 && idx:
				a.Kind = "idx"
			}
			if len(from) > 0 {
				a.Map = from[rng.IntN(len(from))]
				a.Col = rng.IntN(m.Maps[a.Map].Arity)
			}
			set := l.Set
			if a.Kind == "indirect" || a.Kind == "vector" {
				set = m.Maps[a.Map].To
			}
			switch a.Kind {
			case "direct":
				a.Access = []string{"Read", "Write", "RW", "Inc"}[rng.IntN(4)]
			case "indirect":
				a.Access = []string{"Read", "Inc", "RW", "Min", "Max", "Write"}[rng.IntN(6)]
				if a.Access == "Write" && !idx {
					a.Access = "Inc"
				}
			case "vector":
				a.Access = []string{"Read", "Inc", "RW", "Min", "Max"}[rng.IntN(5)]
			case "global":
				a.Access = []string{"Read", "Inc", "Min", "Max"}[rng.IntN(4)]
				a.Dat = rng.IntN(len(m.Glob))
				if used[fmt.Sprint("g", a.Dat)] {
					continue
				}
				used[fmt.Sprint("g", a.Dat)] = true
			}
			if a.Kind == "direct" || a.Kind == "indirect" || a.Kind == "vector" {
				var on []int
				for k, d := range m.Dats {
					if d.Set == set && !used[fmt.Sprint("d", k)] {
						on = append(on, k)
					}
				}
				if len(on) == 0 {
					continue
				}
				a.Dat = on[rng.IntN(len(on))]
				used[fmt.Sprint("d", a.Dat)] = true
				d := m.Dats[a.Dat]
				if a.Kind == "vector" && (a.Access == "Min" || a.Access == "Max") &&
					m.Maps[a.Map].Arity*d.Dim*dpSizes[d.Type] > op2.MaxMinMaxValues {
					a.Access = "Inc" // beyond what a kernel's private accumulator holds
				}
			}
			l.Args = append(l.Args, a)
			if a.Kind == "indirect" && a.Access == "Write" {
				// Every writer writes the same: a function of the
				// target's number.
				l.Args = append(l.Args, dpArg{Kind: "mapidx", Map: a.Map, Col: a.Col})
			}
		}
		if len(l.Args) > 0 {
			m.Loops = append(m.Loops, l)
		}
	}
	return m
}

// dpKernel is loop k's C kernel and its name.
func dpKernel(m *dpMesh, seed uint64, k int) (string, string) {
	l := m.Loops[k]
	name := fmt.Sprintf("dp%d_%d", seed, k)
	if !m.Idx {
		name += "_noidx"
	}
	args := make([]randkernel.Arg, len(l.Args))
	for i, a := range l.Args {
		ka := randkernel.Arg{Kind: a.Kind, Access: a.Access, Type: "int", Dim: 1}
		switch a.Kind {
		case "direct", "indirect", "vector":
			ka.Type, ka.Dim = dpTypes[m.Dats[a.Dat].Type], m.Dats[a.Dat].Dim
		case "global":
			ka.Type, ka.Dim = dpTypes[m.Glob[a.Dat].Type], m.Glob[a.Dat].Dim
		}
		if a.Kind == "vector" {
			ka.Arity = m.Maps[a.Map].Arity
		}
		args[i] = ka
	}
	return randkernel.Source(name, args, ""), name
}

// dpHandle is a Dat or Global of any of the probe's types.
type dpHandle interface {
	// arg is the loop argument: direct when m is nil, else through
	// column col of m, or every column when vec is set.
	arg(acc op2.Access, m *op2.Map, col int, vec bool) op2.Arg
	// values are the Dat's values gathered (on rank 0) or the Global's.
	values() ([]float64, error)
}

type dpDatOf[T op2.Scalar] struct{ d *op2.Dat[T] }

func (h dpDatOf[T]) arg(acc op2.Access, m *op2.Map, col int, vec bool) op2.Arg {
	switch {
	case m == nil:
		return h.d.Arg(acc)
	case vec:
		return h.d.ArgVec(acc, m)
	}
	return h.d.ArgMap(acc, m, col)
}

func (h dpDatOf[T]) values() ([]float64, error) {
	v, err := h.d.Gather()
	return floats(v), err
}

type dpGlobalOf[T op2.Scalar] struct{ g *op2.Global[T] }

func (h dpGlobalOf[T]) arg(acc op2.Access, _ *op2.Map, _ int, _ bool) op2.Arg { return h.g.Arg(acc) }
func (h dpGlobalOf[T]) values() ([]float64, error)                            { return floats(h.g.DataRO()), nil }

func floats[T op2.Scalar](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// newDPDat declares Dat d, k-th of its mesh, on set whose elements have
// the global numbers glob (from 0): value c of element g is a small
// integer made from g, c and k, unless d is declared Zero.
func newDPDat(set *op2.Set, d dpDat, k int, glob []int64, name string) (dpHandle, error) {
	switch dpTypes[d.Type] {
	case "double":
		return newDPDatOf[float64](set, d, k, glob, name)
	case "float":
		return newDPDatOf[float32](set, d, k, glob, name)
	case "int":
		return newDPDatOf[int32](set, d, k, glob, name)
	}
	return newDPDatOf[int64](set, d, k, glob, name)
}

func newDPDatOf[T op2.Scalar](set *op2.Set, d dpDat, k int, glob []int64, name string) (dpHandle, error) {
	if d.Zero != dpWithValues {
		x, err := op2.NewDat[T](set, d.Dim, nil, name)
		if err == nil && d.Zero == dpZeroTouched && op2.Rank() == 0 {
			_ = x.Data()
		}
		return dpDatOf[T]{x}, err
	}
	var v []T // nil for an empty block, as a program reading nothing has it
	for _, g := range glob {
		for c := range d.Dim {
			v = append(v, T((int(g)*(3+c)+k)%19)-5)
		}
	}
	x, err := op2.NewDat(set, d.Dim, v, name)
	return dpDatOf[T]{x}, err
}

func newDPGlobal(ty, dim int, name string) (dpHandle, error) {
	switch dpTypes[ty] {
	case "double":
		return newDPGlobalOf[float64](dim, name)
	case "float":
		return newDPGlobalOf[float32](dim, name)
	case "int":
		return newDPGlobalOf[int32](dim, name)
	}
	return newDPGlobalOf[int64](dim, name)
}

func newDPGlobalOf[T op2.Scalar](dim int, name string) (dpHandle, error) {
	v := make([]T, dim)
	for c := range v {
		v[c] = T(c + 1)
	}
	g, err := op2.NewGlobal(dim, v, name)
	return dpGlobalOf[T]{g}, err
}

// dpResult is what a probe run computes: every Global after every loop,
// and (rank 0) every Dat and map gathered at the end.
type dpResult struct {
	Globals [][]float64
	Dats    [][]float64
	Maps    [][]int64
}

// dpCuts are the starts of each rank's block of a set of n elements
// (len ranks+1) where c declares it.
func dpCuts(c dpCase, s, n, ranks int) []int {
	cuts := make([]int, ranks+1)
	switch c.Decl {
	case "rank0":
		for r := 1; r <= ranks; r++ {
			cuts[r] = n
		}
	case "last":
		cuts[ranks] = n
	default:
		rng := rand.New(rand.NewPCG(c.Seed, uint64(100*ranks+s)))
		for r := 1; r < ranks; r++ {
			switch rng.IntN(4) {
			case 0: // empty blocks first
			case 1:
				cuts[r] = n
			default:
				cuts[r] = rng.IntN(n + 1)
			}
		}
		cuts[ranks] = n
		slices.Sort(cuts)
	}
	return cuts
}

// runDistProbe declares case c's mesh (each rank its block), partitions
// it, runs its loops and returns what they computed. Halfway it writes a
// checkpoint to ckpt and restores restore, when they are not "". idx
// allows index arguments in the loops.
func runDistProbe(t *testing.T, c dpCase, idx bool, ckpt, restore string) dpResult {
	r, ranks := op2.Rank(), op2.Ranks()
	m := randomDPMesh(c.Seed, idx)
	base := int64(0)
	if c.Base {
		base = dpBase
	}
	// Names unique to the mesh: checkpoints match Dats and Globals by
	// name, and those of another mesh one process ran before may still
	// be alive (see TestDistProbe).
	pre := fmt.Sprintf("dp%d%v_", c.Seed, idx)
	cuts := make([][]int, len(m.Sizes))
	sets := make([]*op2.Set, len(m.Sizes))
	glob := make([][]int64, len(m.Sizes)) // the block's global numbers, from 0
	for s, n := range m.Sizes {
		cuts[s] = dpCuts(c, s, n, ranks)
		lo, hi := cuts[s][r], cuts[s][r+1]
		sets[s] = must(op2.NewSet(hi-lo, fmt.Sprintf("%ss%d", pre, s)))
		for g := lo; g < hi; g++ {
			glob[s] = append(glob[s], int64(g))
		}
	}
	maps := make([]*op2.Map, len(m.Maps))
	for k, mp := range m.Maps {
		lo, hi := cuts[mp.From][r], cuts[mp.From][r+1]
		block := mp.Table[lo*mp.Arity : hi*mp.Arity]
		name := fmt.Sprintf("%sm%d", pre, k)
		if c.Base {
			v := make([]int64, len(block))
			for i, x := range block {
				v[i] = int64(x) + base
			}
			maps[k] = must(op2.NewMap64(sets[mp.From], sets[mp.To], mp.Arity, v, name))
			continue
		}
		maps[k] = must(op2.NewMap(sets[mp.From], sets[mp.To], mp.Arity, block, name))
	}
	dats := make([]dpHandle, len(m.Dats))
	for k, d := range m.Dats {
		dats[k] = must(newDPDat(sets[d.Set], d, k, glob[d.Set], fmt.Sprintf("%sd%d", pre, k)))
	}
	globals := make([]dpHandle, len(m.Glob))
	for k, g := range m.Glob {
		globals[k] = must(newDPGlobal(g.Type, g.Dim, fmt.Sprintf("%sg%d", pre, k)))
	}
	// Coordinates with ties, and owners, of the block's elements.
	cs := m.CoordSet
	xy := make([]float64, 0, len(glob[cs])*m.CoordDim)
	for _, g := range glob[cs] {
		for d := range m.CoordDim {
			xy = append(xy, float64((int(g)*(7+d))%13))
		}
	}
	coords := must(op2.NewDat(sets[cs], m.CoordDim, xy, pre+"xy"))
	orng := rand.New(rand.NewPCG(c.Seed, uint64(ranks)))
	owners := make([]int32, m.Sizes[cs])
	for e := range owners {
		switch c.Method {
		case "random":
			owners[e] = int32(orng.IntN(ranks))
		case "empty":
			owners[e] = int32(orng.IntN(max(ranks-1, 1)))
		}
	}
	own := must(op2.NewDat(sets[cs], 1, owners[cuts[cs][r]:cuts[cs][r+1]], pre+"owners"))
	var p op2.Partitioner
	switch method := c.Method; {
	case method == "block":
		p = op2.BlockPartitioner()
	case method == "rcb" || (method == "metis" || method == "ptscotch") && m.PartMap < 0:
		p = op2.RCBPartitioner(coords)
	case method == "metis":
		p = op2.METISPartitioner(maps[m.PartMap])
	case method == "ptscotch":
		p = op2.PTScotchPartitioner(maps[m.PartMap])
	default:
		p = op2.OwnerPartitioner(own)
	}
	if _, err := op2.Partition(p); err != nil {
		t.Fatalf("rank %d: %v", r, err)
	}
	for s, set := range sets {
		if set.GlobalSize() != m.Sizes[s] {
			t.Fatalf("rank %d: set %s has global size %d, want %d", r, set.Name(), set.GlobalSize(), m.Sizes[s])
		}
	}
	var res dpResult
	for k := range m.Loops {
		if k == len(m.Loops)/2 {
			if ckpt != "" {
				check(t, op2.Checkpoint(ckpt, nil))
			}
			if restore != "" {
				if _, err := op2.Restore(restore); err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
		}
		issueDPLoop(t, m, c.Seed, k, sets, maps, dats, globals)
		var g []float64
		for _, h := range globals {
			g = append(g, must(h.values())...)
		}
		res.Globals = append(res.Globals, g)
	}
	// Gather is collective: every rank gathers every Dat and map.
	for _, h := range dats {
		res.Dats = append(res.Dats, must(h.values()))
	}
	for _, mp := range maps {
		v := must(mp.Gather64())
		for i := range v {
			v[i] -= base
		}
		res.Maps = append(res.Maps, v)
	}
	return res
}

// issueDPLoop runs loop k of mesh m.
func issueDPLoop(t *testing.T, m *dpMesh, seed uint64, k int, sets []*op2.Set, maps []*op2.Map, dats, globals []dpHandle) {
	t.Helper()
	src, name := dpKernel(m, seed, k)
	l := m.Loops[k]
	var args []op2.Arg
	for _, a := range l.Args {
		acc := map[string]op2.Access{"Read": op2.Read, "Write": op2.Write, "RW": op2.RW, "Inc": op2.Inc, "Min": op2.Min, "Max": op2.Max}[a.Access]
		switch a.Kind {
		case "idx":
			args = append(args, op2.ArgIdx())
		case "mapidx":
			args = append(args, maps[a.Map].ArgIdx(a.Col))
		case "global":
			args = append(args, globals[a.Dat].arg(acc, nil, 0, false))
		case "direct":
			args = append(args, dats[a.Dat].arg(acc, nil, 0, false))
		default:
			args = append(args, dats[a.Dat].arg(acc, maps[a.Map], a.Col, a.Kind == "vector"))
		}
	}
	if err := op2.ParLoop(op2.NewKernel(src, name), sets[l.Set], args...); err != nil {
		t.Fatalf("rank %d: loop %d:\n%s\n%v", op2.Rank(), k, src, err)
	}
}

// dpSweep is the random cases TestDistProbe adds to its fixed ones, by
// hand: OP2_DISTPROBE_SWEEP=n cases of seeds from OP2_DISTPROBE_FIRST
// (100 by default) on. None by default.
func dpSweep(t *testing.T) []dpCase {
	s := os.Getenv("OP2_DISTPROBE_SWEEP")
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("OP2_DISTPROBE_SWEEP=%q: %v", s, err)
	}
	first := 100
	if f := os.Getenv("OP2_DISTPROBE_FIRST"); f != "" {
		if first, err = strconv.Atoi(f); err != nil {
			t.Fatalf("OP2_DISTPROBE_FIRST=%q: %v", f, err)
		}
	}
	methods := []string{"block", "rcb", "metis", "ptscotch", "random", "empty", "one"}
	decls := []string{"blocks", "blocks", "rank0", "last"}
	out := make([]dpCase, n)
	for i := range out {
		seed := uint64(first + i)
		rng := rand.New(rand.NewPCG(seed, 5))
		c := dpCase{Seed: seed, Ranks: 1 + rng.IntN(4), Method: methods[rng.IntN(len(methods))], Decl: decls[rng.IntN(len(decls))]}
		// The numbering's base applies to distributed meshes only.
		c.Base = c.Ranks > 1 && rng.IntN(3) == 0
		out[i] = c
	}
	return out
}

// TestDistProbe runs the distribution probe's cases on their ranks
// against one process. Halfway through its loops each case restores the
// checkpoint one process wrote there, but the second case, which
// restores the one the first case wrote on other ranks; at the end one
// rank restores that one too.
func TestDistProbe(t *testing.T) {
	if mpitest.InRanks() {
		var c dpCase
		check(t, json.Unmarshal([]byte(os.Getenv("OP2_DP_CASE")), &c))
		var want dpResult
		check(t, json.Unmarshal(must(os.ReadFile(os.Getenv("OP2_DP_WANT"))), &want))
		if c.Base {
			defer dist.SetNumberBaseForTest(dist.SetNumberBaseForTest(dpBase))
		}
		got := runDistProbe(t, c, !c.Base, os.Getenv("OP2_DP_CKPT"), os.Getenv("OP2_DP_RESTORE"))
		for k := range want.Globals {
			if !slices.Equal(got.Globals[k], want.Globals[k]) {
				t.Fatalf("%v, rank %d: Globals after loop %d are %v, want %v (one process)", c, op2.Rank(), k, got.Globals[k], want.Globals[k])
			}
		}
		if op2.Rank() == 0 {
			for k := range want.Dats {
				if !slices.Equal(got.Dats[k], want.Dats[k]) {
					t.Errorf("%v: dat dpd%d differs from one process:\n got %v\nwant %v", c, k, got.Dats[k], want.Dats[k])
				}
			}
			for k := range want.Maps {
				if !slices.Equal(got.Maps[k], want.Maps[k]) {
					t.Errorf("%v: map dpm%d gathered differs from the declared one:\n got %v\nwant %v", c, k, got.Maps[k], want.Maps[k])
				}
			}
		}
		check(t, op2.Finalize())
		return
	}
	cases := []dpCase{
		{Seed: 1, Ranks: 3, Method: "empty", Decl: "blocks"},
		{Seed: 1, Ranks: 2, Method: "rcb", Decl: "last"},
		{Seed: 2, Ranks: 4, Method: "ptscotch", Decl: "rank0", Base: true},
		{Seed: 3, Ranks: 3, Method: "metis", Decl: "blocks"},
	}
	cases = append(cases, dpSweep(t)...)
	dir := t.TempDir()
	// Checkpoints need HDF5: without it the cases run without them.
	ckpt := true
	if _, err := hdf5.Create(filepath.Join(dir, "probe.h5")); err != nil {
		t.Run("checkpoints", func(t *testing.T) { testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5) })
		ckpt = false
	}
	want := map[string]string{}
	cache := os.Getenv("OP2_CACHE_DIR") // the ranks share this process's compiled loops
	for i, c := range cases {
		key := fmt.Sprintf("%d-%v", c.Seed, c.Base)
		one := ""
		if ckpt {
			one = filepath.Join(dir, key+".ckpt")
		}
		if want[key] == "" {
			m := randomDPMesh(c.Seed, !c.Base)
			// One process numbers the mesh from 0, with the loops of c,
			// and writes a checkpoint halfway. (The meshes it ran
			// before are not all collected by then: a loop recorded
			// in lazy mode can keep its Dats alive. Their names differ
			// from this mesh's, so that restoring ignores them.)
			res := runDistProbe(t, dpCase{Seed: c.Seed, Ranks: 1, Method: "block", Decl: "blocks"}, !c.Base, one, "")
			for k, mp := range m.Maps {
				if !slices.Equal(res.Maps[k], widen64(mp.Table)) {
					t.Fatalf("seed %d: map dpm%d gathered in one process differs from its table", c.Seed, k)
				}
			}
			want[key] = filepath.Join(dir, key+".json")
			check(t, os.WriteFile(want[key], must(json.Marshal(res)), 0o600))
		}
		env := []string{"OP2_DP_CASE=" + string(must(json.Marshal(c))), "OP2_DP_WANT=" + want[key],
			"OP2_MPI_PARTITIONER=" + c.Method, "OP2_TEST_CACHE_DIR=" + cache, "OP2_MPI_TIMEOUT=60s"}
		if ckpt {
			// Each case restores, halfway, the checkpoint one process
			// wrote; but the second, which restores the first's,
			// written on other ranks.
			restore := one
			switch i {
			case 0:
				env = append(env, "OP2_DP_CKPT="+filepath.Join(dir, "case0.ckpt"))
			case 1:
				restore = filepath.Join(dir, "case0.ckpt")
			}
			env = append(env, "OP2_DP_RESTORE="+restore)
		}
		t.Run(c.String(), func(t *testing.T) { mpiRun(t, c.Ranks, 2*time.Minute, env...) })
	}
	if !ckpt || t.Failed() {
		return
	}
	// One rank restores the checkpoint the first case wrote on its ranks
	// (in a process of its own: this one holds other tests' Dats, which
	// Restore would look for).
	c := dpCase{Seed: cases[0].Seed, Ranks: 1, Method: "block", Decl: "blocks"}
	t.Run("restore-on-one", func(t *testing.T) {
		mpiRun(t, 1, 2*time.Minute, "OP2_DP_CASE="+string(must(json.Marshal(c))), "OP2_DP_WANT="+want[fmt.Sprintf("%d-%v", c.Seed, c.Base)],
			"OP2_DP_RESTORE="+filepath.Join(dir, "case0.ckpt"), "OP2_TEST_CACHE_DIR="+cache, "OP2_MPI_TIMEOUT=60s")
	})
}

// widen64 widens a map's table.
func widen64(v []int32) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}
