package op2_test

import (
	"bytes"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// gridMesh is an nx×ny grid of quadrilateral cells: nodes with
// coordinates, cells with their four nodes, interior edges with their two
// nodes and two cells, and data on each set. With a seed the elements of
// every set are declared in random order.
type gridMesh struct {
	nodes, edges, cells     *op2.Set
	pedge, pecell, pcell    *op2.Map
	x                       *op2.Dat[float64] // node coordinates
	w                       *op2.Dat[float64] // node weights
	q, res                  *op2.Dat[float64] // on cells, dim 2
	count                   *op2.Dat[int32]   // on cells
	cellID, edgeCell, nodeM *op2.Dat[int32]
	sub                     *op2.Subset // some edges
	flag                    *op2.Dat[int32]
	table                   map[string][]int32 // the declared tables
}

func newGridMesh(t *testing.T, nx, ny int, seed int64) *gridMesh {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	perm := func(n int) []int32 {
		p := make([]int32, n)
		for i := range p {
			p[i] = int32(i)
		}
		if seed != 0 {
			rng.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
		}
		return p
	}
	nn, nc := (nx+1)*(ny+1), nx*ny
	node := perm(nn)
	cell := perm(nc)
	nid := func(i, j int) int32 { return node[j*(nx+1)+i] }
	cid := func(i, j int) int32 { return cell[j*nx+i] }
	x := make([]float64, 2*nn)
	wv := make([]float64, nn)
	for j := 0; j <= ny; j++ {
		for i := 0; i <= nx; i++ {
			n := nid(i, j)
			x[2*n], x[2*n+1] = float64(i), float64(j)
			wv[n] = float64((i*7+j*3)%11) / 4 // dyadic: sums are exact
		}
	}
	pcell := make([]int32, 4*nc)
	for j := 0; j < ny; j++ {
		for i := 0; i < nx; i++ {
			c := cid(i, j)
			copy(pcell[4*c:], []int32{nid(i, j), nid(i+1, j), nid(i+1, j+1), nid(i, j+1)})
		}
	}
	var en, ec [][2]int32
	for j := 0; j < ny; j++ {
		for i := 0; i < nx; i++ {
			if i+1 < nx {
				en = append(en, [2]int32{nid(i+1, j), nid(i+1, j+1)})
				ec = append(ec, [2]int32{cid(i, j), cid(i+1, j)})
			}
			if j+1 < ny {
				en = append(en, [2]int32{nid(i, j+1), nid(i+1, j+1)})
				ec = append(ec, [2]int32{cid(i, j), cid(i, j+1)})
			}
		}
	}
	ne := len(en)
	edge := perm(ne)
	pedge := make([]int32, 2*ne)
	pecell := make([]int32, 2*ne)
	for k := range en {
		e := edge[k]
		pedge[2*e], pedge[2*e+1] = en[k][0], en[k][1]
		pecell[2*e], pecell[2*e+1] = ec[k][0], ec[k][1]
	}
	m := &gridMesh{table: map[string][]int32{"pedge": pedge, "pecell": pecell, "pcell": pcell}}
	m.nodes = must(op2.NewSet(nn, "nodes"))
	m.edges = must(op2.NewSet(ne, "edges"))
	m.cells = must(op2.NewSet(nc, "cells"))
	m.pedge = must(op2.NewMap(m.edges, m.nodes, 2, pedge, "pedge"))
	m.pecell = must(op2.NewMap(m.edges, m.cells, 2, pecell, "pecell"))
	m.pcell = must(op2.NewMap(m.cells, m.nodes, 4, pcell, "pcell"))
	m.x = must(op2.NewDat(m.nodes, 2, x, "x"))
	m.w = must(op2.NewDat(m.nodes, 1, wv, "w"))
	q := make([]float64, 2*nc)
	for c := range nc {
		q[2*c], q[2*c+1] = float64(c%5), float64(c%3)/2
	}
	m.q = must(op2.NewDat(m.cells, 2, q, "q"))
	m.res = must(op2.NewDat[float64](m.cells, 2, nil, "res"))
	m.count = must(op2.NewDat[int32](m.cells, 1, nil, "count"))
	m.cellID = must(op2.NewDat[int32](m.cells, 1, nil, "cellID"))
	m.edgeCell = must(op2.NewDat[int32](m.edges, 2, nil, "edgeCell"))
	m.nodeM = must(op2.NewDat(m.nodes, 1, slices.Repeat([]int32{1 << 30}, nn), "nodeMin"))
	m.flag = must(op2.NewDat[int32](m.edges, 1, nil, "flag"))
	var pick []int32
	for e := 0; e < ne; e += 3 {
		pick = append(pick, int32(e))
	}
	m.sub = must(op2.NewSubset(m.edges, pick))
	return m
}

// run is a scenario of loops: increments through maps, direct updates, a
// reduction, MIN through a map, index arguments and a subset loop. The
// loops run in a runtime of their own on the current backend, so that its
// programs and plans go when the test ends.
func (m *gridMesh) run(t *testing.T) (sum float64) {
	t.Helper()
	r := must(op2.NewRuntime(op2.Config{Backend: op2.Backend(), PlanCheck: true}))
	flux := op2.NewKernel(`
void flux(const double *xa, const double *xb, const double *wa, const double *wb,
          double *ra, double *rb, int *ca, int *cb) {
  double d = (xb[0] - xa[0]) + 2 * (xb[1] - xa[1]);
  ra[0] += d * *wa; ra[1] += *wb;
  rb[0] -= d * *wb; rb[1] += *wa;
  *ca += 1; *cb += 1;
}`, "flux")
	update := op2.NewKernel(`
void update(double *q, const double *res, double *s) {
  q[0] += res[0]; q[1] += res[1];
  *s += q[0] * q[1];
}`, "update")
	gather := op2.NewKernel(`
void gather(const double **x, double *q) {
  q[0] += x[0][0] + x[1][0] + x[2][0] + x[3][0];
  q[1] += x[0][1] - x[2][1];
}`, "gather")
	ids := op2.NewKernel(`
void ids(const int *i, int *o) { *o = *i; }`, "ids")
	edgeIDs := op2.NewKernel(`
void edgeids(const int *a, const int *b, int *o) { o[0] = *a; o[1] = *b; }`, "edgeids")
	mins := op2.NewKernel(`
void mins(const int *c, int *na, int *nb) { *na = *c; *nb = *c; }`, "mins")
	mark := op2.NewKernel(`
void mark(const int *i, int *f) { *f = 3 * *i + 1; }`, "mark")
	s := must(op2.NewGlobal[float64](1, nil, "sum"))
	for range 3 {
		check(t, r.ParLoop(flux, m.edges,
			m.x.ArgMap(op2.Read, m.pedge, 0), m.x.ArgMap(op2.Read, m.pedge, 1),
			m.w.ArgMap(op2.Read, m.pedge, 0), m.w.ArgMap(op2.Read, m.pedge, 1),
			m.res.ArgMap(op2.Inc, m.pecell, 0), m.res.ArgMap(op2.Inc, m.pecell, 1),
			m.count.ArgMap(op2.Inc, m.pecell, 0), m.count.ArgMap(op2.Inc, m.pecell, 1)))
		check(t, r.ParLoop(gather, m.cells, m.x.ArgVec(op2.Read, m.pcell), m.q.Arg(op2.RW)))
		check(t, r.ParLoop(update, m.cells, m.q.Arg(op2.RW), m.res.Arg(op2.Read), s.Arg(op2.Inc)))
	}
	check(t, r.ParLoop(ids, m.cells, op2.ArgIdx(), m.cellID.Arg(op2.Write)))
	check(t, r.ParLoop(edgeIDs, m.edges, m.pecell.ArgIdx(0), m.pecell.ArgIdx(1), m.edgeCell.Arg(op2.Write)))
	check(t, r.ParLoop(mins, m.edges, m.edgeCell.Arg(op2.Read), m.nodeM.ArgMap(op2.Min, m.pedge, 0), m.nodeM.ArgMap(op2.Min, m.pedge, 1)))
	check(t, r.ParLoop(mark, m.sub, op2.ArgIdx(), m.flag.Arg(op2.Write)))
	return s.Data()[0]
}

// results are a scenario's results in the declared numbering.
type gridResults struct {
	sum       float64
	q, res    []float64
	ints      map[string][]int32
	textDumps []byte
}

func (m *gridMesh) results(t *testing.T, sum float64) gridResults {
	t.Helper()
	r := gridResults{sum: sum, q: must(m.q.Gather()), res: must(m.res.Gather()), ints: map[string][]int32{}}
	for _, d := range []*op2.Dat[int32]{m.count, m.cellID, m.edgeCell, m.nodeM, m.flag} {
		r.ints[d.Name()] = must(d.Gather())
	}
	path := filepath.Join(t.TempDir(), "q.txt")
	check(t, m.q.WriteText(path))
	r.textDumps = must(os.ReadFile(path))
	return r
}

// TestRenumberSameResults: a scenario of loops gives the same results, in
// the declared numbering, with and without renumbering (RCM from either
// map, RCB from the coordinates), on an ordered and on a shuffled mesh,
// on every backend. The data are dyadic, so every sum is exact.
func TestRenumberSameResults(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		for _, seed := range []int64{0, 5} {
			plain := newGridMesh(t, 9, 7, seed)
			want := plain.results(t, plain.run(t))
			for _, ord := range []string{"rcm-pecell", "rcm-pedge", "rcb", "rcb-centres"} {
				m := newGridMesh(t, 9, 7, seed)
				var o op2.Ordering
				switch ord {
				case "rcm-pecell":
					o = op2.RCMOrdering(m.pecell)
				case "rcm-pedge":
					o = op2.RCMOrdering(m.pedge)
				case "rcb-centres":
					o = op2.RCBCentreOrdering(m.x, m.pcell)
				default:
					o = op2.RCBOrdering(m.x)
				}
				info, err := op2.Renumber(o)
				check(t, err)
				slices.Sort(info.Sets)
				if !slices.Equal(info.Sets, []string{"cells", "edges", "nodes"}) {
					t.Fatalf("%s: renumbered %v", ord, info.Sets)
				}
				m.checkConsistent(t, ord)
				got := m.results(t, m.run(t))
				if got.sum != want.sum {
					t.Errorf("seed %d, %s: sum %v, want %v", seed, ord, got.sum, want.sum)
				}
				if !slices.Equal(got.q, want.q) || !slices.Equal(got.res, want.res) {
					t.Errorf("seed %d, %s: q or res differ from the loops without renumbering", seed, ord)
				}
				for name, v := range want.ints {
					if !slices.Equal(got.ints[name], v) {
						t.Errorf("seed %d, %s: %s = %v, want %v", seed, ord, name, got.ints[name], v)
					}
				}
				if !bytes.Equal(got.textDumps, want.textDumps) {
					t.Errorf("seed %d, %s: text dump differs", seed, ord)
				}
			}
		}
	})
}

