package gmsh

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/goop2/op2/internal/regfile"
)

// Range is a range of indices: Count of them from Start.
type Range struct {
	Start, Count int64
}

// contains reports whether i is in r.
func (r Range) contains(i int64) bool { return i >= r.Start && i-r.Start < r.Count }

// Keep says what ReadFilePart keeps of a file: the nodes whose 0-based
// index (the file's order, as Read numbers them) is in Nodes, and of each
// type t the elements whose index among the file's elements of that type,
// in the file's order, is in Elements[t]. Where Unique[t] is set, that
// index counts an element repeating the previous element of its type
// (Part.Unique) as that element: a range then takes the elements it
// repeats with it, and starts at no repeat.
type Keep struct {
	Nodes    Range
	Elements map[Type]Range
	Unique   map[Type]bool
}

// Part is what ScanFile finds of a Gmsh mesh, and the part of it that
// ReadFilePart keeps: the counts of the whole file, the small sections
// whole, and the nodes and elements Keep selects, with the file's node
// tags (not indices) in the elements.
type Part struct {
	// Dim is the highest dimension of the file's elements, as Mesh.Dim.
	Dim int
	// NumNodes is the number of nodes in the file.
	NumNodes int64
	// DenseTags reports whether the file's node i has tag i+1 for every
	// i, as Gmsh writes them: an element's node tag t is then node t-1.
	DenseTags bool
	// Counts is the number of elements of each type in the file; Unique
	// the number of them that do not repeat the previous element of their
	// type (the same nodes in the same order: how a 2.2 file writes an
	// element in several physical groups).
	Counts, Unique map[Type]int64
	// Physical and Entities are the file's, as in Mesh.
	Physical []PhysicalGroup
	Entities []Entity
	// Groups lists, for each dimension, the physical group tags of the
	// file's elements of that dimension as Block.Physical has them (0, no
	// group, left out), each once, in increasing order: in a 2.2 file the
	// groups its element lines give, named in $PhysicalNames or not; in a
	// 4.1 file each element's entity's first group.
	Groups [4][]int32
	// FirstNode is the index of the first node kept; X holds three
	// coordinates per node kept and NodeTags their tags.
	FirstNode int64
	X         []float64
	NodeTags  []int64
	// Blocks holds the elements kept, one PartBlock per type of which
	// some are kept, ordered as Mesh.Blocks.
	Blocks []PartBlock
}

// PartBlock holds the elements of one type that ReadFilePart kept.
type PartBlock struct {
	Type Type
	// First is the index, as Keep counts them, of the first element.
	First int64
	// Nodes holds Type.NumNodes() node tags per element (the file's
	// tags: see Part.DenseTags).
	Nodes []int64
	// Tags, Physical and Entity are as in Block.
	Tags     []int64
	Physical []int32
	Entity   []int32
	// Repeat marks, where Keep.Unique has the type, the elements that
	// repeat the previous one; nil otherwise.
	Repeat []bool
}

// Len is the number of elements in b.
func (b *PartBlock) Len() int { return len(b.Tags) }

// streamBuffer is the size of the window ScanFile and ReadFilePart read
// the file through (tests make it small to move it often).
var streamBuffer = 1 << 20

// ScanFile reads the Gmsh mesh in the named file as ReadFile does and
// returns its counts, physical groups and entities, keeping no node and
// no element: it streams the file through a buffer of a fixed size, so
// that its memory does not grow with the mesh. A malformed file gives the
// *Error ReadFile gives, except that node tags missing from $Nodes are not
// looked for (ReadFilePart leaves them to its caller).
func ScanFile(path string) (*Part, error) {
	return ReadFilePart(path, Keep{})
}

// ReadFilePart reads the Gmsh mesh in the named file as ScanFile does,
// keeping the nodes and elements keep selects: a process of a parallel
// job reads its block of a mesh in memory proportional to that block, the
// small sections and a buffer of a fixed size (see ScanFile). The ranges
// of keep are clipped to the file's counts.
func ReadFilePart(path string, keep Keep) (*Part, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gmsh: %w", err)
	}
	defer f.Close()
	if f.Size > math.MaxInt {
		return nil, fmt.Errorf("gmsh: %s: %d bytes", path, f.Size)
	}
	part, err := readPart(f.Reader(), int(f.Size), keep)
	if e, ok := err.(*Error); ok {
		e.File = path
	}
	return part, err
}

