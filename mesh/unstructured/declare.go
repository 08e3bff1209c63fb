package unstructured

import (
	"fmt"
	"runtime/debug"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/facets"
	"github.com/goop2/op2/mesh/topology"
)

// declare derives the facets of the ranks' blocks in src, declares the
// mesh, partitions it (MPI) or renumbers it (one process) and makes the
// groups' subsets.
func declare(src *source, opts Options) (*Mesh, error) {
	switch opts.Renumber {
	case "", "rcm", "none":
	default:
		return nil, fmt.Errorf("unstructured: Options.Renumber is %q: want \"rcm\" or \"none\"", opts.Renumber)
	}
	// Deriving the facets and declaring the mesh is where a rank's
	// memory peaks while a mesh is loaded (its cells, the facets' halves
	// and the facets, then the facets and their copies in the declared
	// sets live together): the reader's garbage is collected first and
	// its pages given back, each slice of the source is dropped once it
	// is declared (op2 copies it), and the heap is collected more often
	// meanwhile (GOGC 25; Partition runs at 10). On the 1.1 M-tetrahedron
	// box of docs/perf.md on 4 ranks the peak RSS per rank while the
	// facets are derived is 108-115 MB instead of 131-156 MB.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	debug.FreeOSMemory()
	pieces, pieceFirst, _ := src.pieces()
	var blocks []facets.Block
	var err error
	if src.kind != 0 {
		blocks, err = facets.DeriveTagged(comm(), src.kind, src.cellNodes, src.firstCell, src.nodes, src.tagged, src.groupName)
	} else {
		blocks, err = facets.DeriveMixed(comm(), pieces, src.firstCell, src.nodes, src.tagged, src.groupName)
	}
	src.tagged = nil
	if err != nil {
		return nil, fmt.Errorf("unstructured: deriving the facets: %w", err)
	}
	m := &Mesh{Dim: src.dim, Kind: src.kind}
	var errs []error
	try := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	set := func(n int, name string) *op2.Set {
		s, err := op2.NewSet(n, name)
		try(err)
		return s
	}
	mapOf := func(from, to *op2.Set, arity int, table []int32, name string) *op2.Map {
		if from == nil || to == nil {
			return nil
		}
		mp, err := op2.NewMap(from, to, arity, table, name)
		try(err)
		return mp
	}
	int32Dat := func(s *op2.Set, dim int, values []int32, name string) *op2.Dat[int32] {
		if s == nil {
			return nil
		}
		d, err := op2.NewDat(s, dim, values, name)
		try(err)
		return d
	}
	cellName := "cells"
	if src.kind != 0 {
		cellName = src.kind.Plural()
	}
	m.Nodes = set(len(src.x)/src.dim, "nodes")
	if m.Nodes != nil {
		var err error
		m.X, err = op2.NewDat(m.Nodes, src.dim, src.x, "x")
		try(err)
	}
	src.x = nil
	ncells := len(src.cellTags) / src.cellTagDim
	m.Cells = set(ncells, cellName)
	// Each cell's number in the declared numbering: the map of a kind's
	// cells to Cells.
	numbers := func(first, n int) []int32 {
		t := make([]int32, n)
		for i := range t {
			t[i] = int32(first + i)
		}
		return t
	}
	if src.kind != 0 {
		m.CellNodes = mapOf(m.Cells, m.Nodes, src.kind.Nodes(), src.cellNodes, cellName+"_nodes")
	} else {
		m.cellNodesPadded = mapOf(m.Cells, m.Nodes, maxNodes(pieces), padded(pieces), "cells_nodes_padded")
	}
	m.CellTags = int32Dat(m.Cells, src.cellTagDim, src.cellTags, cellName+"_tags")
	src.cellTags = nil
	if src.kind != 0 {
		m.CellKinds = []CellKind{{Kind: src.kind, Set: m.Cells, Nodes: m.CellNodes,
			Cells: mapOf(m.Cells, m.Cells, 1, numbers(src.firstCell, ncells), cellName+"_cells")}}
	} else {
		for i, b := range pieces {
			name := b.Kind.Plural()
			ck := CellKind{Kind: b.Kind, Set: set(b.Len(), name)}
			// The map to the cells first: op2.Partition gives a set the
			// owners of the first map whose target has them, so that the
			// kind's cells follow Cells.
			ck.Cells = mapOf(ck.Set, m.Cells, 1, numbers(pieceFirst[i], b.Len()), name+"_cells")
			ck.Nodes = mapOf(ck.Set, m.Nodes, b.Kind.Nodes(), b.Nodes, name+"_nodes")
			m.CellKinds = append(m.CellKinds, ck)
		}
	}
	src.cellNodes, pieces = nil, nil
	widen := func(v []int8) []int32 {
		out := make([]int32, len(v))
		for i, x := range v {
			out[i] = int32(x)
		}
		return out
	}
	for i := range blocks {
		b := &blocks[i]
		fn := b.Kind.Nodes()
		side := func(name string, nodes, cells []int32, local []int8, tags []int32, arity int, into *[]Facets) {
			f := Facets{Kind: b.Kind, Set: set(len(nodes)/fn, name)}
			f.Nodes = mapOf(f.Set, m.Nodes, fn, nodes, name+"_nodes")
			f.Cells = mapOf(f.Set, m.Cells, arity, cells, name+"_cells")
			f.Local = int32Dat(f.Set, arity, widen(local), name+"_local")
			f.Tags = int32Dat(f.Set, b.TagDim, tags, name+"_tags")
			*into = append(*into, f)
		}
		// Each side's slices dropped once declared (copied).
		side("interior_"+b.Kind.Plural(), b.Nodes, b.Cells, b.Local, b.Tags, 2, &m.Interior)
		b.Nodes, b.Cells, b.Local, b.Tags = nil, nil, nil, nil
		side("boundary_"+b.Kind.Plural(), b.BNodes, b.BCells, b.BLocal, b.BTags, 1, &m.Boundary)
		b.BNodes, b.BCells, b.BLocal, b.BTags = nil, nil, nil, nil
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("unstructured: declaring the mesh: %w", errs[0])
	}
	// The map whose target set's adjacency orders and partitions the
	// mesh: the first interior facet set's map to the cells (cells
	// sharing a facet), or, in a mesh of one cell, the cells' map to the
	// nodes; in a mixed mesh the padded map to the nodes. The totals are
	// every rank's.
	graph := m.CellNodes
	for i, b := range blocks {
		if b.InteriorTotal > 0 {
			graph = m.Interior[i].Cells
			break
		}
	}
	if src.kind == 0 {
		// A mixed mesh: no one facet set joins every pair of
		// neighbours (hexahedra meet through quadrilaterals only,
		// tetrahedra through triangles), so the nodes are ordered and
		// partitioned, adjacent through a cell, and the cells follow
		// them through the padded map. On Gmsh's boundary-layer cube
		// of 40 136 cells on 4 ranks (PT-Scotch) 24 830 map entries
		// cross ranks, against 32 135 partitioning the cells through
		// the interior triangles, which leave the hexahedra unjoined.
		graph = m.cellNodesPadded
	}
	if op2.Ranks() > 1 {
		p := op2.AutoPartitioner(graph, m.X)
		if opts.Partitioner != nil {
			p = opts.Partitioner.With(graph, m.X)
		}
		info, err := op2.Partition(p)
		if err != nil {
			return nil, fmt.Errorf("unstructured: %w", err)
		}
		m.Partition = info
	} else if opts.Renumber != "none" {
		info, err := op2.Renumber(op2.RCMOrdering(graph))
		if err != nil {
			return nil, fmt.Errorf("unstructured: renumbering: %w", err)
		}
		m.Renumbered = info
	}
	if err := m.makeGroups(src); err != nil {
		return nil, err
	}
	return m, nil
}

