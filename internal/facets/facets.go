// Package facets derives a mesh's facets over the ranks before the mesh is
// partitioned: every rank passes its block of the cells and gets its
// block of the facets, with their cells and tags (Derive, DeriveTagged).
// It is the mesh layer's use of the collective operations: the cell
// shapes are mesh/topology's, the exchanges internal/collective's, and
// mesh/unstructured declares the result to GoOP2.
package facets

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/mesh/topology"
)

// Block is one rank's share of a mesh's facets of one kind, found
// by Derive: the facets whose smallest node is in this rank's block of
// the nodes, in increasing order of their sorted nodes, numbered from
// First over all ranks (interior and boundary facets separately).
type Block struct {
	Kind topology.Kind
	// Interior facets: their nodes (as their first cell sees them, the
	// cell of smaller global number), the two cells (global numbers) and
	// the facet's local number in each.
	Nodes []int32
	Cells []int32
	Local []int8
	First int // the global number of the first
	// Boundary facets: nodes, cell, local number.
	BNodes []int32
	BCells []int32
	BLocal []int8
	BFirst int
	// Interior and BoundaryTotal count the facets over all ranks.
	InteriorTotal, BoundaryTotal int
	// Tags and BTags hold each interior and boundary facet's tags from
	// DeriveTagged's list: TagDim values per facet, the distinct tags
	// listed for it in increasing order, then zeros (nil from Derive).
	// TagDim is the most tags any facet of this kind has, over all ranks,
	// and at least 1.
	Tags, BTags []int32
	TagDim      int
}

// Tagged lists facets of one kind with a tag each, such as a mesh
// file's boundary elements with their physical groups: Nodes holds
// Kind.Nodes() nodes (global numbers, in any order) per facet.
type Tagged struct {
	Kind  topology.Kind
	Nodes []int32
	Tags  []int32
}

// nodeBlocks is the even split of a mesh's nodes over the ranks
// (collective.Block): a facet's home is the rank of its smallest node.
type nodeBlocks struct{ n, ranks int }

// home returns the rank whose block holds node g.
func (b nodeBlocks) home(g int32) int { return collective.BlockHome(b.n, b.ranks, int(g)) }

// facetHalf is one cell's side of a facet on its way to the facet's home.
type facetHalf struct {
	key   [4]int32 // sorted nodes, -1 past the facet's size
	nodes [4]int32 // as the cell sees them
	cell  int32    // global
	local int8
}

// Derive derives a mesh's facets over the ranks, before it is
// partitioned: every rank passes its block of the cells (all of kind k,
// cells holding their global node numbers, the first being global cell
// firstCell) and the mesh's node count, and gets the facets whose
// smallest node lies in its block of the nodes (mesh.Block). One
// all-to-all takes each cell's facets to their homes; an exclusive sum
// numbers them. The result, one Block per facet kind (prisms and
// pyramids have two), is in the declared layout op2.Partition expects:
// each rank's block of the facet sets with maps to global cells and
// nodes. A facet shared by more than two cells is an error on every
// rank.
func Derive(c collective.Comm, k topology.Kind, cells []int32, firstCell, nodes int) ([]Block, error) {
	return facets(c, []topology.Cells{{Kind: k, Nodes: cells}}, firstCell, nodes, nil, false)
}

// DeriveTagged is Derive with tags: each rank also passes some facets
// with a tag each (any of them, such as its block of a file's boundary
// elements, a facet listed once per physical group it is in), and every
// facet derived gets the tags of the listed facets with the same nodes
// (Block.Tags, BTags: none where none is listed). A listed facet that is no cell's facet
// is an error on every rank naming its nodes and tag.
// DeriveTagged is collective as Derive is: every rank calls it, with
// its own list (possibly empty).
func DeriveTagged(c collective.Comm, k topology.Kind, cells []int32, firstCell, nodes int, tagged []Tagged) ([]Block, error) {
	return facets(c, []topology.Cells{{Kind: k, Nodes: cells}}, firstCell, nodes, tagged, true)
}

