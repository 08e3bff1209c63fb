// Package topology derives the connectivity unstructured-mesh codes write
// by hand from a mesh's cells: the facets (edges of 2-D cells, faces of
// 3-D cells) with their nodes, the cells on each side of each facet and
// the facet's local number in each, the facets and neighbours of each
// cell, and the boundary facets, for cells of one kind (Derive) or of
// several (DeriveMixed: a boundary layer of prisms under tetrahedra with
// pyramids between). It works on plain slices (a mesh read
// from a file, before it is declared to GoOP2), in time linear in the
// mesh's size up to a sort of the facets' keys.
//
// Local numbering follows Gmsh's node orders (VTK's too, but for prisms:
// see package vtk's Wedge). A facet's nodes are listed as its first cell
// sees it, oriented outward from that cell
// when the cell is positively oriented (counter-clockwise triangles and
// quadrilaterals; tetrahedra with (n1-n0)×(n2-n0)·(n3-n0) > 0; hexahedra
// and prisms with their bottom face counter-clockwise seen from above;
// pyramids, quadrilateral base n0..n3 and apex n4, with their base
// counter-clockwise seen from the apex, (n1-n0)×(n3-n0)·(n4-n0) > 0, as
// Gmsh's reference pyramid and the pyramids Gmsh writes are), so a
// boundary facet's normal points out of the mesh.
package topology

import (
	"cmp"
	"fmt"
	"slices"
)

// Kind is a kind of cell or facet.
type Kind int

// The kinds.
const (
	Line Kind = iota + 1
	Triangle
	Quadrilateral
	Tetrahedron
	Hexahedron
	Prism
	Pyramid // quadrilateral base n0..n3, apex n4
)

var kindNames = map[Kind]string{Line: "line", Triangle: "triangle", Quadrilateral: "quadrilateral",
	Tetrahedron: "tetrahedron", Hexahedron: "hexahedron", Prism: "prism", Pyramid: "pyramid"}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind %d", int(k))
}

// Plural names several elements of kind k: "triangles", "tetrahedra",
// "hexahedra", and lines as "edges".
func (k Kind) Plural() string {
	switch k {
	case Line:
		return "edges"
	case Tetrahedron:
		return "tetrahedra"
	case Hexahedron:
		return "hexahedra"
	}
	return k.String() + "s"
}

// Nodes is the number of nodes of a cell of kind k.
func (k Kind) Nodes() int {
	switch k {
	case Line:
		return 2
	case Triangle:
		return 3
	case Quadrilateral, Tetrahedron:
		return 4
	case Pyramid:
		return 5
	case Prism:
		return 6
	case Hexahedron:
		return 8
	}
	return 0
}

// Dim is the dimension of kind k.
func (k Kind) Dim() int {
	switch k {
	case Line:
		return 1
	case Triangle, Quadrilateral:
		return 2
	}
	return 3
}

// facets lists each kind's local facets: their nodes as local node
// numbers, oriented outward.
var facets = map[Kind][][]int{
	Triangle:      {{0, 1}, {1, 2}, {2, 0}},
	Quadrilateral: {{0, 1}, {1, 2}, {2, 3}, {3, 0}},
	Tetrahedron:   {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}},
	Hexahedron:    {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}},
	Prism:         {{0, 2, 1}, {3, 4, 5}, {0, 1, 4, 3}, {1, 2, 5, 4}, {2, 0, 3, 5}},
	Pyramid:       {{0, 3, 2, 1}, {0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}},
}

// LocalFacets returns the local facets of kind k: each a list of local
// node numbers, oriented outward (see the package doc); nil for a line.
func LocalFacets(k Kind) [][]int {
	return facets[k]
}

// facetKind is the kind of a facet of n nodes in a cell of dimension d.
func facetKind(n int) Kind {
	switch n {
	case 2:
		return Line
	case 3:
		return Triangle
	}
	return Quadrilateral
}

// Facets is one kind of facet of a mesh: prisms and pyramids have
// triangular and quadrilateral faces, other cells one kind.
type Facets struct {
	Kind Kind
	// Nodes holds each facet's nodes (Kind.Nodes() per facet), as its
	// first cell sees it (outward from that cell).
	Nodes []int32
	// Cells holds the two cells of each facet: the first, and the second
	// or -1 for a boundary facet.
	Cells []int32
	// Local holds each facet's local number in each of its two cells
	// (LocalFacets' index; -1 where Cells is -1).
	Local []int8
	// Boundary lists the facets with one cell, in increasing order.
	Boundary []int32
}

