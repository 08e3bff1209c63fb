package unstructured

import (
	"fmt"
	"math"
	"slices"

	"github.com/goop2/op2/internal/facets"
	"github.com/goop2/op2/mesh"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
)

// source is one rank's blocks of a mesh, before it is declared: node,
// cell and facet numbers are global (the file's numbering from 0).
type source struct {
	dim int
	// kind is the cells' kind, 0 when they are of several: kinds lists
	// them with their counts over all ranks, in declared order (the
	// cells are numbered kind after kind).
	kind  topology.Kind
	kinds []kindCount
	nodes int // over all ranks
	cells int
	// The rank's block of the nodes (dim coordinates each) and of the
	// cells (their nodes, positively oriented, Kind.Nodes() per cell of
	// each kind, and tags).
	firstNode, firstCell int
	x                    []float64
	cellNodes            []int32
	// cellTags holds cellTagDim physical tags per cell, increasing, then
	// zeros.
	cellTags   []int32
	cellTagDim int
	// The rank's block of the file's facet elements with a physical tag,
	// one entry per facet kind.
	tagged []facets.Tagged
	groups []gmsh.PhysicalGroup
}

// groupName names the physical group of the facets' dimension whose tag
// is tag, for errors: its name and tag.
func (s *source) groupName(tag int32) string {
	for _, g := range s.groups {
		if g.Tag == tag && g.Dim == s.dim-1 && g.Name != "" {
			return fmt.Sprintf("group %q (physical tag %d)", g.Name, tag)
		}
	}
	return fmt.Sprintf("group %d", tag)
}

// kindCount is one kind of cell and how many cells of it a mesh has.
type kindCount struct {
	kind  topology.Kind
	count int
}

// pieces splits the rank's block of the cells by kind: one entry per
// kind of s.kinds (empty where the block has none), with the global
// number of its first cell and its first cell's index in its kind.
func (s *source) pieces() (blocks []topology.Cells, first, inKind []int) {
	n := len(s.cellTags) / max(s.cellTagDim, 1)
	lo, hi := s.firstCell, s.firstCell+n
	at, off := 0, 0 // the kind's first cell; offset into cellNodes
	for _, k := range s.kinds {
		a, b := max(lo, at), min(hi, at+k.count)
		b = max(a, b)
		nn := k.kind.Nodes()
		blocks = append(blocks, topology.Cells{Kind: k.kind, Nodes: s.cellNodes[off : off+(b-a)*nn]})
		first = append(first, a)
		inKind = append(inKind, a-at)
		off += (b - a) * nn
		at += k.count
	}
	return blocks, first, inKind
}

// KindOf is the mesh/topology kind of Gmsh element type t, and whether
// package topology has one (the first-order lines, triangles,
// quadrangles, tetrahedra, hexahedra, prisms and pyramids).
func KindOf(t gmsh.Type) (topology.Kind, bool) {
	switch t {
	case gmsh.Line:
		return topology.Line, true
	case gmsh.Triangle:
		return topology.Triangle, true
	case gmsh.Quadrangle:
		return topology.Quadrilateral, true
	case gmsh.Tetrahedron:
		return topology.Tetrahedron, true
	case gmsh.Hexahedron:
		return topology.Hexahedron, true
	case gmsh.Prism:
		return topology.Prism, true
	case gmsh.Pyramid:
		return topology.Pyramid, true
	}
	return 0, false
}

// gmshType is the Gmsh type of kind k.
func gmshType(k topology.Kind) gmsh.Type {
	for t := gmsh.Type(1); t <= 15; t++ {
		if kk, ok := KindOf(t); ok && kk == k {
			return t
		}
	}
	return 0
}

// flip lists, per kind, the pairs of local nodes whose swap turns a cell
// the other way round.
var flip = map[topology.Kind][][2]int{
	topology.Triangle:      {{1, 2}},
	topology.Quadrilateral: {{1, 3}},
	topology.Tetrahedron:   {{1, 2}},
	topology.Hexahedron:    {{1, 3}, {5, 7}},
	topology.Prism:         {{1, 2}, {4, 5}},
	topology.Pyramid:       {{1, 3}},
}

