package tile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomChain returns a chain of n loops over random sets (cells, edges,
// nodes) joined by random maps, with random accesses.
func randomChain(rng *rand.Rand, n int) *Chain {
	sizes := []int{1 + rng.IntN(60), 1 + rng.IntN(120), 1 + rng.IntN(40)}
	// A map from set f to set t, arity ar, numbered for some locality.
	type mp struct {
		from, to, arity int
		table           []int32
	}
	var maps []mp
	for f := range sizes {
		for t := range sizes {
			if f == t {
				continue
			}
			ar := 1 + rng.IntN(3)
			tb := make([]int32, sizes[f]*ar)
			for e := range sizes[f] {
				centre := e * sizes[t] / sizes[f]
				for c := range ar {
					k := centre + rng.IntN(5) - 2
					tb[e*ar+c] = int32(min(max(k, 0), sizes[t]-1))
				}
			}
			maps = append(maps, mp{f, t, ar, tb})
		}
	}
	// Data: two per set.
	var dataSet []int
	c := &Chain{}
	for s := range sizes {
		for range 2 {
			dataSet = append(dataSet, s)
			c.Data = append(c.Data, sizes[s])
		}
	}
	for range n {
		set := rng.IntN(len(sizes))
		l := Loop{Size: sizes[set], InOrder: rng.IntN(4) == 0}
		for range 1 + rng.IntN(4) {
			d := rng.IntN(len(c.Data))
			a := Arg{Data: d, Write: rng.IntN(3) == 0}
			if ds := dataSet[d]; ds != set {
				for _, m := range maps {
					if m.from == set && m.to == ds {
						a.Map, a.Arity, a.Idx = m.table, m.arity, rng.IntN(m.arity+1)-1
					}
				}
			}
			l.Args = append(l.Args, a)
		}
		c.Loops = append(c.Loops, l)
	}
	return c
}

type touch struct {
	loop, tile int
	write      bool
	elem, at   int // the element, and its tile in the boundary's two
}

// check verifies a schedule's invariants: every element of every loop is
// in exactly one tile; whenever two elements of different loops touch an
// item that one of them modifies, the earlier loop's element runs in the
// same tile or an earlier one (in an earlier colour when the tiles
// differ, for a parallel schedule); tiles of one colour of a parallel
// schedule share no item that one of them modifies; in a sequential
// schedule, the elements of one loop modifying an item run in element
// order.
//
// With late items (c.Late), the boundary's two tiles come after every
// colour, their elements ordered by loop (as one tile); every late
// element is in them, those from their loop's Owned on in the last, and
// no other tile modifies a LateWrite item or touches a LateTouch one.
func check(c *Chain, s *Schedule) error {
	early := s.Tiles
	if s.Boundary != (c.Late != nil) {
		return fmt.Errorf("boundary %v with late items %v", s.Boundary, c.Late != nil)
	}
	if s.Boundary {
		early -= 2
	}
	if s.Colours[0] != 0 || int(s.Colours[len(s.Colours)-1]) != early {
		return fmt.Errorf("colours %v do not cover %d tiles", s.Colours, early)
	}
	colour := make([]int, s.Tiles)
	for ci := range len(s.Colours) - 1 {
		for t := s.Colours[ci]; t < s.Colours[ci+1]; t++ {
			colour[t] = ci
		}
	}
	for t := early; t < s.Tiles; t++ {
		colour[t] = len(s.Colours) + t - early
	}
	if err := checkLate(c, s); err != nil {
		return err
	}
	touches := map[[2]int][]touch{}
	for j := range c.Loops {
		l := &c.Loops[j]
		seen := make([]int, l.Size)
		if len(s.Offsets[j]) != s.Tiles+1 || int(s.Offsets[j][s.Tiles]) != l.Size {
			return fmt.Errorf("loop %d: offsets %v for %d elements", j, s.Offsets[j], l.Size)
		}
		for t := range s.Tiles {
			var fromRuns []int32
			ru := s.Runs[j]
			for q := s.RunOffsets[j][t]; q < s.RunOffsets[j][t+1]; q++ {
				for e := ru[2*q]; e < ru[2*q+1]; e++ {
					fromRuns = append(fromRuns, e)
				}
			}
			if el := s.Elems[j][s.Offsets[j][t]:s.Offsets[j][t+1]]; !slices.Equal(fromRuns, el) && len(el)+len(fromRuns) > 0 {
				return fmt.Errorf("loop %d tile %d: runs give %v, elements %v", j, t, fromRuns, el)
			}
			for _, e := range s.Elems[j][s.Offsets[j][t]:s.Offsets[j][t+1]] {
				seen[e]++
				for ai := range l.Args {
					a := &l.Args[ai]
					var buf [1]int32
					for _, k := range a.items(int(e), &buf) {
						key := [2]int{a.Data, int(k)}
						touches[key] = append(touches[key], touch{j, min(t, early), a.Write, int(e), t})
					}
				}
			}
		}
		for e, n := range seen {
			if n != 1 {
				return fmt.Errorf("loop %d element %d is in %d tiles", j, e, n)
			}
		}
		if !s.Parallel {
			// Chunks of Lanes elements stay in one tile (the
			// boundary's two count as one).
			tileOf := make([]int, l.Size)
			for t := range s.Tiles {
				for _, e := range s.Elems[j][s.Offsets[j][t]:s.Offsets[j][t+1]] {
					tileOf[e] = min(t, early)
				}
			}
			for e := range tileOf {
				if e%Lanes != 0 && tileOf[e] != tileOf[e-1] {
					return fmt.Errorf("loop %d: elements %d and %d of one chunk in tiles %d and %d", j, e-1, e, tileOf[e-1], tileOf[e])
				}
			}
		}
		if l.InOrder && !s.Parallel {
			// In tile order (the boundary's two in theirs), the
			// elements come in element order.
			var order []int32
			for t := range s.Tiles {
				order = append(order, s.Elems[j][s.Offsets[j][t]:s.Offsets[j][t+1]]...)
			}
			if !slices.IsSorted(order) {
				return fmt.Errorf("loop %d runs in order, but its tiles give %v", j, order)
			}
		}
	}
	for key, ts := range touches {
		for _, x := range ts {
			for _, y := range ts {
				if !s.Parallel && x.loop == y.loop && x.write && y.write && x.elem < y.elem && x.at > y.at {
					return fmt.Errorf("data %d item %d: loop %d's element %d in tile %d modifies it after element %d in tile %d", key[0], key[1], x.loop, x.elem, x.at, y.elem, y.at)
				}
				if !(x.write || y.write) || x.tile == y.tile {
					continue
				}
				if s.Parallel && x.tile < early && colour[x.tile] == colour[y.tile] {
					return fmt.Errorf("data %d item %d: tiles %d and %d of colour %d both touch it, one modifying", key[0], key[1], x.tile, y.tile, colour[x.tile])
				}
				if x.loop < y.loop && x.tile > y.tile {
					return fmt.Errorf("data %d item %d: loop %d's element in tile %d must run before loop %d's in tile %d", key[0], key[1], x.loop, x.tile, y.loop, y.tile)
				}
			}
		}
	}
	return nil
}

// checkLate verifies the boundary of a schedule with late items.
func checkLate(c *Chain, s *Schedule) error {
	if !s.Boundary {
		return nil
	}
	early := s.Tiles - 2
	for j := range c.Loops {
		l := &c.Loops[j]
		for t := range s.Tiles {
			for _, e := range s.Elems[j][s.Offsets[j][t]:s.Offsets[j][t+1]] {
				switch {
				case t < early && int(e) >= l.Core:
					return fmt.Errorf("loop %d: late element %d (core %d) in tile %d", j, e, l.Core, t)
				case t == early && int(e) >= l.Owned, t == early+1 && int(e) < l.Owned:
					return fmt.Errorf("loop %d: element %d (owned %d) in boundary tile %d of %d", j, e, l.Owned, t, s.Tiles)
				case t >= early:
					continue
				}
				for ai := range l.Args {
					a := &l.Args[ai]
					late := c.Late[a.Data]
					var buf [1]int32
					for _, k := range a.items(int(e), &buf) {
						if late != nil && (late[k] == LateTouch || a.Write && late[k] == LateWrite) {
							return fmt.Errorf("loop %d element %d in tile %d: touches data %d item %d (late %d, write %v)", j, e, t, a.Data, k, late[k], a.Write)
						}
					}
				}
			}
		}
	}
	return nil
}

// withLate gives c random late elements and items (each data's last
// items halo copies, a few others sent).
func withLate(rng *rand.Rand, c *Chain) *Chain {
	lc := &Chain{Data: c.Data, Late: make([][]Lateness, len(c.Data))}
	for d, n := range c.Data {
		if rng.IntN(4) == 0 {
			continue
		}
		late := make([]Lateness, n)
		owned := n - rng.IntN(n/3+1)
		for k := range late {
			switch {
			case k >= owned:
				late[k] = LateTouch
			case rng.IntN(6) == 0:
				late[k] = LateWrite
			}
		}
		lc.Late[d] = late
	}
	for _, l := range c.Loops {
		l.Owned = l.Size - rng.IntN(l.Size/4+1)
		l.Core = l.Owned - rng.IntN(l.Owned/3+1)
		lc.Loops = append(lc.Loops, l)
	}
	return lc
}

func TestBuildRandomChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		c := randomChain(rng, 1+rng.IntN(5))
		lc := withLate(rng, c)
		for _, size := range []int{1, 3, 16, 1000} {
			for _, par := range []bool{false, true} {
				for _, ch := range []*Chain{c, lc} {
					s := Build(ch, size, par)
					if err := check(ch, s); err != nil {
						t.Fatalf("chain %d (late items %v), tile size %d, parallel %v: %v", i, ch.Late != nil, size, par, err)
					}
				}
			}
		}
	}
}