// checkConsistent checks, after Renumber, that every map and dat was
// permuted consistently with the sets' declared numbers.
func (m *gridMesh) checkConsistent(t *testing.T, what string) {
	t.Helper()
	decl := map[*op2.Set][]int32{}
	for _, s := range []*op2.Set{m.nodes, m.edges, m.cells} {
		d := s.DeclaredNumbers()
		seen := make([]bool, len(d))
		for _, g := range d {
			if g < 0 || int(g) >= len(d) || seen[g] {
				t.Fatalf("%s: set %s: declared numbers are not a permutation", what, s.Name())
			}
			seen[g] = true
		}
		decl[s] = d
	}
	for _, mp := range []*op2.Map{m.pedge, m.pecell, m.pcell} {
		k, cur, orig := mp.Arity(), mp.Values(), m.table[mp.Name()]
		from, to := decl[mp.From()], decl[mp.To()]
		for i := range len(cur) / k {
			for j := range k {
				if to[cur[i*k+j]] != orig[int(from[i])*k+j] {
					t.Fatalf("%s: map %s row %d is not the declared row %d", what, mp.Name(), i, from[i])
				}
			}
		}
		if g := must(mp.Gather()); !slices.Equal(g, orig) {
			t.Fatalf("%s: map %s: Gather is not the declared table", what, mp.Name())
		}
	}
	x, xg := m.x.DataRO(), must(m.x.Gather())
	for i, g := range decl[m.nodes] {
		if x[2*i] != xg[2*g] || x[2*i+1] != xg[2*g+1] {
			t.Fatalf("%s: x of node %d is not that of declared node %d", what, i, g)
		}
	}
	if idx := m.sub.Indices(); !slices.IsSorted(idx) || len(idx) != (m.edges.Size()+2)/3 {
		t.Fatalf("%s: subset indices %v", what, idx)
	}
	for _, e := range m.sub.Indices() {
		if decl[m.edges][e]%3 != 0 {
			t.Fatalf("%s: subset holds edge %d, declared %d, not one of the declared subset", what, e, decl[m.edges][e])
		}
	}
}

