package dist

import (
	"fmt"
	"slices"
)

// BlockOwners gives each rank a contiguous block of n elements, sizes
// differing by at most one.
func BlockOwners(n, ranks int) []int32 {
	o := make([]int32, n)
	for r := 0; r < ranks; r++ {
		for g := n * r / ranks; g < n*(r+1)/ranks; g++ {
			o[g] = int32(r)
		}
	}
	return o
}

// Spread completes a partition given for some sets (owner[s] != nil) to
// every set, through the maps, as OP2 does: an element of a map's source
// set goes to the rank owning most of its targets; failing that, an
// element of a map's target set goes to the rank owning most of the
// elements that refer to it (ties go to the lower rank; see propagate for
// which map serves a set). A set no map connects to a partitioned one is
// distributed in blocks.
func Spread(m *Mesh, owner [][]int32, ranks int) {
	// count is scratch for the votes of one element (modeOf clears it).
	count := make([]int32, ranks)
	mode := func(votes []int32) int32 { return modeOf(votes, count) }
	var votes []int32
	fromTargets := func(mp *Map) []int32 {
		o := make([]int32, m.Sets[mp.From].Size)
		to := owner[mp.To]
		for e := range o {
			votes = votes[:0]
			for _, t := range mp.Table[e*mp.Arity : (e+1)*mp.Arity] {
				votes = append(votes, to[t])
			}
			o[e] = mode(votes)
		}
		return o
	}
	toTarget := func(mp *Map) []int32 {
		// The owners of the elements referring to each target, grouped
		// by target (counting sort): memory in proportion to the map.
		n := m.Sets[mp.To].Size
		start := make([]int32, n+1)
		for _, t := range mp.Table {
			start[t+1]++
		}
		for t := range n {
			start[t+1] += start[t]
		}
		voters := make([]int32, len(mp.Table))
		next := slices.Clone(start[:n])
		from := owner[mp.From]
		for e := 0; e < m.Sets[mp.From].Size; e++ {
			for _, t := range mp.Table[e*mp.Arity : (e+1)*mp.Arity] {
				voters[next[t]] = from[e]
				next[t]++
			}
		}
		o := BlockOwners(n, ranks)
		for t := range o {
			if v := voters[start[t]:start[t+1]]; len(v) > 0 {
				o[t] = mode(v)
			}
		}
		return o
	}
	propagate(m, owner, fromTargets, toTarget)
	for s := range owner {
		if owner[s] == nil {
			owner[s] = BlockOwners(m.Sets[s].Size, ranks)
		}
	}
}

// RCBOwners partitions n points (dim coordinates each, point after point)
// into ranks parts by recursive coordinate bisection: the points are split
// across the axis along which they spread most, in proportion to the ranks
// on each side, and each side again, until every part has one rank.
func RCBOwners(coords []float64, dim, ranks int) ([]int32, error) {
	if err := checkCoords(coords, dim); err != nil {
		return nil, err
	}
	n := len(coords) / dim
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	owner := make([]int32, n)
	var split func(idx []int32, first, parts int)
	split = func(idx []int32, first, parts int) {
		if parts == 1 {
			for _, e := range idx {
				owner[e] = int32(first)
			}
			return
		}
		axis := widestAxis(coords, dim, idx)
		slices.SortStableFunc(idx, func(a, b int32) int {
			ca, cb := coords[int(a)*dim+axis], coords[int(b)*dim+axis]
			switch {
			case ca < cb:
				return -1
			case ca > cb:
				return 1
			}
			return int(a - b)
		})
		left := parts / 2
		cut := len(idx) * left / parts
		split(idx[:cut], first, left)
		split(idx[cut:], first+left, parts-left)
	}
	split(idx, 0, ranks)
	return owner, nil
}

// Adjacency is the graph METIS partitions for a map: the elements of the
// map's target set, two of them adjacent when one row of the map holds
// both (for a map from edges to cells, cells sharing an edge), in
// compressed row form.
func Adjacency(mp *Map, n int) (xadj, adj []int32) {
	rows := len(mp.Table) / max(mp.Arity, 1)
	deg := make([]int32, n+1)
	for e := 0; e < rows; e++ {
		row := mp.Table[e*mp.Arity : (e+1)*mp.Arity]
		for _, a := range row {
			for _, b := range row {
				if a != b {
					deg[a+1]++
				}
			}
		}
	}
	for i := 1; i <= n; i++ {
		deg[i] += deg[i-1]
	}
	tmp := make([]int32, deg[n])
	fill := slices.Clone(deg[:n])
	for e := 0; e < rows; e++ {
		row := mp.Table[e*mp.Arity : (e+1)*mp.Arity]
		for _, a := range row {
			for _, b := range row {
				if a != b {
					tmp[fill[a]] = b
					fill[a]++
				}
			}
		}
	}
	xadj = make([]int32, n+1)
	adj = make([]int32, 0, len(tmp))
	for v := 0; v < n; v++ {
		nb := tmp[deg[v]:deg[v+1]]
		slices.Sort(nb)
		nb = slices.Compact(nb)
		adj = append(adj, nb...)
		xadj[v+1] = int32(len(adj))
	}
	return xadj, adj
}