// TestBuildStrip: on a strip of cells joined through nodes, tiles keep
// their seed blocks' cells and a parallel schedule needs few colours.
func TestBuildStrip(t *testing.T) {
	const cells = 1000
	cellNodes := make([]int32, 2*cells) // cell c: nodes c, c+1
	edgeCells := make([]int32, 2*(cells-1))
	for c := range cells {
		cellNodes[2*c], cellNodes[2*c+1] = int32(c), int32(c+1)
	}
	for e := range cells - 1 {
		edgeCells[2*e], edgeCells[2*e+1] = int32(e), int32(e+1)
	}
	// Data: 0 x (nodes), 1 adt (cells), 2 res (cells), 3 q (cells).
	ch := &Chain{Data: []int{cells + 1, cells, cells, cells}, Loops: []Loop{
		{Size: cells, Args: []Arg{{Data: 0, Map: cellNodes, Arity: 2, Idx: -1}, {Data: 3}, {Data: 1, Write: true}}},
		{Size: cells - 1, Args: []Arg{{Data: 1, Map: edgeCells, Arity: 2, Idx: -1}, {Data: 3, Map: edgeCells, Arity: 2, Idx: -1}, {Data: 2, Map: edgeCells, Arity: 2, Idx: -1, Write: true}}},
		{Size: cells, Args: []Arg{{Data: 2, Write: true}, {Data: 3, Write: true}, {Data: 1}}},
	}}
	for _, par := range []bool{false, true} {
		s := Build(ch, 100, par)
		if err := check(ch, s); err != nil {
			t.Fatal(err)
		}
		if s.Tiles != 10 {
			t.Errorf("parallel %v: %d tiles, want 10", par, s.Tiles)
		}
		if n := len(s.Colours) - 1; par && n > 3 {
			t.Errorf("%d colours, want at most 3", n)
		}
		for tl := range s.Tiles {
			// A sequential schedule keeps chunks of Lanes elements
			// in one tile.
			if n := s.Offsets[2][tl+1] - s.Offsets[2][tl]; n < 90-Lanes || n > 110+Lanes {
				t.Errorf("parallel %v: tile %d has %d cells of the last loop", par, tl, n)
			}
		}
	}
}

