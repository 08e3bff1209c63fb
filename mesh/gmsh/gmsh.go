// Package gmsh reads meshes written by Gmsh (https://gmsh.info) in its
// .msh formats 4.1 and 2.2, ASCII and binary, into plain slices: node
// coordinates, elements grouped by kind, and physical groups.
//
// It is a reader only and knows nothing of OP2: deriving edges or faces
// and declaring sets and maps are left to the caller.
//
// # Supported input
//
// The sections $MeshFormat (which must come first), $PhysicalNames,
// $Entities (4.1: it maps an element's entity to its physical groups),
// $Nodes and $Elements are read; $Nodes must come before $Elements. Other
// sections ($Periodic, $NodeData, $ElementData, $Comments, ...) are
// skipped to their end marker. Partitioned 4.1 files
// ($PartitionedEntities) are refused.
//
// Binary files must have data size 8 (Gmsh's only one); both byte orders
// are read, as the endianness marker after the format line says.
//
// Elements must be of the first-order kinds Point (15), Line (1),
// Triangle (2), Quadrangle (3), Tetrahedron (4), Hexahedron (5), Prism (6)
// and Pyramid (7). Any other type, second-order elements included, is an
// error naming the type and where it is: its nodes could not be read as
// vertices without losing the curved geometry silently.
//
// # Numbering
//
// Nodes are numbered from 0 in the file's order (the order of the node
// lines in 2.2, of the node blocks and within them in 4.1): node i has the
// coordinates X[3*i:3*i+3] and the file's tag NodeTags[i]. Tags need not
// start at 1 nor be contiguous; elements refer to nodes by tag, and Read
// gives their 0-based indices. Elements keep the file's order within each
// kind and their file tags.
//
// # Reading a part
//
// Read and ReadFile hold the input and the mesh whole. ScanFile streams a
// file through a buffer of a fixed size and returns its counts, and
// ReadFilePart streams it again keeping only the ranges of nodes and of
// each type's elements it is given (a process's block of a mesh read in
// parallel), with the elements' node tags for the caller to turn into
// indices (Part.DenseTags says when tag t is node t-1).
//
// # Safety
//
// Read and ReadFile follow docs/safety.md: every count is checked against
// the bytes left in the input before anything is allocated for it (a file
// of a few bytes claiming 2^40 nodes is an error, not an allocation),
// ReadFile reads regular files only and no further than their size, and
// errors name the file (ReadFile), the line (ASCII files) or the byte
// offset (binary files), the section and item, and what is wrong.
package gmsh

import (
	"fmt"
	"strings"
)

// Type is a Gmsh element type number.
type Type int

// The element types Read accepts: Gmsh's first-order elements.
const (
	Line        Type = 1
	Triangle    Type = 2
	Quadrangle  Type = 3
	Tetrahedron Type = 4
	Hexahedron  Type = 5
	Prism       Type = 6
	Pyramid     Type = 7
	Point       Type = 15
)

type typeInfo struct {
	name       string
	nodes, dim int
}

var types = map[Type]typeInfo{
	Line:        {"line", 2, 1},
	Triangle:    {"triangle", 3, 2},
	Quadrangle:  {"quadrangle", 4, 2},
	Tetrahedron: {"tetrahedron", 4, 3},
	Hexahedron:  {"hexahedron", 8, 3},
	Prism:       {"prism", 6, 3},
	Pyramid:     {"pyramid", 5, 3},
	Point:       {"point", 1, 0},
}

// otherTypes names some Gmsh types Read refuses, for its errors.
var otherTypes = map[Type]string{
	8: "3-node second-order line", 9: "6-node second-order triangle",
	10: "9-node second-order quadrangle", 11: "10-node second-order tetrahedron",
	12: "27-node second-order hexahedron", 13: "18-node second-order prism",
	14: "14-node second-order pyramid", 16: "8-node second-order quadrangle",
	17: "20-node second-order hexahedron", 18: "15-node second-order prism",
	19: "13-node second-order pyramid", 20: "9-node third-order incomplete triangle",
	21: "10-node third-order triangle", 26: "4-node third-order line",
	29: "20-node third-order tetrahedron",
}

// Supported reports whether Read accepts elements of type t.
func (t Type) Supported() bool { _, ok := types[t]; return ok }

// NumNodes is the number of nodes of an element of type t, 0 if t is not
// supported.
func (t Type) NumNodes() int { return types[t].nodes }

