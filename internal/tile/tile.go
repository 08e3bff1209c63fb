// Package tile is the inspector of sparse tiling (Strout's full sparse
// tiling, as in SLOPE): it splits a chain of loops over sets connected by
// maps into tiles that run one after another, each tile running its
// elements of the first loop, then of the second, and so on, so that the
// data a tile touches stays in cache from one loop to the next.
//
// The seed loop's (the first loop's) elements are cut into blocks of
// consecutive elements, one per tile. Every element of a later loop goes
// to the latest tile, in execution order, among the elements of earlier
// loops that touch data it reads and that modify it (a flow dependency),
// or that touch data it modifies (anti and output dependencies): running
// the tiles in order then gives every data item the accesses it gets
// when the loops run one after another, except that increments of one
// loop may reach an item in another order (not in a sequential
// schedule, see below). An element that depends on
// nothing goes to the tile of the seed block at the same relative
// position in its set.
//
// Without threads (a sequential schedule), an element that modifies an
// item goes to no earlier tile than the elements before it in its loop
// that modify that item, the elements of a loop marked InOrder to no
// earlier tile than any element before them, and each chunk of Lanes
// consecutive elements to one tile: running the tiles in order then
// gives every item its modifications in the order of running each loop
// alone, and the same chunks of SIMD lanes, so the results are the same
// bit for bit.
//
// For threads (Build with parallel set), the tiles grown in block order
// are coloured so that tiles touching the same data get different
// colours, and the tiles are grown again with the blocks in colour
// order; then each tile
// gets the level (colour) one above the highest level of the earlier
// tiles it conflicts with (touches a data item that one of the two
// modifies). Tiles of one level then touch disjoint data and may run at
// once; levels run in order, which respects every dependency.
//
// Under MPI (Chain.Late set) some elements and items are late: an
// element from its loop's Core on (it reads halo copies, or is an exec
// halo element), and an element that modifies an item marked LateWrite
// (an owned item that halo exchanges send to other ranks) or touches an
// item marked LateTouch (a halo copy), goes to the boundary, which runs
// after every other tile; so does, by the rule above, every element that
// depends on an element of the boundary. The other tiles then neither
// read a value an exchange brings nor change one an exchange sends, and
// can run before any exchange; the boundary runs loop by loop, around
// each loop's exchanges. Only modifying a LateWrite item is late: an
// early element reading it reads the value before any modification of
// the chain (a modification comes first only in the boundary, and an
// element depending on it is in the boundary too), as the loops would.
//
// The package knows nothing of OP2's objects: a chain is described by
// its loops' sizes and arguments (which data, through which map, read or
// modified), so that it can be tested on any mesh.
package tile

import (
	"fmt"
	"slices"
)

// Arg is one argument of a loop: the data it touches and how.
type Arg struct {
	// Data numbers the data (a Dat) among the chain's data
	// (Chain.Data).
	Data int
	// Map is the map table, Arity entries per element of the loop's
	// set; nil for a direct argument (element e touches item e).
	Map   []int32
	Arity int
	// Idx is the map column the argument goes through, or -1 for every
	// column (a vector argument).
	Idx int
	// Write marks an argument that modifies its data (WRITE, RW, INC,
	// MIN, MAX); others only read.
	Write bool
}

// Loop is a loop of a chain: its iteration set's size and its arguments
// (Globals left out).
type Loop struct {
	Size int
	Args []Arg
	// InOrder asks, in a sequential schedule (Build without parallel),
	// for the loop's elements to run in element order across the tiles
	// (each tile's elements are then one range, after the previous
	// tile's): a loop whose result depends on that order, such as a sum
	// of floating-point values into a Global.
	InOrder bool
	// Core and Owned count only when the chain has late items
	// (Chain.Late): elements from Core on are late, and the boundary's
	// elements from Owned on (the exec halo, whose reductions a
	// distributed run discards) go to the last tile. Core <= Owned <=
	// Size.
	Core, Owned int
}

// Lateness says which elements of a loop touching a data item must run
// in the boundary (see Chain.Late).
type Lateness uint8

const (
	// Early items may be touched by any tile.
	Early Lateness = iota
	// LateWrite items may be modified by the boundary only (owned items
	// that halo exchanges send).
	LateWrite
	// LateTouch items may be touched by the boundary only (halo copies,
	// which exchanges write).
	LateTouch
)

