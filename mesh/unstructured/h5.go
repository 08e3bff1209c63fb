package unstructured

import (
	"fmt"
	"slices"

	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/facets"
	"github.com/goop2/op2/mesh"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
)

// The HDF5 layout WriteHDF5 writes, in OP2's conventions (package hdf5):
//
//	unstructured   int array: version (1), dim, the cells' Gmsh type, then
//	               the Gmsh type of each kind of tagged facet element
//	nodes          set; x: dat of dim doubles per node
//	cells          set; cell_nodes: map to nodes (positively oriented);
//	               cell_tags: dat of the cells' physical tags, increasing
//	               then zeros, as many per cell as the most any cell has
//	tagged_T       set of the facet elements of Gmsh type T with a physical
//	               tag, an element once per group it is in;
//	               tagged_T_nodes: map to nodes; tagged_T_tag: int each
//	groups         int array: per named group dim, tag, name length, name bytes
//
// A mesh whose cells are of several kinds is written in layout 2: the
// array unstructured holds 2, dim, the number of kinds K, the Gmsh type
// of each kind (the declared order), then the tagged facets' types; the
// cells set and cell_tags are as above, and each kind of Gmsh type T has
//
//	cells_T        set of the cells of that kind, the declared numbering's
//	               next block; cells_T_nodes: map to nodes
const layoutVersion = 1

// mixedLayoutVersion is the layout of a mesh of several kinds of cell.
const mixedLayoutVersion = 2

// WriteHDF5 writes mesh g (as Declare takes it) to path in an HDF5 layout
// that Load reads on any number of ranks, each rank reading only its
// blocks: the file's nodes and cells, positively oriented, and the facet
// elements of its physical groups. Run it on one process (`op2mesh
// convert FILE.msh FILE.h5`). A mesh that fails gmsh.Mesh.Check is an
// error, and no file is written. The file is written whole or not at
// all: beside path, then renamed into place (a link at path stays and
// leads to the new file), so that a write that fails leaves path as it
// was.
func WriteHDF5(path string, g *gmsh.Mesh) error {
	s, err := fromGmsh(g, 0, 1)
	if err != nil {
		return fmt.Errorf("unstructured: %w", err)
	}
	return writeHDF5(path, s)
}

// writeHDF5 writes s to a new HDF5 file at path (WriteHDF5), whole or
// not at all (hdf5.WriteFile).
func writeHDF5(path string, s *source) error {
	return hdf5.WriteFile(path, func(f *hdf5.File) error { return s.writeHDF5(f) })
}

