package plan

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// colKey identifies one column of one map table. Two arguments built on the
// same table share the address of its first entry.
type colKey struct {
	p            *int32
	n, arity, cl int
}

func keyOf(m []int32, arity, col int) colKey {
	var p *int32
	if len(m) > 0 {
		p = &m[0]
	}
	return colKey{p: p, n: len(m), arity: arity, cl: col}
}

// column is one map column through which an indirect dataset is reached.
type column struct {
	m     []int32
	arity int
	col   int
	arg   int // first argument using the column, for error messages
	key   colKey
}

// modCol is a map column through which a conflict group is modified.
type modCol struct {
	group int
	m     []int32
	arity int
	col   int
}

// locArg describes one LocMap slice to fill.
type locArg struct {
	arg   int
	m     []int32
	arity int
	idx   int // -1 for vector arguments
}

// locCol is a modifying argument column seen through its LocMap: element
// i's local index is LocMap[arg][i*stride+k].
type locCol struct {
	arg    int
	stride int
	k      int
	group  int
}

// dsInfo is what the builder knows about one indirect dataset.
type dsInfo struct {
	size   int
	bytes  int
	cols   []column
	colSet map[colKey]struct{} // the keys of cols
	rep    int                 // dataset whose lists this one shares (itself when none)
	group  int                 // compact conflict group
	anyMod bool
	allMod bool
}

// analysis is the argument structure distilled from an Input.
type analysis struct {
	ds        []dsInfo
	groupSize []int
	locSrc    []int      // per argument: argument whose LocMap it shares, -1 for direct
	fill      [][]locArg // per representative dataset: LocMap slices it fills
	thr       []modCol   // modifying columns, for thread colouring
	// thrLocal is true when every conflict group is modified through
	// datasets of a single list representative, so thread colouring can
	// work on local indices (LocMap) with tiny per-block mask arrays.
	thrLocal bool
	thrLoc   []locCol // modifying LocMap columns, when thrLocal
	groupRep []int    // per group: representative whose lists number it, or -1
	blkLists []int    // datasets whose whole per-block lists are modified
	blkCols  []modCol // modifying columns of partly modified datasets
}

// argCols calls f for each map column used by arg.
func argCols(arg *Arg, f func(col int)) {
	if arg.Idx >= 0 {
		f(arg.Idx)
		return
	}
	for k := 0; k < arg.Arity; k++ {
		f(k)
	}
}

