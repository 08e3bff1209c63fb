// Package cgns reads unstructured meshes from CGNS files
// (https://cgns.org) into the in-memory mesh package mesh/gmsh defines, so
// that everything package mesh/unstructured does with a Gmsh mesh works on
// them, and writes cell-centred solutions back into a CGNS file, so that a
// CGNS user gets CGNS out.
//
// The CGNS library is loaded at run time (Debian: apt-get install
// libcgns3.4; or point OP2_CGNS_LIBRARY at libcgns): nothing of CGNS is
// needed to build GoOP2. Without it Read and WriteSolution return an error
// wrapping ErrUnavailable that says what to install.
//
// # Supported input
//
// One base holding one unstructured zone, with Cartesian coordinates
// (CoordinateX, CoordinateY and, in 3-D, CoordinateZ) and element sections
// of the first-order kinds NODE, BAR_2, TRI_3, QUAD_4, TETRA_4, PYRA_5,
// PENTA_6 and HEXA_8, or MIXED sections of those. Anything else —
// structured zones, several zones or bases, higher-order elements,
// NGON_n/NFACE_n polyhedra — is an error naming the file, the node (such as
// /Base/Zone/Elements_3) and what is not supported.
//
// # What Read makes
//
// Nodes are numbered from 0 in the file's order (vertex i+1 of the zone is
// node i; NodeTags[i] is i+1). The elements come as one gmsh.Block per
// kind (a MIXED section adds to several), each block in increasing element
// number, with the file's element numbers as Tags. CGNS and Gmsh list the
// nodes of every supported kind in the same order, so node lists are the
// file's.
//
// Boundary conditions, families and named boundary sections become
// physical groups:
//
//   - every boundary condition is a group named as the BC_t node, holding
//     the elements it lists (PointList/PointRange or ElementList/ElementRange
//     at FaceCenter, EdgeCenter or CellCenter), or, for a BC at Vertex, the
//     elements one dimension below the cells whose nodes all lie in its
//     points (a BC at Vertex that holds none, as points or a line, is a
//     group of dimension 0 with no elements: faces of the cells that the
//     file does not list are not derived);
//
//   - every family named by a boundary condition or by the zone
//     (FamilyName) is a group named as the family, holding the elements of
//     every such boundary condition (the zone's: its cells); CGNS 3.4 has
//     no FamilyName under an element section, and none is read there;
//
//   - an element section of facets (one dimension below the cells) none of
//     whose elements is in a boundary condition is a group named as the
//     section (patran_to_cgns, for one, writes named boundary patches so).
//
// A group of the same name and dimension from several of these is one
// group. An element in several groups has an Entity listing them (see
// gmsh.Mesh.GroupTag); Physical holds its first group, 0 for none.
//
// # Reading by blocks
//
// A process of a parallel job reads its part of a file without the rest:
// Scan reads the file's counts (a Layout), and Layout.ReadPart the
// vertices and elements a gmsh.Keep selects, with the groups agreed over
// the ranks, as gmsh.ScanFile and gmsh.ReadFilePart do for a Gmsh file.
// Package mesh/unstructured's Load uses them on several ranks.
//
// # Safety
//
// Every size the library returns is checked before anything is allocated
// for it: an array of more values than the file has bytes for (4 bytes a
// value, the smallest CGNS stores) is an error, so a truncated or
// corrupted file, or a compressed one whose arrays are larger than the
// file, is refused rather than read. Connectivity and boundary indices out
// of range are errors naming the node and the element.
package cgns

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/mesh/gmsh"
)

// ErrUnavailable is wrapped by the errors that say the CGNS library cannot
// be loaded; their message says what to install.
var ErrUnavailable = cg.ErrUnavailable

func init() { collective.Share("cgns", ErrUnavailable) } // see collective.Share

// Load loads the CGNS library, if no call has yet, and reports why it
// cannot be used (an error wrapping ErrUnavailable).
func Load() error { return cg.Load() }

// kinds maps CGNS element types to Gmsh's.
var kinds = map[int]gmsh.Type{
	2:  gmsh.Point,       // NODE
	3:  gmsh.Line,        // BAR_2
	5:  gmsh.Triangle,    // TRI_3
	7:  gmsh.Quadrangle,  // QUAD_4
	10: gmsh.Tetrahedron, // TETRA_4
	12: gmsh.Pyramid,     // PYRA_5
	14: gmsh.Prism,       // PENTA_6
	17: gmsh.Hexahedron,  // HEXA_8
}

const (
	mixed = 20 // MIXED
	ngon  = 22 // NGON_n
	nface = 23 // NFACE_n
)

