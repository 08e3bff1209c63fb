package unstructured

import (
	"fmt"
	"strings"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/mesh/topology"
)

// Geometry holds the mesh's geometric quantities, as Dats computed by
// loops (on the runtime's backend, under MPI on every rank's part), with
// the definitions of package mesh/topology.
type Geometry struct {
	// CellVolume holds each cell's volume (area in 2-D), by the
	// divergence theorem over its facets: exact for cells with planar
	// faces.
	CellVolume *op2.Dat[float64]
	// CellCentre holds each cell's centroid of its nodes (Dim values).
	CellCentre *op2.Dat[float64]
	// Interior and Boundary hold each facet set's geometry, in the order
	// of Mesh.Interior and Mesh.Boundary.
	Interior, Boundary []FacetGeometry
}

// FacetGeometry is one facet set's geometry.
type FacetGeometry struct {
	// Normal holds the facet's area vector (Dim values), pointing out of
	// its first cell: the unit normal scaled by the facet's length in
	// 2-D, its area in 3-D (for a quadrilateral that is not planar, half
	// the cross product of its diagonals).
	Normal *op2.Dat[float64]
	// Centre holds the centroid of the facet's nodes.
	Centre *op2.Dat[float64]
}

// geometryHelpers are the C functions the geometry kernels share: a
// facet's area vector and centroid from its nodes' coordinates (D of
// them), in three components (z = 0 in 2-D).
const geometryHelpers = `
static void op2u_facet(int n, int d, const double *p0, const double *p1, const double *p2, const double *p3, double a[3], double c[3]) {
  double q[4][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  const double *p[4] = {p0, p1, p2, p3};
  for (int i = 0; i < n; i++)
    for (int k = 0; k < d; k++) q[i][k] = p[i][k];
  for (int k = 0; k < 3; k++) {
    c[k] = 0;
    for (int i = 0; i < n; i++) c[k] += q[i][k];
    c[k] /= n;
  }
  if (n == 2) {
    a[0] = q[1][1] - q[0][1]; a[1] = q[0][0] - q[1][0]; a[2] = 0;
    return;
  }
  double u[3], v[3];
  for (int k = 0; k < 3; k++) {
    u[k] = n == 3 ? q[1][k] - q[0][k] : q[2][k] - q[0][k];
    v[k] = n == 3 ? q[2][k] - q[0][k] : q[3][k] - q[1][k];
  }
  a[0] = 0.5 * (u[1] * v[2] - u[2] * v[1]);
  a[1] = 0.5 * (u[2] * v[0] - u[0] * v[2]);
  a[2] = 0.5 * (u[0] * v[1] - u[1] * v[0]);
}
`

// cellGeometryKernel returns the kernel computing a cell's volume and
// centroid for cells of kind k.
func cellGeometryKernel(k topology.Kind) (string, string) {
	nn, d := k.Nodes(), k.Dim()
	name := "op2u_cell_geometry_" + strings.ToLower(k.String())
	var b strings.Builder
	b.WriteString(geometryHelpers)
	fmt.Fprintf(&b, "void %s(const double *x[%d], double *vol, double *centre) {\n", name, nn)
	fmt.Fprintf(&b, "  double c[3] = {0, 0, 0}, a[3], fc[3], v = 0;\n")
	fmt.Fprintf(&b, "  for (int i = 0; i < %d; i++)\n    for (int k = 0; k < %d; k++) c[k] += x[i][k];\n", nn, d)
	fmt.Fprintf(&b, "  for (int k = 0; k < %d; k++) c[k] /= %d;\n", d, nn)
	for _, f := range topology.LocalFacets(k) {
		p := [4]string{"0", "0", "0", "0"}
		for i, l := range f {
			p[i] = fmt.Sprintf("x[%d]", l)
		}
		fmt.Fprintf(&b, "  op2u_facet(%d, %d, %s, %s, %s, %s, a, fc);\n", len(f), d, p[0], p[1], p[2], p[3])
		b.WriteString("  v += (fc[0] - c[0]) * a[0] + (fc[1] - c[1]) * a[1] + (fc[2] - c[2]) * a[2];\n")
	}
	fmt.Fprintf(&b, "  *vol = v / %d;\n  for (int k = 0; k < %d; k++) centre[k] = c[k];\n}\n", d, d)
	return b.String(), name
}

