// Package plan computes execution plans for GoOP2 parallel loops.
//
// A parallel loop applies a kernel to every element of an iteration set.
// Arguments reached through a map (for example the two end nodes of an edge)
// make the loop "indirect": different elements may touch the same target
// element, so running them concurrently needs care. The plan answers three
// questions once per distinct loop, and every parallel backend reuses it:
//
//  1. How is the iteration set cut into work units? The set is split into
//     contiguous blocks (mini-partitions). Under MPI the set has three
//     sections, core, owned (non-core) and exec halo, and no block crosses a
//     section boundary, so a section whose length is not a multiple of the
//     block size ends with one short block.
//
//  2. Which indirect data does each block need? For every indirect dataset
//     (a distinct dat and map pair, numbered by [Arg.Ind]) and every block,
//     the plan stores the sorted list of distinct target indices the block
//     references ([Plan.IndMap], located by [Plan.IndOffs] and
//     [Plan.IndSizes]). A backend that stages indirect data in fast memory
//     (GPU shared memory, OpenCL local memory) copies exactly those rows in,
//     and [Plan.LocMap] tells each element where inside the staged copy its
//     targets live. [Plan.NShared] is the largest staging area any block
//     needs.
//
//  3. What can run at the same time? Two levels of greedy colouring avoid
//     write conflicts. Elements inside a block get a thread colour
//     ([Plan.ThrCol]) such that two elements of one colour never modify the
//     same target; a GPU block applies its increments one thread colour at a
//     time. Blocks get a block colour ([Plan.BlkCol]) such that two blocks of
//     one colour never modify the same target; a backend launches (or runs
//     an OpenMP parallel loop over) the blocks of one colour at a time, in
//     the order given by [Plan.BlkMap] and [Plan.ColOffset]. Core blocks use
//     the lowest colours, then owned blocks, then exec-halo blocks, so an MPI
//     backend can compute all core colours while halo exchanges are in
//     flight.
//
// Only arguments that modify data through a map (INC, RW, WRITE) constrain
// the colouring; read-only and direct arguments never conflict.
//
// # Colouring algorithm
//
// Every target element owns a 32-bit word whose bit i says "some element (or
// block) already given colour base+i touches me". To colour an element, the
// words of all targets it modifies are OR-ed together; the lowest clear bit
// of the result is its colour, and that bit is then set in the same words.
// When all 32 bits are set the element is left for a later pass. Each further
// pass clears the words of the targets still involved and hands out the next
// 32 colours (base += 32), until everything is coloured, so any number of
// colours is supported. Blocks are coloured the same way using the union of
// the targets of all their elements. The result uses dense colour numbers:
// every colour below the maximum is used.
//
// # Owner-compute layout
//
// A CPU thread stages nothing, and colour passes cost it cache misses: each
// pass re-reads the targets that blocks of other colours loaded. With
// [Input.Owners] set to the number of threads, the planner lays the blocks
// out differently, after MPI's owner-compute idea. Each section is split
// into Owners contiguous pieces of nearly equal length, one per thread. An
// element is interior when every target it modifies is modified by no other
// piece of its section; the others are separators. Interior elements run
// in parallel with no conflicts, each piece on one thread and in element
// order, so a thread keeps its targets in its own cache; they form the
// section's first colour. The separators (with short interior runs between
// them, under 256 elements) form blocks that are coloured greedily after
// it. [Plan.OwnerOffset] tells each piece which blocks of each colour it
// runs: its own blocks in the interior colour, an even share in the others.
// On a mesh numbered for locality the separators are a few rows around each
// piece boundary and a section needs one or two colours beyond the
// interior; on a mesh with no locality almost every element is a separator
// and the layout degrades to the plain colouring. With one owner every
// element is interior and the loop runs in order in one block per
// [Input.BlockSize] elements.
//
// # Block size
//
// [Input.BlockSize] fixes the block size. When it is zero the size is chosen
// adaptively: the staging demand of one element is estimated pessimistically
// as the sum, over indirect datasets, of ElemBytes times the number of
// distinct map columns through which the dataset is reached (as if no two
// elements of a block shared a target). The block size is the largest
// multiple of 32 whose estimated demand fits a 24 KiB staging budget,
// clamped to the range [256, 1024]. A loop without indirect arguments gets
// 1024. For typical edge loops this gives OP2's customary 256.
//
// # Conflict groups
//
// Datasets are distinct (dat, map) pairs, so a dat modified through two
// different maps in one loop appears as two datasets. [Input.Conflict] puts
// such datasets into one group so that the colouring treats them as the same
// array.
//
// # Cost
//
// Build is linear in the number of map entries it reads, apart from sorting
// the occasional block whose targets are scattered. Work arrays over the
// target sets are pooled between calls. For iteration sets of at least 32768
// elements, independent datasets are staged, and blocks are thread-coloured,
// on up to GOMAXPROCS goroutines; the result does not depend on scheduling.
//
// # Checking
//
// [Build] does not verify its own output. [Plan.Check] re-derives every
// invariant from the [Input] independently and reports the first violation;
// the executor (internal/exec) runs it on every new plan when its runtime's
// Config.PlanCheck (or OP2_PLAN_CHECK=1) is set. Callers also cache plans:
// a plan depends only on its Input.
package plan
