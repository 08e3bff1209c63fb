package unstructured

import (
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
)

// WriteHDF5Changed writes g to path as WriteHDF5 does, after change has
// changed the cells' nodes (Kind.Nodes() per cell, positively oriented;
// kind 0 for a mixed mesh) and the nodes' coordinates (dim per node): a
// file changed since WriteHDF5 wrote it.
func WriteHDF5Changed(path string, g *gmsh.Mesh, change func(kind topology.Kind, dim int, cellNodes []int32, x []float64)) error {
	s, err := fromGmsh(g, 0, 1)
	if err != nil {
		return err
	}
	change(s.kind, s.dim, s.cellNodes, s.x)
	return writeHDF5(path, s)
}