// facetGeometryKernel returns the kernel computing a facet's area vector
// and centroid for facets of kind k in a mesh of dimension d.
func facetGeometryKernel(k topology.Kind, d int) (string, string) {
	nn := k.Nodes()
	name := "op2u_facet_geometry_" + strings.ToLower(k.String())
	p := [4]string{"0", "0", "0", "0"}
	for i := range nn {
		p[i] = fmt.Sprintf("x[%d]", i)
	}
	src := geometryHelpers + fmt.Sprintf(`void %s(const double *x[%d], double *normal, double *centre) {
  double a[3], c[3];
  op2u_facet(%d, %d, %s, %s, %s, %s, a, c);
  for (int k = 0; k < %d; k++) { normal[k] = a[k]; centre[k] = c[k]; }
}
`, name, nn, nn, d, p[0], p[1], p[2], p[3], d)
	return src, name
}

// Geometry computes the cells' volumes and centroids and the facets' area
// vectors and centroids, in loops (for a mixed mesh, one loop per kind of
// cell over CellKinds). Under MPI it is collective.
func (m *Mesh) Geometry() (*Geometry, error) {
	g := &Geometry{}
	var err error
	if g.CellVolume, err = op2.NewDat[float64](m.Cells, 1, nil, "cell_volume"); err != nil {
		return nil, err
	}
	if g.CellCentre, err = op2.NewDat[float64](m.Cells, m.Dim, nil, "cell_centre"); err != nil {
		return nil, err
	}
	if m.CellNodes != nil {
		src, name := cellGeometryKernel(m.Kind)
		if err := op2.ParLoop(op2.NewKernel(src, name), m.Cells, m.X.ArgVec(op2.Read, m.CellNodes),
			g.CellVolume.Arg(op2.Write), g.CellCentre.Arg(op2.Write)); err != nil {
			return nil, fmt.Errorf("unstructured: cell geometry: %w", err)
		}
	} else {
		// A mixed mesh: a loop per kind, writing its cells' values
		// through the map to the cells.
		for _, ck := range m.CellKinds {
			src, name := cellGeometryKernel(ck.Kind)
			if err := op2.ParLoop(op2.NewKernel(src, name), ck.Set, m.X.ArgVec(op2.Read, ck.Nodes),
				g.CellVolume.ArgMap(op2.Write, ck.Cells, 0), g.CellCentre.ArgMap(op2.Write, ck.Cells, 0)); err != nil {
				return nil, fmt.Errorf("unstructured: %v geometry: %w", ck.Kind, err)
			}
		}
	}
	for _, side := range []struct {
		facets []Facets
		into   *[]FacetGeometry
	}{{m.Interior, &g.Interior}, {m.Boundary, &g.Boundary}} {
		for _, f := range side.facets {
			var fg FacetGeometry
			if fg.Normal, err = op2.NewDat[float64](f.Set, m.Dim, nil, f.Set.Name()+"_normal"); err != nil {
				return nil, err
			}
			if fg.Centre, err = op2.NewDat[float64](f.Set, m.Dim, nil, f.Set.Name()+"_centre"); err != nil {
				return nil, err
			}
			src, name := facetGeometryKernel(f.Kind, m.Dim)
			if err := op2.ParLoop(op2.NewKernel(src, name), f.Set, m.X.ArgVec(op2.Read, f.Nodes),
				fg.Normal.Arg(op2.Write), fg.Centre.Arg(op2.Write)); err != nil {
				return nil, fmt.Errorf("unstructured: %s geometry: %w", f.Set.Name(), err)
			}
			*side.into = append(*side.into, fg)
		}
	}
	return g, nil
}