// writeHDF5 writes s's datasets to f.
func (s *source) writeHDF5(f *hdf5.File) error {
	head := []int32{layoutVersion, int32(s.dim), int32(gmshType(s.kind))}
	if s.kind == 0 {
		head = []int32{mixedLayoutVersion, int32(s.dim), int32(len(s.kinds))}
		for _, kc := range s.kinds {
			head = append(head, int32(gmshType(kc.kind)))
		}
	}
	for _, tf := range s.tagged {
		head = append(head, int32(gmshType(tf.Kind)))
	}
	var groups []int32
	for _, gr := range s.groups {
		groups = append(groups, int32(gr.Dim), gr.Tag, int32(len(gr.Name)))
		for _, b := range []byte(gr.Name) {
			groups = append(groups, int32(b))
		}
	}
	steps := []func() error{
		func() error { return hdf5.WriteArray(f, "unstructured", 1, head) },
		func() error { return hdf5.WriteArray(f, "groups", 1, groups) },
		func() error { return f.WriteSetSize("nodes", s.nodes) },
		func() error { return hdf5.WriteArray(f, "x", s.dim, s.x) },
		func() error { return f.WriteSetSize("cells", s.cells) },
		func() error { return hdf5.WriteArray(f, "cell_tags", s.cellTagDim, s.cellTags) },
	}
	if s.kind != 0 {
		steps = append(steps, func() error { return f.WriteMapTable("cell_nodes", s.kind.Nodes(), s.cellNodes) })
	} else {
		blocks, _, _ := s.pieces()
		for _, b := range blocks {
			name := cellsName(b.Kind)
			steps = append(steps,
				func() error { return f.WriteSetSize(name, b.Len()) },
				func() error { return f.WriteMapTable(name+"_nodes", b.Kind.Nodes(), b.Nodes) })
		}
	}
	for _, tf := range s.tagged {
		name := taggedName(tf.Kind)
		steps = append(steps,
			func() error { return f.WriteSetSize(name, len(tf.Tags)) },
			func() error { return f.WriteMapTable(name+"_nodes", tf.Kind.Nodes(), tf.Nodes) },
			func() error { return hdf5.WriteArray(f, name+"_tag", 1, tf.Tags) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// Convert reads the Gmsh mesh in msh (or a CGNS mesh, known by its
// content) and writes it to h5 as WriteHDF5 does (`op2mesh convert msh
// h5`). A mesh it refuses, or a file it could not finish, leaves h5 as
// it was; a refusal's error names msh.
func Convert(msh, h5 string) error {
	g, err := readMeshFile(msh)
	if err != nil {
		return err
	}
	s, err := fromGmsh(g, 0, 1)
	if err != nil {
		return fmt.Errorf("unstructured: %s: %w", msh, err)
	}
	return writeHDF5(h5, s)
}

func taggedName(k topology.Kind) string { return fmt.Sprintf("tagged_%d", gmshType(k)) }

// cellsName is the set of the cells of kind k in layout 2.
func cellsName(k topology.Kind) string { return fmt.Sprintf("cells_%d", gmshType(k)) }

// readHDF5Block reads this rank's blocks of the mesh WriteHDF5 wrote.
func readHDF5Block(path string, rank, ranks int) (s *source, err error) {
	f, err := hdf5.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("unstructured: %s: %w", path, fmt.Errorf(format, args...))
	}
	head, err := hdf5.ReadAll[int32](f, "unstructured", 1)
	if err != nil {
		// Every file WriteHDF5 writes has it: this one is another kind of
		// HDF5 file (such as an Airfoil mesh in OP2's layout).
		return nil, bad("not a mesh written by unstructured.WriteHDF5 (`op2mesh convert FILE.msh FILE.h5` writes one): %w", err)
	}
	if len(head) < 3 || head[0] != layoutVersion && head[0] != mixedLayoutVersion {
		return nil, bad("dataset unstructured is %v: not a mesh written by unstructured.WriteHDF5 (version %d)", head, layoutVersion)
	}
	// The cells' kinds, and where the tagged facets' types start.
	var kinds []topology.Kind
	tagged := head[3:]
	if head[0] == layoutVersion {
		kinds = []topology.Kind{0}
		kinds[0], _ = KindOf(gmsh.Type(head[2]))
	} else {
		if head[2] < 2 || len(head) < 3+int(head[2]) {
			return nil, bad("dataset unstructured is %v: a mesh of %d kinds of cell lists %d", head, head[2], len(head)-3)
		}
		for _, t := range head[3 : 3+head[2]] {
			k, _ := KindOf(gmsh.Type(t))
			if k != 0 && slices.Contains(kinds, k) {
				return nil, bad("dataset unstructured names cells of Gmsh type %d twice", t)
			}
			kinds = append(kinds, k)
		}
		tagged = head[3+head[2]:]
	}
	for i, k := range kinds {
		if k == 0 || k.Dim() != int(head[1]) || k.Dim() < 2 {
			t := head[2]
			if head[0] != layoutVersion {
				t = head[3+i]
			}
			return nil, bad("dataset unstructured names cells of Gmsh type %d in %d dimensions", t, head[1])
		}
	}
	s = &source{dim: int(head[1])}
	if len(kinds) == 1 {
		s.kind = kinds[0]
	}
	groups, err := hdf5.ReadAll[int32](f, "groups", 1)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(groups); {
		if i+3 > len(groups) || groups[i+2] < 0 || i+3+int(groups[i+2]) > len(groups) {
			return nil, bad("dataset groups is cut short at entry %d", i)
		}
		n := int(groups[i+2])
		name := make([]byte, n)
		for j := range n {
			name[j] = byte(groups[i+3+j])
		}
		s.groups = append(s.groups, gmsh.PhysicalGroup{Dim: int(groups[i]), Tag: groups[i+1], Name: string(name)})
		i += 3 + n
	}
	if s.nodes, err = f.SetSize("nodes"); err != nil {
		return nil, err
	}
	if s.cells, err = f.SetSize("cells"); err != nil {
		return nil, err
	}
	var count int
	s.firstNode, count = mesh.Block(s.nodes, rank, ranks)
	if s.x, err = hdf5.ReadRows[float64](f, "x", s.dim, s.firstNode, count); err != nil {
		return nil, err
	}
	s.firstCell, count = mesh.Block(s.cells, rank, ranks)
	if s.kind != 0 {
		s.kinds = []kindCount{{s.kind, s.cells}}
		if s.cellNodes, err = hdf5.ReadRows[int32](f, "cell_nodes", s.kind.Nodes(), s.firstCell, count); err != nil {
			return nil, err
		}
	} else {
		// Each kind's part of the rank's block of the cells.
		at := 0
		for _, k := range kinds {
			n, err := f.SetSize(cellsName(k))
			if err != nil {
				return nil, err
			}
			s.kinds = append(s.kinds, kindCount{k, n})
			lo, hi := max(s.firstCell, at), min(s.firstCell+count, at+n)
			if hi < lo {
				lo, hi = at, at // none here: every rank reads every dataset, were the reads collective
			}
			rows, err := hdf5.ReadRows[int32](f, cellsName(k)+"_nodes", k.Nodes(), lo-at, hi-lo)
			if err != nil {
				return nil, err
			}
			for _, v := range rows {
				if v < 0 || int(v) >= s.nodes {
					return nil, bad("%s_nodes holds node %d, outside [0,%d)", cellsName(k), v, s.nodes)
				}
			}
			s.cellNodes = append(s.cellNodes, rows...)
			at += n
		}
		if at != s.cells {
			return nil, bad("the sets of each kind of cell hold %d cells, the set cells %d", at, s.cells)
		}
	}
	info, err := f.Info("cell_tags")
	if err != nil {
		return nil, err
	}
	s.cellTagDim = max(info.Dim, 1)
	if s.cellTags, err = hdf5.ReadRows[int32](f, "cell_tags", s.cellTagDim, s.firstCell, count); err != nil {
		return nil, err
	}
	for _, v := range s.cellNodes {
		if v < 0 || int(v) >= s.nodes {
			return nil, bad("cell_nodes holds node %d, outside [0,%d)", v, s.nodes)
		}
	}
	for _, t := range tagged {
		fk, ok := KindOf(gmsh.Type(t))
		if !ok || fk.Dim() != s.dim-1 {
			return nil, bad("dataset unstructured names tagged facets of Gmsh type %d", t)
		}
		name := taggedName(fk)
		n, err := f.SetSize(name)
		if err != nil {
			return nil, err
		}
		start, count := mesh.Block(n, rank, ranks)
		tf := facets.Tagged{Kind: fk}
		if tf.Nodes, err = hdf5.ReadRows[int32](f, name+"_nodes", fk.Nodes(), start, count); err != nil {
			return nil, err
		}
		if tf.Tags, err = hdf5.ReadRows[int32](f, name+"_tag", 1, start, count); err != nil {
			return nil, err
		}
		s.tagged = append(s.tagged, tf)
	}
	return s, nil
}

// orientCells orients the rank's cells positively (see orient), as the
// Gmsh readers do, with the coordinates of their nodes from the ranks
// whose blocks hold them: WriteHDF5 writes them so, but a file changed
// since is checked as a Gmsh file is (a cell of zero volume, a
// coordinate that is not a finite number). It is collective, and its
// error is every rank's; errors name the file at path.
func (s *source) orientCells(c collective.Comm, path string) error {
	x, local := s.x, s.cellNodes
	var need []int32
	if c.Size() > 1 {
		need = slices.Clone(s.cellNodes)
		slices.Sort(need)
		need = slices.Compact(need)
		var err error
		x, err = coordinatesOf(c, need, s.nodes, s.firstNode, s.x, s.dim)
		if err := collective.AgreeStep(c, "unstructured: read the mesh: coordinates", err); err != nil {
			return err
		}
		local = make([]int32, len(s.cellNodes))
		for i, v := range s.cellNodes {
			k, _ := slices.BinarySearch(need, v)
			local[i] = int32(k)
		}
	}
	// The rank's cells, kind by kind (at: the kind's first cell, off
	// its first node entry in the rank's block).
	var err error
	_, cells := mesh.Block(s.cells, c.Rank(), c.Size())
	at, off := 0, 0
	count := len(s.cellNodes) // node entries
	for _, kc := range s.kinds {
		lo, hi := max(s.firstCell, at), min(s.firstCell+cells, at+kc.count)
		nn := kc.kind.Nodes()
		if lo < hi {
			var o []int32
			if o, err = orient(kc.kind, local[off:off+(hi-lo)*nn], nil, lo-at, x, s.dim); err != nil {
				err = fmt.Errorf("unstructured: %s: %w", path, err)
				break
			}
			for i, k := range o {
				if need != nil {
					k = need[k]
				}
				s.cellNodes[off+i] = k
			}
			off += (hi - lo) * nn
		}
		at += kc.count
	}
	if err == nil && off != count {
		err = fmt.Errorf("unstructured: %s: the cells' node lists hold %d entries, their kinds %d", path, count, off)
	}
	return collective.AgreeStep(c, "unstructured: read the mesh: orient", err)
}