// TestRenumberLocality: on a shuffled grid, RCM and RCB bring each
// edge's cells close together again, and RCM and RCB on the cells'
// centres make a loop over the edges meet the cells in sequence.
func TestRenumberLocality(t *testing.T) {
	// The mean distance between the two cells of an edge.
	spread := func(m *gridMesh) float64 {
		v := m.pecell.Values()
		sum := 0
		for e := 0; e < len(v); e += 2 {
			sum += max(int(v[e]-v[e+1]), int(v[e+1]-v[e]))
		}
		return float64(sum) / float64(len(v)/2)
	}
	// The share of the cells that a loop over the edges reaches for the
	// first time more than 8 numbers away from the cell it reached for
	// the first time before (what a hardware prefetcher cannot follow).
	jumps := func(m *gridMesh) float64 {
		v := m.pecell.Values()
		seen := make([]bool, m.cells.Size())
		prev, n := int32(-1), 0
		for _, c := range v {
			if seen[c] {
				continue
			}
			seen[c] = true
			if prev >= 0 && (c > prev+8 || c < prev-8) {
				n++
			}
			prev = c
		}
		return float64(n) / float64(len(seen))
	}
	const nx, ny = 64, 48
	ordered := spread(newGridMesh(t, nx, ny, 0))
	shuffled := newGridMesh(t, nx, ny, 9)
	if j := jumps(shuffled); j < 0.9 {
		t.Fatalf("shuffled grid: %.3f of the cells reached out of sequence, want nearly all", j)
	}
	for _, c := range []struct {
		name     string
		ordering func(m *gridMesh) op2.Ordering
		maxJumps float64 // 1: not checked
	}{
		{"rcm", func(m *gridMesh) op2.Ordering { return op2.RCMOrdering(m.pecell) }, 0.01},
		{"rcb nodes", func(m *gridMesh) op2.Ordering { return op2.RCBOrdering(m.x) }, 1},
		{"rcb cell centres", func(m *gridMesh) op2.Ordering { return op2.RCBCentreOrdering(m.x, m.pcell) }, 0.01},
	} {
		m := newGridMesh(t, nx, ny, 9)
		info := must(op2.Renumber(c.ordering(m)))
		if got := spread(m); got > 2*ordered || got*10 > spread(shuffled) {
			t.Errorf("%s: mean cell distance across an edge %.1f (ordered row by row %.1f, shuffled %.1f)", c.name, got, ordered, spread(shuffled))
		}
		if got := jumps(m); got > c.maxJumps {
			t.Errorf("%s: %.3f of the cells reached out of sequence by the edge loop, want at most %.2f", c.name, got, c.maxJumps)
		}
		m.checkConsistent(t, c.name)
		if c.name == "rcb cell centres" && info.Sets[0] != "cells" {
			t.Errorf("%s: sets renumbered %v, want the cells first", c.name, info.Sets)
		}
	}
}

