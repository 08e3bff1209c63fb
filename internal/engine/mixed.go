package engine

import (
	"fmt"

	"github.com/goop2/op2/internal/core"
)

// MixedBlocks is a mixed argument (op2.MixedDat, op2.MixedMat) as
// ExpandMixed replaces it: its blocks' arguments, and what says how it
// may be passed.
type MixedBlocks interface {
	Mixed
	// Blocks are the blocks' arguments, in block order (row-major for
	// a matrix).
	Blocks() []Arg
	// Direct says it is passed directly (op2.MixedDat.Arg): in a loop
	// over a mixed set, block b's loop gets block b.
	Direct() bool
	// Problem is why the argument is unusable, found when it was made,
	// or "".
	Problem() string
	// What names the argument in messages; only called on the way to
	// an error.
	What() string
}

// MixedLoop is the loop whose mixed arguments ExpandMixed replaces: its
// kernel's and iteration set's names, for errors, and for block Block of
// a loop over a mixed set, that set's name and number of blocks (Blocks
// 0: a loop over a set).
type MixedLoop struct {
	Kernel, Set string
	MixedSet    string
	Blocks      int
	Block       int
}

// ExpandMixed returns the loop's arguments args with every mixed argument
// (one whose Mixed is a MixedBlocks) replaced by its blocks' arguments: each block's, for a loop over a
// set; block l.Block's of a direct one, for a block's loop of a loop over
// a mixed set, where arguments through mixed maps are refused. The list
// is in buf's memory when it has room (never in args'); each argument's
// Origin says where it came from. Errors are *op2.LoopError naming the
// argument the caller passed.
func (p *Process) ExpandMixed(l MixedLoop, args, buf []Arg) ([]Arg, error) {
	mixedSet := l.Blocks > 0
	n := 0
	for i := range args {
		if m, ok := args[i].Mixed.(MixedBlocks); ok && (!mixedSet || !m.Direct()) {
			n += len(m.Blocks())
		} else {
			n++
		}
	}
	fail := func(i int, format string, a ...any) error {
		return p.api.Loop(l.Kernel, l.Set, i, fmt.Sprintf(format, a...))
	}
	flat := buf[:0]
	if cap(flat) < n {
		flat = make([]Arg, 0, n)
	}
	for i := range args {
		a := &args[i]
		m, ok := a.Mixed.(MixedBlocks)
		if !ok {
			flat = append(flat, *a)
			flat[len(flat)-1].Origin = Origin{Pos: int32(i), Moved: true}
			continue
		}
		if bad := m.Problem(); bad != "" {
			return nil, fail(i, "%s", bad)
		}
		blocks := m.Blocks()
		first := 0
		if mixedSet {
			if !m.Direct() {
				return nil, fail(i, "%s: in a loop over mixed set %q each block's loop runs over its own set, which a mixed map does not go from; pass mixed dats directly (MixedDat.Arg)", m.What(), l.MixedSet)
			}
			if len(blocks) != l.Blocks {
				return nil, fail(i, "%s has %d blocks but the loop's mixed set %q has %d", m.What(), len(blocks), l.MixedSet, l.Blocks)
			}
			blocks, first = blocks[l.Block:l.Block+1], l.Block
		}
		for j, b := range blocks {
			b.Off, b.Opt = a.Off, a.Opt
			b.Origin = Origin{Of: m, Pos: int32(i), Block: int32(first + j)}
			flat = append(flat, b)
		}
	}
	return flat, nil
}

// CheckMixedGlobals refuses a loop over a mixed set (named set) that
// passes one Global for reading and for a reduction: its blocks run one
// after another, so the later blocks would read what the earlier ones
// reduced, where a loop's READ arguments see the value from before the
// loop. The error is a *op2.LoopError.
func (p *Process) CheckMixedGlobals(kernel, set string, args []Arg) error {
	for j := range args {
		b := &args[j].Core
		if b.Kind != core.ArgGlobal || args[j].Off || b.Data == nil {
			continue // a nil Global: Bind names it
		}
		for i := range args[:j] {
			a := &args[i].Core
			if a.Data != b.Data || a.Kind != core.ArgGlobal || args[i].Off || (a.Access == core.Read) == (b.Access == core.Read) {
				continue
			}
			return p.api.Loop(kernel, set, j, fmt.Sprintf(
				"%s is also passed as argument %d: a loop over a mixed set runs its blocks one after another, so a Global may not be both read and reduced in it", b.Data.Describe(), i))
		}
	}
	return nil
}