// supported is what errors about other element types say is read.
const supported = "NODE, BAR_2, TRI_3, QUAD_4, TETRA_4, PYRA_5, PENTA_6, HEXA_8 and MIXED sections of those"

// reader is one Read's state.
type reader struct {
	path  string
	size  int64 // the file's bytes
	f     *cg.File
	nv    int64
	elems map[gmsh.Type]*elems
}

// elems are the elements of one kind, as read (by element number later).
type elems struct {
	ids   []int64
	nodes []int32
}

// errorf makes an error naming the file and the node.
func (r *reader) errorf(node, format string, args ...any) error {
	if node != "" {
		node += ": "
	}
	return fmt.Errorf("cgns: %s: %s%s", r.path, node, fmt.Sprintf(format, args...))
}

// call wraps a library error with the file and node.
func (r *reader) call(node string, err error) error {
	if errors.Is(err, ErrUnavailable) {
		return fmt.Errorf("cgns: %s: %w", r.path, err)
	}
	return r.errorf(node, "%v", err)
}

// fits checks that n values of at least 4 bytes can be in the file.
func (r *reader) fits(node, what string, n int64) error {
	if n < 0 {
		return r.errorf(node, "%s: negative count %d", what, n)
	}
	if n > r.size/4 {
		return r.errorf(node, "%s: %d values, more than the file's %d bytes hold (truncated or corrupt; compressed arrays are not read)", what, n, r.size)
	}
	return nil
}

// Read reads the mesh in the CGNS file at path.
func Read(path string) (*gmsh.Mesh, error) {
	r, err := openReader(path)
	if err != nil {
		return nil, err
	}
	defer r.f.Close()
	return r.read()
}

func (r *reader) read() (*gmsh.Mesh, error) {
	zp, pdim, err := r.header()
	if err != nil {
		return nil, err
	}
	m := &gmsh.Mesh{}
	if m.X, err = r.coords(zp, pdim); err != nil {
		return nil, err
	}
	m.NodeTags = make([]int64, r.nv)
	for i := range m.NodeTags {
		m.NodeTags[i] = int64(i) + 1
	}
	secFam, err := r.sections(zp)
	if err != nil {
		return nil, err
	}
	for t, e := range r.elems {
		m.Blocks = append(m.Blocks, e.block(t))
		m.Dim = max(m.Dim, t.Dim())
	}
	slices.SortFunc(m.Blocks, func(a, b gmsh.Block) int {
		if d := a.Type.Dim() - b.Type.Dim(); d != 0 {
			return d
		}
		return int(a.Type) - int(b.Type)
	})
	if err := r.groups(m, zp, secFam); err != nil {
		return nil, err
	}
	if err := m.Check(); err != nil {
		return nil, r.errorf(zp, "%v", err)
	}
	return m, nil
}

// header reads the file's one base and its one unstructured zone: it
// returns the zone's path and the physical dimension, and sets r.nv.
func (r *reader) header() (zp string, pdim int, err error) {
	nb, err := r.f.NBases()
	if err != nil {
		return "", 0, r.call("/", err)
	}
	if nb != 1 {
		return "", 0, r.errorf("/", "%d bases (CGNSBase_t); GoOP2 reads files with one base", nb)
	}
	base, cdim, pdim, err := r.f.Base(1)
	if err != nil {
		return "", 0, r.call("/", err)
	}
	bp := "/" + base
	if cdim < 1 || cdim > 3 || pdim < cdim || pdim > 3 {
		return "", 0, r.errorf(bp, "cell dimension %d, physical dimension %d: not a 1-, 2- or 3-D mesh", cdim, pdim)
	}
	nz, err := r.f.NZones(1)
	if err != nil {
		return "", 0, r.call(bp, err)
	}
	if nz != 1 {
		return "", 0, r.errorf(bp, "%d zones; GoOP2 reads files with one unstructured zone", nz)
	}
	zt, err := r.f.ZoneType(1, 1)
	if err != nil {
		return "", 0, r.call(bp, err)
	}
	if zt != cg.Unstructured {
		what := fmt.Sprintf("zone type %d", zt)
		if zt == cg.Structured {
			what = "a structured zone"
		}
		return "", 0, r.errorf(bp+"/Zone 1", "%s: not supported (GoOP2 reads one unstructured zone)", what)
	}
	zone, size, err := r.f.ZoneRead(1, 1)
	if err != nil {
		return "", 0, r.call(bp, err)
	}
	zp = bp + "/" + zone
	r.nv = size[0]
	if err := r.fits(zp, "vertices", r.nv); err != nil {
		return "", 0, err
	}
	return zp, pdim, nil
}

