package dist

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func isPermutation(t *testing.T, what string, o []int32, n int) {
	t.Helper()
	if len(o) != n {
		t.Fatalf("%s: %d elements, want %d", what, len(o), n)
	}
	seen := make([]bool, n)
	for _, e := range o {
		if e < 0 || int(e) >= n || seen[e] {
			t.Fatalf("%s: not a permutation of 0..%d: %v", what, n-1, o)
		}
		seen[e] = true
	}
}

// grid is an nx×ny grid of cells as a map from edges (pairs of cells
// sharing a side) to cells, with the cells numbered in random order.
func grid(nx, ny int, seed uint64) (*Map, int) {
	n := nx * ny
	perm := rand.New(rand.NewPCG(seed, 1)).Perm(n)
	id := func(i, j int) int32 { return int32(perm[j*nx+i]) }
	mp := &Map{Arity: 2, To: 0}
	for j := range ny {
		for i := range nx {
			if i+1 < nx {
				mp.Table = append(mp.Table, id(i, j), id(i+1, j))
			}
			if j+1 < ny {
				mp.Table = append(mp.Table, id(i, j), id(i, j+1))
			}
		}
	}
	return mp, n
}

// bandwidth is the largest difference of new numbers over the map's rows.
func bandwidth(mp *Map, newNum []int32) int32 {
	var bw int32
	for e := 0; e < len(mp.Table)/mp.Arity; e++ {
		a, b := newNum[mp.Table[2*e]], newNum[mp.Table[2*e+1]]
		bw = max(bw, a-b, b-a)
	}
	return bw
}

func TestRCMOrderBandwidth(t *testing.T) {
	const nx, ny = 40, 30
	mp, n := grid(nx, ny, 7)
	identity := make([]int32, n)
	for i := range identity {
		identity[i] = int32(i)
	}
	before := bandwidth(mp, identity)
	xadj, adj := Adjacency(mp, n)
	o := RCMOrder(n, xadj, adj)
	isPermutation(t, "RCM", o, n)
	after := bandwidth(mp, Inverse(o))
	// A grid numbered along its shorter side has bandwidth ny; RCM
	// comes within one diagonal of it.
	if after > ny+1 || after >= before {
		t.Errorf("bandwidth %d after RCM (%d before), want at most %d", after, before, ny+1)
	}
}

func TestRCMOrderComponents(t *testing.T) {
	// Two paths 0-2-4 and 1-3, and an isolated vertex 5.
	mp := &Map{Arity: 2, Table: []int32{0, 2, 2, 4, 1, 3}}
	xadj, adj := Adjacency(mp, 6)
	o := RCMOrder(6, xadj, adj)
	isPermutation(t, "RCM", o, 6)
	pos := Inverse(o)
	for _, p := range [][2]int32{{0, 2}, {2, 4}, {1, 3}} {
		if d := pos[p[0]] - pos[p[1]]; d != 1 && d != -1 {
			t.Errorf("path neighbours %v are %d apart in %v", p, d, o)
		}
	}
}

func TestRCBOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 1000
	coords := make([]float64, 2*n)
	for i := range coords {
		coords[i] = float64(rng.IntN(50)) // many equal coordinates
	}
	for _, leaf := range []int{1, 8, 2000} {
		o, err := RCBOrder(coords, 2, leaf)
		if err != nil {
			t.Fatal(err)
		}
		isPermutation(t, "RCB", o, n)
		if leaf >= n && !slices.IsSorted(o) {
			t.Errorf("one leaf: order %v, want the declared order", o[:10])
		}
		again, _ := RCBOrder(coords, 2, leaf)
		if !slices.Equal(o, again) {
			t.Errorf("leaf %d: RCBOrder is not deterministic", leaf)
		}
	}
	// The first half of the order is one side of the first cut.
	o, _ := RCBOrder([]float64{5, 0, 1, 0, 4, 0, 2, 0}, 2, 1)
	if !slices.Equal(o, []int32{1, 3, 2, 0}) {
		t.Errorf("points on a line: order %v, want [1 3 2 0]", o)
	}
	if _, err := RCBOrder([]float64{1, 2}, 4, 1); err == nil {
		t.Error("dim 4 accepted")
	}
}

