// Package unstructured declares an unstructured mesh to GoOP2 in one call:
// a Gmsh .msh file (package mesh/gmsh), or the HDF5 file `op2mesh
// convert` makes of one, becomes the sets, maps and Dats a finite-volume
// or finite-element code declares by hand — nodes with their coordinates,
// cells with their nodes, the facets (edges in 2-D, faces in 3-D) with
// their nodes, the cells on each side and the facet's local number in each,
// the boundary facets, and the physical groups as Subsets — ready for
// loops on one process or under MPI:
//
//	m, err := unstructured.Load("box.msh", unstructured.Options{})
//	g, err := m.Geometry() // cell volumes and centres, facet area vectors
//	f := m.Interior[0]     // the interior faces of a tetrahedral mesh
//	err = op2.ParLoop(flux, f.Set, q.ArgMap(op2.Inc, f.Cells, 0), q.ArgMap(op2.Inc, f.Cells, 1), ...)
//	inlet, err := m.Group("inlet") // inlet.Boundary[0]: a Subset of m.Boundary[0].Set
//
// # What is declared
//
// The cells are the mesh's elements of its highest dimension (2 or 3):
// triangles and quadrilaterals, or tetrahedra, hexahedra, prisms and
// pyramids, of one kind or mixed. Each cell is oriented positively as
// package mesh/topology defines it (a cell the file gives the other way
// round has two nodes swapped), so a facet's nodes, listed as the first of
// its cells sees it, give a normal pointing out of that cell and, on the
// boundary, out of the mesh. The facets come in one set per kind (edges
// in 2-D; triangles and quadrilaterals in 3-D, as prisms and pyramids
// have both): interior facets in Mesh.Interior, with a map to their two
// cells, and boundary facets in Mesh.Boundary, with a map to their one
// cell.
//
// Every cell, of whatever kind, is an element of the one set Mesh.Cells,
// so that cell data (a finite-volume code's unknowns, the geometry's
// volumes) is one Dat and the facets' maps lead into one numbering. OP2's
// maps have one arity, so the cells' nodes are reached per kind:
// Mesh.CellKinds holds, for each kind, its own set of the cells of that
// kind, a map of arity 1 from it to Mesh.Cells and a map to the nodes. A
// loop that needs a cell's nodes runs over each kind's set and writes the
// cell's Dat through the map of arity 1 (CellKind's example); a facet's
// Local is its number in each cell's own kind. A mesh of one kind also
// declares Mesh.CellNodes (Mesh.Kind is its kind, and its one CellKind
// has Mesh.Cells as its set); a mixed mesh has Kind 0 and CellNodes nil.
// A face shared by cells of two kinds (a prism's triangle and a
// tetrahedron's, a pyramid's base and a hexahedron's face) is an interior
// facet.
//
// Physical groups become tags and Subsets. Every cell and facet has the
// tags of the physical groups of the file's element on it (Mesh.CellTags,
// Facets.Tags: as many values per element as the most groups any element
// is in, increasing, then zeros; in a 4.1 file an element's groups are
// its entity's, in a 2.2 file the element is repeated once per group);
// each named group of the cells' dimension is a Subset of the cells and
// each of the facets' dimension a Subset of every facet set (Group).
// Groups of lower dimension (curves and points of a 3-D mesh) are not
// declared.
//
// # Numbering
//
// The declared numbering is the file's: node i is the file's i-th node,
// cell i its i-th cell (a 2.2 file's repeated elements counted once), so that Dat.Gather, hdf5 and vtk output list
// values in the file's order. The cells of a mixed mesh are numbered
// kind after kind, in the order of gmsh.Mesh.Cells (triangles before
// quadrilaterals; tetrahedra, hexahedra, prisms, pyramids), each kind in
// the file's order; each kind's set follows its cells in that order. On one process the sets are then renumbered
// for locality by default (Options.Renumber: reverse Cuthill–McKee on the
// cells through their facets, the other sets following; Gmsh numbers
// nodes with little locality), which loops see and output does not.
// Facets are numbered by their sorted nodes.
//
// # Under MPI
//
// Every rank calls Load (it is collective). Each rank takes its block of
// the nodes, the cells and the file's boundary elements, the facets are
// derived over the ranks before partitioning (each facet at the rank
// whose range of the nodes holds its smallest node, the ranges cut so
// that the ranks hold about as many facets each, and the facets sent in
// rounds of a bounded size), and op2.Partition distributes the whole:
// the sets of each kind of cell follow their cells through their maps to
// Mesh.Cells (a mixed mesh also declares an unexported map of each cell
// to its nodes, padded to the most nodes of a kind, so that the nodes
// follow the cells, and the cells the nodes when RCB partitions the
// nodes). No rank holds the whole mesh. From a .msh file every rank
// streams the file through a buffer of a fixed size (gmsh.ScanFile to
// count, then gmsh.ReadFilePart) and keeps its blocks only, so that what
// it holds while reading is its share of the mesh and the buffer, not the
// whole file and mesh: node tags 1..N, as Gmsh writes them, are node
// tag−1, other tags are looked up in a directory spread over the ranks,
// and the coordinates a rank's cells need from other blocks, to orient
// them, come from the ranks holding them. A 2.2 file's element in several
// groups is one cell where its copies follow one another, as Gmsh writes
// them; copies apart are an error naming them (one process finds copies
// anywhere in the file). From the HDF5 file `op2mesh convert` writes,
// every rank reads its blocks only, and reads the file once.
package unstructured

