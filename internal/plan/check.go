package plan

import "fmt"

// Check verifies that p is a correct plan for in. It re-derives every
// invariant from the input rather than trusting the builder:
//
//   - the blocks partition [0,Exec) in order, no block crosses the Core or
//     Owned boundary, and only the last block of a section is shorter than
//     BlockSize (in the owner-compute layout any block may be shorter);
//   - BlkCol, NColBlk, ColOffset and BlkMap agree, colours are dense, and
//     core colours precede owned colours, which precede exec-halo colours;
//   - every staging list is strictly ascending, within the target set, and
//     holds exactly the targets its block references, and every LocMap
//     entry leads back to the map entry it replaces;
//   - thread colours are in range and no two elements of one block and one
//     thread colour modify the same target;
//   - in the owner-compute layout, OwnerOffset divides every colour's
//     blocks among Owners pieces in BlkMap order;
//   - no two blocks of one colour modify the same target (in the
//     owner-compute layout: no two blocks of one colour and different
//     pieces);
//   - NShared matches the lists.
//
// The error names the invariant and the block, element or argument where it
// fails. Check is much slower than Build and meant for testing and
// diagnostics.
func (p *Plan) Check(in Input) error {
	if p == nil {
		return fmt.Errorf("plan check: nil plan")
	}
	if err := validate(&in); err != nil {
		return err
	}
	for _, f := range []func(*Plan, *Input) error{
		(*Plan).checkBlocks,
		(*Plan).checkColours,
		(*Plan).checkStaging,
		(*Plan).checkThreadColours,
		(*Plan).checkBlockConflicts,
		(*Plan).checkShared,
	} {
		if err := f(p, &in); err != nil {
			return err
		}
	}
	return nil
}

func checkErr(format string, args ...any) error {
	return fmt.Errorf("plan check: "+format, args...)
}

func (p *Plan) checkBlocks(in *Input) error {
	nb := p.NBlocks
	if nb < 0 || len(p.Offset) != nb || len(p.NElems) != nb || len(p.BlkCol) != nb || len(p.NThrCol) != nb {
		return checkErr("NBlocks = %d but Offset, NElems, BlkCol, NThrCol have lengths %d, %d, %d, %d",
			nb, len(p.Offset), len(p.NElems), len(p.BlkCol), len(p.NThrCol))
	}
	if p.BlockSize < 1 {
		return checkErr("block size %d, need at least 1", p.BlockSize)
	}
	if in.BlockSize != 0 && p.BlockSize != in.BlockSize {
		return checkErr("block size %d, input asked for %d", p.BlockSize, in.BlockSize)
	}
	if in.BlockSize == 0 {
		if want := adaptiveBlockSize(analyse(in)); p.BlockSize != want {
			return checkErr("adaptive block size %d, expected %d", p.BlockSize, want)
		}
	}
	ends := [3]int{in.Core, in.Owned, in.Exec}
	pos, sec := 0, 0
	var secBlocks [3]int
	for b := 0; b < nb; b++ {
		for sec < 3 && pos == ends[sec] {
			sec++
		}
		if sec == 3 {
			return checkErr("block %d starts at %d, past the end of the iteration set %d", b, pos, in.Exec)
		}
		if int(p.Offset[b]) != pos {
			return checkErr("block %d starts at %d, expected %d (blocks must be contiguous and in order)", b, p.Offset[b], pos)
		}
		n := int(p.NElems[b])
		if n < 1 || n > p.BlockSize {
			return checkErr("block %d has %d elements, need 1..%d", b, n, p.BlockSize)
		}
		if pos+n > ends[sec] {
			return checkErr("block %d [%d,%d) crosses the section boundary at %d", b, pos, pos+n, ends[sec])
		}
		if n < p.BlockSize && pos+n != ends[sec] && in.Owners == 0 {
			return checkErr("block %d [%d,%d) is short but is not the last block of its section", b, pos, pos+n)
		}
		secBlocks[sec] = b + 1
		pos += n
	}
	if pos != in.Exec {
		return checkErr("blocks cover [0,%d), iteration set is [0,%d)", pos, in.Exec)
	}
	// Cumulative block counts per section.
	for s := 1; s < 3; s++ {
		secBlocks[s] = max(secBlocks[s], secBlocks[s-1])
	}
	if p.NBlocksCore != secBlocks[0] || p.NBlocksOwned != secBlocks[1] {
		return checkErr("NBlocksCore, NBlocksOwned = %d, %d, blocks give %d, %d",
			p.NBlocksCore, p.NBlocksOwned, secBlocks[0], secBlocks[1])
	}
	if len(p.ThrCol) != in.Exec {
		return checkErr("ThrCol has %d entries, iteration set has %d", len(p.ThrCol), in.Exec)
	}
	return nil
}