// gridChain is Airfoil's update → adt_calc → res_calc on an nx × ny grid
// of cells numbered row by row.
func gridChain(nx, ny int) *Chain {
	cells, nodes := nx*ny, (nx+1)*(ny+1)
	pcell := make([]int32, 0, 4*cells)
	for j := range ny {
		for i := range nx {
			n := int32(j*(nx+1) + i)
			pcell = append(pcell, n, n+1, n+int32(nx)+2, n+int32(nx)+1)
		}
	}
	var pedge, pecell []int32
	for j := range ny {
		for i := range nx {
			c := int32(j*nx + i)
			n := int32(j*(nx+1) + i)
			if i+1 < nx {
				pedge = append(pedge, n+1, n+int32(nx)+2)
				pecell = append(pecell, c, c+1)
			}
			if j+1 < ny {
				pedge = append(pedge, n+int32(nx)+1, n+int32(nx)+2)
				pecell = append(pecell, c, c+int32(nx))
			}
		}
	}
	edges := len(pecell) / 2
	// Data: 0 x (nodes), 1 q, 2 qold, 3 adt, 4 res (cells).
	return &Chain{Data: []int{nodes, cells, cells, cells, cells}, Loops: []Loop{
		{Size: cells, Args: []Arg{{Data: 2}, {Data: 1, Write: true}, {Data: 4, Write: true}, {Data: 3}}},
		{Size: cells, Args: []Arg{{Data: 0, Map: pcell, Arity: 4, Idx: 0}, {Data: 0, Map: pcell, Arity: 4, Idx: 1},
			{Data: 0, Map: pcell, Arity: 4, Idx: 2}, {Data: 0, Map: pcell, Arity: 4, Idx: 3}, {Data: 1}, {Data: 3, Write: true}}},
		{Size: edges, Args: []Arg{{Data: 0, Map: pedge, Arity: 2, Idx: 0}, {Data: 0, Map: pedge, Arity: 2, Idx: 1},
			{Data: 1, Map: pecell, Arity: 2, Idx: 0}, {Data: 1, Map: pecell, Arity: 2, Idx: 1},
			{Data: 3, Map: pecell, Arity: 2, Idx: 0}, {Data: 3, Map: pecell, Arity: 2, Idx: 1},
			{Data: 4, Map: pecell, Arity: 2, Idx: 0, Write: true}, {Data: 4, Map: pecell, Arity: 2, Idx: 1, Write: true}}},
	}}
}

