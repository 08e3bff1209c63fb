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
// by Derive: the facets whose smallest node is in this rank's range of
// the nodes (consecutive ranges in rank order, cut so that the ranks
// hold about as many facets each), in increasing order of their sorted
// nodes, numbered from First over all ranks (interior and boundary
// facets separately).
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

// facetHalf is one cell's side of a facet, at the facet's home: the
// facet's sorted nodes (-1 past its size), the cell (global), the facet's
// local number in it, and the order of the nodes as the cell sees them
// (perm: node j is key[perm>>(2j)&3]). 24 bytes.
type facetHalf struct {
	key   [4]int32
	cell  int32
	local int8
	perm  uint8
}

// newHalf is the half of cell whose local facet local has nodes (fsize of
// them, as the cell sees them).
func newHalf(nodes [4]int32, fsize int, cell int32, local int8) facetHalf {
	h := facetHalf{key: [4]int32{-1, -1, -1, -1}, cell: cell, local: local}
	idx := [4]uint8{0, 1, 2, 3}
	// Insertion sort of the positions by node: at most 4.
	for i := 1; i < fsize; i++ {
		for j := i; j > 0 && nodes[idx[j]] < nodes[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	for k := range fsize {
		h.key[k] = nodes[idx[k]]
		h.perm |= uint8(k) << (2 * idx[k])
	}
	return h
}

// nodes returns the facet's nodes as the half's cell sees them (-1 past
// the facet's size).
func (h *facetHalf) nodes() [4]int32 {
	out := [4]int32{-1, -1, -1, -1}
	for j := range 4 {
		if h.key[j] >= 0 {
			out[j] = h.key[h.perm>>(2*j)&3]
		}
	}
	return out
}

// Derive derives a mesh's facets over the ranks, before it is
// partitioned: every rank passes its block of the cells (all of kind k,
// cells holding their global node numbers, the first being global cell
// firstCell) and the mesh's node count, and gets the facets whose
// smallest node lies in its range of the nodes: the ranks' ranges are
// consecutive and cut from a histogram of the facets' smallest nodes so
// that each rank is home to about as many facets. All-to-alls in rounds
// of a bounded size (roundBytes sent per rank) take each cell's facets
// to their homes, so that a rank holds its share of the facets and a
// round's messages; an exclusive sum numbers them. The result, one Block per facet kind (prisms and
// pyramids have two), is in the declared layout op2.Partition expects:
// each rank's block of the facet sets with maps to global cells and
// nodes. A facet shared by more than two cells is an error on every
// rank.
func Derive(c collective.Comm, k topology.Kind, cells []int32, firstCell, nodes int) ([]Block, error) {
	return facets(c, []topology.Cells{{Kind: k, Nodes: cells}}, firstCell, nodes, nil, false, nil)
}

// DeriveTagged is Derive with tags: each rank also passes some facets
// with a tag each (any of them, such as its block of a file's boundary
// elements, a facet listed once per physical group it is in), and every
// facet derived gets the tags of the listed facets with the same nodes
// (Block.Tags, BTags: none where none is listed). A listed facet that is no cell's facet
// is an error on every rank naming its nodes and its tag's group, as
// group names it (the same on every rank; nil: "group <tag>").
// DeriveTagged is collective as Derive is: every rank calls it, with
// its own list (possibly empty).
func DeriveTagged(c collective.Comm, k topology.Kind, cells []int32, firstCell, nodes int, tagged []Tagged, group func(tag int32) string) ([]Block, error) {
	return facets(c, []topology.Cells{{Kind: k, Nodes: cells}}, firstCell, nodes, tagged, true, group)
}

// DeriveMixed is DeriveTagged for a mesh whose cells are of several kinds
// of one dimension: each rank passes its block of the cells as blocks of
// one kind each, numbered one after another from global cell firstCell
// (topology.DeriveMixed's numbering), every rank the same kinds in the
// same order (a block may be empty). A facet's Local is its local number
// in each cell's own kind.
func DeriveMixed(c collective.Comm, blocks []topology.Cells, firstCell, nodes int, tagged []Tagged, group func(tag int32) string) ([]Block, error) {
	return facets(c, blocks, firstCell, nodes, tagged, true, group)
}

func facets(c collective.Comm, blocks []topology.Cells, firstCell, nodes int, tagged []Tagged, tag bool, group func(int32) string) ([]Block, error) {
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
		// Halves to their homes, the ranges of smallest nodes cut so
		// that every rank is home to about as many halves (a facet's
		// smallest node is more often a small number: a triangle's is in
		// the first half of the nodes 7 times in 8), sent in rounds of a
		// bounded size.
		h, mine, want, err := balancedHomes(c, blocks, fsize, nodes)
		if err != nil {
			return nil, err
		}
		halves, err := exchangeHalves(c, blocks, firstCell, fsize, h, mine, want)
		if err != nil {
			return nil, err
		}
		fb := Block{Kind: facetKindOf(fsize)}
		// Counted, then filled: the blocks' slices are allocated once.
		ni, nb := 0, 0
		for i := 0; i < len(halves); {
			j := i + 1
			for j < len(halves) && halves[j].key == halves[i].key {
				j++
			}
			switch j - i {
			case 1:
				nb++
			case 2:
				ni++
			}
			i = j
		}
		ikeys, bkeys := make([][4]int32, 0, ni), make([][4]int32, 0, nb) // in increasing order
		fb.Nodes, fb.Cells, fb.Local = make([]int32, 0, ni*fsize), make([]int32, 0, 2*ni), make([]int8, 0, 2*ni)
		fb.BNodes, fb.BCells, fb.BLocal = make([]int32, 0, nb*fsize), make([]int32, 0, nb), make([]int8, 0, nb)
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
				nd := a.nodes()
				fb.BNodes = append(fb.BNodes, nd[:fsize]...)
				fb.BCells = append(fb.BCells, a.cell)
				fb.BLocal = append(fb.BLocal, a.local)
			case 2:
				ikeys = append(ikeys, a.key)
				b := halves[i+1]
				nd := a.nodes()
				fb.Nodes = append(fb.Nodes, nd[:fsize]...)
				fb.Cells = append(fb.Cells, a.cell, b.cell)
				fb.Local = append(fb.Local, a.local, b.local)
			default:
				if bad == nil {
					bad = fmt.Errorf("a %v facet with nodes %v is shared by %d cells (%d, %d, %d...): a mesh's facet has one or two cells", fb.Kind, a.key[:fsize], j-i, a.cell, halves[i+1].cell, halves[i+2].cell)
				}
			}
			i = j
		}
		halves = nil
		if err := collective.AgreeStep(c, "facets: pair the halves", bad); err != nil {
			return nil, err
		}
		if tag {
			if err := tagFacets(c, &fb, fsize, h, ikeys, bkeys, tagged, group); err != nil {
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

// tagFacets sends the tagged facets of fsize nodes to the homes of their
// smallest nodes, where each finds its facet among this rank's (ikeys
// interior, bkeys boundary, both sorted) and gives it its tag; group
// names a tag in errors (nil: "group <tag>").
func tagFacets(c collective.Comm, fb *Block, fsize int, bl homes, ikeys, bkeys [][4]int32, tagged []Tagged, group func(int32) string) error {
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
				name := fmt.Sprintf("group %d", tag)
				if group != nil {
					name = group(tag)
				}
				bad = fmt.Errorf("an element of %s, a %v with nodes %v (numbered from 0 in the nodes' order), is not a face of any cell: a group of the facets' dimension may hold only faces of the mesh's cells", name, fb.Kind, key[:fsize])
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