func (p *Plan) checkColours(in *Input) error {
	nb, nc := p.NBlocks, p.NColors
	if p.NColorsCore < 0 || p.NColorsCore > p.NColorsOwned || p.NColorsOwned > nc {
		return checkErr("colour sections out of order: NColorsCore %d, NColorsOwned %d, NColors %d",
			p.NColorsCore, p.NColorsOwned, nc)
	}
	if len(p.NColBlk) != nc || len(p.ColOffset) != nc+1 || len(p.BlkMap) != nb {
		return checkErr("NColBlk, ColOffset, BlkMap have lengths %d, %d, %d, need %d, %d, %d",
			len(p.NColBlk), len(p.ColOffset), len(p.BlkMap), nc, nc+1, nb)
	}
	if p.ColOffset[0] != 0 {
		return checkErr("ColOffset[0] = %d, need 0", p.ColOffset[0])
	}
	for c := 0; c < nc; c++ {
		if p.NColBlk[c] < 1 {
			return checkErr("colour %d has %d blocks (colours must be dense)", c, p.NColBlk[c])
		}
		if p.ColOffset[c+1] != p.ColOffset[c]+p.NColBlk[c] {
			return checkErr("ColOffset[%d] = %d, need ColOffset[%d] + NColBlk[%d] = %d",
				c+1, p.ColOffset[c+1], c, c, p.ColOffset[c]+p.NColBlk[c])
		}
	}
	if int(p.ColOffset[nc]) != nb {
		return checkErr("colours hold %d blocks, plan has %d", p.ColOffset[nc], nb)
	}
	for b := 0; b < nb; b++ {
		c := int(p.BlkCol[b])
		lo, hi, name := 0, p.NColorsCore, "core"
		switch {
		case b >= p.NBlocksOwned:
			lo, hi, name = p.NColorsOwned, nc, "exec-halo"
		case b >= p.NBlocksCore:
			lo, hi, name = p.NColorsCore, p.NColorsOwned, "owned"
		}
		if c < lo || c >= hi {
			return checkErr("%s block %d has colour %d, %s colours are [%d,%d)", name, b, c, name, lo, hi)
		}
	}
	seen := make([]bool, nb)
	for c := 0; c < nc; c++ {
		prev := int32(-1)
		for i := p.ColOffset[c]; i < p.ColOffset[c+1]; i++ {
			b := p.BlkMap[i]
			if b < 0 || int(b) >= nb {
				return checkErr("BlkMap[%d] = %d is not a block", i, b)
			}
			if seen[b] {
				return checkErr("block %d appears twice in BlkMap", b)
			}
			seen[b] = true
			if int(p.BlkCol[b]) != c {
				return checkErr("BlkMap[%d] = block %d of colour %d sits among colour %d", i, b, p.BlkCol[b], c)
			}
			if b <= prev {
				return checkErr("blocks of colour %d not ascending in BlkMap at position %d", c, i)
			}
			prev = b
		}
	}
	return p.checkOwners(in)
}