import (
	"errors"
	"fmt"
	"strings"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
)

// Options tune Load and Declare. The zero value gives the defaults.
type Options struct {
	// Renumber orders the mesh for locality on one process: "rcm" (or
	// ""), reverse Cuthill–McKee on the cells through their interior
	// facets (op2.RCMOrdering; for a mixed mesh on the nodes through the
	// cells, the cells following), or "none", the file's order. Under
	// MPI op2.Partition orders each rank's part and Renumber is not
	// used.
	Renumber string
	// Partitioner is used under MPI; nil chooses
	// op2.AutoPartitioner(the mesh's graph, the coordinates). The graph
	// is the first interior facet set's map to cells; for a mixed mesh,
	// whose kinds meet through facets of several kinds, the cells'
	// (unexported) padded map to the nodes, so that the nodes are
	// partitioned and the cells follow them. A partitioner made without
	// its map or coordinates, as op2.METISPartitioner(nil),
	// op2.PTScotchPartitioner(nil) or op2.RCBPartitioner(nil), is given
	// the mesh's (op2.Partitioner.With), since they exist only once the
	// mesh is declared.
	Partitioner *op2.Partitioner
}

// Mesh is a mesh declared to GoOP2.
type Mesh struct {
	// Dim is the cells' dimension, 2 or 3; X holds Dim coordinates per
	// node.
	Dim int
	// Kind is the cells' kind; 0 for a mixed mesh (cells of several
	// kinds: see CellKinds).
	Kind  topology.Kind
	Nodes *op2.Set
	X     *op2.Dat[float64]
	// Cells is every cell, of whatever kind, in one set, so that cell
	// data is one Dat.
	Cells *op2.Set
	// CellNodes maps each cell to its Kind.Nodes() nodes, in Gmsh's
	// order (VTK's for all but prisms: see vtk.Wedge), positively
	// oriented; nil for a mixed mesh, whose cells reach their nodes
	// through CellKinds.
	CellNodes *op2.Map
	// CellKinds holds the cells of each kind, in the order the cells are
	// numbered: one entry for a mesh of one kind (its Set is Cells), one
	// per kind for a mixed mesh.
	CellKinds []CellKind
	// CellTags holds each cell's physical group tags: Dim() values per
	// cell, increasing, then zeros (0: none).
	CellTags *op2.Dat[int32]
	// Interior and Boundary hold the facets, one Facets per facet kind.
	Interior, Boundary []Facets
	// Groups lists the named physical groups of the cells' and the
	// facets' dimensions.
	Groups []Group
	// Partition is what op2.Partition reported under MPI, nil otherwise;
	// Renumbered what op2.Renumber did on one process, nil if nothing.
	Partition  *op2.PartitionInfo
	Renumbered *op2.RenumberInfo

	// cellNodesPadded maps each cell of a mixed mesh to its nodes and,
	// after them, its last node again up to the most nodes of any kind:
	// declared so that op2.Partition and op2.Renumber keep the nodes
	// with the cells (through it every node has its cells), not for
	// loops.
	cellNodesPadded *op2.Map
	// elsewhere holds the named groups of other dimensions (points,
	// edges of a 3-D mesh), which Groups leaves out, for Group to say so.
	elsewhere []gmsh.PhysicalGroup
}