// Dim is the dimension of an element of type t (0 for points), -1 if t is
// not supported.
func (t Type) Dim() int {
	if i, ok := types[t]; ok {
		return i.dim
	}
	return -1
}

// String is the type's name ("triangle"), or for another type its number
// and what Gmsh calls it where known.
func (t Type) String() string {
	if i, ok := types[t]; ok {
		return i.name
	}
	if s, ok := otherTypes[t]; ok {
		return fmt.Sprintf("type %d (%s)", int(t), s)
	}
	return fmt.Sprintf("type %d", int(t))
}

// supportedList is what errors about other types say is read.
const supportedList = "point 15, line 1, triangle 2, quadrangle 3, tetrahedron 4, hexahedron 5, prism 6, pyramid 7"

// Mesh is a Gmsh mesh as Read found it.
type Mesh struct {
	// Dim is the highest dimension of the elements present: 3 for a
	// volume mesh, 2 for a surface, 1 for lines, 0 for points only or no
	// elements.
	Dim int
	// X holds three coordinates (x, y, z) per node, whatever Dim is: node
	// i is at X[3*i], X[3*i+1], X[3*i+2]. Coords gives them with fewer.
	X []float64
	// NodeTags[i] is the file's tag of node i.
	NodeTags []int64
	// Blocks holds the elements, one Block per type present, by
	// dimension and then type number (lines, triangles, quadrangles,
	// tetrahedra, ...), whatever the order of the file.
	Blocks []Block
	// Physical lists the named physical groups of $PhysicalNames, in the
	// file's order.
	Physical []PhysicalGroup
	// Entities lists the model's entities of a 4.1 file's $Entities with
	// their physical groups; 2.2 files have none (each element carries
	// its physical group).
	Entities []Entity
}

// Block holds the elements of one type.
type Block struct {
	Type Type
	// Nodes holds Type.NumNodes() 0-based node indices per element, in
	// Gmsh's node order for the type.
	Nodes []int32
	// Tags holds each element's tag in the file.
	Tags []int64
	// Physical holds each element's physical group tag: in 2.2 the first
	// of its tags, in 4.1 the first physical group of its entity; 0 for
	// none. An element of an entity in several groups (4.1) belongs to
	// each (Group); a 2.2 file repeats such an element once per group.
	Physical []int32
	// Entity holds the tag of each element's elementary entity (in 2.2 its
	// second tag), 0 when the file gives none.
	Entity []int32
}

// Len is the number of elements in b.
func (b *Block) Len() int { return len(b.Tags) }

// PhysicalGroup is an entry of $PhysicalNames.
type PhysicalGroup struct {
	Dim  int
	Tag  int32
	Name string
}

// Entity is a model entity of a 4.1 file: a point (Dim 0), curve (1),
// surface (2) or volume (3), and the physical groups it belongs to.
type Entity struct {
	Dim      int
	Tag      int32
	Physical []int32
}

// NumNodes is the number of nodes.
func (m *Mesh) NumNodes() int { return len(m.NodeTags) }

// Check reports whether m's slices agree, as Read makes them: X holds
// three coordinates per node of NodeTags; each block is of a type Read
// accepts and holds, for each of its Len() elements (its Tags), NumNodes()
// node indices in [0, NumNodes()), one Physical and one Entity; Dim is the
// highest dimension of the blocks (0 with none). The error names the
// block, or X, and the lengths found and wanted. A mesh built by hand
// should pass it before it is used: Coords, Cells and GroupTag assume it
// does (Group checks it), and so do the packages that declare a mesh.
func (m *Mesh) Check() error {
	if want := 3 * len(m.NodeTags); len(m.X) != want {
		return fmt.Errorf("gmsh: X has %d values, want %d (3 per node, %d nodes by NodeTags)", len(m.X), want, len(m.NodeTags))
	}
	dim := 0
	for k := range m.Blocks {
		b := &m.Blocks[k]
		if !b.Type.Supported() {
			return fmt.Errorf("gmsh: block %d is of %v, not a type Read accepts (%s)", k, b.Type, supportedList)
		}
		n, nn := b.Len(), b.Type.NumNodes()
		for _, s := range []struct {
			name   string
			got    int
			per    int
			detail string
		}{
			{"Nodes", len(b.Nodes), nn, fmt.Sprintf(" × %d nodes", nn)},
			{"Physical", len(b.Physical), 1, ""},
			{"Entity", len(b.Entity), 1, ""},
		} {
			if s.got != n*s.per {
				return fmt.Errorf("gmsh: block %d (%v): %s has %d entries, want %d (%d elements by Tags%s)", k, b.Type, s.name, s.got, n*s.per, n, s.detail)
			}
		}
		for i, v := range b.Nodes {
			if v < 0 || int(v) >= len(m.NodeTags) {
				return fmt.Errorf("gmsh: block %d (%v): element %d (tag %d): node %d is %d, outside [0,%d)", k, b.Type, i/nn, b.Tags[i/nn], i%nn, v, len(m.NodeTags))
			}
		}
		dim = max(dim, b.Type.Dim())
	}
	if m.Dim != dim {
		for k := range m.Blocks {
			if d := m.Blocks[k].Type.Dim(); d == dim {
				return fmt.Errorf("gmsh: Dim is %d, but block %d (%v) has dimension %d, the highest", m.Dim, k, m.Blocks[k].Type, d)
			}
		}
		return fmt.Errorf("gmsh: Dim is %d, but the mesh has no elements", m.Dim)
	}
	return nil
}