// coords reads the Cartesian coordinates into three values per node.
func (r *reader) coords(zp string, pdim int) ([]float64, error) {
	gp := zp + "/GridCoordinates"
	want, err := r.coordList(zp, pdim)
	if err != nil {
		return nil, err
	}
	x := make([]float64, 3*r.nv)
	for k, n := range want {
		v, err := r.f.Coord(1, 1, n, r.nv)
		if err != nil {
			return nil, r.call(gp+"/"+n, err)
		}
		for i, xi := range v {
			x[3*i+k] = xi
		}
	}
	return x, nil
}

// coordList returns the names of the Cartesian coordinate arrays, X, Y
// and (in 3-D) Z, checking that the zone has them.
func (r *reader) coordList(zp string, pdim int) ([]string, error) {
	gp := zp + "/GridCoordinates"
	nc, err := r.f.NCoords(1, 1)
	if err != nil {
		return nil, r.call(gp, err)
	}
	want := []string{"CoordinateX", "CoordinateY", "CoordinateZ"}[:pdim]
	have := map[string]bool{}
	var names []string
	for c := 1; c <= nc; c++ {
		n, err := r.f.CoordName(1, 1, c)
		if err != nil {
			return nil, r.call(gp, err)
		}
		have[n] = true
		names = append(names, n)
	}
	for _, n := range want {
		if !have[n] {
			return nil, r.errorf(gp, "no %s (it has %s): GoOP2 reads Cartesian coordinates", n, strings.Join(names, ", "))
		}
	}
	return want, nil
}

