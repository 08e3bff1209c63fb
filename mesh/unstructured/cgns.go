package unstructured

import (
	"fmt"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// readMeshFile reads path with package mesh/cgns when its content says
// it is a CGNS file, else with package mesh/gmsh. A file with HDF5's
// signature is never handed to the Gmsh reader: one IsCGNS cannot read
// (truncated, damaged) gets HDF5's error, and one without CGNS's root
// node is refused as not a CGNS mesh.
func readMeshFile(path string) (*gmsh.Mesh, error) {
	ok, err := cgns.IsCGNS(path)
	if err != nil {
		return nil, fmt.Errorf("unstructured: %w", err)
	}
	if ok {
		return cgns.Read(path)
	}
	if isH5, err := hdf5.IsHDF5(path); err != nil || isH5 {
		if err == nil {
			err = fmt.Errorf("%s is an HDF5 file without CGNS's CGNSLibraryVersion node: not a CGNS mesh (a Gmsh .msh or a CGNS file converts)", path)
		}
		return nil, fmt.Errorf("unstructured: %w", err)
	}
	return gmsh.ReadFile(path)
}

// loadCGNS reads path as a CGNS file (package mesh/cgns) when its content
// says it is one (ok). One process reads the file whole; on several ranks
// each reads its blocks (readBlock through cgns.Layout.ReadPart). It is
// collective, and its error is every rank's.
func loadCGNS(path string) (src *source, ok bool, err error) {
	if ok, err = cgns.IsCGNS(path); err != nil || !ok {
		return nil, false, nil // not CGNS, or not readable as such: the other readers say why
	}
	if op2.Ranks() > 1 {
		src, err = readBlock(comm(), path, &cgnsFile{path: path})
		return src, true, err
	}
	g, err := cgns.Read(path)
	if err == nil {
		src, err = fromGmsh(g, op2.Rank(), op2.Ranks())
	}
	if err != nil {
		return nil, true, agree(fmt.Errorf("unstructured: %w", err))
	}
	return src, true, nil
}

// cgnsFile is a CGNS file read by blocks.
type cgnsFile struct {
	path   string
	layout *cgns.Layout
}

// scan returns the file's counts, rank 0 alone walking its MIXED
// sections (cgns.ScanOn). They name no group (ReadPart finds them), so
// planGmsh merges no cells: CGNS writes an element once, in however many
// groups.
func (f *cgnsFile) scan(c collective.Comm) (*gmsh.Part, error) {
	l, err := cgns.ScanOn(c, f.path)
	if err != nil {
		return nil, err
	}
	f.layout = l
	return l.Part, nil
}

func (f *cgnsFile) read(c collective.Comm, keep gmsh.Keep) (*gmsh.Part, error) {
	return f.layout.ReadPart(c, keep)
}

// agreed: ReadPart's error is every rank's.
func (*cgnsFile) agreed() bool { return true }