// Chain is the loops to tile, in program order, and the number of
// items (elements) of each data they touch.
type Chain struct {
	Loops []Loop
	Data  []int
	// Late, if not nil, gives the schedule a boundary (Schedule.Boundary)
	// and holds, for each data, the Lateness of each of its items (a nil
	// entry: all Early).
	Late [][]Lateness
}

// Schedule is a chain's tiles. Tiles are numbered in execution order:
// the tiles of colour c are [Colours[c], Colours[c+1]), and with one
// colour (a sequential schedule) they run in number order.
type Schedule struct {
	Tiles int
	// Elems holds, per loop, the loop's elements tile by tile, each
	// tile's in increasing order; tile t's are Elems[i][Offsets[i][t]:
	// Offsets[i][t+1]].
	Elems, Offsets [][]int32
	// Runs holds, per loop, the same elements as runs of consecutive
	// elements (pairs start, end), tile by tile; tile t's runs are
	// [RunOffsets[i][t], RunOffsets[i][t+1]).
	Runs, RunOffsets [][]int32
	// Colours delimits the colours' tiles (len: colours + 1); with a
	// boundary they cover every tile but the boundary's two.
	Colours []int32
	// Parallel says that tiles of one colour touch disjoint data.
	Parallel bool
	// Boundary says that the last two tiles are the boundary (see
	// Chain.Late), which runs after every colour, loop by loop: each
	// loop's elements of tile Tiles-2 (below the loop's Owned), then
	// those of tile Tiles-1 (from Owned on).
	Boundary bool
}

// items returns the items argument a touches for element e: a part of
// its map, or for a direct argument buf holding e.
func (a *Arg) items(e int, buf *[1]int32) []int32 {
	switch {
	case a.Map == nil:
		buf[0] = int32(e)
		return buf[:]
	case a.Idx >= 0:
		k := e*a.Arity + a.Idx
		return a.Map[k : k+1]
	}
	return a.Map[e*a.Arity : (e+1)*a.Arity]
}

// Build tiles chain c with size seed elements per tile (at least 1); with
// parallel, colours the tiles for threads. Build panics on a malformed
// chain (no loops, a size below 1).
func Build(c *Chain, size int, parallel bool) *Schedule {
	if len(c.Loops) == 0 || size < 1 {
		panic(fmt.Sprintf("tile: %d loops, tile size %d", len(c.Loops), size))
	}
	boundary := c.Late != nil
	seeds := c.Loops[0].Size
	if boundary {
		seeds = min(c.Loops[0].Core, seeds)
	}
	nb := max(1, (seeds+size-1)/size)
	// With a boundary, tile nb is the boundary while the tiles grow
	// (colourRanks and levels leave it out: s.Tiles is nb); finish
	// splits it at each loop's Owned.
	groups := nb
	if boundary {
		groups = nb + 1
	}
	rank := make([]int32, nb)
	for b := range rank {
		rank[b] = int32(b)
	}
	tileOf := grow(c, size, rank, !parallel)
	s := &Schedule{Tiles: nb, Parallel: parallel}
	s.Elems, s.Offsets = group(tileOf, groups)
	if !parallel {
		s.Colours = []int32{0, int32(nb)}
		s.finish(c, tileOf)
		return s
	}
	if nb > 1 {
		// Grow again with the blocks in the order of a colouring of
		// the tiles grown in block order, so that tiles of one colour
		// are far apart.
		rank = colourRanks(c, s)
		tileOf = grow(c, size, rank, false)
		s.Elems, s.Offsets = group(tileOf, groups)
	}
	level := levels(c, s)
	// Renumber the tiles by level, then rank.
	order := make([]int32, nb) // new number → old (rank)
	for t := range order {
		order[t] = int32(t)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return int(level[a]) - int(level[b]) })
	newOf := make([]int32, nb)
	for nt, t := range order {
		newOf[t] = int32(nt)
	}
	for j := range tileOf {
		for e, t := range tileOf[j] {
			if int(t) < nb { // the boundary keeps its number
				tileOf[j][e] = newOf[t]
			}
		}
	}
	s.Colours = []int32{0}
	for nt := 1; nt <= nb; nt++ {
		if nt == nb || level[order[nt]] != level[order[nt-1]] {
			s.Colours = append(s.Colours, int32(nt))
		}
	}
	s.finish(c, tileOf)
	return s
}