// DeriveMixed is DeriveTagged for a mesh whose cells are of several kinds
// of one dimension: each rank passes its block of the cells as blocks of
// one kind each, numbered one after another from global cell firstCell
// (topology.DeriveMixed's numbering), every rank the same kinds in the
// same order (a block may be empty). A facet's Local is its local number
// in each cell's own kind.
func DeriveMixed(c collective.Comm, blocks []topology.Cells, firstCell, nodes int, tagged []Tagged) ([]Block, error) {
	return facets(c, blocks, firstCell, nodes, tagged, true)
}

func facets(c collective.Comm, blocks []topology.Cells, firstCell, nodes int, tagged []Tagged, tag bool) ([]Block, error) {
	var bad error
	if len(blocks) == 0 {
		bad = errors.New("no cells: no block of cells is given")
	}
	first := firstCell
	for _, b := range blocks {
		k := b.Kind
		nn := k.Nodes()
		switch {
		case bad != nil:
		case topology.LocalFacets(k) == nil:
			bad = fmt.Errorf("%v cells have no facets", k)
		case k.Dim() != blocks[0].Kind.Dim():
			bad = fmt.Errorf("%v cells in a mesh of %v cells: the cells must be of one dimension", k, blocks[0].Kind)
		case len(b.Nodes)%nn != 0:
			bad = fmt.Errorf("%d node entries are not whole %vs", len(b.Nodes), k)
		}
		if bad != nil {
			break
		}
		for i, v := range b.Nodes {
			if v < 0 || int(v) >= nodes {
				bad = fmt.Errorf("%v %d: node %d is %d, outside [0,%d)", k, first+i/nn, i%nn, v, nodes)
				break
			}
		}
		first += b.Len()
	}
	for _, tf := range tagged {
		fn := tf.Kind.Nodes()
		if bad != nil {
			break
		}
		switch {
		case tf.Kind.Dim() != blocks[0].Kind.Dim()-1:
			bad = fmt.Errorf("tagged %vs are not facets of %vs", tf.Kind, blocks[0].Kind)
		case len(tf.Nodes) != fn*len(tf.Tags):
			bad = fmt.Errorf("%d tagged %vs have %d node entries, not %d", len(tf.Tags), tf.Kind, len(tf.Nodes), fn*len(tf.Tags))
		}
		for i, v := range tf.Nodes {
			if bad == nil && (v < 0 || int(v) >= nodes) {
				bad = fmt.Errorf("tagged %v %d (tag %d): node %d is %d, outside [0,%d)", tf.Kind, i/fn, tf.Tags[i/fn], i%fn, v, nodes)
			}
		}
	}
	if err := collective.AgreeStep(c, "facets: check the cells", bad); err != nil {
		return nil, err
	}
	size := c.Size()
	bl := nodeBlocks{n: nodes, ranks: size}
	sizes := []int{}
	for _, b := range blocks {
		for _, f := range topology.LocalFacets(b.Kind) {
			if !slices.Contains(sizes, len(f)) {
				sizes = append(sizes, len(f))
			}
		}
	}
	slices.Sort(sizes)
	var out []Block
	for _, fsize := range sizes {
		// Halves to their homes: 10 int32 per half (key, nodes, cell,
		// local).
		// Each half's home (the rank of its smallest node), counted, then
		// the halves sent: one allocation per destination.
		var homes []int32
		nsend := make([]int, size)
		for _, b := range blocks {
			lf, nn, cells := topology.LocalFacets(b.Kind), b.Kind.Nodes(), b.Nodes
			for cl := range b.Len() {
				for _, f := range lf {
					if len(f) != fsize {
						continue
					}
					low := cells[cl*nn+f[0]]
					for _, v := range f[1:] {
						low = min(low, cells[cl*nn+v])
					}
					q := bl.home(low)
					homes = append(homes, int32(q))
					nsend[q] += 10
				}
			}
		}
		send := make([][]int32, size)
		for q := range send {
			send[q] = make([]int32, 0, nsend[q])
		}
		i, cell0 := 0, firstCell
		for _, b := range blocks {
			lf, nn, cells := topology.LocalFacets(b.Kind), b.Kind.Nodes(), b.Nodes
			for cl := range b.Len() {
				for l, f := range lf {
					if len(f) != fsize {
						continue
					}
					var h facetHalf
					h.key, h.nodes = [4]int32{-1, -1, -1, -1}, [4]int32{-1, -1, -1, -1}
					for j, v := range f {
						h.nodes[j] = cells[cl*nn+v]
						h.key[j] = h.nodes[j]
					}
					slices.Sort(h.key[:fsize])
					q := homes[i]
					i++
					send[q] = append(send[q], h.key[0], h.key[1], h.key[2], h.key[3], h.nodes[0], h.nodes[1], h.nodes[2], h.nodes[3], int32(cell0+cl), int32(l))
				}
			}
			cell0 += b.Len()
		}
		got, err := collective.AlltoallInt32(c, send)
		if err != nil {
			return nil, err
		}
		lo, count := collective.Block(nodes, c.Rank(), size)
		halves := sortHalves(got, lo, lo+count)
		fb := Block{Kind: facetKindOf(fsize)}
		var ikeys, bkeys [][4]int32 // in increasing order
		bad = nil
		for i := 0; i < len(halves); {
			j := i + 1
			for j < len(halves) && halves[j].key == halves[i].key {
				j++
			}
			a := halves[i]
			switch j - i {
			case 1:
				bkeys = append(bkeys, a.key)
				fb.BNodes = append(fb.BNodes, a.nodes[:fsize]...)
				fb.BCells = append(fb.BCells, a.cell)
				fb.BLocal = append(fb.BLocal, a.local)
			case 2:
				ikeys = append(ikeys, a.key)
				b := halves[i+1]
				fb.Nodes = append(fb.Nodes, a.nodes[:fsize]...)
				fb.Cells = append(fb.Cells, a.cell, b.cell)
				fb.Local = append(fb.Local, a.local, b.local)
			default:
				if bad == nil {
					bad = fmt.Errorf("a %v facet with nodes %v is shared by %d cells (%d, %d, %d...): a mesh's facet has one or two cells", fb.Kind, a.key[:fsize], j-i, a.cell, halves[i+1].cell, halves[i+2].cell)
				}
			}
			i = j
		}
		if err := collective.AgreeStep(c, "facets: pair the halves", bad); err != nil {
			return nil, err
		}
		if tag {
			if err := tagFacets(c, &fb, fsize, bl, ikeys, bkeys, tagged); err != nil {
				return nil, err
			}
		}
		// Number them: exclusive sums of the counts.
		counts, err := collective.Allgather(c, collective.Int64Bytes([]int64{int64(len(fb.Cells) / 2), int64(len(fb.BCells))}))
		if err != nil {
			return nil, err
		}
		for r, b := range counts {
			v := collective.BytesInt64(b)
			if r < c.Rank() {
				fb.First += int(v[0])
				fb.BFirst += int(v[1])
			}
			fb.InteriorTotal += int(v[0])
			fb.BoundaryTotal += int(v[1])
		}
		out = append(out, fb)
	}
	return out, nil
}

