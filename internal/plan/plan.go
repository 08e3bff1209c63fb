package plan

import (
	"fmt"
	"math"
)

// Arg describes one loop argument as the planner sees it.
type Arg struct {
	// Ind is the index of the indirect dataset (a distinct dat and map
	// pair) the argument refers to, or -1 for direct arguments and
	// globals. Every value lies in [-1, Input.NInds).
	Ind int
	// Map is the map table, row-major: Map[e*Arity+k] is column k of
	// element e. It must hold at least Exec rows; rows past Exec are
	// ignored. Unused (may be nil) when Ind < 0.
	Map []int32
	// Arity is the number of columns of Map (at least 1 when Ind >= 0).
	Arity int
	// Idx selects the map column the argument uses; -1 means all columns
	// (a vector argument, the kernel receiving one pointer per column).
	Idx int
	// Modifies is true for INC, RW and WRITE access through a map. Only
	// such arguments constrain the colouring.
	Modifies bool
	// ElemBytes is the size in bytes of one target element (dim times the
	// size of the element type). It is used for staging-size accounting
	// only; when the arguments of one dataset disagree the largest value
	// is used.
	ElemBytes int
}

// Input is everything a plan depends on. Two loops with equal inputs get
// equal plans.
type Input struct {
	// Core, Owned and Exec are the cumulative ends of the iteration set
	// sections: [0,Core) is core, [Core,Owned) owned but not core,
	// [Owned,Exec) the exec halo. Without MPI all three equal the set
	// size. The loop iterates over [0,Exec).
	Core, Owned, Exec int
	// Args lists the loop arguments in order. Plan.LocMap is indexed the
	// same way.
	Args []Arg
	// NInds is the number of indirect datasets.
	NInds int
	// IndSetSize holds, per indirect dataset, the number of elements of
	// the target set (halos included); map entries must lie below it.
	IndSetSize []int
	// BlockSize fixes the number of elements per block (>= 1), or is 0 to
	// let the planner choose (see the package documentation).
	BlockSize int
	// Conflict optionally puts indirect datasets into conflict groups:
	// datasets with equal Conflict values are treated as one array when
	// colouring. Use it when one dat is modified through two different
	// maps in the same loop (two datasets, one storage). Datasets of one
	// group must have the same IndSetSize. Nil means every dataset is its
	// own group; otherwise len(Conflict) must be at least NInds.
	Conflict []int
	// Owners, when at least 1, asks for the owner-compute layout for a
	// host running Owners threads (see the package documentation); 0 asks
	// for the plain block colouring.
	Owners int
}