// Len is the number of facets.
func (f *Facets) Len() int { return len(f.Cells) / 2 }

// check reports whether f's slices agree on its number of facets, as
// Derive makes them, before Geometry or Find reads them: Facets built by
// hand whose Nodes were short would panic there, or be read past their
// length.
func (f *Facets) check() error {
	nn := f.Kind.Nodes()
	if nn == 0 {
		return fmt.Errorf("topology: facets of kind %v", f.Kind)
	}
	if len(f.Cells)%2 != 0 {
		return fmt.Errorf("topology: %v facets: Cells has %d entries, not two per facet", f.Kind, len(f.Cells))
	}
	if want := f.Len() * nn; len(f.Nodes) != want {
		return fmt.Errorf("topology: %v facets: Nodes has %d entries, want %d (%d facets by Cells × %d nodes)", f.Kind, len(f.Nodes), want, f.Len(), nn)
	}
	return nil
}

// Topology is what Derive finds of a mesh of one kind of cell, or
// DeriveMixed of a mesh of several.
type Topology struct {
	// Kind is the cells' kind: 0 when they are of several kinds
	// (DeriveMixed).
	Kind  Kind
	Cells int // how many
	// Facets holds one set per kind of facet, in increasing number of
	// nodes (edges; or triangles, then quadrilaterals).
	Facets []Facets
	// CellFacet holds, for each cell and each of its local facets (in
	// LocalFacets' order for the cell's kind), the facet's set (index
	// into Facets) and its index in that set: CellFacet[2*(Start(c)+i)]
	// and CellFacet[2*(Start(c)+i)+1]. For cells of one kind, Start(c)
	// is c*FacetsPerCell(); for cells with one kind of facet the set is
	// always 0.
	CellFacet []int32
	// CellCell holds, for each cell and each local facet, the cell across
	// that facet, or -1 on the boundary: CellCell[Start(c)+i].
	CellCell []int32
	// Offset holds, for a mesh of several kinds of cell (DeriveMixed),
	// Start(c) for each cell c and then the number of entries of
	// CellCell: cell c's local facets are CellCell[Offset[c]:Offset[c+1]].
	// It is nil for cells of one kind.
	Offset []int32
}

// FacetsPerCell is the number of facets of each cell: 0 when the cells
// are of several kinds (see Offset).
func (t *Topology) FacetsPerCell() int { return len(facets[t.Kind]) }

// Start is the index in CellCell of cell c's first local facet (in
// CellFacet, twice that).
func (t *Topology) Start(c int) int {
	if t.Offset != nil {
		return int(t.Offset[c])
	}
	return c * len(facets[t.Kind])
}

// Cells is a block of cells of one kind, as DeriveMixed takes them:
// Nodes holds Kind.Nodes() node numbers per cell.
type Cells struct {
	Kind  Kind
	Nodes []int32
}

// Len is the number of cells in c (0 for a kind without nodes).
func (c Cells) Len() int {
	if n := c.Kind.Nodes(); n > 0 {
		return len(c.Nodes) / n
	}
	return 0
}

// Derive derives the topology of n cells of kind k whose nodes are
// cells[i*k.Nodes() : (i+1)*k.Nodes()], nodes being numbered from 0 to
// nodes-1. A facet shared by more than two cells, a cell that repeats a
// node and a node out of range are errors naming the cell.
func Derive(k Kind, cells []int32, nodes int) (*Topology, error) {
	lf := facets[k]
	if lf == nil {
		return nil, fmt.Errorf("topology: %v cells have no facets to derive", k)
	}
	nn := k.Nodes()
	if len(cells)%nn != 0 {
		return nil, fmt.Errorf("topology: %d node entries are not whole %vs of %d nodes", len(cells), k, nn)
	}
	n := len(cells) / nn
	for c := range n {
		if err := checkCell(cells[c*nn:(c+1)*nn], nodes, func() string { return fmt.Sprintf("%v %d", k, c) }); err != nil {
			return nil, err
		}
	}
	t := &Topology{Kind: k, Cells: n, CellFacet: make([]int32, 2*n*len(lf)), CellCell: make([]int32, n*len(lf))}
	if err := t.derive([]Cells{{k, cells}}); err != nil {
		return nil, err
	}
	return t, nil
}

