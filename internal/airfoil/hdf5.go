package airfoil

import (
	"math"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/mesh"
)

// The constants OP2's Airfoil stores besides those the kernels use: the
// Mach number and the angle of attack, computed in single precision as
// OP2's convert_mesh does (mach = 0.4f, alpha = 3.0f*atan(1.0f)/45.0f).
var (
	machValue  = float64(float32(0.4))
	alphaValue = float64(float32(3) * float32(math.Atan(1)) / float32(45))
)

// WriteHDF5File writes mesh m to a new HDF5 file at path as WriteHDF5
// does, on one process, whole or not at all (hdf5.WriteFile): a file it
// could not finish (closing failed on a full disk, the program was
// killed) leaves path as it was.
func WriteHDF5File(path string, m *mesh.Mesh) error {
	return hdf5.WriteFile(path, func(f *hdf5.File) error { return WriteHDF5(f, m) })
}

// WriteHDF5 writes mesh m as OP2's Airfoil HDF5 file (new_grid.h5): the
// sets, maps, p_bound and p_x (hdf5.WriteMesh), the initial flow fields
// p_q (the free stream in every cell), p_qold, p_adt and p_res (zero), and
// the constants gam, gm1, cfl, eps, mach, alpha and qinf.
func WriteHDF5(f *hdf5.File, m *mesh.Mesh) error {
	if err := hdf5.WriteMesh(f, m); err != nil {
		return err
	}
	q := make([]float64, 4*m.NCell)
	for i := range q {
		q[i] = qinfValue[i%4]
	}
	zero4 := make([]float64, 4*m.NCell)
	for _, d := range []struct {
		name string
		dim  int
		v    []float64
	}{{"p_q", 4, q}, {"p_qold", 4, zero4}, {"p_adt", 1, zero4[:m.NCell]}, {"p_res", 4, zero4}} {
		if err := hdf5.WriteArray(f, d.name, d.dim, d.v); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		name string
		v    []float64
	}{{"gam", []float64{gamValue}}, {"gm1", []float64{gm1Value}}, {"cfl", []float64{cflValue}}, {"eps", []float64{epsValue}},
		{"mach", []float64{machValue}}, {"alpha", []float64{alphaValue}}, {"qinf", qinfValue}} {
		if err := hdf5.WriteConst(f, c.name, c.v); err != nil {
			return err
		}
	}
	return nil
}

// WriteHDF5 writes the declared problem to path as OP2's Airfoil HDF5
// file (new_grid.h5): the sets, maps, the dats p_bound, p_x, p_q, p_qold,
// p_adt and p_res with their current values, and the constants, all in
// the mesh's declared numbering. Under MPI it is collective, and with a
// parallel HDF5 library every rank writes its own rows (hdf5.Create);
// the file is written whole or not at all (hdf5.WriteFile).
func (s *Solver) WriteHDF5(path string) error {
	return hdf5.WriteFile(path, s.writeHDF5)
}

func (s *Solver) writeHDF5(f *hdf5.File) error {
	for _, set := range []*op2.Set{s.nodes, s.edges, s.bedges, s.cells} {
		if err := f.WriteSet(set); err != nil {
			return err
		}
	}
	for _, m := range []*op2.Map{s.pedge, s.pecell, s.pbedge, s.pbecell, s.pcell} {
		if err := f.WriteMap(m); err != nil {
			return err
		}
	}
	if err := hdf5.WriteDat(f, s.bound); err != nil {
		return err
	}
	for _, d := range []*op2.Dat[float64]{s.x, s.q, s.qold, s.adt, s.res} {
		if err := hdf5.WriteDat(f, d); err != nil {
			return err
		}
	}
	for _, c := range []*op2.Const[float64]{s.gam, s.gm1, s.cfl, s.eps} {
		if err := hdf5.WriteConst(f, c.Name(), c.Value()); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		name string
		v    []float64
	}{{"mach", []float64{machValue}}, {"alpha", []float64{alphaValue}}, {"qinf", s.qinf.Value()}} {
		if err := hdf5.WriteConst(f, c.name, c.v); err != nil {
			return err
		}
	}
	return nil
}