// CellKind is the cells of one kind. OP2's maps have one arity, so a
// loop that needs the nodes of the cells runs over each kind's Set,
// reading the nodes through Nodes and the cells' Dats (on Mesh.Cells)
// through Cells:
//
//	for _, ck := range m.CellKinds {
//		err = op2.ParLoop(volume[ck.Kind], ck.Set, m.X.ArgVec(op2.Read, ck.Nodes), vol.ArgMap(op2.Write, ck.Cells, 0))
//	}
type CellKind struct {
	Kind topology.Kind
	// Set holds the cells of this kind, in the order of their numbers
	// in Mesh.Cells; for a mesh of one kind it is Mesh.Cells itself.
	Set *op2.Set
	// Cells maps each element of Set to its cell in Mesh.Cells (arity
	// 1; for a mesh of one kind, the identity).
	Cells *op2.Map
	// Nodes maps each element of Set to its Kind.Nodes() nodes, as
	// Mesh.CellNodes does (for a mesh of one kind, it is CellNodes).
	Nodes *op2.Map
}

// Facets is one kind of facet, interior or boundary.
type Facets struct {
	Kind topology.Kind
	Set  *op2.Set
	// Nodes maps each facet to its Kind.Nodes() nodes, as its first cell
	// sees it: its normal (right-hand rule; in 2-D the edge's direction
	// turned clockwise) points out of that cell.
	Nodes *op2.Map
	// Cells maps an interior facet to its two cells (the first as Nodes
	// says, then the other), a boundary facet to its cell.
	Cells *op2.Map
	// Local holds the facet's local number in each of Cells
	// (topology.LocalFacets' index for that cell's kind): dim 2 or 1.
	Local *op2.Dat[int32]
	// Tags holds the physical group tags of the file's element on the
	// facet: Dim() values per facet, increasing, then zeros (0: none).
	Tags *op2.Dat[int32]
}

// Group is a named physical group.
type Group struct {
	Name string
	Tag  int32
	Dim  int
	// Cells is the group's cells when Dim is the mesh's Dim, else nil.
	Cells *op2.Subset
	// Interior and Boundary hold, when Dim is the facets' dimension, the
	// group's facets in each of Mesh.Interior and Mesh.Boundary (empty
	// Subsets where it has none); else nil.
	Interior, Boundary []*op2.Subset
}