// maxNodes is the most nodes a cell of blocks has.
func maxNodes(blocks []topology.Cells) int {
	n := 0
	for _, b := range blocks {
		n = max(n, b.Kind.Nodes())
	}
	return n
}

// padded lists the nodes of the cells of blocks, maxNodes(blocks) per
// cell: a cell of fewer nodes repeats its last.
func padded(blocks []topology.Cells) []int32 {
	w := maxNodes(blocks)
	var out []int32
	for _, b := range blocks {
		nn := b.Kind.Nodes()
		for c := range b.Len() {
			row := b.Nodes[c*nn : (c+1)*nn]
			out = append(out, row...)
			for range w - nn {
				out = append(out, row[nn-1])
			}
		}
	}
	return out
}

// makeGroups makes the named groups' subsets from the tags.
func (m *Mesh) makeGroups(src *source) error {
	pick := func(tags *op2.Dat[int32], want int32) ([]int32, error) {
		vals, err := tags.DataROErr()
		if err != nil {
			return nil, err
		}
		var idx []int32
		d := tags.Dim()
		for i, t := range vals {
			if t == want && (len(idx) == 0 || idx[len(idx)-1] != int32(i/d)) {
				idx = append(idx, int32(i/d))
			}
		}
		return idx, nil
	}
	for _, g := range src.groups {
		gr := Group{Name: g.Name, Tag: g.Tag, Dim: g.Dim}
		var err error
		switch g.Dim {
		case m.Dim:
			var idx []int32
			if idx, err = pick(m.CellTags, g.Tag); err == nil {
				gr.Cells, err = op2.NewSubset(m.Cells, idx)
			}
		case m.Dim - 1:
			for _, side := range []struct {
				facets []Facets
				into   *[]*op2.Subset
			}{{m.Interior, &gr.Interior}, {m.Boundary, &gr.Boundary}} {
				for _, f := range side.facets {
					var idx []int32
					if idx, err = pick(f.Tags, g.Tag); err != nil {
						break
					}
					var sub *op2.Subset
					if sub, err = op2.NewSubset(f.Set, idx); err != nil {
						break
					}
					*side.into = append(*side.into, sub)
				}
			}
		default:
			m.elsewhere = append(m.elsewhere, g)
			continue
		}
		if err != nil {
			return fmt.Errorf("unstructured: physical group %q: %w", g.Name, err)
		}
		m.Groups = append(m.Groups, gr)
	}
	return nil
}