// checkOwners checks Owners and the shape of OwnerOffset.
func (p *Plan) checkOwners(in *Input) error {
	np := p.Owners
	if np != in.Owners {
		return checkErr("Owners = %d, input asked for %d", np, in.Owners)
	}
	if np == 0 {
		if p.OwnerOffset != nil {
			return checkErr("OwnerOffset set without owners")
		}
		return nil
	}
	if len(p.OwnerOffset) != p.NColors*np+1 {
		return checkErr("OwnerOffset has %d entries, need NColors*Owners+1 = %d", len(p.OwnerOffset), p.NColors*np+1)
	}
	for c := 0; c < p.NColors; c++ {
		if p.OwnerOffset[c*np] != p.ColOffset[c] {
			return checkErr("OwnerOffset[%d] = %d, colour %d starts at %d", c*np, p.OwnerOffset[c*np], c, p.ColOffset[c])
		}
		for t := 0; t < np; t++ {
			if next := p.OwnerOffset[c*np+t+1]; next < p.OwnerOffset[c*np+t] || next > p.ColOffset[c+1] {
				return checkErr("OwnerOffset[%d] = %d out of order in colour %d, blocks [%d,%d)", c*np+t+1, next, c, p.ColOffset[c], p.ColOffset[c+1])
			}
		}
	}
	if int(p.OwnerOffset[p.NColors*np]) != p.NBlocks {
		return checkErr("OwnerOffset ends at %d, plan has %d blocks", p.OwnerOffset[p.NColors*np], p.NBlocks)
	}
	return nil
}

// pieces returns, per block, the owner piece that runs it (0 in the plain
// colouring, where every block of a colour may run on any thread).
func (p *Plan) pieces() []int32 {
	pc := make([]int32, p.NBlocks)
	for i := 0; i+1 < len(p.OwnerOffset); i++ {
		t := int32(0)
		if p.Owners > 0 {
			t = int32(i%p.Owners) + 1
		}
		for _, b := range p.BlkMap[p.OwnerOffset[i]:p.OwnerOffset[i+1]] {
			pc[b] = t
		}
	}
	return pc
}

// argsOf returns the arguments of each indirect dataset.
func argsOf(in *Input) [][]int {
	out := make([][]int, in.NInds)
	for a := range in.Args {
		if d := in.Args[a].Ind; d >= 0 {
			out[d] = append(out[d], a)
		}
	}
	return out
}

// cols returns the map columns an argument uses.
func cols(arg *Arg) (lo, hi int) {
	if arg.Idx >= 0 {
		return arg.Idx, arg.Idx + 1
	}
	return 0, arg.Arity
}