// Coords returns the nodes' coordinates with dim (1, 2 or 3) values per
// node, dropping the others: Coords(2) gives x, y per node for a 2-D mesh.
func (m *Mesh) Coords(dim int) []float64 {
	if dim < 1 || dim > 3 {
		panic(fmt.Sprintf("gmsh: Coords(%d): dim must be 1, 2 or 3", dim))
	}
	n := m.NumNodes()
	x := make([]float64, 0, dim*n)
	for i := range n {
		x = append(x, m.X[3*i:3*i+dim]...)
	}
	return x
}

// Cells returns the blocks of the highest dimension, m.Dim: the triangles
// and quadrangles of a 2-D mesh, the volume elements of a 3-D one. They
// share their slices with m.Blocks.
func (m *Mesh) Cells() []Block {
	var c []Block
	for _, b := range m.Blocks {
		if b.Type.Dim() == m.Dim {
			c = append(c, b)
		}
	}
	return c
}

// Group returns the elements of the physical group called name: those of
// the group's dimension that belong to it (the boundary facets of a
// boundary group, the cells of a region), one Block per type, in the
// order of m.Blocks, with new slices. A name that no group has, or that
// groups of several dimensions share, is an error, as is a mesh that
// fails Check.
func (m *Mesh) Group(name string) ([]Block, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	var found []PhysicalGroup
	for _, g := range m.Physical {
		if g.Name == name {
			found = append(found, g)
		}
	}
	switch len(found) {
	case 0:
		names := make([]string, len(m.Physical))
		for i, g := range m.Physical {
			names[i] = fmt.Sprintf("%q", g.Name)
		}
		return nil, fmt.Errorf("gmsh: no physical group %q (the mesh has %s)", name, orNone(names))
	case 1:
		return m.GroupTag(found[0].Dim, found[0].Tag), nil
	}
	return nil, fmt.Errorf("gmsh: %d physical groups are called %q; use GroupTag", len(found), name)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// GroupTag returns the elements of dimension dim in the physical group
// tag, named or not, as Group does.
func (m *Mesh) GroupTag(dim int, tag int32) []Block {
	ent := make(map[int32][]int32) // entities of dimension dim
	for _, e := range m.Entities {
		if e.Dim == dim {
			ent[e.Tag] = e.Physical
		}
	}
	in := func(b *Block, i int) bool {
		if phys, ok := ent[b.Entity[i]]; ok {
			for _, p := range phys {
				if p == tag {
					return true
				}
			}
			return false
		}
		return b.Physical[i] == tag
	}
	var out []Block
	for k := range m.Blocks {
		b := &m.Blocks[k]
		if b.Type.Dim() != dim {
			continue
		}
		nn := b.Type.NumNodes()
		g := Block{Type: b.Type}
		for i := range b.Len() {
			if in(b, i) {
				g.Nodes = append(g.Nodes, b.Nodes[nn*i:nn*i+nn]...)
				g.Tags = append(g.Tags, b.Tags[i])
				g.Physical = append(g.Physical, b.Physical[i])
				g.Entity = append(g.Entity, b.Entity[i])
			}
		}
		if g.Len() > 0 {
			out = append(out, g)
		}
	}
	return out
}