// finish groups the elements by tile (tileOf: s.Tiles tiles, plus the
// boundary as tile s.Tiles when c has late items, which it splits at
// each loop's Owned into the last two tiles) and sets the runs.
func (s *Schedule) finish(c *Chain, tileOf [][]int32) {
	if c.Late != nil {
		b := int32(s.Tiles)
		for j, t := range tileOf {
			for e := c.Loops[j].Owned; e < len(t); e++ {
				if t[e] == b {
					t[e] = b + 1
				}
			}
		}
		s.Tiles += 2
		s.Boundary = true
	}
	s.Elems, s.Offsets = group(tileOf, s.Tiles)
	s.runs()
}

// grow assigns every element of every loop to a tile, by execution rank:
// the seed loop's element e to rank[e/size], a later loop's to the
// highest rank among the earlier elements it depends on (or, with none,
// to the rank of the seed block at its relative position). With late
// items (c.Late), a late element goes to the boundary, rank len(rank).
// With ordered (a sequential schedule, whose tiles run in rank order),
// each chunk of Lanes elements goes to one tile, and an element that
// modifies an item goes to no lower rank than the elements before it in
// its loop that modify that item (orderWrites), so that an item's
// modifications by one loop come in element order, as when the loop runs
// alone, and increments give the same bits; and the elements of a loop
// that asks for it (Loop.InOrder) go to no lower rank than the elements
// before them.
//
// It goes argument by argument over the elements (depend, markTouched), which
// keeps each pass a plain loop over one map.
func grow(c *Chain, size int, rank []int32, ordered bool) [][]int32 {
	nb := len(rank)
	bnd := int32(nb)
	// last[d][k]: the latest tile (in rank) that modified (w) or read (r)
	// item k of data d so far; -1 none.
	lastW := make([][]int32, len(c.Data))
	lastR := make([][]int32, len(c.Data))
	var same [][]int32 // ordered: this loop's latest modification of each item
	if ordered {
		same = make([][]int32, len(c.Data))
	}
	tileOf := make([][]int32, len(c.Loops))
	for j := range c.Loops {
		l := &c.Loops[j]
		for _, a := range l.Args {
			if lastW[a.Data] == nil {
				lastW[a.Data] = filled(c.Data[a.Data], -1)
				lastR[a.Data] = filled(c.Data[a.Data], -1)
			}
		}
		t := filled(l.Size, -1)
		early := l.Size // elements from early on are late
		if c.Late != nil {
			early = min(l.Core, l.Size)
		}
		for ai := range l.Args {
			a := &l.Args[ai]
			var late []Lateness
			if c.Late != nil {
				late = c.Late[a.Data]
			}
			depend(t[:early], a, lastW[a.Data], lastR[a.Data], late, bnd)
		}
		for e := range t {
			dep := t[e]
			switch {
			case e >= early:
				dep = bnd
			case j == 0 && dep < bnd:
				dep = rank[e/size]
			case dep < 0:
				dep = rank[int(int64(e)*int64(nb)/int64(early))]
			}
			t[e] = dep
		}
		if ordered {
			orderWrites(c, l, t, same)
		}
		// The loop's elements are independent of each other: its
		// accesses count for the loops after it only.
		for ai := range l.Args {
			a := &l.Args[ai]
			last := lastR[a.Data]
			if a.Write {
				last = lastW[a.Data]
			}
			markTouched(t, a, last)
		}
		tileOf[j] = t
	}
	return tileOf
}

