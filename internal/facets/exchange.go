package facets

import (
	"cmp"
	"slices"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/mesh/topology"
)

// roundBytes bounds what a rank sends in one round of the halves'
// exchange: a rank holds its share of the halves (facetHalf, 24 bytes
// each) and at most this much more in flight, in each direction.
var roundBytes = 8 << 20

// halfWire is the int32 values of a half on the wire: its nodes as the
// cell sees them (-1 past the facet's size), its cell, its local number.
const halfWire = 6

// histBins is the most bins of the histogram of the halves' smallest
// nodes from which the homes' ranges are cut.
const histBins = 1 << 14

// homes splits the nodes into consecutive ranges, one per rank, so that
// each rank is the home of about as many halves as the others: a facet's
// home is the rank whose range holds its smallest node. The ranges are in
// rank order, so that the facets, numbered by their sorted nodes, are
// numbered in rank order too.
type homes struct {
	start []int // rank r's range is [start[r], start[r+1])
}

// home returns the rank whose range holds node g.
func (h homes) home(g int32) int {
	// The last range starting at or before g (empty ranges are skipped:
	// their start equals the next one's).
	r, _ := slices.BinarySearch(h.start[1:len(h.start)-1], int(g)+1)
	return r
}

// halfCursor walks the local facets of fsize nodes of the cells of
// blocks, in order (cells numbered over the blocks, one after another).
type halfCursor struct {
	blocks []topology.Cells
	fsize  int
	b, cl  int // the block and the cell within it
	l      int // the next local facet of the cell
	cell   int // the cell's index over the blocks
}

// next returns the next half: the cell (index over the blocks), the local
// facet and its nodes; ok is false past the last.
func (h *halfCursor) next() (cell int, local int, nodes [4]int32, ok bool) {
	for h.b < len(h.blocks) {
		b := h.blocks[h.b]
		lf, nn := topology.LocalFacets(b.Kind), b.Kind.Nodes()
		if h.cl >= b.Len() {
			h.b, h.cl, h.l = h.b+1, 0, 0
			continue
		}
		for h.l < len(lf) {
			l := h.l
			h.l++
			f := lf[l]
			if len(f) != h.fsize {
				continue
			}
			nodes = [4]int32{-1, -1, -1, -1}
			for j, v := range f {
				nodes[j] = b.Nodes[h.cl*nn+v]
			}
			return h.cell, l, nodes, true
		}
		h.cl, h.l = h.cl+1, 0
		h.cell++
	}
	return 0, 0, nodes, false
}

// smallest is the smallest of the first n of nodes.
func smallest(nodes [4]int32, n int) int32 {
	low := nodes[0]
	for _, v := range nodes[1:n] {
		low = min(low, v)
	}
	return low
}

// balancedHomes counts the rank's halves of fsize nodes by their smallest
// node, in bins, sums the counts over the ranks and cuts the nodes into
// ranges of about equal halves. It returns the ranges, the rank's halves
// and the halves whose home it is.
func balancedHomes(c collective.Comm, blocks []topology.Cells, fsize, nodes int) (homes, int, int, error) {
	bins := max(1, min(nodes, histBins))
	bin := func(g int32) int { return int(int64(g) * int64(bins) / int64(max(nodes, 1))) }
	// The first node of bin b: the smallest g with bin(g) == b.
	binStart := func(b int) int { return int((int64(b)*int64(nodes) + int64(bins) - 1) / int64(bins)) }
	hist := make([]int64, bins+1) // the last: the rank's halves
	cur := halfCursor{blocks: blocks, fsize: fsize}
	mine := 0
	for {
		_, _, nd, ok := cur.next()
		if !ok {
			break
		}
		hist[bin(smallest(nd, fsize))]++
		mine++
	}
	sum, err := collective.SumInt64(c, hist[:bins])
	if err != nil {
		return homes{}, 0, 0, err
	}
	ranks, rank := c.Size(), c.Rank()
	total := int64(0)
	for _, v := range sum {
		total += v
	}
	h := homes{start: make([]int, ranks+1)}
	h.start[ranks] = nodes
	// Rank r's range starts at the first bin whose halves before it reach
	// r/ranks of the total.
	acc, b := int64(0), 0
	for r := 1; r < ranks; r++ {
		want := total * int64(r) / int64(ranks)
		for b < bins && acc+sum[b] <= want {
			acc += sum[b]
			b++
		}
		// Cut before or after bin b, whichever is nearer the share.
		if b < bins && want-acc > acc+sum[b]-want {
			acc += sum[b]
			b++
		}
		h.start[r] = max(binStart(b), h.start[r-1])
	}
	home := int64(0)
	for b := range bins {
		if s := binStart(b); s >= h.start[rank] && s < h.start[rank+1] {
			home += sum[b]
		}
	}
	return h, mine, int(home), nil
}

// exchangeHalves sends the rank's halves of fsize nodes (mine of them) to
// their homes in rounds of at most roundBytes sent per rank, and returns
// the halves whose home this rank is (want of them), sorted by key, then
// cell, then local number. What a rank receives in a round is what the
// others send it, about roundBytes where the homes are balanced. Every rank takes part in as many rounds as the rank of the most
// halves needs.
func exchangeHalves(c collective.Comm, blocks []topology.Cells, firstCell, fsize int, h homes, mine, want int) ([]facetHalf, error) {
	ranks := c.Size()
	perRound := max(1, roundBytes/(4*halfWire))
	_, most, err := collective.MinMax(c, []float64{0}, []float64{float64(mine)})
	if err != nil {
		return nil, err
	}
	rounds := max(1, (int(most[0])+perRound-1)/perRound)
	halves := make([]facetHalf, 0, want)
	cur := halfCursor{blocks: blocks, fsize: fsize}
	count := make([]int, ranks)
	off := make([]int, ranks+1)
	var flat []int32
	var wire [][4]int32 // the round's halves: nodes
	var meta [][2]int32 // and cell, local
	for range rounds {
		wire, meta = wire[:0], meta[:0]
		clear(count)
		for len(wire) < perRound {
			cell, l, nd, ok := cur.next()
			if !ok {
				break
			}
			wire = append(wire, nd)
			meta = append(meta, [2]int32{int32(firstCell + cell), int32(l)})
			count[h.home(smallest(nd, fsize))]++
		}
		for q := range ranks {
			off[q+1] = off[q] + count[q]*halfWire
		}
		flat = slices.Grow(flat[:0], off[ranks])[:off[ranks]]
		at := slices.Clone(off[:ranks])
		for i, nd := range wire {
			q := h.home(smallest(nd, fsize))
			copy(flat[at[q]:], nd[:])
			flat[at[q]+4], flat[at[q]+5] = meta[i][0], meta[i][1]
			at[q] += halfWire
		}
		send := make([][]int32, ranks)
		for q := range ranks {
			send[q] = flat[off[q]:off[q+1]:off[q+1]]
		}
		got, err := collective.AlltoallInt32(c, send)
		if err != nil {
			return nil, err
		}
		for _, m := range got {
			for i := 0; i+halfWire <= len(m); i += halfWire {
				halves = append(halves, newHalf([4]int32(m[i:i+4]), fsize, m[i+4], int8(m[i+5])))
			}
		}
	}
	slices.SortFunc(halves, func(a, b facetHalf) int {
		for j := range 4 {
			if c := cmp.Compare(a.key[j], b.key[j]); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(a.cell, b.cell); c != 0 {
			return c
		}
		return cmp.Compare(a.local, b.local)
	})
	return halves, nil
}