// analyse groups the arguments by dataset, finds datasets and arguments
// with identical staging data, and lists the columns that constrain the
// colouring. in must have been validated.
func analyse(in *Input) *analysis {
	an := &analysis{ds: make([]dsInfo, in.NInds), locSrc: make([]int, len(in.Args))}
	// Conflict groups, renumbered densely.
	gid := make(map[int]int)
	for d := range an.ds {
		ds := &an.ds[d]
		ds.size = in.IndSetSize[d]
		ds.allMod = true
		key := d
		if in.Conflict != nil {
			key = in.Conflict[d]
		}
		g, ok := gid[key]
		if !ok {
			g = len(an.groupSize)
			gid[key] = g
			an.groupSize = append(an.groupSize, ds.size)
		}
		ds.group = g
	}
	for a := range in.Args {
		arg := &in.Args[a]
		if arg.Ind < 0 {
			continue
		}
		ds := &an.ds[arg.Ind]
		ds.bytes = max(ds.bytes, arg.ElemBytes)
		ds.anyMod = ds.anyMod || arg.Modifies
		ds.allMod = ds.allMod && arg.Modifies
		if ds.colSet == nil {
			ds.colSet = make(map[colKey]struct{})
		}
		// Sets, not searches of the lists: a vector argument brings
		// as many columns as its map's arity, possibly thousands.
		argCols(arg, func(col int) {
			k := keyOf(arg.Map, arg.Arity, col)
			if _, dup := ds.colSet[k]; dup {
				return
			}
			ds.colSet[k] = struct{}{}
			ds.cols = append(ds.cols, column{m: arg.Map, arity: arg.Arity, col: col, arg: a, key: k})
		})
	}
	// Datasets reached through exactly the same columns of targets of the
	// same size have identical lists; compute them once.
	for d := range an.ds {
		ds := &an.ds[d]
		ds.rep = d
		for e := 0; e < d; e++ {
			if an.ds[e].rep == e && sameColumns(&an.ds[e], ds) {
				ds.rep = e
				break
			}
		}
	}
	// LocMap slices: arguments on the same column(s) of the same map and
	// datasets with shared lists share the slice.
	an.fill = make([][]locArg, in.NInds)
	for a := range in.Args {
		arg := &in.Args[a]
		an.locSrc[a] = -1
		if arg.Ind < 0 {
			continue
		}
		an.locSrc[a] = a
		rep := an.ds[arg.Ind].rep
		k := keyOf(arg.Map, arg.Arity, arg.Idx)
		for b := 0; b < a; b++ {
			o := &in.Args[b]
			if o.Ind >= 0 && an.locSrc[b] == b && an.ds[o.Ind].rep == rep && keyOf(o.Map, o.Arity, o.Idx) == k {
				an.locSrc[a] = b
				break
			}
		}
		if an.locSrc[a] == a {
			an.fill[rep] = append(an.fill[rep], locArg{arg: a, m: arg.Map, arity: arg.Arity, idx: arg.Idx})
		}
	}
	// Colouring sources: each modifying column of each group once.
	type groupCol struct {
		group int
		key   colKey
	}
	seenThr, seenBlk := map[groupCol]struct{}{}, map[groupCol]struct{}{}
	addCol := func(list []modCol, seen map[groupCol]struct{}, g int, m []int32, arity, col int) []modCol {
		k := groupCol{g, keyOf(m, arity, col)}
		if _, dup := seen[k]; dup {
			return list
		}
		seen[k] = struct{}{}
		return append(list, modCol{group: g, m: m, arity: arity, col: col})
	}
	for a := range in.Args {
		arg := &in.Args[a]
		if arg.Ind < 0 || !arg.Modifies {
			continue
		}
		ds := &an.ds[arg.Ind]
		argCols(arg, func(col int) {
			an.thr = addCol(an.thr, seenThr, ds.group, arg.Map, arg.Arity, col)
			if !ds.allMod {
				an.blkCols = addCol(an.blkCols, seenBlk, ds.group, arg.Map, arg.Arity, col)
			}
		})
	}
	an.groupRep = make([]int, len(an.groupSize))
	for g := range an.groupRep {
		an.groupRep[g] = -1
	}
	an.thrLocal = true
	seenLoc := map[[2]int]struct{}{} // LocMap columns (arg, k) in thrLoc
	for a := range in.Args {
		arg := &in.Args[a]
		if arg.Ind < 0 || !arg.Modifies {
			continue
		}
		ds := &an.ds[arg.Ind]
		switch an.groupRep[ds.group] {
		case -1:
			an.groupRep[ds.group] = ds.rep
		case ds.rep:
		default:
			an.thrLocal = false
		}
		src := an.locSrc[a]
		argCols(arg, func(col int) {
			lc := locCol{arg: src, stride: 1, group: ds.group}
			if arg.Idx < 0 {
				lc.stride, lc.k = arg.Arity, col
			}
			if _, dup := seenLoc[[2]int{lc.arg, lc.k}]; dup {
				return
			}
			seenLoc[[2]int{lc.arg, lc.k}] = struct{}{}
			an.thrLoc = append(an.thrLoc, lc)
		})
	}
	for d := range an.ds {
		ds := &an.ds[d]
		if !ds.anyMod || !ds.allMod {
			continue
		}
		dup := false
		for _, e := range an.blkLists {
			if an.ds[e].rep == ds.rep && an.ds[e].group == ds.group {
				dup = true
				break
			}
		}
		if !dup {
			an.blkLists = append(an.blkLists, d)
		}
	}
	return an
}

// sameColumns reports whether two datasets with targets of the same size
// are reached through the same set of columns (cols holds no duplicates).
func sameColumns(a, b *dsInfo) bool {
	if a.size != b.size || len(a.cols) != len(b.cols) {
		return false
	}
	for i := range a.cols {
		if _, ok := b.colSet[a.cols[i].key]; !ok {
			return false
		}
	}
	return true
}

// adaptiveBlockSize picks the block size when the caller leaves it to the
// planner; see the package documentation.
func adaptiveBlockSize(an *analysis) int {
	perElem := 0
	for d := range an.ds {
		perElem += an.ds[d].bytes * len(an.ds[d].cols)
	}
	if perElem == 0 {
		return maxAdaptive
	}
	bs := stagingBudget / perElem / 32 * 32
	return min(max(bs, minAdaptive), maxAdaptive)
}

// scratch holds work arrays reused between Build calls.
type scratch struct {
	seen  []uint64 // bit set over targets; all zero between blocks
	loc   []int32  // per target: local index in the current block's list
	masks []uint32 // colour masks of all conflict groups, concatenated
	buf   []int32  // concatenated lists under construction
	pend  []int32  // blocks still to colour
	local []uint32 // per-block colour masks indexed by local target
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) { scratchPool.Put(s) }

// targets makes seen and loc cover n targets.
func (s *scratch) targets(n int) {
	if len(s.loc) < n {
		s.seen = make([]uint64, (n+63)>>6)
		s.loc = make([]int32, n)
	}
}

// groupMasks returns one mask slice per conflict group. Their contents are
// arbitrary; the colouring clears what it uses.
func (s *scratch) groupMasks(sizes []int) [][]uint32 {
	total := 0
	for _, n := range sizes {
		total += n
	}
	if len(s.masks) < total {
		s.masks = make([]uint32, total)
	}
	out := make([][]uint32, len(sizes))
	off := 0
	for g, n := range sizes {
		out[g] = s.masks[off : off+n : off+n]
		off += n
	}
	return out
}

