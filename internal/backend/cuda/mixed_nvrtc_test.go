package cuda_test

import (
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh/unstructured"
)

// TestNVRTCCompilesMixedMeshLoops compiles with NVRTC the CUDA of the
// loops a mixed mesh runs (mesh/gmsh's prisms-and-hexahedra fixture):
// the geometry's loop per kind of cell, which reads the nodes through the
// kind's map and writes the cells' Dats through its map of arity 1, the
// facets' loops, and a flux loop incrementing both cells of each
// interior facet; the loops run on the sequential backend.
func TestNVRTCCompilesMixedMeshLoops(t *testing.T) {
	nv := loadNVRTC(t)
	t.Logf("NVRTC %s from %s", nv.Version(), nv.Path)
	if err := op2.Configure(op2.Config{Backend: compileCheckName, CacheDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op2.Close() }) // builds end before the TempDir is removed
	compiledMu.Lock()
	before, failed := len(compiled), len(failures)
	compiledMu.Unlock()
	m, err := unstructured.Load("../../../mesh/gmsh/testdata/mixed-41-binary.msh", unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	geo, err := m.Geometry()
	if err != nil {
		t.Fatal(err)
	}
	r, err := op2.NewDat[float64](m.Cells, 1, nil, "r")
	if err != nil {
		t.Fatal(err)
	}
	flux := op2.NewKernel("void flux(const double *v0, const double *v1, double *r0, double *r1) { double f = *v0 - *v1; *r0 -= f; *r1 += f; }", "flux")
	for _, f := range m.Interior {
		if err := op2.ParLoop(flux, f.Set, geo.CellVolume.ArgMap(op2.Read, f.Cells, 0), geo.CellVolume.ArgMap(op2.Read, f.Cells, 1),
			r.ArgMap(op2.Inc, f.Cells, 0), r.ArgMap(op2.Inc, f.Cells, 1)); err != nil {
			t.Fatal(err)
		}
	}
	compiledMu.Lock()
	defer compiledMu.Unlock()
	// A loop per kind of cell, one per facet set, the flux loops.
	if want := len(m.CellKinds) + len(m.Interior) + len(m.Boundary) + len(m.Interior); len(compiled)-before < want {
		t.Errorf("%d sources compiled, want at least %d (one per loop)", len(compiled)-before, want)
	}
	for _, f := range failures[failed:] {
		t.Error(f)
	}
}