// TestBuildGrid: on a grid numbered row by row, tiles of several rows
// keep their cells and a parallel schedule needs few colours.
func TestBuildGrid(t *testing.T) {
	c := gridChain(30, 40)
	for _, par := range []bool{false, true} {
		s := Build(c, 90, par)
		if err := check(c, s); err != nil {
			t.Fatal(err)
		}
		if n := len(s.Colours) - 1; par && n > 4 {
			t.Errorf("%d colours, want at most 4", n)
		}
	}
}

// BenchmarkBuild times the inspector on Airfoil's mesh size (1200 × 600
// cells) with 4000 cells per tile.
func BenchmarkBuild(b *testing.B) {
	c := gridChain(1200, 600)
	for _, par := range []bool{false, true} {
		b.Run(fmt.Sprintf("parallel=%v", par), func(b *testing.B) {
			for b.Loop() {
				Build(c, 4000, par)
			}
		})
	}
}

// TestBuildGridBoundary: on Airfoil's chain over a grid whose last rows
// of cells are halo copies (and the row before them is sent), the
// boundary holds those rows' neighbourhood only.
func TestBuildGridBoundary(t *testing.T) {
	const nx, ny = 30, 40
	c := gridChain(nx, ny)
	cells := nx * ny
	owned := cells - 2*nx
	late := make([]Lateness, cells)
	for k := owned - nx; k < cells; k++ {
		late[k] = LateWrite
		if k >= owned {
			late[k] = LateTouch
		}
	}
	c.Late = [][]Lateness{nil, late, late, late, late}
	for j := range c.Loops {
		l := &c.Loops[j]
		l.Core, l.Owned = l.Size, l.Size
		if l.Size == cells {
			l.Core, l.Owned = owned-nx, owned
		}
	}
	for _, par := range []bool{false, true} {
		s := Build(c, 90, par)
		if err := check(c, s); err != nil {
			t.Fatal(err)
		}
		for j := range c.Loops {
			b := int(s.Offsets[j][s.Tiles] - s.Offsets[j][s.Tiles-2])
			if size := c.Loops[j].Size; b > size/8 {
				t.Errorf("parallel %v: loop %d has %d of its %d elements in the boundary", par, j, b, size)
			}
		}
	}
}
