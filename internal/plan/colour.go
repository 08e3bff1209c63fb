package plan

import "math/bits"

// maskCol is a modifying map column with the mask array of its group.
type maskCol struct {
	mask  []uint32
	m     []int32
	arity int
	col   int
}

func resolve(cols []modCol, masks [][]uint32) []maskCol {
	out := make([]maskCol, len(cols))
	for i, c := range cols {
		out[i] = maskCol{mask: masks[c.group], m: c.m, arity: c.arity, col: c.col}
	}
	return out
}

const full = ^uint32(0)

// colourThreads gives every element a colour within its block so that two
// elements of one colour never modify the same target.
func (p *Plan) colourThreads(an *analysis, sc *scratch) {
	p.ThrCol = make([]int32, p.total())
	p.NThrCol = make([]int32, p.NBlocks)
	if len(an.thr) == 0 {
		for b := range p.NThrCol {
			p.NThrCol[b] = 1
		}
		return
	}
	if an.thrLocal {
		// Blocks are independent: colour contiguous runs of them
		// concurrently.
		nb := p.NBlocks
		w := workers(nb, len(p.ThrCol))
		run(w, w, func(i int) {
			p.colourThreadsLocal(an, i*nb/w, (i+1)*nb/w)
		})
		return
	}
	// Global target indices: each group's masks sit at an offset of one
	// array as long as the sum of the groups' target sets.
	sc.groupMasks(an.groupSize)
	goff := make([]int, len(an.groupSize))
	for g := 1; g < len(goff); g++ {
		goff[g] = goff[g-1] + an.groupSize[g-1]
	}
	cols := make([]slotCol, len(an.thr))
	for i, c := range an.thr {
		cols[i] = slotCol{table: c.m, stride: c.arity, k: c.col, off: goff[c.group]}
	}
	for b := 0; b < p.NBlocks; b++ {
		s, e := int(p.Offset[b]), int(p.Offset[b]+p.NElems[b])
		p.NThrCol[b] = colourBlock(p.ThrCol[s:e], s, cols, sc.masks)
	}
}

// colourThreadsLocal colours the elements of blocks [lo,hi) using local
// indices, so the masks of one block occupy a small array: each conflict
// group gets a region as long as its representative's list for the block.
func (p *Plan) colourThreadsLocal(an *analysis, lo, hi int) {
	cols := make([]slotCol, len(an.thrLoc))
	for i, c := range an.thrLoc {
		cols[i] = slotCol{table: p.LocMap[c.arg], stride: c.stride, k: c.k}
	}
	goff := make([]int, len(an.groupRep))
	sc := getScratch()
	defer putScratch(sc)
	for b := lo; b < hi; b++ {
		s, e := int(p.Offset[b]), int(p.Offset[b]+p.NElems[b])
		total := 0
		for g, r := range an.groupRep {
			if r >= 0 {
				goff[g] = total
				total += int(p.IndSizes[r][b])
			}
		}
		if cap(sc.local) < total {
			sc.local = make([]uint32, total)
		}
		for ci := range cols {
			cols[ci].off = goff[an.thrLoc[ci].group]
		}
		p.NThrCol[b] = colourBlock(p.ThrCol[s:e], s, cols, sc.local[:total])
	}
}

// slotCol addresses the mask word that an element touches through one
// modifying map column: element i uses mask[off + table[i*stride+k]].
type slotCol struct {
	table     []int32
	stride, k int
	off       int
}

// colourBlock colours the elements s, s+1, ... of one block (tc[i-s] gets
// element i's colour) greedily: each takes the lowest colour that no element
// touching one of its mask words has, 32 colours a pass, the elements left
// over going to later passes with the next 32. It returns the number of
// colours. The mask words it uses need not be cleared beforehand.
func colourBlock(tc []int32, s int, cols []slotCol, mask []uint32) int32 {
	e := s + len(tc)
	base, ncol := int32(0), int32(0)
	for pass := 0; ; pass++ {
		for ci := range cols {
			c := &cols[ci]
			for i := s; i < e; i++ {
				if pass == 0 || tc[i-s] < 0 {
					mask[c.off+int(c.table[i*c.stride+c.k])] = 0
				}
			}
		}
		left := false
		for i := s; i < e; i++ {
			if pass > 0 && tc[i-s] >= 0 {
				continue
			}
			var mk uint32
			for ci := range cols {
				c := &cols[ci]
				mk |= mask[c.off+int(c.table[i*c.stride+c.k])]
			}
			if mk == full {
				tc[i-s] = -1
				left = true
				continue
			}
			bit := int32(bits.TrailingZeros32(^mk))
			tc[i-s] = base + bit
			ncol = max(ncol, base+bit+1)
			set := uint32(1) << bit
			for ci := range cols {
				c := &cols[ci]
				mask[c.off+int(c.table[i*c.stride+c.k])] |= set
			}
		}
		if !left {
			return ncol
		}
		base += 32
	}
}