// depend raises t[e], for each element e of t, to the latest tile among
// those that touched what argument a touches for e in a way it depends
// on: modified it (w), or read it when a modifies it (r); to the boundary
// bnd when a touches a late item so (late, nil: none).
func depend(t []int32, a *Arg, w, r []int32, late []Lateness, bnd int32) {
	if late == nil && a.Map != nil && a.Idx >= 0 {
		// The common case (one process, an argument through one map
		// column), without the per-item tests.
		m, ar, idx := a.Map, a.Arity, a.Idx
		if a.Write {
			for e := range t {
				k := m[e*ar+idx]
				t[e] = max(t[e], w[k], r[k])
			}
		} else {
			for e := range t {
				t[e] = max(t[e], w[m[e*ar+idx]])
			}
		}
		return
	}
	dep := func(e int, k int32) {
		d := w[k]
		if a.Write {
			d = max(d, r[k])
		}
		if late != nil && (late[k] == LateTouch || a.Write && late[k] == LateWrite) {
			d = bnd
		}
		t[e] = max(t[e], d)
	}
	switch m, ar := a.Map, a.Arity; {
	case m == nil:
		for e := range t {
			dep(e, int32(e))
		}
	case a.Idx >= 0:
		for e := range t {
			dep(e, m[e*ar+a.Idx])
		}
	default:
		for e := range t {
			for _, k := range m[e*ar : (e+1)*ar] {
				dep(e, k)
			}
		}
	}
}

// markTouched raises last[k] to the tile of each element of t that touches item
// k through argument a.
func markTouched(t []int32, a *Arg, last []int32) {
	switch m, ar := a.Map, a.Arity; {
	case m == nil:
		for e, te := range t {
			last[e] = max(last[e], te)
		}
	case a.Idx >= 0:
		for e, te := range t {
			k := m[e*ar+a.Idx]
			last[k] = max(last[k], te)
		}
	default:
		for e, te := range t {
			for _, k := range m[e*ar : (e+1)*ar] {
				last[k] = max(last[k], te)
			}
		}
	}
}

// Lanes is the number of consecutive elements, starting at a multiple of
// it, that a sequential schedule keeps in one tile (orderWrites): the
// widest SIMD lanes of the host backends, so that a tile's runs of a
// loop's elements are cut into the chunks of lanes that running the loop
// alone makes, and each element runs in lanes, or with the scalar code,
// in both (the two may round differently where the compiler fuses a
// multiply and an add in one and not the other).
const Lanes = 8

// orderWrites raises the tiles t of loop l's elements, chunk of Lanes
// elements by chunk in element order, so that a chunk's elements share
// one tile and an element modifying an item goes to no lower tile than
// the elements before it that modify the item (same[d] holds, per item
// of data d, the latest tile of those so far; it is reset here for the
// data l modifies); with l.InOrder, to no lower tile than the elements
// before it.
func orderWrites(c *Chain, l *Loop, t []int32, same [][]int32) {
	var writes []*Arg
	for ai := range l.Args {
		a := &l.Args[ai]
		if !a.Write {
			continue
		}
		writes = append(writes, a)
		if same[a.Data] == nil {
			same[a.Data] = make([]int32, c.Data[a.Data])
		}
		for k := range same[a.Data] {
			same[a.Data][k] = -1
		}
	}
	var buf [1]int32
	prev := int32(-1)
	for e0 := 0; e0 < len(t); e0 += Lanes {
		chunk := t[e0:min(e0+Lanes, len(t))]
		tc := slices.Max(chunk)
		if l.InOrder {
			tc = max(tc, prev)
		}
		for e := e0; e < e0+len(chunk); e++ {
			for _, a := range writes {
				for _, k := range a.items(e, &buf) {
					tc = max(tc, same[a.Data][k])
				}
			}
		}
		for i := range chunk {
			chunk[i] = tc
		}
		for e := e0; e < e0+len(chunk); e++ {
			for _, a := range writes {
				for _, k := range a.items(e, &buf) {
					same[a.Data][k] = tc
				}
			}
		}
		prev = tc
	}
}