// sections reads the element sections; it returns their element ranges,
// by section index.
func (r *reader) sections(zp string) (map[int]section, error) {
	out := map[int]section{}
	err := r.eachSection(zp, func(s int, sec cg.Section, sp string, n int64) error {
		if err := r.section(sp, s, sec, n); err != nil {
			return err
		}
		out[s] = section{start: sec.Start, end: sec.End, name: sec.Name, path: sp}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachSection calls f for each element section of the zone at path zp,
// in the file's order, with its index, header, path and number of
// elements, once the header is checked: a range of element numbers from
// 1, no larger than this machine can index, overlapping no earlier
// section's.
func (r *reader) eachSection(zp string, f func(s int, sec cg.Section, sp string, n int64) error) error {
	ns, err := r.f.NSections(1, 1)
	if err != nil {
		return r.call(zp, err)
	}
	var ranges [][2]int64
	for s := 1; s <= ns; s++ {
		sec, err := r.f.SectionRead(1, 1, s)
		if err != nil {
			return r.call(fmt.Sprintf("%s/Elements %d", zp, s), err)
		}
		sp := zp + "/" + sec.Name
		n := sec.End - sec.Start + 1
		if sec.Start < 1 || n < 1 {
			return r.errorf(sp, "element range [%d, %d]: not a range of element numbers from 1", sec.Start, sec.End)
		}
		if err := r.fits(sp, "elements", n); err != nil {
			return err
		}
		for _, q := range ranges {
			if sec.Start <= q[1] && q[0] <= sec.End {
				return r.errorf(sp, "element range [%d, %d] overlaps another section's [%d, %d]", sec.Start, sec.End, q[0], q[1])
			}
		}
		ranges = append(ranges, [2]int64{sec.Start, sec.End})
		if err := f(s, sec, sp, n); err != nil {
			return err
		}
	}
	return nil
}

// section is an element section's range.
type section struct {
	start, end int64
	name, path string
}

// unsupported says why element type t is not read.
func unsupported(t int) string {
	name := cg.TypeName(t)
	switch {
	case t == ngon || t == nface:
		return fmt.Sprintf("%s polyhedral sections are not supported (GoOP2 reads %s)", name, supported)
	case t > 2 && t < 56:
		return fmt.Sprintf("element type %s: higher-order or other elements are not supported (GoOP2 reads %s)", name, supported)
	}
	return fmt.Sprintf("element type %d is not a CGNS element type (GoOP2 reads %s)", t, supported)
}

// section reads section s, n elements.
func (r *reader) section(sp string, s int, sec cg.Section, n int64) error {
	size, err := r.f.ElementDataSize(1, 1, s)
	if err != nil {
		return r.call(sp, err)
	}
	if err := r.fits(sp, "connectivity", size); err != nil {
		return err
	}
	if sec.Type == mixed {
		if size < 2*n {
			return r.errorf(sp, "MIXED section of %d elements has %d connectivity values, fewer than %d", n, size, 2*n)
		}
		conn, off, err := r.mixed(sp, s, size, n)
		if err != nil {
			return err
		}
		for i := range n {
			a, b := off[i], off[i+1]
			if a < 0 || b <= a || b > size {
				return r.errorf(sp, "element %d: offsets [%d, %d) outside the %d connectivity values", sec.Start+i, a, b, size)
			}
			t := int(conn[a])
			k, ok := kinds[t]
			if !ok {
				return r.errorf(sp, "element %d: %s", sec.Start+i, unsupported(t))
			}
			if got := b - a - 1; got != int64(k.NumNodes()) {
				return r.errorf(sp, "element %d (%s): %d nodes, want %d", sec.Start+i, cg.TypeName(t), got, k.NumNodes())
			}
			if err := r.add(sp, k, sec.Start+i, conn[a+1:b]); err != nil {
				return err
			}
		}
		return nil
	}
	k, ok := kinds[sec.Type]
	if !ok {
		return r.errorf(sp, "%s", unsupported(sec.Type))
	}
	npe := int64(k.NumNodes())
	if size != n*npe {
		return r.errorf(sp, "%d %s elements have %d connectivity values, want %d", n, cg.TypeName(sec.Type), size, n*npe)
	}
	conn, err := r.f.Elements(1, 1, s, size)
	if err != nil {
		return r.call(sp, err)
	}
	e := r.elems[k]
	if e == nil {
		e = &elems{}
		r.elems[k] = e
	}
	e.ids = slices.Grow(e.ids, int(n))
	e.nodes = slices.Grow(e.nodes, int(size))
	for i := range n {
		if err := r.add(sp, k, sec.Start+i, conn[i*npe:(i+1)*npe]); err != nil {
			return err
		}
	}
	return nil
}

// mixed reads MIXED section s, n elements in size values: its
// connectivity (each element's type, then its nodes) and each element's
// offset in it (n+1 values). The offsets are found by walking the types:
// CGNS 3.4 stores none, and its cg_poly_elements_read (which CGNS 4 needs
// for MIXED sections, and 3.4 accepts) returns wrong ones.
func (r *reader) mixed(sp string, s int, size, n int64) (conn, off []int64, err error) {
	if conn, _, err = r.f.PolyElements(1, 1, s, size, n); err != nil {
		return nil, nil, r.call(sp, err)
	}
	off = make([]int64, n+1)
	for i := range n {
		a := off[i]
		if a >= size {
			return nil, nil, r.errorf(sp, "element %d of %d: the %d connectivity values end before it", i+1, n, size)
		}
		t := int(conn[a])
		k, ok := kinds[t]
		if !ok {
			return nil, nil, r.errorf(sp, "element %d of the section: %s", i+1, unsupported(t))
		}
		off[i+1] = a + 1 + int64(k.NumNodes())
	}
	if off[n] != size {
		return nil, nil, r.errorf(sp, "%d elements take %d connectivity values, the section has %d", n, off[n], size)
	}
	return conn, off, nil
}

// add adds element id of kind k with the file's 1-based nodes.
func (r *reader) add(sp string, k gmsh.Type, id int64, nodes []int64) error {
	e := r.elems[k]
	if e == nil {
		e = &elems{}
		r.elems[k] = e
	}
	for j, v := range nodes {
		if v < 1 || v > r.nv {
			return r.errorf(sp, "element %d (%v): node %d is %d, outside [1, %d]", id, k, j, v, r.nv)
		}
		e.nodes = append(e.nodes, int32(v-1))
	}
	e.ids = append(e.ids, id)
	return nil
}

// block sorts e by element number into a Block (its slices, when the
// file gave the elements in order).
func (e *elems) block(t gmsh.Type) gmsh.Block {
	if slices.IsSorted(e.ids) {
		return gmsh.Block{Type: t, Nodes: e.nodes, Tags: e.ids, Physical: make([]int32, len(e.ids)), Entity: make([]int32, len(e.ids))}
	}
	nn := t.NumNodes()
	idx := make([]int, len(e.ids))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return e.ids[idx[a]] < e.ids[idx[b]] })
	b := gmsh.Block{Type: t, Nodes: make([]int32, 0, len(e.nodes)), Tags: make([]int64, len(idx)),
		Physical: make([]int32, len(idx)), Entity: make([]int32, len(idx))}
	for i, j := range idx {
		b.Tags[i] = e.ids[j]
		b.Nodes = append(b.Nodes, e.nodes[nn*j:nn*j+nn]...)
	}
	return b
}