// checkCell checks one cell's nodes: in [0,nodes), none twice; name
// names the cell in the error.
func checkCell(row []int32, nodes int, name func() string) error {
	for i, v := range row {
		if v < 0 || int(v) >= nodes {
			return fmt.Errorf("topology: %s: node %d is %d, outside [0,%d)", name(), i, v, nodes)
		}
		for _, w := range row[:i] {
			if w == v {
				return fmt.Errorf("topology: %s holds node %d twice", name(), v)
			}
		}
	}
	return nil
}

// DeriveMixed derives the topology of a mesh whose cells are of several
// kinds of one dimension (triangles and quadrilaterals; tetrahedra,
// hexahedra, prisms and pyramids), given as blocks of one kind each: the
// cells are numbered block after block, blocks[0]'s first. A face that a
// cell of one kind shares with a cell of another (a prism's triangle with
// a tetrahedron, a pyramid's base with a hexahedron) is an interior
// facet; each facet's Local is its local number in each cell's own kind.
// The errors are Derive's, naming the cell by its number and kind, and
// blocks of different dimensions are refused. Kind is the blocks' kind
// when they have one, else 0; Offset locates each cell's facets.
func DeriveMixed(blocks []Cells, nodes int) (*Topology, error) {
	t := &Topology{}
	total := 0
	for i, b := range blocks {
		lf := facets[b.Kind]
		switch {
		case lf == nil:
			return nil, fmt.Errorf("topology: block %d: %v cells have no facets to derive", i, b.Kind)
		case b.Kind.Dim() != blocks[0].Kind.Dim():
			return nil, fmt.Errorf("topology: block %d: %v cells in a mesh of %v cells: the cells must be of one dimension", i, b.Kind, blocks[0].Kind)
		case len(b.Nodes)%b.Kind.Nodes() != 0:
			return nil, fmt.Errorf("topology: block %d: %d node entries are not whole %vs of %d nodes", i, len(b.Nodes), b.Kind, b.Kind.Nodes())
		}
		if i == 0 || t.Kind == b.Kind {
			t.Kind = b.Kind
		} else {
			t.Kind = 0
		}
		nn := b.Kind.Nodes()
		for c := range b.Len() {
			if err := checkCell(b.Nodes[c*nn:(c+1)*nn], nodes, func() string { return fmt.Sprintf("cell %d (%v)", total+c, b.Kind) }); err != nil {
				return nil, err
			}
		}
		total += b.Len()
	}
	t.Cells = total
	t.Offset = make([]int32, 0, total+1)
	off := int32(0)
	for _, b := range blocks {
		F := int32(len(facets[b.Kind]))
		for range b.Len() {
			t.Offset = append(t.Offset, off)
			off += F
		}
	}
	t.Offset = append(t.Offset, off)
	t.CellFacet, t.CellCell = make([]int32, 2*off), make([]int32, off)
	if err := t.derive(blocks); err != nil {
		return nil, err
	}
	return t, nil
}

// derive finds the facets of blocks, whose cells t counts and locates,
// one set per facet size.
func (t *Topology) derive(blocks []Cells) error {
	sizes := []int{}
	for _, b := range blocks {
		for _, f := range facets[b.Kind] {
			if !slices.Contains(sizes, len(f)) {
				sizes = append(sizes, len(f))
			}
		}
	}
	slices.Sort(sizes)
	for set, size := range sizes {
		fs, err := t.deriveSize(blocks, size, int32(set))
		if err != nil {
			return err
		}
		t.Facets = append(t.Facets, fs)
	}
	return nil
}

// half is one cell's side of a facet: its sorted nodes (the key), the
// cell and the local facet.
type half struct {
	key   [4]int32
	cell  int32
	local int8
}

// sortHalves orders halves by key, then cell: a counting sort on the
// smallest node (linear), then a sort of each node's few halves.
func sortHalves(halves []half, nodes int) []half {
	start := make([]int32, nodes+1)
	for _, h := range halves {
		start[h.key[0]+1]++
	}
	for v := range nodes {
		start[v+1] += start[v]
	}
	out := make([]half, len(halves))
	next := slices.Clone(start[:nodes])
	for _, h := range halves { // in cell order: each bucket stays sorted by cell
		out[next[h.key[0]]] = h
		next[h.key[0]]++
	}
	for v := range nodes {
		b := out[start[v]:start[v+1]]
		if len(b) > 1 {
			slices.SortStableFunc(b, func(a, b half) int {
				if c := cmp.Compare(a.key[1], b.key[1]); c != 0 {
					return c
				}
				if c := cmp.Compare(a.key[2], b.key[2]); c != 0 {
					return c
				}
				return cmp.Compare(a.key[3], b.key[3])
			})
		}
	}
	return out
}