// cellsOf returns g's cells: the elements of its highest dimension, which
// must be 2 or 3, one block per kind (gmsh.Mesh.Cells' order).
func cellsOf(g *gmsh.Mesh) ([]topology.Kind, []gmsh.Block, error) {
	if g.Dim < 2 {
		return nil, nil, errNoCells
	}
	blocks := g.Cells()
	kinds := make([]topology.Kind, len(blocks))
	for i, b := range blocks {
		k, ok := KindOf(b.Type)
		if !ok {
			return nil, nil, fmt.Errorf("the mesh's cells are %vs, which package mesh/topology does not derive", b.Type)
		}
		kinds[i] = k
	}
	return kinds, blocks, nil
}

// orient returns the nodes of the cells of kind k, each positively
// oriented; x holds dim coordinates per node; tags are the cells' file
// tags, and first the first cell's index among the cells of kind k, for
// errors (nil: cells without file tags, as in an HDF5 file).
func orient(k topology.Kind, nodes []int32, tags []int64, first int, x []float64, dim int) ([]int32, error) {
	vol, err := signedVolumes(k, nodes, x, dim)
	if err != nil {
		return nil, err
	}
	out := append([]int32(nil), nodes...)
	nn := k.Nodes()
	for c, v := range vol {
		row := out[c*nn : (c+1)*nn]
		name := func() string {
			if tags == nil {
				return fmt.Sprintf("%v %d", k, first+c)
			}
			return fmt.Sprintf("%v %d (element tag %d)", k, first+c, tags[c])
		}
		// A simplex with a node twice has no volume, which rounding may
		// hide in 3-D; a collapsed cell of another kind (a prism written
		// as a hexahedron) has facets with a node twice, which never
		// meet its neighbours' (package topology refuses it too).
		if a, b, ok := repeatedNode(row); ok {
			hint := ""
			if k != topology.Triangle && k != topology.Tetrahedron {
				hint = ": write a collapsed cell as the kind it is (a triangle, a prism, a pyramid, a tetrahedron), whose facets meet its neighbours'"
			}
			return nil, fmt.Errorf("%s has a node twice (its nodes %d and %d)%s", name(), a, b, hint)
		}
		switch {
		case v == 0:
			return nil, fmt.Errorf("%s has zero volume", name())
		case math.IsNaN(v) || math.IsInf(v, 0):
			return nil, fmt.Errorf("%s has volume %v: a coordinate of its nodes is not a finite number", name(), v)
		case v < 0:
			for _, p := range flip[k] {
				row[p[0]], row[p[1]] = row[p[1]], row[p[0]]
			}
		}
	}
	return out, nil
}