// TestRenumberDumpsRoundTrip: dumps are in the declared numbering both
// ways, in both formats: a dump written without renumbering reads back
// into a renumbered mesh onto the same elements, a dump written after
// renumbering is the one written without it and reads back into a mesh
// that was not renumbered; and a dat declared after Renumber takes values
// in the new numbering.
func TestRenumberDumpsRoundTrip(t *testing.T) {
	for _, f := range []struct {
		name        string
		write, read func(d *op2.Dat[float64], path string) error
	}{
		{"text", (*op2.Dat[float64]).WriteText, (*op2.Dat[float64]).ReadText},
		{"binary", (*op2.Dat[float64]).WriteBinary, (*op2.Dat[float64]).ReadBinary},
	} {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			plain := newGridMesh(t, 5, 4, 3)
			m := newGridMesh(t, 5, 4, 3)
			must(op2.Renumber(op2.RCBOrdering(m.x)))
			if slices.Equal(m.x.DataRO(), plain.x.DataRO()) {
				t.Fatal("Renumber left the nodes in their declared order: the test shows nothing")
			}
			fromPlain, fromRenumbered := filepath.Join(dir, "plain"), filepath.Join(dir, "renumbered")
			check(t, f.write(plain.x, fromPlain))
			check(t, f.write(m.x, fromRenumbered))
			if a, b := must(os.ReadFile(fromPlain)), must(os.ReadFile(fromRenumbered)); !bytes.Equal(a, b) {
				t.Error("the dump written after Renumber differs from the one written without it")
			}
			y := must(op2.NewDat[float64](m.nodes, 2, nil, "y"))
			check(t, f.read(y, fromPlain))
			if !slices.Equal(y.DataRO(), m.x.DataRO()) {
				t.Errorf("dump read into a renumbered set: %v, want %v", y.DataRO(), m.x.DataRO())
			}
			z := must(op2.NewDat[float64](plain.nodes, 2, nil, "z"))
			check(t, f.read(z, fromRenumbered))
			if !slices.Equal(z.DataRO(), plain.x.DataRO()) {
				t.Errorf("dump written after Renumber read into the mesh without it: %v, want %v", z.DataRO(), plain.x.DataRO())
			}
			d := must(op2.NewDat(m.nodes, 2, m.x.DataRO(), "d"))
			if !slices.Equal(must(d.Gather()), must(plain.x.Gather())) {
				t.Error("a dat declared after Renumber with Data's values does not gather to the declared values")
			}
		})
	}
}