func (p *Plan) checkStaging(in *Input) error {
	nb := p.NBlocks
	if len(p.IndMap) != in.NInds || len(p.IndOffs) != in.NInds || len(p.IndSizes) != in.NInds {
		return checkErr("IndMap, IndOffs, IndSizes have lengths %d, %d, %d, need NInds = %d",
			len(p.IndMap), len(p.IndOffs), len(p.IndSizes), in.NInds)
	}
	if len(p.LocMap) != len(in.Args) {
		return checkErr("LocMap has %d entries, loop has %d arguments", len(p.LocMap), len(in.Args))
	}
	for a := range in.Args {
		arg := &in.Args[a]
		want := 0
		if arg.Ind >= 0 {
			want = in.Exec
			if arg.Idx < 0 {
				want *= arg.Arity
			}
		}
		if len(p.LocMap[a]) != want {
			return checkErr("arg %d: LocMap has %d entries, need %d", a, len(p.LocMap[a]), want)
		}
	}
	byDat := argsOf(in)
	maxSize := 0
	for d := 0; d < in.NInds; d++ {
		maxSize = max(maxSize, in.IndSetSize[d])
	}
	stamp := make([]int32, maxSize)
	for d := 0; d < in.NInds; d++ {
		ind, offs, sizes := p.IndMap[d], p.IndOffs[d], p.IndSizes[d]
		size := in.IndSetSize[d]
		if len(offs) != nb || len(sizes) != nb {
			return checkErr("indirect dataset %d: IndOffs, IndSizes have lengths %d, %d, need %d", d, len(offs), len(sizes), nb)
		}
		clear(stamp)
		next := 0
		for b := 0; b < nb; b++ {
			if int(offs[b]) != next {
				return checkErr("indirect dataset %d, block %d: list starts at %d, expected %d", d, b, offs[b], next)
			}
			n := int(sizes[b])
			if n < 0 || next+n > len(ind) {
				return checkErr("indirect dataset %d, block %d: list [%d,%d) outside IndMap of length %d", d, b, next, next+n, len(ind))
			}
			lst := ind[next : next+n]
			for i, g := range lst {
				if g < 0 || int(g) >= size {
					return checkErr("indirect dataset %d, block %d: list entry %d is %d, outside [0,%d)", d, b, i, g, size)
				}
				if i > 0 && g <= lst[i-1] {
					return checkErr("indirect dataset %d, block %d: list not strictly ascending at entry %d (%d after %d)", d, b, i, g, lst[i-1])
				}
			}
			// Every reference must come back through LocMap, and
			// every list entry must be referenced.
			mark := int32(b + 1)
			distinct := 0
			s, e := int(p.Offset[b]), int(p.Offset[b]+p.NElems[b])
			for _, a := range byDat[d] {
				arg := &in.Args[a]
				lm := p.LocMap[a]
				klo, khi := cols(arg)
				for el := s; el < e; el++ {
					for k := klo; k < khi; k++ {
						g := arg.Map[el*arg.Arity+k]
						if g < 0 || int(g) >= size {
							return checkErr("arg %d, element %d: map entry %d of column %d outside [0,%d)", a, el, g, k, size)
						}
						li := el
						if arg.Idx < 0 {
							li = el*arg.Arity + k
						}
						l := lm[li]
						if l < 0 || int(l) >= n {
							return checkErr("arg %d, element %d (block %d): local index %d outside [0,%d)", a, el, b, l, n)
						}
						if lst[l] != g {
							return checkErr("arg %d, element %d (block %d): LocMap gives local %d = global %d, map says %d", a, el, b, l, lst[l], g)
						}
						if stamp[g] != mark {
							stamp[g] = mark
							distinct++
						}
					}
				}
			}
			if distinct != n {
				return checkErr("indirect dataset %d, block %d: list has %d entries, block references %d distinct targets", d, b, n, distinct)
			}
			next += n
		}
		if next != len(ind) {
			return checkErr("indirect dataset %d: IndMap has %d entries, lists cover %d", d, len(ind), next)
		}
	}
	return nil
}

// conflictGroups returns the conflict group of each indirect dataset and the
// target-set size of each group.
func conflictGroups(in *Input) (group, size []int) {
	group = make([]int, in.NInds)
	ids := make(map[int]int)
	for d := range group {
		key := d
		if in.Conflict != nil {
			key = in.Conflict[d]
		}
		g, ok := ids[key]
		if !ok {
			g = len(size)
			ids[key] = g
			size = append(size, in.IndSetSize[d])
		}
		group[d] = g
	}
	return group, size
}

// toucher records, per conflict group and target, which unit (element or
// block) last modified it, and under which stamp.
type toucher struct {
	stamp [][]int32
	who   [][]int32
}

func newToucher(size []int) *toucher {
	t := &toucher{stamp: make([][]int32, len(size)), who: make([][]int32, len(size))}
	for g, n := range size {
		t.stamp[g] = make([]int32, n)
		t.who[g] = make([]int32, n)
	}
	return t
}

