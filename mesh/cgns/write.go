package cgns

import (
	"errors"
	"fmt"
	"io"
	"strings"

	op2 "github.com/goop2/op2"
	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/regfile"
)

// Field is a cell-centred solution field: its name (1 to 32 characters,
// no "/") and one value per cell, in the order of the cells as Read gives
// them: the blocks of Mesh.Cells, one after the other. That is the order
// package mesh/unstructured declares a CGNS file's cells in, so a Dat
// over its cells, gathered (op2.Dat.Gather), is in this order.
type Field struct {
	Name   string
	Values []float64
}

// cellZone is what writing and reading a solution need of a file.
type cellZone struct {
	cells []int64 // the cells' element numbers, in Field order
	n     int64   // the zone's count of cells
}

// zoneCells reads path's mesh and checks that its cells are elements 1 to
// NCells, which cell-centred data index.
func zoneCells(path string) (*cellZone, error) {
	m, err := Read(path)
	if err != nil {
		return nil, err
	}
	f, err := cg.Open(path, cg.Read)
	if err != nil {
		return nil, fmt.Errorf("cgns: %s: %w", path, err)
	}
	defer f.Close()
	_, size, err := f.ZoneRead(1, 1)
	if err != nil {
		return nil, fmt.Errorf("cgns: %s: %w", path, err)
	}
	z := &cellZone{n: size[1]}
	for _, b := range m.Cells() {
		z.cells = append(z.cells, b.Tags...)
	}
	if int64(len(z.cells)) != z.n {
		return nil, fmt.Errorf("cgns: %s: the zone has %d cells by its size, its sections %d elements of dimension %d", path, z.n, len(z.cells), m.Dim)
	}
	for _, id := range z.cells {
		if id < 1 || id > z.n {
			return nil, fmt.Errorf("cgns: %s: cell element %d is outside 1 to %d, the cells' numbers that cell-centred data index: not supported", path, id, z.n)
		}
	}
	return z, nil
}

func checkName(what, name string) error {
	if name == "" || len(name) > 32 || strings.Contains(name, "/") {
		return fmt.Errorf("cgns: %s name %q: want 1 to 32 characters, no \"/\"", what, name)
	}
	return nil
}