// readPart is ReadFilePart on the length bytes r gives.
func readPart(r io.Reader, length int, keep Keep) (*Part, error) {
	st := &partState{keep: keep, out: &Part{FirstNode: keep.Nodes.Start, DenseTags: true}}
	p := &parser{data: make([]byte, 0, streamBuffer), length: length, src: r, m: &Mesh{}, part: st}
	if err := p.parse(); err != nil {
		return nil, err
	}
	out := st.out
	out.Physical, out.Entities = p.m.Physical, p.m.Entities
	for d, g := range st.groups {
		out.Groups[d] = slices.Sorted(maps.Keys(g))
	}
	out.Counts, out.Unique = map[Type]int64{}, map[Type]int64{}
	for t := range st.counts {
		if st.counts[t] > 0 {
			out.Counts[Type(t)], out.Unique[Type(t)] = st.counts[t], st.unique[t]
			out.Dim = max(out.Dim, Type(t).Dim())
		}
	}
	for t := range st.blocks {
		if b := st.blocks[t]; b != nil {
			out.Blocks = append(out.Blocks, *b)
		}
	}
	slices.SortFunc(out.Blocks, func(a, b PartBlock) int {
		return cmp.Or(cmp.Compare(a.Type.Dim(), b.Type.Dim()), cmp.Compare(a.Type, b.Type))
	})
	return out, nil
}

// maxType bounds the types Read accepts (Point, 15).
const maxType = 16

// partState is what the parser keeps in ScanFile and ReadFilePart.
type partState struct {
	keep Keep
	out  *Part
	// Per type: elements read, of them not repeats, the previous
	// element's nodes, the block of those kept.
	counts, unique [maxType]int64
	last           [maxType][]int64
	blocks         [maxType]*PartBlock
	room           [maxType]int // elements a block is made with room for
	// The physical group tags of the elements read, per dimension, and
	// the last one added.
	groups    [4]map[int32]bool
	lastGroup [4]int32
	// The element being read.
	t        Type
	tag      int64
	phys     int32
	ent      int32
	nodeTags [8]int64
	nn       int
}

// nodes starts the nodes, n of them.
func (s *partState) nodes(n int64) {
	s.out.NumNodes = n
	r := s.keep.Nodes
	count := max(0, min(r.Count, n-r.Start))
	s.out.NodeTags = make([]int64, 0, count)
	s.out.X = make([]float64, 0, 3*count)
}

// nodeTag takes node i's tag.
func (s *partState) nodeTag(i, tag int64) {
	if tag != i+1 {
		s.out.DenseTags = false
	}
	if s.keep.Nodes.contains(i) {
		s.out.NodeTags = append(s.out.NodeTags, tag)
	}
}

// nodeX takes node i's coordinates.
func (s *partState) nodeX(i int64, x []float64) {
	if s.keep.Nodes.contains(i) {
		s.out.X = append(s.out.X, x...)
	}
}

// elements starts the elements, n of them (n fits in the input): each
// type's block will be made with room for the elements its range keeps,
// so that it is not grown (and held twice) as it fills.
func (s *partState) elements(n int64) {
	for t, r := range s.keep.Elements {
		if t.Supported() {
			s.room[t] = int(max(0, min(r.Count, n)))
		}
	}
}

// begin starts an element of type t, whose nodes node gives.
func (s *partState) begin(t Type, tag int64, phys, ent int32) {
	s.t, s.tag, s.phys, s.ent, s.nn = t, tag, phys, ent, 0
}

// node takes the element's next node tag.
func (s *partState) node(v int64) {
	s.nodeTags[s.nn] = v
	s.nn++
}

// end keeps the element if keep selects it.
func (s *partState) end() {
	t, nodes := s.t, s.nodeTags[:s.nn]
	if d := t.Dim(); d >= 0 && d < len(s.groups) && s.phys != 0 && s.phys != s.lastGroup[d] {
		s.lastGroup[d] = s.phys // runs of elements share a group: one lookup a run
		if s.groups[d] == nil {
			s.groups[d] = map[int32]bool{}
		}
		s.groups[d][s.phys] = true
	}
	repeat := s.counts[t] > 0 && slices.Equal(s.last[t], nodes)
	idx := s.counts[t]
	s.counts[t]++
	if !repeat {
		s.unique[t]++
		s.last[t] = append(s.last[t][:0], nodes...)
	}
	unique := s.keep.Unique[t]
	if unique {
		idx = s.unique[t] - 1
	}
	r, ok := s.keep.Elements[t]
	if !ok || !r.contains(idx) {
		return
	}
	b := s.blocks[t]
	if b == nil {
		c := s.room[t]
		b = &PartBlock{Type: t, First: idx, Nodes: make([]int64, 0, c*len(nodes)), Tags: make([]int64, 0, c),
			Physical: make([]int32, 0, c), Entity: make([]int32, 0, c)}
		if unique {
			b.Repeat = make([]bool, 0, c)
		}
		s.blocks[t] = b
	}
	b.Nodes = append(b.Nodes, nodes...)
	b.Tags = append(b.Tags, s.tag)
	b.Physical = append(b.Physical, s.phys)
	b.Entity = append(b.Entity, s.ent)
	if unique {
		b.Repeat = append(b.Repeat, repeat)
	}
}