// Plan is the execution plan of one loop. All slices are owned by the plan
// and must be treated as read-only; entries of IndMap, IndOffs, IndSizes and
// LocMap may share storage when two datasets or arguments are guaranteed to
// have identical contents.
type Plan struct {
	// BlockSize is the block size used (the adaptive choice when
	// Input.BlockSize was 0). Every block has BlockSize elements except
	// the last block of each section, which may be shorter.
	BlockSize int
	// NBlocks is the number of blocks.
	NBlocks int
	// NBlocksCore and NBlocksOwned are cumulative block counts: blocks
	// [0,NBlocksCore) are core, [NBlocksCore,NBlocksOwned) owned, and
	// [NBlocksOwned,NBlocks) exec halo.
	NBlocksCore, NBlocksOwned int
	// Offset holds, per block, the index of its first element.
	Offset []int32
	// NElems holds, per block, its number of elements (>= 1).
	NElems []int32

	// IndMap[d] is the concatenation over blocks of each block's sorted
	// list of distinct target indices of indirect dataset d (the local to
	// global renumbering used for staging).
	IndMap [][]int32
	// IndOffs[d][b] is where block b's list starts in IndMap[d].
	IndOffs [][]int32
	// IndSizes[d][b] is the length of block b's list.
	IndSizes [][]int32
	// LocMap[a] gives, for argument a with Ind >= 0, the local index of
	// each target: its position within the owning block's list in
	// IndMap[Ind]. For Idx >= 0 the entry for element e is LocMap[a][e];
	// for vector arguments (Idx == -1) column k of element e is
	// LocMap[a][e*Arity+k]. LocMap[a] is nil for direct arguments and
	// globals. Arguments that use the same column(s) of the same map for
	// datasets with identical lists share one slice.
	LocMap [][]int32

	// ThrCol holds, per element, its thread colour within its block.
	ThrCol []int32
	// NThrCol holds, per block, the number of thread colours (>= 1).
	NThrCol []int32
	// BlkCol holds, per block, its block colour.
	BlkCol []int32
	// NColors is the number of block colours.
	NColors int
	// NColorsCore is the number of colours holding core blocks: colours
	// [0,NColorsCore) contain only core blocks.
	NColorsCore int
	// NColorsOwned is the end of the owned colours: colours
	// [NColorsCore,NColorsOwned) contain only owned (non-core) blocks and
	// [NColorsOwned,NColors) only exec-halo blocks.
	NColorsOwned int
	// NColBlk holds, per colour, its number of blocks.
	NColBlk []int32
	// ColOffset is the prefix sum of NColBlk (length NColors+1): the
	// blocks of colour c are BlkMap[ColOffset[c]:ColOffset[c+1]].
	ColOffset []int32
	// BlkMap lists the blocks grouped by colour, ascending within a
	// colour.
	BlkMap []int32

	// Owners is Input.Owners: the number of pieces of the owner-compute
	// layout, or 0 for the plain colouring.
	Owners int
	// OwnerOffset, in the owner-compute layout (length NColors*Owners+1),
	// divides each colour's blocks among the pieces: piece t runs the
	// blocks BlkMap[OwnerOffset[c*Owners+t]:OwnerOffset[c*Owners+t+1]] of
	// colour c one after another. Blocks of one colour and different
	// pieces never modify the same target; blocks of one colour and one
	// piece may. Nil in the plain colouring.
	OwnerOffset []int32

	// NShared is the largest staging area, in bytes, needed by any block:
	// the sum over indirect datasets of IndSizes[d][b] times the
	// dataset's element size, each term rounded up to 16 bytes.
	NShared int
	// Transfer estimates the indirect memory traffic of one execution in
	// bytes: every staged element is read once, and written back once
	// more when the dataset has a modifying argument, plus 4 bytes per
	// LocMap entry of each indirect argument. Direct data and globals are
	// not included.
	Transfer float64
}

// stagingBudget is the per-block staging budget of the adaptive block size.
const (
	stagingBudget = 24 * 1024
	minAdaptive   = 256
	maxAdaptive   = 1024
	sharedAlign   = 16
)

// Build validates in and computes its plan. Map entries are checked against
// IndSetSize while the plan is built. Build does not run Check.
func Build(in Input) (*Plan, error) {
	if err := validate(&in); err != nil {
		return nil, err
	}
	an := analyse(&in)
	bs := in.BlockSize
	if bs == 0 {
		bs = adaptiveBlockSize(an)
	}
	p := &Plan{BlockSize: bs, Owners: in.Owners}
	var piece []int32
	if in.Owners > 0 {
		var err error
		if piece, err = p.layoutOwners(&in, an); err != nil {
			return nil, err
		}
	} else {
		p.layoutBlocks(in.Core, in.Owned, in.Exec)
	}

	if err := p.stage(&in, an); err != nil {
		return nil, err
	}
	sc := getScratch()
	defer putScratch(sc)
	p.colourThreads(an, sc)
	p.colourBlocks(an, sc, piece)
	p.groupBlocks()
	if in.Owners > 0 {
		p.splitOwners(piece)
	}
	p.account(&in, an)
	return p, nil
}