// repeatedNode returns the first two of a cell's nodes (by their place
// in it) that are the same node.
func repeatedNode(cell []int32) (a, b int, ok bool) {
	for j := 1; j < len(cell); j++ {
		for i := range j {
			if cell[i] == cell[j] {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// signedVolumes returns a value per cell whose sign is its orientation's:
// for simplices a determinant (six or two times the volume), for the
// other kinds topology.CellGeometry's volume.
func signedVolumes(k topology.Kind, nodes []int32, x []float64, dim int) ([]float64, error) {
	if k != topology.Tetrahedron && k != topology.Triangle {
		vol, _, err := topology.CellGeometry(k, nodes, x, dim)
		return vol, err
	}
	nn := k.Nodes()
	for _, v := range nodes {
		if v < 0 || int(v)*dim+dim > len(x) {
			return nil, fmt.Errorf("node %d has no coordinates (%d values of dim %d)", v, len(x), dim)
		}
	}
	vol := make([]float64, len(nodes)/nn)
	for c := range vol {
		p := nodes[c*nn : (c+1)*nn]
		a := x[int(p[0])*dim:]
		var d [3][3]float64
		for i := 1; i < nn; i++ {
			b := x[int(p[i])*dim:]
			for j := range dim {
				d[i-1][j] = b[j] - a[j]
			}
		}
		if dim == 2 {
			vol[c] = d[0][0]*d[1][1] - d[0][1]*d[1][0]
		} else {
			vol[c] = d[0][0]*(d[1][1]*d[2][2]-d[1][2]*d[2][1]) - d[0][1]*(d[1][0]*d[2][2]-d[1][2]*d[2][0]) + d[0][2]*(d[1][0]*d[2][1]-d[1][1]*d[2][0])
		}
	}
	return vol, nil
}

// physicalOf returns a function giving the physical groups of element i
// of a block: in a 4.1 file those of its entity ($Entities), in a 2.2 file
// its first tag (an element in several groups is repeated, once per
// group).
func physicalOf(g *gmsh.Mesh) func(b *gmsh.Block, i int) []int32 {
	type key struct {
		dim int
		tag int32
	}
	ent := map[key][]int32{}
	for _, e := range g.Entities {
		ent[key{e.Dim, e.Tag}] = e.Physical
	}
	return func(b *gmsh.Block, i int) []int32 {
		if p, ok := ent[key{b.Type.Dim(), b.Entity[i]}]; ok && len(g.Entities) > 0 {
			return p
		}
		if b.Physical[i] != 0 {
			return b.Physical[i : i+1]
		}
		return nil
	}
}

// uniqueCells returns the cells of block b with the physical groups of
// each (phys). A 2.2 file (no $Entities) writes an element in several
// groups once per group, under different tags: where the file's elements
// of the cells' dimension carry several groups (named in $PhysicalNames
// or not), repeated cells (the same nodes in the same order) are kept
// once, with all their groups.
func uniqueCells(g *gmsh.Mesh, b *gmsh.Block, phys func(*gmsh.Block, int) []int32) (nodes []int32, tags []int64, groups [][]int32) {
	nn := b.Type.NumNodes()
	var where map[[8]int32]int // a cell's nodes → its index in the result
	if len(g.Entities) == 0 && severalGroups(g, b.Type.Dim()) {
		where = map[[8]int32]int{}
	}
	for i := range b.Len() {
		p := phys(b, i)
		row := b.Nodes[i*nn : (i+1)*nn]
		if where != nil {
			key := [8]int32{-1, -1, -1, -1, -1, -1, -1, -1}
			copy(key[:], row)
			if j, ok := where[key]; ok {
				groups[j] = append(groups[j], p...)
				continue
			}
			where[key] = len(tags)
		}
		nodes = append(nodes, row...)
		tags = append(tags, b.Tags[i])
		groups = append(groups, slices.Clone(p))
	}
	return nodes, tags, groups
}

// severalGroups reports whether g's elements of dimension dim carry more
// than one physical group tag on their own lines (gmsh.Part.Groups).
func severalGroups(g *gmsh.Mesh, dim int) bool {
	first := int32(0)
	for i := range g.Blocks {
		b := &g.Blocks[i]
		if b.Type.Dim() != dim {
			continue
		}
		for _, p := range b.Physical {
			switch {
			case p == 0 || p == first:
			case first == 0:
				first = p
			default:
				return true
			}
		}
	}
	return false
}

// zRange is what the check that a 2-D mesh is flat needs of some nodes:
// their extent in x, y and z, and the file's tags of the nodes with the
// least and the greatest z (n nodes; none: n is 0).
type zRange struct {
	lo, hi       [3]float64
	loTag, hiTag int64
	n            int64
}

// zRangeOf returns the zRange of the nodes at x (x, y, z per node) with
// the file's tags tags.
func zRangeOf(x []float64, tags []int64) zRange {
	var r zRange
	for i := 0; 3*i+2 < len(x) && i < len(tags); i++ {
		r = r.merge(zRange{lo: [3]float64(x[3*i : 3*i+3]), hi: [3]float64(x[3*i : 3*i+3]), loTag: tags[i], hiTag: tags[i], n: 1})
	}
	return r
}

// merge returns the zRange of the nodes of r and o.
func (r zRange) merge(o zRange) zRange {
	switch {
	case o.n == 0:
		return r
	case r.n == 0:
		return o
	}
	if o.lo[2] < r.lo[2] || o.lo[2] == r.lo[2] && o.loTag < r.loTag {
		r.loTag = o.loTag
	}
	if o.hi[2] > r.hi[2] || o.hi[2] == r.hi[2] && o.hiTag < r.hiTag {
		r.hiTag = o.hiTag
	}
	for k := range 3 {
		r.lo[k], r.hi[k] = min(r.lo[k], o.lo[k]), max(r.hi[k], o.hi[k])
	}
	r.n += o.n
	return r
}

// flat refuses, for a 2-D mesh (dim 2), nodes that do not lie in one
// plane z = constant, to rounding (Gmsh's OpenCASCADE geometry writes a
// plane z = 0.1 with some nodes at 0.09999999999999999): its cells are
// computed from x and y alone.
func (r zRange) flat(dim int) error {
	if dim != 2 || r.n == 0 {
		return nil
	}
	scale := max(r.hi[0]-r.lo[0], r.hi[1]-r.lo[1], math.Abs(r.lo[2]), math.Abs(r.hi[2]))
	if r.hi[2]-r.lo[2] <= 1e-9*scale {
		return nil
	}
	return fmt.Errorf("a 2-D mesh must lie in a plane z = constant (its cells are computed from x and y): node tag %d has z = %g, node tag %d z = %g", r.loTag, r.lo[2], r.hiTag, r.hi[2])
}

// fromGmsh takes this rank's blocks of g.
func fromGmsh(g *gmsh.Mesh, rank, ranks int) (*source, error) {
	// Before anything reads a slice: a hand-built mesh whose slices
	// disagree would panic below, or read past their lengths.
	if err := g.Check(); err != nil {
		return nil, err
	}
	kinds, blocks, err := cellsOf(g)
	if err != nil {
		return nil, err
	}
	dim := kinds[0].Dim()
	if err := zRangeOf(g.X, g.NodeTags).flat(dim); err != nil {
		return nil, err
	}
	x := g.Coords(dim)
	phys := physicalOf(g)
	s := &source{dim: dim, nodes: g.NumNodes(), groups: g.Physical, cellTagDim: 1}
	if len(kinds) == 1 {
		s.kind = kinds[0]
	}
	var cellNodes []int32
	var cellTags []int64
	var cellGroups [][]int32
	for i := range blocks {
		nodes, tags, groups := uniqueCells(g, &blocks[i], phys)
		cellNodes, cellTags, cellGroups = append(cellNodes, nodes...), append(cellTags, tags...), append(cellGroups, groups...)
		s.kinds = append(s.kinds, kindCount{kinds[i], len(tags)})
	}
	s.cells = len(cellTags)
	for _, p := range cellGroups {
		slices.Sort(p)
		s.cellTagDim = max(s.cellTagDim, len(slices.Compact(p)))
	}
	start, count := mesh.Block(s.cells, rank, ranks)
	s.firstCell = start
	// The rank's cells, kind by kind: at is the kind's first cell, off
	// its first node entry.
	at, off := 0, 0
	for _, kc := range s.kinds {
		lo, hi := max(start, at), min(start+count, at+kc.count)
		nn := kc.kind.Nodes()
		if lo < hi {
			o, err := orient(kc.kind, cellNodes[off+(lo-at)*nn:off+(hi-at)*nn], cellTags[lo:hi], lo-at, x, dim)
			if err != nil {
				return nil, err
			}
			s.cellNodes = append(s.cellNodes, o...)
		}
		at, off = at+kc.count, off+kc.count*nn
	}
	s.cellTags = make([]int32, count*s.cellTagDim)
	for c := range count {
		copy(s.cellTags[c*s.cellTagDim:], slices.Compact(cellGroups[start+c]))
	}
	start, count = mesh.Block(s.nodes, rank, ranks)
	s.firstNode = start
	s.x = append([]float64(nil), x[start*dim:(start+count)*dim]...)
	for _, b := range g.Blocks {
		if b.Type.Dim() != dim-1 {
			continue
		}
		fk, ok := KindOf(b.Type)
		if !ok {
			return nil, fmt.Errorf("the mesh has %d %vs", b.Len(), b.Type)
		}
		fn := fk.Nodes()
		start, count := mesh.Block(b.Len(), rank, ranks)
		tf := facets.Tagged{Kind: fk}
		for i := start; i < start+count; i++ {
			for _, p := range phys(&b, i) {
				tf.Nodes = append(tf.Nodes, b.Nodes[i*fn:(i+1)*fn]...)
				tf.Tags = append(tf.Tags, p)
			}
		}
		s.tagged = append(s.tagged, tf)
	}
	return s, nil
}
