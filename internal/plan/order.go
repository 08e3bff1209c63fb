package plan

import "slices"

// SameOrder reports whether plans p and q, of loops over one set, run its
// elements in the same order: the same blocks, launched colour by colour
// in the same order (owner pieces alike), with the same thread colours
// within each block. Whether two programs run by such plans combine the
// terms of a reduction or of an increment through a map alike depends on
// the programs too (staging, work groups), which their backend says.
func (p *Plan) SameOrder(q *Plan) bool {
	if p == q {
		return true
	}
	if p == nil || q == nil {
		return false
	}
	return p.BlockSize == q.BlockSize && p.NBlocks == q.NBlocks &&
		p.NBlocksCore == q.NBlocksCore && p.NBlocksOwned == q.NBlocksOwned &&
		p.NColors == q.NColors && p.NColorsCore == q.NColorsCore && p.NColorsOwned == q.NColorsOwned &&
		p.Owners == q.Owners &&
		slices.Equal(p.Offset, q.Offset) && slices.Equal(p.NElems, q.NElems) &&
		slices.Equal(p.ColOffset, q.ColOffset) && slices.Equal(p.BlkMap, q.BlkMap) &&
		slices.Equal(p.OwnerOffset, q.OwnerOffset) &&
		slices.Equal(p.NThrCol, q.NThrCol) && slices.Equal(p.ThrCol, q.ThrCol)
}