// Group returns the group called name, or an error listing the names.
// Gmsh lets groups of different dimensions share a name: Group refuses
// such a name, naming their dimensions (find them in Groups by Dim).
func (m *Mesh) Group(name string) (*Group, error) {
	var names []string
	var found *Group
	for i := range m.Groups {
		if g := &m.Groups[i]; g.Name == name {
			if found != nil {
				return nil, fmt.Errorf("unstructured: two physical groups are named %q, of dimension %d (tag %d) and %d (tag %d): take the one wanted from Mesh.Groups by its Dim", name, found.Dim, found.Tag, g.Dim, g.Tag)
			}
			found = g
		}
		names = append(names, fmt.Sprintf("%q", m.Groups[i].Name))
	}
	if found != nil {
		return found, nil
	}
	for _, g := range m.elsewhere {
		if g.Name == name {
			return nil, fmt.Errorf("unstructured: physical group %q is of dimension %d: a Mesh holds the groups of its cells (dimension %d) and facets (%d) only (gmsh.ReadFile and cgns.Read give a .msh or CGNS file's elements of every dimension)", name, g.Dim, m.Dim, m.Dim-1)
		}
		names = append(names, fmt.Sprintf("%q (dimension %d)", g.Name, g.Dim))
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("unstructured: no physical group %q (the mesh names none: the tags of groups without names are in CellTags and each Facets' Tags)", name)
	}
	return nil, fmt.Errorf("unstructured: no physical group %q (the mesh has %s)", name, strings.Join(names, ", "))
}

// Load reads the mesh in path — a Gmsh .msh file, an HDF5 file written
// by WriteHDF5 (`op2mesh convert`), or a CGNS file (package mesh/cgns,
// known by its content) — and declares it (see Declare). Under MPI it is
// collective.
func Load(path string, opts Options) (*Mesh, error) {
	isH5, err := hdf5.IsHDF5(path)
	if err != nil {
		return nil, agree(fmt.Errorf("unstructured: %w", err))
	}
	if src, ok, err := loadCGNS(path); ok {
		if err != nil {
			return nil, err // every rank's already
		}
		return declareLoaded(src, opts, path)
	}
	var src *source
	switch {
	case isH5:
		src, err = readHDF5Block(path, op2.Rank(), op2.Ranks())
		if err = agree(err); err == nil {
			// A file changed since WriteHDF5 wrote it gets the checks a
			// Gmsh file gets (collective).
			err = src.orientCells(comm(), path)
		}
		if err != nil {
			return nil, err // every rank's already
		}
	case op2.Ranks() > 1:
		// Collective, and its error is every rank's already.
		if src, err = readGmshBlock(comm(), path); err != nil {
			return nil, err
		}
	default:
		var g *gmsh.Mesh
		if g, err = gmsh.ReadFile(path); err == nil {
			if src, err = fromGmsh(g, op2.Rank(), op2.Ranks()); err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
		}
		if err != nil {
			err = fmt.Errorf("unstructured: %w", err)
		}
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	return declareLoaded(src, opts, path)
}

// declareLoaded declares src, read from the file at path, which its
// errors name.
func declareLoaded(src *source, opts Options, path string) (*Mesh, error) {
	m, err := declare(src, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (loading %s)", err, path)
	}
	return m, nil
}

// Declare declares mesh g, read by package mesh/gmsh. Under MPI it is
// collective and every rank passes the same mesh, of which it keeps its
// blocks. A mesh built by hand whose slices disagree (gmsh.Mesh.Check)
// is an error naming the block and the lengths, and nothing is declared.
func Declare(g *gmsh.Mesh, opts Options) (*Mesh, error) {
	src, err := fromGmsh(g, op2.Rank(), op2.Ranks())
	if err != nil {
		err = fmt.Errorf("unstructured: %w", err)
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	return declare(src, opts)
}

// comm is the communicator of the ranks: MPI's world, or one process.
func comm() collective.Comm {
	if op2.Ranks() > 1 {
		if w := mpi.Current(); w != nil {
			return w
		}
	}
	return collective.Single{}
}

// agree makes any rank's error every rank's, so that no rank goes on to
// wait for the others in a collective call.
func agree(err error) error {
	if op2.Ranks() == 1 {
		return err
	}
	return collective.AgreeStep(comm(), "unstructured: read the mesh", err)
}

// errNoCells is returned for a mesh without cells of dimension 2 or 3.
var errNoCells = errors.New("the mesh has no cells of dimension 2 or 3 (triangles, quadrangles, tetrahedra, hexahedra, prisms or pyramids)")