// deriveSize finds the facets of size nodes.
func (t *Topology) deriveSize(blocks []Cells, size int, set int32) (Facets, error) {
	per := 0
	for _, b := range blocks {
		for _, f := range facets[b.Kind] {
			if len(f) == size {
				per += b.Len()
			}
		}
	}
	// cell returns cell c's block and its nodes.
	cell := func(c int32) (*Cells, []int32) {
		for i := range blocks {
			b := &blocks[i]
			if n := int32(b.Len()); c >= n {
				c -= n
				continue
			}
			nn := int32(b.Kind.Nodes())
			return b, b.Nodes[c*nn : (c+1)*nn]
		}
		return nil, nil
	}
	halves := make([]half, 0, per)
	maxNode := int32(-1)
	c := int32(0)
	for _, b := range blocks {
		lf := facets[b.Kind]
		nn := b.Kind.Nodes()
		for k := range b.Len() {
			row := b.Nodes[k*nn : (k+1)*nn]
			for i, f := range lf {
				if len(f) != size {
					continue
				}
				h := half{key: [4]int32{-1, -1, -1, -1}, cell: c, local: int8(i)}
				for j, v := range f {
					h.key[j] = row[v]
				}
				slices.Sort(h.key[:size])
				maxNode = max(maxNode, h.key[0])
				halves = append(halves, h)
			}
			c++
		}
	}
	halves = sortHalves(halves, int(maxNode)+1)
	fs := Facets{Kind: facetKind(size)}
	at := func(cell int32, local int8) int { return t.Start(int(cell)) + int(local) }
	for i := 0; i < len(halves); {
		j := i + 1
		for j < len(halves) && halves[j].key == halves[i].key {
			j++
		}
		if j-i > 2 {
			return Facets{}, fmt.Errorf("topology: a %v facet with nodes %v is shared by %d cells (%d, %d, %d...): a mesh's facet has one or two cells", fs.Kind, halves[i].key[:size], j-i, halves[i].cell, halves[i+1].cell, halves[i+2].cell)
		}
		id := int32(fs.Len())
		a := halves[i]
		ab, row := cell(a.cell)
		for _, v := range facets[ab.Kind][a.local] {
			fs.Nodes = append(fs.Nodes, row[v])
		}
		t.CellFacet[2*at(a.cell, a.local)] = set
		t.CellFacet[2*at(a.cell, a.local)+1] = id
		if j-i == 2 {
			b := halves[i+1]
			fs.Cells = append(fs.Cells, a.cell, b.cell)
			fs.Local = append(fs.Local, a.local, b.local)
			t.CellFacet[2*at(b.cell, b.local)] = set
			t.CellFacet[2*at(b.cell, b.local)+1] = id
			t.CellCell[at(a.cell, a.local)] = b.cell
			t.CellCell[at(b.cell, b.local)] = a.cell
		} else {
			fs.Cells = append(fs.Cells, a.cell, -1)
			fs.Local = append(fs.Local, a.local, -1)
			fs.Boundary = append(fs.Boundary, id)
			t.CellCell[at(a.cell, a.local)] = -1
		}
		i = j
	}
	return fs, nil
}

// Find returns the index in f of each facet listed in nodes (Kind.Nodes()
// per facet, in any order): the facets of a boundary group as a mesh file
// lists them, such as a Gmsh physical group's lines or faces. A facet f
// lacks is an error naming its position and nodes.
func (f *Facets) Find(nodes []int32) ([]int32, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	nn := f.Kind.Nodes()
	if len(nodes)%nn != 0 {
		return nil, fmt.Errorf("topology: %d node entries are not whole %vs", len(nodes), f.Kind)
	}
	key := func(v []int32) [4]int32 {
		k := [4]int32{-1, -1, -1, -1}
		copy(k[:], v)
		slices.Sort(k[:len(v)])
		return k
	}
	index := make(map[[4]int32]int32, f.Len())
	for i := range f.Len() {
		index[key(f.Nodes[i*nn:(i+1)*nn])] = int32(i)
	}
	out := make([]int32, len(nodes)/nn)
	for i := range out {
		v := nodes[i*nn : (i+1)*nn]
		id, ok := index[key(v)]
		if !ok {
			return nil, fmt.Errorf("topology: facet %d of the list, nodes %v, is not a %v of the mesh", i, v, f.Kind)
		}
		out[i] = id
	}
	return out, nil
}