func TestSelectNth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(50)
		x := make([]int32, n)
		for i := range x {
			x[i] = int32(rng.IntN(10))
		}
		key := slices.Clone(x)
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(i)
		}
		less := func(a, b int32) bool { return key[a] < key[b] || key[a] == key[b] && a < b }
		sorted := slices.Clone(idx)
		slices.SortFunc(sorted, func(a, b int32) int {
			if less(a, b) {
				return -1
			}
			if less(b, a) {
				return 1
			}
			return 0
		})
		k := rng.IntN(n)
		selectNth(idx, k, less)
		if idx[k] != sorted[k] {
			t.Fatalf("trial %d: element %d is %d, want %d", trial, k, idx[k], sorted[k])
		}
		for i := range idx {
			if i < k && less(idx[k], idx[i]) || i > k && less(idx[i], idx[k]) {
				t.Fatalf("trial %d: %v not partitioned at %d", trial, idx, k)
			}
		}
	}
}

func TestSpreadOrder(t *testing.T) {
	// Sets: 0 nodes (4), 1 edges (3), 2 cells (2), 3 unconnected (2).
	m := &Mesh{
		Sets: []Set{{"nodes", 4}, {"edges", 3}, {"cells", 2}, {"other", 2}},
		Maps: []Map{
			{Name: "pedge", From: 1, To: 0, Arity: 2, Table: []int32{0, 1, 2, 3, 1, 2}},
			{Name: "pcell", From: 2, To: 0, Arity: 2, Table: []int32{2, 3, 0, 1}},
		},
	}
	order := make([][]int32, 4)
	order[0] = []int32{1, 3, 0, 2} // new numbers: node 0→2, 1→0, 2→3, 3→1
	SpreadOrder(m, order)
	// Edges by largest new node number, then smallest: edge 0 (new 2,0),
	// edge 1 (3,1), edge 2 (0,3); edges 1 and 2 tie on 3 and go by 1 > 0.
	if want := []int32{0, 2, 1}; !slices.Equal(order[1], want) {
		t.Errorf("edges: %v, want %v", order[1], want)
	}
	// Cells: cell 0 (3,1), cell 1 (2,0).
	if want := []int32{1, 0}; !slices.Equal(order[2], want) {
		t.Errorf("cells: %v, want %v", order[2], want)
	}
	if order[3] != nil {
		t.Errorf("unconnected set ordered: %v", order[3])
	}
	// From the edges to the nodes: first touch.
	order = [][]int32{nil, {2, 0, 1}, nil, nil}
	SpreadOrder(m, order)
	if want := []int32{1, 2, 0, 3}; !slices.Equal(order[0], want) {
		t.Errorf("nodes by first touch: %v, want %v", order[0], want)
	}
	if want := []int32{1, 0}; !slices.Equal(order[2], want) {
		t.Errorf("cells after nodes: %v, want %v", order[2], want)
	}
}