func (p *Plan) checkThreadColours(in *Input) error {
	for b := 0; b < p.NBlocks; b++ {
		s, e := int(p.Offset[b]), int(p.Offset[b]+p.NElems[b])
		nc := p.NThrCol[b]
		if nc < 1 {
			return checkErr("block %d has %d thread colours, need at least 1", b, nc)
		}
		top := int32(-1)
		for el := s; el < e; el++ {
			c := p.ThrCol[el]
			if c < 0 || c >= nc {
				return checkErr("element %d (block %d) has thread colour %d outside [0,%d)", el, b, c, nc)
			}
			top = max(top, c)
		}
		if top+1 != nc {
			return checkErr("block %d: NThrCol = %d but colours reach %d", b, nc, top)
		}
	}
	group, size := conflictGroups(in)
	var mod []int
	for a := range in.Args {
		if in.Args[a].Ind >= 0 && in.Args[a].Modifies {
			mod = append(mod, a)
		}
	}
	if len(mod) == 0 {
		return nil
	}
	t := newToucher(size)
	stamp := int32(0)
	var order []int32
	var count []int32
	for b := 0; b < p.NBlocks; b++ {
		s, e := int(p.Offset[b]), int(p.Offset[b]+p.NElems[b])
		nc := int(p.NThrCol[b])
		// Visit the block's elements colour by colour.
		count = append(count[:0], make([]int32, nc+1)...)
		for el := s; el < e; el++ {
			count[p.ThrCol[el]+1]++
		}
		for c := 0; c < nc; c++ {
			count[c+1] += count[c]
		}
		order = append(order[:0], make([]int32, e-s)...)
		for el := s; el < e; el++ {
			c := p.ThrCol[el]
			order[count[c]] = int32(el)
			count[c]++
		}
		prevCol := int32(-1)
		for _, el := range order {
			c := p.ThrCol[el]
			if c != prevCol {
				stamp++
				prevCol = c
			}
			for _, a := range mod {
				arg := &in.Args[a]
				gr := group[arg.Ind]
				klo, khi := cols(arg)
				for k := klo; k < khi; k++ {
					g := arg.Map[int(el)*arg.Arity+k]
					if t.stamp[gr][g] == stamp && t.who[gr][g] != el {
						return checkErr("block %d: elements %d and %d share thread colour %d and both modify target %d of indirect dataset %d (arg %d)",
							b, t.who[gr][g], el, c, g, arg.Ind, a)
					}
					t.stamp[gr][g] = stamp
					t.who[gr][g] = el
				}
			}
		}
	}
	return nil
}

func (p *Plan) checkBlockConflicts(in *Input) error {
	group, size := conflictGroups(in)
	var mod []int
	for a := range in.Args {
		if in.Args[a].Ind >= 0 && in.Args[a].Modifies {
			mod = append(mod, a)
		}
	}
	if len(mod) == 0 {
		return nil
	}
	t := newToucher(size)
	piece := p.pieces()
	for c := 0; c < p.NColors; c++ {
		stamp := int32(c + 1)
		for i := p.ColOffset[c]; i < p.ColOffset[c+1]; i++ {
			b := p.BlkMap[i]
			s, e := int(p.Offset[b]), int(p.Offset[b]+p.NElems[b])
			for _, a := range mod {
				arg := &in.Args[a]
				gr := group[arg.Ind]
				klo, khi := cols(arg)
				for el := s; el < e; el++ {
					for k := klo; k < khi; k++ {
						g := arg.Map[el*arg.Arity+k]
						if w := t.who[gr][g]; t.stamp[gr][g] == stamp && w != b && (piece[w] == 0 || piece[w] != piece[b]) {
							return checkErr("blocks %d and %d share block colour %d and both modify target %d of indirect dataset %d (arg %d, element %d)",
								t.who[gr][g], b, c, g, arg.Ind, a, el)
						}
						t.stamp[gr][g] = stamp
						t.who[gr][g] = b
					}
				}
			}
		}
	}
	return nil
}

func (p *Plan) checkShared(in *Input) error {
	bytes := make([]int, in.NInds)
	for a := range in.Args {
		if d := in.Args[a].Ind; d >= 0 {
			bytes[d] = max(bytes[d], in.Args[a].ElemBytes)
		}
	}
	want := 0
	for b := 0; b < p.NBlocks; b++ {
		s := 0
		for d := 0; d < in.NInds; d++ {
			s += roundUp(int(p.IndSizes[d][b])*bytes[d], sharedAlign)
		}
		want = max(want, s)
	}
	if p.NShared != want {
		return checkErr("NShared = %d, lists need %d bytes", p.NShared, want)
	}
	return nil
}