// sortHalves decodes the halves received (10 int32 each) and sorts them
// by key, then cell: a counting sort on the smallest node, which lies in
// [lo, hi) (this rank's block of the nodes), then a sort of each node's
// few halves.
func sortHalves(got [][]int32, lo, hi int) []facetHalf {
	total := 0
	for _, m := range got {
		total += len(m) / 10
	}
	start := make([]int, hi-lo+1)
	for _, m := range got {
		for i := 0; i+10 <= len(m); i += 10 {
			start[int(m[i])-lo+1]++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	halves := make([]facetHalf, total)
	next := slices.Clone(start[:len(start)-1])
	for _, m := range got {
		for i := 0; i+10 <= len(m); i += 10 {
			b := int(m[i]) - lo
			halves[next[b]] = facetHalf{key: [4]int32(m[i : i+4]), nodes: [4]int32(m[i+4 : i+8]), cell: m[i+8], local: int8(m[i+9])}
			next[b]++
		}
	}
	for b := range len(start) - 1 {
		bucket := halves[start[b]:start[b+1]]
		// Insertion sort: a node starts a few dozen facets at most.
		for i := 1; i < len(bucket); i++ {
			for j := i; j > 0 && lessHalf(&bucket[j], &bucket[j-1]); j-- {
				bucket[j], bucket[j-1] = bucket[j-1], bucket[j]
			}
		}
	}
	return halves
}

func lessHalf(a, b *facetHalf) bool {
	for j := 1; j < 4; j++ {
		if a.key[j] != b.key[j] {
			return a.key[j] < b.key[j]
		}
	}
	return a.cell < b.cell
}

// tagFacets sends the tagged facets of fsize nodes to the homes of their
// smallest nodes, where each finds its facet among this rank's (ikeys
// interior, bkeys boundary, both sorted) and gives it its tag.
func tagFacets(c collective.Comm, fb *Block, fsize int, bl nodeBlocks, ikeys, bkeys [][4]int32, tagged []Tagged) error {
	send := make([][]int32, c.Size())
	for _, tf := range tagged {
		if tf.Kind.Nodes() != fsize {
			continue
		}
		for i, tag := range tf.Tags {
			key := [4]int32{-1, -1, -1, -1}
			copy(key[:], tf.Nodes[i*fsize:(i+1)*fsize])
			slices.Sort(key[:fsize])
			q := bl.home(key[0])
			send[q] = append(send[q], key[0], key[1], key[2], key[3], tag)
		}
	}
	got, err := collective.AlltoallInt32(c, send)
	if err != nil {
		return err
	}
	cmpKey := func(a, b [4]int32) int {
		for j := range 4 {
			if c := cmp.Compare(a[j], b[j]); c != 0 {
				return c
			}
		}
		return 0
	}
	// (facet, tag) pairs: interior facets first, then boundary ones
	// (their index offset by len(ikeys)).
	var pairs [][2]int32
	var bad error
	for _, m := range got {
		for i := 0; i+5 <= len(m); i += 5 {
			key, tag := [4]int32(m[i:i+4]), m[i+4]
			if j, ok := slices.BinarySearchFunc(ikeys, key, cmpKey); ok {
				pairs = append(pairs, [2]int32{int32(j), tag})
			} else if j, ok := slices.BinarySearchFunc(bkeys, key, cmpKey); ok {
				pairs = append(pairs, [2]int32{int32(len(ikeys) + j), tag})
			} else if bad == nil {
				bad = fmt.Errorf("a tagged %v with nodes %v (tag %d) is not a facet of any cell", fb.Kind, key[:fsize], tag)
			}
		}
	}
	slices.SortFunc(pairs, func(a, b [2]int32) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	pairs = slices.Compact(pairs)
	width := 1
	for i := 0; i < len(pairs); {
		j := i + 1
		for j < len(pairs) && pairs[j][0] == pairs[i][0] {
			j++
		}
		width = max(width, j-i)
		i = j
	}
	if err := collective.AgreeStep(c, "facets: tag them", bad); err != nil {
		return err
	}
	_, hi, err := collective.MinMax(c, []float64{0}, []float64{float64(width)})
	if err != nil {
		return err
	}
	fb.TagDim = int(hi[0])
	fb.Tags = make([]int32, len(ikeys)*fb.TagDim)
	fb.BTags = make([]int32, len(bkeys)*fb.TagDim)
	for i := 0; i < len(pairs); {
		f := int(pairs[i][0])
		dst := fb.Tags
		if f >= len(ikeys) {
			dst, f = fb.BTags, f-len(ikeys)
		}
		for k := 0; i < len(pairs) && int(pairs[i][0]) == int(pairs[i-k][0]); k++ {
			dst[f*fb.TagDim+k] = pairs[i][1]
			i++
		}
	}
	return nil
}

func facetKindOf(n int) topology.Kind {
	switch n {
	case 2:
		return topology.Line
	case 3:
		return topology.Triangle
	}
	return topology.Quadrilateral
}