// Cut counts the map entries whose source and target elements are owned by
// different ranks: each is a value some rank reads from another's halo.
func Cut(m *Mesh, owner [][]int32) int {
	cut := 0
	for _, mp := range m.Maps {
		from, to := owner[mp.From], owner[mp.To]
		for e := range from {
			for _, t := range mp.Table[e*mp.Arity : (e+1)*mp.Arity] {
				if from[e] != to[t] {
					cut++
				}
			}
		}
	}
	return cut
}

// EdgeCut is the edge cut of a partition on the graph Adjacency builds for
// map mp (the n elements of its target set, two adjacent when one row of
// mp holds both): the adjacent pairs whose elements owner puts on
// different ranks, each pair counted once. On the graph METIS partitions
// it is the edge cut METIS reports; computed for any owners, it compares
// partitioners on the same graph.
func EdgeCut(mp *Map, n int, owner []int32) int {
	if mp.Arity < 2 {
		return 0
	}
	xadj, adj := Adjacency(mp, n)
	cut := 0
	for a := 0; a < n; a++ {
		for _, b := range adj[xadj[a]:xadj[a+1]] {
			if int(b) > a && owner[a] != owner[b] {
				cut++
			}
		}
	}
	return cut
}

// Partitioning says how Owners chooses the owners of a mesh's elements.
type Partitioning struct {
	// Kind is "block", "rcb", "metis", "graph" or "owners" (given).
	Kind string
	// For "rcb": the coordinates (CoordDim values per element) of the
	// elements of set CoordSet.
	Coords   []float64
	CoordDim int
	CoordSet int
	// For "metis": the index of the map whose target set's graph METIS
	// partitions.
	Map int
	// For "owners": the owner rank of each element of set OwnerSet.
	Owner    []int32
	OwnerSet int
	// For "graph" (PartitionBlocks only): the partitioner of the
	// distributed graph of map Map's target set, such as PT-Scotch's.
	// Each rank passes its block's vertices in compressed row form,
	// neighbours by global number, and gets their parts.
	Graph func(xadj []int64, adj []int32, parts int) ([]int32, error)
}

// Owners chooses the owner rank of every element of every set of m: block
// partitions every set in blocks of its declared numbering; rcb and metis
// partition one set, owners takes one set's partition as given, and the
// partition spreads to the others (Spread). It
// also returns METIS's own edge cut (0 for the others).
func Owners(m *Mesh, p Partitioning, ranks int) (owner [][]int32, metisCut int, err error) {
	owner = make([][]int32, len(m.Sets))
	switch p.Kind {
	case "block":
		for s := range owner {
			owner[s] = BlockOwners(m.Sets[s].Size, ranks)
		}
		return owner, 0, nil
	case "rcb":
		o, err := RCBOwners(p.Coords, p.CoordDim, ranks)
		if err != nil {
			return nil, 0, err
		}
		owner[p.CoordSet] = o
	case "metis":
		mp := &m.Maps[p.Map]
		xadj, adj := Adjacency(mp, m.Sets[mp.To].Size)
		o, cut, err := METISOwners(m.Sets[mp.To].Size, xadj, adj, ranks)
		if err != nil {
			return nil, 0, err
		}
		owner[mp.To], metisCut = o, cut
	case "owners":
		if len(p.Owner) != m.Sets[p.OwnerSet].Size {
			return nil, 0, fmt.Errorf("%d owners for the %d elements of set %q", len(p.Owner), m.Sets[p.OwnerSet].Size, m.Sets[p.OwnerSet].Name)
		}
		for e, r := range p.Owner {
			if r < 0 || int(r) >= ranks {
				return nil, 0, fmt.Errorf("element %d of set %q has owner %d, not a rank (0 to %d)", e, m.Sets[p.OwnerSet].Name, r, ranks-1)
			}
		}
		owner[p.OwnerSet] = slices.Clone(p.Owner)
	default:
		return nil, 0, fmt.Errorf("unknown partitioner %q (block, rcb, metis or owners)", p.Kind)
	}
	Spread(m, owner, ranks)
	return owner, metisCut, nil
}