// scanFactor and scanSlack decide how a block's list is ordered: by reading
// the bit set over the span of its targets, when that span covers fewer than
// scanFactor*n+scanSlack 64-bit words for n targets, or else by sorting.
const (
	scanFactor = 16
	scanSlack  = 64
)

// stage builds the per-block target lists and the local maps.
func (p *Plan) stage(in *Input, an *analysis) error {
	p.IndMap = make([][]int32, in.NInds)
	p.IndOffs = make([][]int32, in.NInds)
	p.IndSizes = make([][]int32, in.NInds)
	p.LocMap = make([][]int32, len(in.Args))
	for a := range in.Args {
		arg := &in.Args[a]
		if an.locSrc[a] != a {
			continue
		}
		n := in.Exec
		if arg.Idx < 0 {
			n *= arg.Arity
		}
		p.LocMap[a] = make([]int32, n)
	}
	// Datasets with distinct lists are independent: stage them
	// concurrently, each with its own work arrays.
	var reps []int
	for d := range an.ds {
		if an.ds[d].rep == d {
			reps = append(reps, d)
		}
	}
	errs := make([]error, len(reps))
	run(len(reps), workers(len(reps), in.Exec), func(i int) {
		d := reps[i]
		sc := getScratch()
		defer putScratch(sc)
		errs[i] = p.stageDataset(d, &an.ds[d], an.fill[d], sc)
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for d := range an.ds {
		if r := an.ds[d].rep; r != d {
			p.IndMap[d], p.IndOffs[d], p.IndSizes[d] = p.IndMap[r], p.IndOffs[r], p.IndSizes[r]
		}
	}
	for a := range in.Args {
		if s := an.locSrc[a]; s >= 0 && s != a {
			p.LocMap[a] = p.LocMap[s]
		}
	}
	return nil
}

// stageDataset builds the lists of dataset d and the LocMap slices in fill.
func (p *Plan) stageDataset(d int, ds *dsInfo, fill []locArg, sc *scratch) error {
	nb := p.NBlocks
	offs := make([]int32, nb)
	sizes := make([]int32, nb)
	p.IndOffs[d], p.IndSizes[d] = offs, sizes
	if len(ds.cols) == 0 {
		p.IndMap[d] = []int32{}
		return nil
	}
	sc.targets(ds.size)
	seen, loc := sc.seen[:(ds.size+63)>>6], sc.loc[:ds.size]
	usize := uint32(ds.size)
	buf := sc.buf[:0]
	for b := 0; b < nb; b++ {
		s, e := int(p.Offset[b]), int(p.Offset[b]+p.NElems[b])
		start := len(buf)
		if start > math.MaxInt32 {
			clear(seen)
			return fmt.Errorf("plan: indirect dataset %d: staging lists exceed the int32 range", d)
		}
		// Collect the distinct targets, marking them in the bit set.
		lo, hi := int32(math.MaxInt32), int32(-1)
		for ci := range ds.cols {
			c := &ds.cols[ci]
			m, ar := c.m, c.arity
			end := e * ar
			for i := s*ar + c.col; i < end; i += ar {
				g := m[i]
				if uint32(g) >= usize {
					clear(seen)
					return fmt.Errorf("plan: arg %d: map entry for element %d, column %d is %d, outside target set [0, %d) of indirect dataset %d",
						c.arg, i/ar, c.col, g, ds.size, d)
				}
				w, bit := g>>6, uint64(1)<<(g&63)
				if seen[w]&bit == 0 {
					seen[w] |= bit
					buf = append(buf, g)
					lo = min(lo, g)
					hi = max(hi, g)
				}
			}
		}
		// Order them and number them; leave the bit set clear.
		lst := buf[start:]
		n := len(lst)
		if n > 0 {
			wlo, whi := int(lo>>6), int(hi>>6)
			if whi-wlo < scanFactor*n+scanSlack {
				// Compact enough: reading the bit set in order
				// sorts the list without comparisons.
				k := int32(0)
				for w := wlo; w <= whi; w++ {
					x := seen[w]
					if x == 0 {
						continue
					}
					seen[w] = 0
					for x != 0 {
						g := int32(w<<6 | bits.TrailingZeros64(x))
						lst[k] = g
						loc[g] = k
						k++
						x &= x - 1
					}
				}
			} else {
				slices.Sort(lst)
				for k, g := range lst {
					loc[g] = int32(k)
					seen[g>>6] = 0
				}
			}
		}
		offs[b] = int32(start)
		sizes[b] = int32(n)
		for fi := range fill {
			f := &fill[fi]
			out, m, ar := p.LocMap[f.arg], f.m, f.arity
			if f.idx < 0 {
				for i := s * ar; i < e*ar; i++ {
					out[i] = loc[m[i]]
				}
			} else {
				for i := s; i < e; i++ {
					out[i] = loc[m[i*ar+f.idx]]
				}
			}
		}
	}
	if len(buf) > math.MaxInt32 {
		return fmt.Errorf("plan: indirect dataset %d: staging lists exceed the int32 range", d)
	}
	p.IndMap[d] = append(make([]int32, 0, len(buf)), buf...)
	sc.buf = buf[:0]
	return nil
}