// validate checks everything about in that does not require reading the
// map tables.
func validate(in *Input) error {
	if in.Core < 0 || in.Core > in.Owned || in.Owned > in.Exec {
		return fmt.Errorf("plan: sections out of order: need 0 <= Core (%d) <= Owned (%d) <= Exec (%d)",
			in.Core, in.Owned, in.Exec)
	}
	if in.Exec > math.MaxInt32 {
		return fmt.Errorf("plan: iteration set of %d elements exceeds the int32 range", in.Exec)
	}
	if in.BlockSize < 0 {
		return fmt.Errorf("plan: negative block size %d", in.BlockSize)
	}
	if in.Owners < 0 || in.Owners > math.MaxInt32/4 {
		return fmt.Errorf("plan: owner count %d outside [0, 2^29)", in.Owners)
	}
	if in.NInds < 0 {
		return fmt.Errorf("plan: negative number of indirect datasets %d", in.NInds)
	}
	if len(in.IndSetSize) < in.NInds {
		return fmt.Errorf("plan: IndSetSize has %d entries, need NInds = %d", len(in.IndSetSize), in.NInds)
	}
	for d := 0; d < in.NInds; d++ {
		if s := in.IndSetSize[d]; s < 0 || s > math.MaxInt32 {
			return fmt.Errorf("plan: indirect dataset %d: target set size %d outside [0, 2^31)", d, s)
		}
	}
	if in.Conflict != nil {
		if len(in.Conflict) < in.NInds {
			return fmt.Errorf("plan: Conflict has %d entries, need NInds = %d", len(in.Conflict), in.NInds)
		}
		first := make(map[int]int, in.NInds)
		for d := 0; d < in.NInds; d++ {
			g := in.Conflict[d]
			if f, ok := first[g]; ok {
				if in.IndSetSize[f] != in.IndSetSize[d] {
					return fmt.Errorf("plan: indirect datasets %d and %d share conflict group %d but target set sizes differ (%d vs %d)",
						f, d, g, in.IndSetSize[f], in.IndSetSize[d])
				}
			} else {
				first[g] = d
			}
		}
	}
	for a := range in.Args {
		arg := &in.Args[a]
		if arg.Ind < -1 || arg.Ind >= in.NInds {
			return fmt.Errorf("plan: arg %d: indirect dataset index %d outside [-1, %d)", a, arg.Ind, in.NInds)
		}
		if arg.Ind < 0 {
			continue
		}
		if arg.Arity < 1 {
			return fmt.Errorf("plan: arg %d: map arity %d, need at least 1", a, arg.Arity)
		}
		if arg.Idx < -1 || arg.Idx >= arg.Arity {
			return fmt.Errorf("plan: arg %d: map index %d outside [-1, %d) for arity %d", a, arg.Idx, arg.Arity, arg.Arity)
		}
		if arg.ElemBytes < 0 {
			return fmt.Errorf("plan: arg %d: negative element size %d", a, arg.ElemBytes)
		}
		if int64(in.Exec)*int64(arg.Arity) > math.MaxInt32 {
			return fmt.Errorf("plan: arg %d: %d elements times arity %d exceeds the int32 range", a, in.Exec, arg.Arity)
		}
		if len(arg.Map) < in.Exec*arg.Arity {
			return fmt.Errorf("plan: arg %d: map table has %d entries, need at least Exec*Arity = %d*%d",
				a, len(arg.Map), in.Exec, arg.Arity)
		}
	}
	return nil
}

// layoutBlocks cuts the three sections into blocks of p.BlockSize elements.
func (p *Plan) layoutBlocks(core, owned, exec int) {
	bs := p.BlockSize
	ends := [3]int{core, owned, exec}
	n, start := 0, 0
	for _, end := range ends {
		n += (end - start + bs - 1) / bs
		start = end
	}
	p.NBlocks = n
	p.Offset = make([]int32, n)
	p.NElems = make([]int32, n)
	b, start := 0, 0
	for s, end := range ends {
		for off := start; off < end; off += bs {
			p.Offset[b] = int32(off)
			p.NElems[b] = int32(min(bs, end-off))
			b++
		}
		start = end
		switch s {
		case 0:
			p.NBlocksCore = b
		case 1:
			p.NBlocksOwned = b
		}
	}
}

// account computes NShared and Transfer.
func (p *Plan) account(in *Input, an *analysis) {
	shared := 0
	for b := 0; b < p.NBlocks; b++ {
		s := 0
		for d := range an.ds {
			s += roundUp(int(p.IndSizes[d][b])*an.ds[d].bytes, sharedAlign)
		}
		shared = max(shared, s)
	}
	p.NShared = shared
	var t float64
	for d := range an.ds {
		ds := &an.ds[d]
		rows := float64(len(p.IndMap[d]))
		t += rows * float64(ds.bytes)
		if ds.anyMod {
			t += rows * float64(ds.bytes)
		}
	}
	for a := range in.Args {
		t += 4 * float64(len(p.LocMap[a]))
	}
	p.Transfer = t
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }
