package poisson

import (
	"fmt"
	"strings"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh/topology"
	"github.com/goop2/op2/mesh/unstructured"
)

// BoundaryGroup is the name of the physical group whose facets' nodes
// Dirichlet takes as the boundary, when the mesh has one.
const BoundaryGroup = "boundary"

// Load reads and declares the mesh in path with package
// mesh/unstructured — a Gmsh .msh file, or the HDF5 file `op2mesh
// convert` writes of one — renumbered as ordering says (see
// Options.Renumber: "rcm" orders the nodes by reverse Cuthill–McKee
// through the cells, so that the matrix is banded, "rcb" by recursive
// coordinate bisection, "" keeps the file's numbering). Under MPI, where
// ordering must be "", every rank reads its blocks of the mesh (of the
// .h5 file only those) and op2.Partition distributes it, so that no rank
// holds the whole mesh. A mesh of cells other than triangles or
// tetrahedra, or of several kinds, is refused. It is collective.
func Load(path, ordering string) (*unstructured.Mesh, error) {
	if err := checkOrdering(ordering); err != nil {
		return nil, err
	}
	m, err := unstructured.Load(path, unstructured.Options{Renumber: "none"})
	if err != nil {
		return nil, err
	}
	if m.Kind == 0 {
		var kinds []string
		for _, ck := range m.CellKinds {
			kinds = append(kinds, ck.Kind.Plural())
		}
		return nil, fmt.Errorf("poisson: %s: the mesh's cells are of %d kinds (%s); this solver's elements are linear triangles or tetrahedra", path, len(kinds), strings.Join(kinds, ", "))
	}
	if m.Kind != topology.Triangle && m.Kind != topology.Tetrahedron {
		return nil, fmt.Errorf("poisson: %s: the mesh's cells are %s; this solver's elements are linear triangles or tetrahedra", path, m.Kind.Plural())
	}
	if err := renumber(ordering, m.CellNodes, m.X); err != nil {
		return nil, err
	}
	return m, nil
}

// SolveMesh assembles and solves problem p on the triangles of m, a 2-D
// mesh declared by package mesh/unstructured (Load), as Solve does: the
// Dirichlet nodes are Dirichlet's, opts the solver's options (zero:
// GoOP2's CG with Jacobi to a relative tolerance of 1e-10). Under MPI it
// is collective and m is partitioned.
func SolveMesh(m *unstructured.Mesh, p Problem, opts op2.SolverOptions) (*Result, error) {
	a, err := newMeshAssembly(m, topology.Triangle, KernelSource(p), "", func(x []float64) float64 { return p.Exact(x[0], x[1]) })
	if err != nil {
		return nil, err
	}
	return a.solve(opts)
}

// SolveMesh3 assembles and solves the 3-D problem p on the tetrahedra of
// m, declared by package mesh/unstructured (Load), as SolveMesh does in
// 2-D.
func SolveMesh3(m *unstructured.Mesh, p Problem3, opts op2.SolverOptions) (*Result, error) {
	a, err := newMeshAssembly(m, topology.Tetrahedron, tetSource(p), "tet_", func(x []float64) float64 { return p.Exact(x[0], x[1], x[2]) })
	if err != nil {
		return nil, err
	}
	return a.solve(opts)
}

// newMeshAssembly takes mesh m, whose cells must be of kind k, for the
// kernels of src named prefix + stiffness etc., and declares the
// Dirichlet flag, the load, the solution and the matrix on it.
func newMeshAssembly(m *unstructured.Mesh, k topology.Kind, src, prefix string, exact func([]float64) float64) (*assembly, error) {
	if m == nil {
		return nil, fmt.Errorf("poisson: no mesh")
	}
	if m.Kind == 0 {
		return nil, fmt.Errorf("poisson: the mesh's cells are of several kinds; this solver's elements are linear %s", k.Plural())
	}
	if m.Kind != k {
		return nil, fmt.Errorf("poisson: the mesh's cells are %d-D %s; this solver's elements are linear %s", m.Dim, m.Kind.Plural(), k.Plural())
	}
	bnd, err := Dirichlet(m)
	if err != nil {
		return nil, err
	}
	a := &assembly{dim: m.Dim, nodes: m.Nodes, cells: m.Cells, cellNodes: m.CellNodes, x: m.X, bnd: bnd, src: src, prefix: prefix, exact: exact}
	return a, a.declareSystem()
}

// markKernels mark nodes through a map of arity N: in_cell proposes 0
// at each (for op2.Min), on_facet 1 (for op2.Max).
const markKernels = `
void in_cell(int *b[N]) {
  for (int i = 0; i < N; i++) *b[i] = 0;
}

void on_facet(int *b[N]) {
  for (int i = 0; i < N; i++) *b[i] = 1;
}
`

// Dirichlet returns the Dirichlet flag of m's nodes, 1 where the
// solution takes the boundary value: the nodes of the facets of the
// physical group "boundary" (BoundaryGroup, a group of the facets'
// dimension: lines in 2-D, surfaces in 3-D) when m has one, else those of
// every boundary facet (m.Boundary), and every node in no cell, which no
// element gives an equation. Loops compute it, the same on every backend
// and number of ranks: the flag starts at 1, a loop over the cells takes
// the minimum with 0 at their nodes (op2.Min through CellNodes), then a
// loop over each facet set (or the group's Subset of it) the maximum with
// 1 at theirs (op2.Max through Facets.Nodes). Under MPI it is collective.
func Dirichlet(m *unstructured.Mesh) (*op2.Dat[int32], error) {
	type facets struct {
		set   op2.IterationSet
		nodes *op2.Map
	}
	var marked []facets
	if g, err := m.Group(BoundaryGroup); err == nil {
		if g.Dim != m.Dim-1 {
			return nil, fmt.Errorf("poisson: the physical group %q is %d-D; as the Dirichlet boundary it must be a group of the mesh's facets (%d-D)", BoundaryGroup, g.Dim, m.Dim-1)
		}
		for i, s := range g.Interior {
			marked = append(marked, facets{s, m.Interior[i].Nodes})
		}
		for i, s := range g.Boundary {
			marked = append(marked, facets{s, m.Boundary[i].Nodes})
		}
	} else {
		for _, f := range m.Boundary {
			marked = append(marked, facets{f.Set, f.Nodes})
		}
	}
	ones := make([]int32, m.Nodes.Size())
	for i := range ones {
		ones[i] = 1
	}
	bnd, err := op2.NewDat(m.Nodes, 1, ones, "dirichlet")
	if err != nil {
		return nil, err
	}
	kern := func(name string, arity int) *op2.Kernel {
		return op2.NewKernel(fmt.Sprintf("#define N %d\n%s", arity, markKernels), name)
	}
	if err := op2.ParLoop(kern("in_cell", m.CellNodes.Arity()), m.Cells, bnd.ArgVec(op2.Min, m.CellNodes)); err != nil {
		return nil, err
	}
	for _, f := range marked {
		if err := op2.ParLoop(kern("on_facet", f.nodes.Arity()), f.set, bnd.ArgVec(op2.Max, f.nodes)); err != nil {
			return nil, err
		}
	}
	return bnd, nil
}