// total returns the number of elements covered by the blocks.
func (p *Plan) total() int {
	if p.NBlocks == 0 {
		return 0
	}
	return int(p.Offset[p.NBlocks-1] + p.NElems[p.NBlocks-1])
}

// blockSources are the modified targets of a block: whole staging lists of
// fully modified datasets, and modifying columns of the others.
type blockSources struct {
	p     *Plan
	lists []listSrc
	cols  []maskCol
}

type listSrc struct {
	mask  []uint32
	ind   []int32
	offs  []int32
	sizes []int32
}

func (bs *blockSources) empty() bool { return len(bs.lists) == 0 && len(bs.cols) == 0 }

// or returns the union of the masks of block b's modified targets.
func (bs *blockSources) or(b int) uint32 {
	var mk uint32
	for li := range bs.lists {
		l := &bs.lists[li]
		o := int(l.offs[b])
		for _, g := range l.ind[o : o+int(l.sizes[b])] {
			mk |= l.mask[g]
		}
	}
	s, e := int(bs.p.Offset[b]), int(bs.p.Offset[b]+bs.p.NElems[b])
	for ci := range bs.cols {
		c := &bs.cols[ci]
		for i := s*c.arity + c.col; i < e*c.arity; i += c.arity {
			mk |= c.mask[c.m[i]]
		}
	}
	return mk
}

// apply sets (or, with clear, zeroes) the masks of block b's modified
// targets.
func (bs *blockSources) apply(b int, set uint32, clear bool) {
	for li := range bs.lists {
		l := &bs.lists[li]
		o := int(l.offs[b])
		for _, g := range l.ind[o : o+int(l.sizes[b])] {
			if clear {
				l.mask[g] = 0
			} else {
				l.mask[g] |= set
			}
		}
	}
	s, e := int(bs.p.Offset[b]), int(bs.p.Offset[b]+bs.p.NElems[b])
	for ci := range bs.cols {
		c := &bs.cols[ci]
		for i := s*c.arity + c.col; i < e*c.arity; i += c.arity {
			if clear {
				c.mask[c.m[i]] = 0
			} else {
				c.mask[c.m[i]] |= set
			}
		}
	}
}

// colourBlocks colours the blocks section by section (core, owned, exec
// halo), each section's colours following the previous section's. In the
// owner-compute layout (piece not nil) a section's interior blocks (piece
// >= 0) share its first colour and only its separator blocks are coloured
// greedily, after it.
func (p *Plan) colourBlocks(an *analysis, sc *scratch, piece []int32) {
	nb := p.NBlocks
	p.BlkCol = make([]int32, nb)
	src := blockSources{p: p}
	if len(an.blkLists) > 0 || len(an.blkCols) > 0 {
		masks := sc.groupMasks(an.groupSize)
		for _, d := range an.blkLists {
			src.lists = append(src.lists, listSrc{
				mask: masks[an.ds[d].group], ind: p.IndMap[d], offs: p.IndOffs[d], sizes: p.IndSizes[d],
			})
		}
		src.cols = resolve(an.blkCols, masks)
	}
	sections := [3][2]int{{0, p.NBlocksCore}, {p.NBlocksCore, p.NBlocksOwned}, {p.NBlocksOwned, nb}}
	var ends [3]int
	base := int32(0)
	for si, sec := range sections {
		lo, hi := sec[0], sec[1]
		switch {
		case lo == hi:
		case src.empty():
			for b := lo; b < hi; b++ {
				p.BlkCol[b] = base
			}
			base++
		default:
			pend := sc.pend[:0]
			off := base
			for b := lo; b < hi; b++ {
				if piece != nil && piece[b] >= 0 {
					p.BlkCol[b] = base
					off = base + 1
					continue
				}
				pend = append(pend, int32(b))
			}
			used := off
			for len(pend) > 0 {
				for _, b := range pend {
					src.apply(int(b), 0, true)
				}
				next := pend[:0]
				for _, b := range pend {
					mk := src.or(int(b))
					if mk == full {
						next = append(next, b)
						continue
					}
					bit := int32(bits.TrailingZeros32(^mk))
					p.BlkCol[b] = off + bit
					used = max(used, off+bit+1)
					src.apply(int(b), uint32(1)<<bit, false)
				}
				pend = next
				off += 32
			}
			sc.pend = pend[:0]
			base = used
		}
		ends[si] = int(base)
	}
	p.NColorsCore, p.NColorsOwned, p.NColors = ends[0], ends[1], ends[2]
}

// groupBlocks lists the blocks by colour.
func (p *Plan) groupBlocks() {
	p.NColBlk = make([]int32, p.NColors)
	p.ColOffset = make([]int32, p.NColors+1)
	p.BlkMap = make([]int32, p.NBlocks)
	for _, c := range p.BlkCol {
		p.NColBlk[c]++
	}
	for c, n := range p.NColBlk {
		p.ColOffset[c+1] = p.ColOffset[c] + n
	}
	next := make([]int32, p.NColors)
	copy(next, p.ColOffset)
	for b, c := range p.BlkCol {
		p.BlkMap[next[c]] = int32(b)
		next[c]++
	}
}
