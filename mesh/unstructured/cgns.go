package unstructured

import (
	"fmt"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// readMeshFile reads path with package mesh/cgns when its content says
// it is a CGNS file, else with package mesh/gmsh.
func readMeshFile(path string) (*gmsh.Mesh, error) {
	if ok, err := cgns.IsCGNS(path); err == nil && ok {
		return cgns.Read(path)
	}
	return gmsh.ReadFile(path)
}

// loadCGNS reads path as a CGNS file (package mesh/cgns) when its content
// says it is one (ok); every rank reads the file and keeps its blocks, as
// from a .msh file.
func loadCGNS(path string) (src *source, ok bool, err error) {
	if ok, err = cgns.IsCGNS(path); err != nil || !ok {
		return nil, false, nil // not CGNS, or not readable as such: the other readers say why
	}
	g, err := cgns.Read(path)
	if err == nil {
		src, err = fromGmsh(g, op2.Rank(), op2.Ranks())
	}
	if err != nil {
		return nil, true, fmt.Errorf("unstructured: %w", err)
	}
	return src, true, nil
}
