package plan

import "fmt"

// ownerGap is the length under which a run of interior elements next to
// separators joins the separators.
const ownerGap = 256

// layoutOwners cuts the iteration set into blocks for the owner-compute
// layout. Each section is split into in.Owners contiguous pieces of nearly
// equal length. A target is owned by a piece when no other piece of the
// section modifies it; an element is interior when every target it modifies
// is owned by its own piece, and a separator otherwise. Each piece becomes
// runs of interior elements and runs of separators, cut into blocks of at
// most BlockSize elements; separator runs may cross piece boundaries, and
// interior runs shorter than ownerGap next to separators join them. The
// result holds, per block, its piece for interior blocks and -1 for
// separator blocks.
func (p *Plan) layoutOwners(in *Input, an *analysis) ([]int32, error) {
	bs, np := p.BlockSize, in.Owners
	// own[g][x]: 0 untouched in this section, t+1 modified only by piece
	// t, -1 modified by several pieces.
	own := make([][]int32, len(an.groupSize))
	for g, n := range an.groupSize {
		own[g] = make([]int32, n)
	}
	cols := an.thr
	kind := make([]int32, in.Exec) // per element: its piece if interior, else -1
	var piece []int32
	ends := [3]int{in.Core, in.Owned, in.Exec}
	start := 0
	for s, end := range ends {
		n := end - start
		first := func(t int) int { return start + int(int64(n)*int64(t)/int64(np)) }
		for t := 0; t < np; t++ {
			tag := int32(t + 1)
			for ci := range cols {
				c := &cols[ci]
				o, size := own[c.group], uint32(an.groupSize[c.group])
				for e := first(t); e < first(t+1); e++ {
					x := c.m[e*c.arity+c.col]
					if uint32(x) >= size {
						return nil, fmt.Errorf("plan: map entry for element %d, column %d is %d, outside the target set [0, %d)", e, c.col, x, size)
					}
					switch o[x] {
					case 0:
						o[x] = tag
					case tag, -1:
					default:
						o[x] = -1
					}
				}
			}
		}
		for t := 0; t < np; t++ {
			tag := int32(t + 1)
			for e := first(t); e < first(t+1); e++ {
				k := int32(t)
				for ci := range cols {
					c := &cols[ci]
					if own[c.group][c.m[e*c.arity+c.col]] != tag {
						k = -1
						break
					}
				}
				kind[e] = k
			}
		}
		// Short interior runs joined to separators on either side become
		// separators: they are as safe there (separator blocks are
		// coloured), and separator blocks stay few and long.
		for e := start; e < end; {
			if kind[e] < 0 {
				e++
				continue
			}
			f := e + 1
			for f < end && kind[f] == kind[e] {
				f++
			}
			if f-e < ownerGap && (e > start && kind[e-1] < 0 || f < end && kind[f] < 0) {
				for i := e; i < f; i++ {
					kind[i] = -1
				}
			}
			e = f
		}
		cur, run := int32(-2), 0
		for e := start; e < end; e++ {
			if kind[e] != cur || run == bs {
				p.Offset = append(p.Offset, int32(e))
				p.NElems = append(p.NElems, 0)
				piece = append(piece, kind[e])
				cur, run = kind[e], 0
			}
			p.NElems[len(p.NElems)-1]++
			run++
		}
		for ci := range cols {
			c := &cols[ci]
			for e := start; e < end; e++ {
				own[c.group][c.m[e*c.arity+c.col]] = 0
			}
		}
		switch s {
		case 0:
			p.NBlocksCore = len(p.Offset)
		case 1:
			p.NBlocksOwned = len(p.Offset)
		}
		start = end
	}
	p.NBlocks = len(p.Offset)
	return piece, nil
}

// splitOwners fills OwnerOffset. An interior colour's blocks go to their
// pieces; a separator colour's blocks, which never conflict, are shared
// evenly.
func (p *Plan) splitOwners(piece []int32) {
	np := p.Owners
	p.OwnerOffset = make([]int32, p.NColors*np+1)
	for c := 0; c < p.NColors; c++ {
		lo, hi := p.ColOffset[c], p.ColOffset[c+1]
		off := p.OwnerOffset[c*np : (c+1)*np]
		if piece[p.BlkMap[lo]] < 0 {
			for t := range off {
				off[t] = lo + int32(int64(hi-lo)*int64(t)/int64(np))
			}
			continue
		}
		i := lo
		for t := range off {
			off[t] = i
			for i < hi && piece[p.BlkMap[i]] == int32(t) {
				i++
			}
		}
	}
	p.OwnerOffset[p.NColors*np] = int32(p.NBlocks)
}