// colourRanks colours the tiles of s (grown in block order) greedily, in
// order, so that tiles touching a common item get different colours (at
// most 64; beyond, tiles share the last), and returns each block's rank
// when the blocks run colour by colour.
func colourRanks(c *Chain, s *Schedule) []int32 {
	masks := make([][]uint64, len(c.Data))
	for d, n := range c.Data {
		masks[d] = make([]uint64, n)
	}
	colour := make([]int, s.Tiles)
	count := make([]int32, 65)
	var buf []int32
	for t := range s.Tiles {
		var used uint64
		each(c, s, t, &buf, func(a *Arg, ks []int32) {
			m := masks[a.Data]
			for _, k := range ks {
				used |= m[k]
			}
		})
		col := 63
		for i := range 64 {
			if used&(1<<i) == 0 {
				col = i
				break
			}
		}
		colour[t] = col
		count[col+1]++
		each(c, s, t, &buf, func(a *Arg, ks []int32) {
			m := masks[a.Data]
			for _, k := range ks {
				m[k] |= 1 << col
			}
		})
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	rank := make([]int32, s.Tiles)
	for t := range s.Tiles {
		rank[t] = count[colour[t]]
		count[colour[t]]++
	}
	return rank
}

// levels returns, for each tile in rank order, one more than the highest
// level of the lower-ranked tiles it conflicts with (0 when none).
func levels(c *Chain, s *Schedule) []int32 {
	lvW := make([][]int32, len(c.Data))
	lvR := make([][]int32, len(c.Data))
	for _, l := range c.Loops {
		for _, a := range l.Args {
			if lvW[a.Data] == nil {
				lvW[a.Data] = filled(c.Data[a.Data], -1)
				lvR[a.Data] = filled(c.Data[a.Data], -1)
			}
		}
	}
	level := make([]int32, s.Tiles)
	var buf []int32
	for t := range s.Tiles {
		lv := int32(0)
		each(c, s, t, &buf, func(a *Arg, ks []int32) {
			w, r := lvW[a.Data], lvR[a.Data]
			for _, k := range ks {
				lv = max(lv, w[k]+1)
				if a.Write {
					lv = max(lv, r[k]+1)
				}
			}
		})
		each(c, s, t, &buf, func(a *Arg, ks []int32) {
			last := lvR[a.Data]
			if a.Write {
				last = lvW[a.Data]
			}
			for _, k := range ks {
				last[k] = max(last[k], lv)
			}
		})
		level[t] = lv
	}
	return level
}

// each calls f for every argument of every loop with the items it
// touches for the loop's elements of tile t, gathered into *buf (reused).
func each(c *Chain, s *Schedule, t int, buf *[]int32, f func(a *Arg, ks []int32)) {
	for j := range c.Loops {
		l := &c.Loops[j]
		els := s.Elems[j][s.Offsets[j][t]:s.Offsets[j][t+1]]
		if len(els) == 0 {
			continue
		}
		for ai := range l.Args {
			a := &l.Args[ai]
			*buf = a.gather(els, (*buf)[:0])
			f(a, *buf)
		}
	}
}

// gather appends to buf the items argument a touches for elements els.
func (a *Arg) gather(els, buf []int32) []int32 {
	switch m, ar := a.Map, a.Arity; {
	case m == nil:
		return append(buf, els...)
	case a.Idx >= 0:
		for _, e := range els {
			buf = append(buf, m[int(e)*ar+a.Idx])
		}
	default:
		for _, e := range els {
			buf = append(buf, m[int(e)*ar:(int(e)+1)*ar]...)
		}
	}
	return buf
}

// group sorts each loop's elements by tile (counting sort, so that a
// tile's elements stay in increasing order).
func group(tileOf [][]int32, nt int) (elems, offsets [][]int32) {
	elems = make([][]int32, len(tileOf))
	offsets = make([][]int32, len(tileOf))
	for j, t := range tileOf {
		off := make([]int32, nt+1)
		for _, x := range t {
			off[x+1]++
		}
		for i := 1; i <= nt; i++ {
			off[i] += off[i-1]
		}
		el := make([]int32, len(t))
		next := slices.Clone(off[:nt])
		for e, x := range t {
			el[next[x]] = int32(e)
			next[x]++
		}
		elems[j], offsets[j] = el, off
	}
	return elems, offsets
}

func filled(n int, v int32) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// runs sets Runs and RunOffsets from Elems and Offsets.
func (s *Schedule) runs() {
	s.Runs = make([][]int32, len(s.Elems))
	s.RunOffsets = make([][]int32, len(s.Elems))
	for j, el := range s.Elems {
		off := s.Offsets[j]
		ro := make([]int32, s.Tiles+1)
		var ru []int32
		for t := range s.Tiles {
			ro[t] = int32(len(ru) / 2)
			for q := off[t]; q < off[t+1]; q++ {
				if n := len(ru); q > off[t] && ru[n-1] == el[q] {
					ru[n-1]++
					continue
				}
				ru = append(ru, el[q], el[q]+1)
			}
		}
		ro[s.Tiles] = int32(len(ru) / 2)
		s.Runs[j], s.RunOffsets[j] = ru, ro
	}
}
