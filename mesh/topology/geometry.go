package topology

import "fmt"

// Geometry computed from node coordinates x (dim values per node, dim 2
// for 2-D cells, 3 for 3-D cells).

// point returns node v's coordinates as three values (z = 0 in 2-D).
func point(x []float64, dim int, v int32) [3]float64 {
	var p [3]float64
	copy(p[:dim], x[int(v)*dim:int(v)*dim+dim])
	return p
}

func sub(a, b [3]float64) [3]float64 { return [3]float64{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func cross(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// areaVector is the outward area vector of a facet with nodes nodes (in
// their order): for an edge of a 2-D cell its outward normal scaled by
// its length; for a triangle or quadrilateral face its normal scaled by
// its area (for a quadrilateral that is not planar, that of the bilinear
// surface through its nodes, half the cross product of its diagonals).
func areaVector(x []float64, dim int, nodes []int32) [3]float64 {
	switch len(nodes) {
	case 2:
		a, b := point(x, dim, nodes[0]), point(x, dim, nodes[1])
		return [3]float64{b[1] - a[1], a[0] - b[0], 0}
	case 3:
		a, b, c := point(x, dim, nodes[0]), point(x, dim, nodes[1]), point(x, dim, nodes[2])
		n := cross(sub(b, a), sub(c, a))
		return [3]float64{n[0] / 2, n[1] / 2, n[2] / 2}
	}
	a, b, c, d := point(x, dim, nodes[0]), point(x, dim, nodes[1]), point(x, dim, nodes[2]), point(x, dim, nodes[3])
	n := cross(sub(c, a), sub(d, b))
	return [3]float64{n[0] / 2, n[1] / 2, n[2] / 2}
}

// centroid is the average of the nodes' coordinates.
func centroid(x []float64, dim int, nodes []int32) [3]float64 {
	var c [3]float64
	for _, v := range nodes {
		p := point(x, dim, v)
		for i := range c {
			c[i] += p[i]
		}
	}
	for i := range c {
		c[i] /= float64(len(nodes))
	}
	return c
}

func checkCoords(k Kind, x []float64, dim int) error {
	if dim != k.Dim() && !(dim == 3 && k.Dim() == 2) {
		return fmt.Errorf("topology: %v cells need coordinates of dim %d, not %d", k, k.Dim(), dim)
	}
	if dim < 1 || len(x)%dim != 0 {
		return fmt.Errorf("topology: %d coordinates are not points of dim %d", len(x), dim)
	}
	return nil
}

// FacetGeometry returns each facet's outward area vector (as its first
// cell sees it: the normal scaled by the facet's length in 2-D, its area
// in 3-D; dim values per facet, dim 2 or 3 as x has) and centroid.
func (f *Facets) Geometry(x []float64, dim int) (normals, centroids []float64, err error) {
	nn := f.Kind.Nodes()
	if dim != 2 && dim != 3 {
		return nil, nil, fmt.Errorf("topology: coordinates of dim %d: want 2 or 3", dim)
	}
	if err := f.check(); err != nil {
		return nil, nil, err
	}
	for _, v := range f.Nodes {
		if v < 0 || int(v)*dim+dim > len(x) {
			return nil, nil, fmt.Errorf("topology: node %d has no coordinates (%d values of dim %d)", v, len(x), dim)
		}
	}
	n := f.Len()
	normals, centroids = make([]float64, n*dim), make([]float64, n*dim)
	for i := range n {
		nodes := f.Nodes[i*nn : (i+1)*nn]
		a, c := areaVector(x, dim, nodes), centroid(x, dim, nodes)
		copy(normals[i*dim:], a[:dim])
		copy(centroids[i*dim:], c[:dim])
	}
	return normals, centroids, nil
}

// CellGeometry returns the volume (area in 2-D) and centroid (the
// average of the nodes) of each of the n cells of kind k whose nodes are
// cells (as Derive takes them). The volume is a third (a half in 2-D) of
// the sum over the cell's facets of the facet centroid (the average of
// its nodes) dotted with its outward area vector (the divergence
// theorem), and negative for a cell oriented the other way. It is exact
// for cells with planar faces and also for those whose quadrilateral
// faces are not planar (hexahedra, prisms, a pyramid's base), each such
// face being taken as the bilinear surface through its four nodes, as
// the first-order element's map makes it: for that surface the area
// vector and the node average dotted with it are exact. So a pyramid
// with a non-planar base has the average of the volumes of the two ways
// of splitting it into two tetrahedra.
func CellGeometry(k Kind, cells []int32, x []float64, dim int) (volumes, centroids []float64, err error) {
	if err := checkCoords(k, x, dim); err != nil {
		return nil, nil, err
	}
	lf := facets[k]
	nn := k.Nodes()
	if lf == nil || len(cells)%nn != 0 {
		return nil, nil, fmt.Errorf("topology: %d node entries are not %v cells", len(cells), k)
	}
	for _, v := range cells {
		if v < 0 || int(v)*dim+dim > len(x) {
			return nil, nil, fmt.Errorf("topology: node %d has no coordinates (%d values of dim %d)", v, len(x), dim)
		}
	}
	n := len(cells) / nn
	volumes, centroids = make([]float64, n), make([]float64, n*dim)
	var buf [4]int32
	for c := range n {
		row := cells[c*nn : (c+1)*nn]
		cc := centroid(x, dim, row)
		copy(centroids[c*dim:], cc[:dim])
		v := 0.0
		for _, f := range lf {
			nodes := buf[:len(f)]
			for j, l := range f {
				nodes[j] = row[l]
			}
			a, fc := areaVector(x, dim, nodes), centroid(x, dim, nodes)
			// Relative to the cell's centroid, for accuracy far from 0.
			v += (fc[0]-cc[0])*a[0] + (fc[1]-cc[1])*a[1] + (fc[2]-cc[2])*a[2]
		}
		volumes[c] = v / float64(k.Dim())
	}
	return volumes, centroids, nil
}