// TestRenumberErrors: Renumber refuses sets a loop has used, missing
// arguments and bad coordinates, and changes nothing then; it may run
// twice before the first loop.
func TestRenumberErrors(t *testing.T) {
	m := newGridMesh(t, 4, 3, 1)
	before := m.pedge.Values()
	m.run(t)
	_, err := op2.Renumber(op2.RCMOrdering(m.pecell))
	if err == nil || !strings.Contains(err.Error(), "already been used by a loop") || !strings.HasPrefix(err.Error(), "op2: Renumber: ") {
		t.Fatalf("Renumber after a loop: %v", err)
	}
	if !slices.Equal(m.pedge.Values(), before) {
		t.Error("a refused Renumber changed a map")
	}
	for _, c := range []struct {
		o    op2.Ordering
		want string
	}{
		{op2.Ordering{}, "no ordering"},
		{op2.RCMOrdering(nil), "map is nil"},
		{op2.RCBOrdering(nil), "dat is nil"},
		{op2.RCBCentreOrdering(nil, m.pcell), "dat is nil"},
		{op2.RCBCentreOrdering(m.x, nil), "RCBCentreOrdering: map is nil"},
		{op2.RCBCentreOrdering(m.x, m.pecell), `map "pecell" leads to set "cells"`},
	} {
		if _, err := op2.Renumber(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Renumber: %v, want an error containing %q", err, c.want)
		}
	}
	set := must(op2.NewSet(3, "points"))
	bad := must(op2.NewDat(set, 4, make([]float64, 12), "x4"))
	if _, err := op2.Renumber(op2.RCBOrdering(bad)); err == nil || !strings.Contains(err.Error(), "1, 2 or 3 coordinates") {
		t.Errorf("RCB on dim 4: %v", err)
	}
	// Twice before a loop: the declared numbers compose.
	m2 := newGridMesh(t, 4, 3, 2)
	must(op2.Renumber(op2.RCBOrdering(m2.x)))
	must(op2.Renumber(op2.RCMOrdering(m2.pedge)))
	m2.checkConsistent(t, "twice")
}