// WriteSolution writes fields as the flow solution called solution
// (FlowSolution_t, GridLocation CellCenter, values in double precision)
// into the CGNS file out: a copy of the mesh file mesh when out is
// another file (out is created or replaced), else mesh itself (also when
// out is a link to it), written whole or not at all (a failure leaves the
// file as it was; another hard link to the file keeps the old contents).
// A solution
// of that name already in the file is replaced. Every field must have one
// value per cell of the mesh (see Field), and the file's cells must be its
// elements 1 to NCells, as CGNS's cell-centred data assume.
func WriteSolution(out, mesh, solution string, fields ...Field) error {
	if err := checkName("solution", solution); err != nil {
		return err
	}
	z, err := zoneCells(mesh)
	if err != nil {
		return err
	}
	for _, fl := range fields {
		if err := checkName("field", fl.Name); err != nil {
			return err
		}
		if int64(len(fl.Values)) != z.n {
			return fmt.Errorf("cgns: field %q has %d values, want %d (one per cell of %s)", fl.Name, len(fl.Values), z.n, mesh)
		}
	}
	// The solution goes into a copy of the mesh, which becomes out once
	// written whole: a failure leaves out (the mesh itself, perhaps) as
	// it was.
	dst, err := regfile.Create(out)
	if err != nil {
		return fmt.Errorf("cgns: %w", err)
	}
	defer dst.Abort() // after Commit: nothing
	if err := copyFile(dst, mesh); err != nil {
		return fmt.Errorf("cgns: %w", err)
	}
	f, err := cg.Open(dst.TempPath(), cg.Modify)
	if err != nil {
		return fmt.Errorf("cgns: %s: %w", out, err)
	}
	s, err := f.SolWrite(1, 1, solution, cg.CellCenter)
	if err == nil {
		v := make([]float64, z.n)
		for _, fl := range fields {
			for i, id := range z.cells {
				v[id-1] = fl.Values[i]
			}
			if err = f.FieldWrite(1, 1, s, fl.Name, v); err != nil {
				break
			}
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cgns: %s: /%s: %w", out, solution, err)
	}
	if err := dst.Commit(); err != nil {
		return fmt.Errorf("cgns: %w", err)
	}
	return nil
}

// ReadField reads field of the cell-centred flow solution called solution
// from the CGNS file at path, in the order of Field.
func ReadField(path, solution, field string) ([]float64, error) {
	z, err := zoneCells(path)
	if err != nil {
		return nil, err
	}
	f, err := cg.Open(path, cg.Read)
	if err != nil {
		return nil, fmt.Errorf("cgns: %s: %w", path, err)
	}
	defer f.Close()
	ns, err := f.NSols(1, 1)
	if err != nil {
		return nil, fmt.Errorf("cgns: %s: %w", path, err)
	}
	var have []string
	for s := 1; s <= ns; s++ {
		name, loc, err := f.SolInfo(1, 1, s)
		if err != nil {
			return nil, fmt.Errorf("cgns: %s: %w", path, err)
		}
		if name != solution {
			have = append(have, fmt.Sprintf("%q", name))
			continue
		}
		if loc != cg.CellCenter {
			return nil, fmt.Errorf("cgns: %s: solution %q is not cell-centred (grid location %d): not supported", path, solution, loc)
		}
		v, err := f.FieldRead(1, 1, s, field, z.n)
		if err != nil {
			return nil, fmt.Errorf("cgns: %s: solution %q: %w", path, solution, err)
		}
		out := make([]float64, len(z.cells))
		for i, id := range z.cells {
			out[i] = v[id-1]
		}
		return out, nil
	}
	if len(have) == 0 {
		have = []string{"none"}
	}
	return nil, fmt.Errorf("cgns: %s: no flow solution %q (the zone has %s)", path, solution, strings.Join(have, ", "))
}

// copyFile copies the regular file src to dst.
func copyFile(dst io.Writer, src string) error {
	in, err := regfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = io.Copy(dst, in.Reader())
	return err
}

// WriteDats writes Dats over a CGNS mesh's cells (as package
// mesh/unstructured declares them from the file mesh) as the cell-centred
// flow solution called solution, like WriteSolution: a Dat of dim 1 is the
// field named as the Dat, one of dim 2 or 3 the fields of its name with
// X, Y and Z added (CGNS's convention: VelocityX), a larger one its name
// with 1, 2, ... added. Under MPI it is collective: the values are
// gathered on rank 0 (op2.Dat.Gather), which writes the file, and every
// rank returns the same error.
func WriteDats(out, mesh, solution string, dats ...*op2.Dat[float64]) error {
	var fields []Field
	var err error
	for _, d := range dats {
		v, gerr := d.Gather()
		if gerr != nil {
			err = errors.Join(err, fmt.Errorf("cgns: gathering %s: %w", d.Name(), gerr))
			continue
		}
		if op2.Rank() != 0 {
			continue
		}
		dim := d.Dim()
		n := len(v) / max(dim, 1)
		for k := range dim {
			name := d.Name()
			switch {
			case dim == 2 || dim == 3:
				name += string(rune('X' + k))
			case dim > 3:
				name += fmt.Sprint(k + 1)
			}
			fv := make([]float64, n)
			for i := range n {
				fv[i] = v[i*dim+k]
			}
			fields = append(fields, Field{Name: name, Values: fv})
		}
	}
	if err == nil && op2.Rank() == 0 {
		err = WriteSolution(out, mesh, solution, fields...)
	}
	if op2.Ranks() == 1 {
		return err
	}
	w := mpi.Current()
	if w == nil {
		return err
	}
	return collective.AgreeStep(w, "cgns: write the solution", err)
}