// TestSpreadOrderFollowsNearest: a target set follows the map from the set
// ordered first (cells → nodes through pcell), not the first map declared
// (edges → nodes through pedge, the edges having followed the cells).
func TestSpreadOrderFollowsNearest(t *testing.T) {
	m := &Mesh{
		Sets: []Set{{"nodes", 4}, {"edges", 2}, {"cells", 2}, {"unused", 3}},
		Maps: []Map{
			{Name: "pedge", From: 1, To: 0, Arity: 2, Table: []int32{0, 1, 2, 3}},
			{Name: "pecell", From: 1, To: 2, Arity: 1, Table: []int32{1, 0}},
			{Name: "pcell", From: 2, To: 0, Arity: 2, Table: []int32{0, 1, 2, 3}},
			{Name: "sparse", From: 2, To: 3, Arity: 1, Table: []int32{2, 2}},
		},
	}
	order := [][]int32{nil, nil, {0, 1}, nil}
	SpreadOrder(m, order)
	if want := []int32{1, 0}; !slices.Equal(order[1], want) {
		t.Errorf("edges: %v, want %v", order[1], want)
	}
	if want := []int32{0, 1, 2, 3}; !slices.Equal(order[0], want) {
		t.Errorf("nodes: %v, want %v (through pcell, not pedge's %v)", order[0], want, []int32{2, 3, 0, 1})
	}
	// Elements no row refers to come last, in declared order.
	if want := []int32{2, 0, 1}; !slices.Equal(order[3], want) {
		t.Errorf("sparse target: %v, want %v", order[3], want)
	}
	// Spread follows the same map: node owners from the cells.
	owner := [][]int32{nil, nil, {0, 1}, nil}
	Spread(m, owner, 2)
	if want := []int32{0, 0, 1, 1}; !slices.Equal(owner[0], want) {
		t.Errorf("node owners %v, want %v (from the cells through pcell, not [1 1 0 0] from the edges)", owner[0], want)
	}
	if want := []int32{1, 0}; !slices.Equal(owner[1], want) {
		t.Errorf("edge owners %v, want %v", owner[1], want)
	}
}

func TestCountingSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 50 {
		n, nkeys := rng.IntN(40), 1+rng.IntN(8)
		key := make([]int32, n)
		x := make([]int32, n)
		for i := range key {
			key[i] = int32(rng.IntN(nkeys))
			x[i] = int32(i)
		}
		rng.Shuffle(n, func(i, j int) { x[i], x[j] = x[j], x[i] })
		want := slices.Clone(x)
		slices.SortStableFunc(want, func(a, b int32) int { return int(key[a] - key[b]) })
		if got := countingSort(x, key, nkeys); !slices.Equal(got, want) {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
	}
}

// TestRCBRefusesBadCoords: both bisections refuse a dimension other than
// 1 to 3 and coordinates that are not finite, naming the element.
func TestRCBRefusesBadCoords(t *testing.T) {
	bisect := map[string]func(coords []float64, dim int) error{
		"RCBOrder":  func(c []float64, dim int) error { _, err := RCBOrder(c, dim, 1); return err },
		"RCBOwners": func(c []float64, dim int) error { _, err := RCBOwners(c, dim, 2); return err },
	}
	for _, c := range []struct {
		coords []float64
		dim    int
		want   string
	}{
		{[]float64{0, 1}, 0, "needs 1, 2 or 3 coordinates per element, not 0"},
		{[]float64{0, 1, 2, 3}, 4, "needs 1, 2 or 3 coordinates per element, not 4"},
		{[]float64{0, 0, 1, math.NaN()}, 2, "coordinate 1 of element 1 is NaN"},
		{[]float64{0, math.Inf(-1), 1}, 1, "coordinate 0 of element 1 is -Inf"},
	} {
		for name, f := range bisect {
			if err := f(c.coords, c.dim); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s(%v, %d): %v; want %q", name, c.coords, c.dim, err, c.want)
			}
		}
	}
}

// TestWidestAxis: the axis along which the chosen points spread most,
// the first of a tie.
func TestWidestAxis(t *testing.T) {
	coords := []float64{0, 0, 0, 1, 5, 0, 1, 0, 7} // three points in 3-D
	for _, c := range []struct {
		idx  []int32
		want int
	}{
		{[]int32{0, 1, 2}, 2}, {[]int32{0, 1}, 1}, {[]int32{0, 2}, 2}, {[]int32{0}, 0},
	} {
		if got := widestAxis(coords, 3, c.idx); got != c.want {
			t.Errorf("widestAxis(%v) = %d, want %d", c.idx, got, c.want)
		}
	}
}