// TestPoorLocalityWarned: the first loop through a map numbered at
// random warns, naming the map and its median gap, on the logger at warn
// level; a map numbered for locality, one whose mesh was renumbered
// before its first loop (as mesh/unstructured's loader does), one only
// declared, and one used with no logger are not warned about.
func TestPoorLocalityWarned(t *testing.T) {
	defer func() { check(t, op2.Configure(op2.Config{})) }()
	var log bytes.Buffer
	check(t, op2.Configure(op2.Config{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))}))
	const n = 20000
	perm := rand.New(rand.NewSource(1)).Perm(n)
	// mesh declares a ring of n edges over n nodes, in order or
	// shuffled, and a loop through its map.
	mesh := func(prefix string, shuffled bool) (*op2.Map, func()) {
		nodes := must(op2.NewSet(n, prefix+"_nodes"))
		edges := must(op2.NewSet(n, prefix+"_edges"))
		table := make([]int32, 2*n)
		for e := range n {
			table[2*e], table[2*e+1] = int32(e), int32((e+1)%n)
			if shuffled {
				table[2*e], table[2*e+1] = int32(perm[e]), int32(perm[(e+1)%n])
			}
		}
		m := must(op2.NewMap(edges, nodes, 2, table, prefix))
		x := must(op2.NewDat[float64](nodes, 1, nil, prefix+"_x"))
		y := must(op2.NewDat[float64](edges, 1, nil, prefix+"_y"))
		k := op2.NewKernel("void pl_sum(const double *a, const double *b, double *y) { *y = *a + *b; }", "pl_sum")
		return m, func() {
			check(t, op2.ParLoop(k, edges, x.ArgMap(op2.Read, m, 0), x.ArgMap(op2.Read, m, 1), y.Arg(op2.Write)))
		}
	}
	_, loop := mesh("pl_ordered", false)
	loop()
	if log.Len() != 0 {
		t.Errorf("a map numbered for locality was warned about:\n%s", log.String())
	}
	_, loop = mesh("pl_shuffled", true)
	if log.Len() != 0 {
		t.Errorf("a map was warned about before a loop used it:\n%s", log.String())
	}
	loop()
	for _, want := range []string{"level=WARN", "poor locality", "op2.Renumber", "map=pl_shuffled", "median_gap=", "target_set_size=20000"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the warning does not mention %q:\n%s", want, log.String())
		}
	}
	log.Reset()
	loop()
	if log.Len() != 0 {
		t.Errorf("a map was warned about twice:\n%s", log.String())
	}
	m, loop := mesh("pl_renumbered", true)
	must(op2.Renumber(op2.RCMOrdering(m)))
	loop()
	if log.Len() != 0 {
		t.Errorf("a map renumbered before its first loop was warned about:\n%s", log.String())
	}
	check(t, op2.Configure(op2.Config{}))
	_, loop = mesh("pl_quiet", true)
	loop()
	if log.Len() != 0 {
		t.Errorf("a runtime with no logger wrote:\n%s", log.String())
	}
}
