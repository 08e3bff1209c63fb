package cgns

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"

	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// elemRef is an element: its block in Mesh.Blocks and its index there.
type elemRef struct{ block, i int }

// grouping collects the groups' elements.
type grouping struct {
	m      *gmsh.Mesh
	groups []gmsh.PhysicalGroup
	byKey  map[string]int32    // "dim/name" → tag
	member map[elemRef][]int32 // element → its groups' tags
	inBC   map[elemRef]bool    // elements in a boundary condition
}

// group returns the tag of the group name of dimension dim, made if new.
func (g *grouping) group(dim int, name string) int32 {
	key := strconv.Itoa(dim) + "/" + name
	if t, ok := g.byKey[key]; ok {
		return t
	}
	t := int32(len(g.groups) + 1)
	g.groups = append(g.groups, gmsh.PhysicalGroup{Dim: dim, Tag: t, Name: name})
	g.byKey[key] = t
	return t
}

// add puts element e into the group name.
func (g *grouping) add(e elemRef, name string) {
	t := g.group(g.m.Blocks[e.block].Type.Dim(), name)
	if !slices.Contains(g.member[e], t) {
		g.member[e] = append(g.member[e], t)
	}
}

// find returns the element numbered id.
func find(m *gmsh.Mesh, id int64) (elemRef, bool) {
	for k := range m.Blocks {
		tags := m.Blocks[k].Tags
		i := sort.Search(len(tags), func(i int) bool { return tags[i] >= id })
		if i < len(tags) && tags[i] == id {
			return elemRef{k, i}, true
		}
	}
	return elemRef{}, false
}

// groups reads the boundary conditions and families into m's groups.
func (r *reader) groups(m *gmsh.Mesh, zp string, secs map[int]section) error {
	g := &grouping{m: m, byKey: map[string]int32{}, member: map[elemRef][]int32{}, inBC: map[elemRef]bool{}}
	// The zone's family: its cells.
	zfam, _, err := r.f.FamName(1, 1, cg.OfZone, 0)
	if err != nil {
		return r.call(zp, err)
	}
	if zfam != "" {
		for k := range m.Blocks {
			if m.Blocks[k].Type.Dim() == m.Dim {
				for i := range m.Blocks[k].Len() {
					g.add(elemRef{k, i}, zfam)
				}
			}
		}
	}
	nbc, err := r.f.NBocos(1, 1)
	if err != nil {
		return r.call(zp+"/ZoneBC", err)
	}
	for bc := 1; bc <= nbc; bc++ {
		if err := r.boco(g, zp, bc); err != nil {
			return err
		}
	}
	// Sections of facets that no boundary condition names: groups of
	// their own (converters such as patran_to_cgns write a named boundary
	// patch so, without a BC_t).
	for s := 1; s <= len(secs); s++ {
		sec := secs[s]
		var elems []elemRef
		for id := sec.start; id <= sec.end; id++ {
			e, ok := find(m, id)
			if !ok || m.Blocks[e.block].Type.Dim() != m.Dim-1 || g.inBC[e] {
				elems = nil
				break
			}
			elems = append(elems, e)
		}
		for _, e := range elems {
			g.add(e, sec.name)
		}
	}
	// Entities: one per distinct set of groups, of the elements' dimension.
	setEntities(g.member, &m.Entities, func(k int) int { return m.Blocks[k].Type.Dim() }, func(e elemRef, ent, phys int32) {
		m.Blocks[e.block].Entity[e.i], m.Blocks[e.block].Physical[e.i] = ent, phys
	})
	m.Physical = g.groups
	return nil
}

// bocoList is one boundary condition as read and checked: its node, its
// family (or ""), its points or elements (a range of 2 or a list, or nil
// for a list not read), and whether they are vertices.
type bocoList struct {
	b       cg.Boco
	bp, fam string
	pts     []int64
	isRange bool
	vertex  bool
}

// bocoRead reads boundary condition bc and checks what it is; a list's
// points are read only when lists is set (a range's always).
func (r *reader) bocoRead(zp string, bc int, lists bool) (*bocoList, error) {
	b, err := r.f.BocoInfo(1, 1, bc)
	if err != nil {
		return nil, r.call(fmt.Sprintf("%s/ZoneBC/BC %d", zp, bc), err)
	}
	bp := zp + "/ZoneBC/" + b.Name
	if err := r.fits(bp, "points", b.NPoints); err != nil {
		return nil, err
	}
	if err := r.fits(bp, "normals", b.NormalListSize); err != nil {
		return nil, err
	}
	fam, _, err := r.f.FamName(1, 1, cg.OfBoco, bc)
	if err != nil {
		return nil, r.call(bp, err)
	}
	isRange := b.PointSet == cg.PointRange || b.PointSet == cg.ElementRange
	if !isRange && b.PointSet != cg.PointList && b.PointSet != cg.ElementList {
		return nil, r.errorf(bp, "point set type %d: not supported (GoOP2 reads PointList, PointRange, ElementList and ElementRange)", b.PointSet)
	}
	var pts []int64
	if isRange || lists {
		if pts, err = r.f.BocoRead(1, 1, bc, b); err != nil {
			return nil, r.call(bp, err)
		}
	}
	if isRange && len(pts) != 2 {
		return nil, r.errorf(bp, "a range of %d values, want 2", len(pts))
	}
	vertex := b.Location == cg.Vertex && (b.PointSet == cg.PointList || b.PointSet == cg.PointRange)
	if !vertex {
		switch b.Location {
		case cg.Vertex, cg.FaceCenter, cg.EdgeCenter, cg.CellCenter:
		default:
			return nil, r.errorf(bp, "grid location %d: not supported (GoOP2 reads Vertex, EdgeCenter, FaceCenter and CellCenter)", b.Location)
		}
		if isRange {
			lo, hi := pts[0], pts[1]
			if lo > hi || lo < 1 {
				return nil, r.errorf(bp, "element range [%d, %d]: not a range of element numbers from 1", lo, hi)
			}
			if err := r.fits(bp, "range", hi-lo+1); err != nil {
				return nil, err
			}
		}
	}
	return &bocoList{b: b, bp: bp, fam: fam, pts: pts, isRange: isRange, vertex: vertex}, nil
}

// boco reads boundary condition bc into its group (and its family's).
func (r *reader) boco(g *grouping, zp string, bc int) error {
	l, err := r.bocoRead(zp, bc, true)
	if err != nil {
		return err
	}
	b, bp, fam, pts, isRange, vertex := l.b, l.bp, l.fam, l.pts, l.isRange, l.vertex
	var elems []elemRef
	if vertex {
		if elems, err = r.vertexFacets(g.m, bp, pts, isRange); err != nil {
			return err
		}
		if len(elems) == 0 {
			// Points that hold no face element (a pinned vertex, a
			// line): a group of dimension 0 with no elements, which
			// says what it is (unstructured.Mesh.Group) rather than
			// vanishing.
			g.group(0, b.Name)
			return nil
		}
	} else {
		each := func(id int64) error {
			e, ok := find(g.m, id)
			if !ok {
				return r.errorf(bp, "element %d: no section holds it", id)
			}
			elems = append(elems, e)
			return nil
		}
		if isRange {
			for id := pts[0]; id <= pts[1]; id++ {
				if err := each(id); err != nil {
					return err
				}
			}
		} else {
			for _, id := range pts {
				if err := each(id); err != nil {
					return err
				}
			}
		}
	}
	dim := -1
	for _, e := range elems {
		d := g.m.Blocks[e.block].Type.Dim()
		if dim >= 0 && d != dim {
			return r.errorf(bp, "elements of dimensions %d and %d: a group holds elements of one dimension", dim, d)
		}
		dim = d
	}
	for _, e := range elems {
		g.inBC[e] = true
		g.add(e, b.Name)
		if fam != "" {
			g.add(e, fam)
		}
	}
	return nil
}

// vertexFacets returns the elements one dimension below the cells whose
// nodes all lie in the points of a Vertex boundary condition.
func (r *reader) vertexFacets(m *gmsh.Mesh, bp string, pts []int64, isRange bool) ([]elemRef, error) {
	in := make([]bool, r.nv)
	mark := func(v int64) error {
		if v < 1 || v > r.nv {
			return r.errorf(bp, "vertex %d outside [1, %d]", v, r.nv)
		}
		in[v-1] = true
		return nil
	}
	if isRange {
		if pts[0] > pts[1] {
			return nil, r.errorf(bp, "vertex range [%d, %d] is empty", pts[0], pts[1])
		}
		for v := pts[0]; v <= pts[1]; v++ {
			if err := mark(v); err != nil {
				return nil, err
			}
		}
	} else {
		for _, v := range pts {
			if err := mark(v); err != nil {
				return nil, err
			}
		}
	}
	var out []elemRef
	facets := 0
	for k := range m.Blocks {
		b := &m.Blocks[k]
		if b.Type.Dim() != m.Dim-1 {
			continue
		}
		nn := b.Type.NumNodes()
		facets += b.Len()
		for i := range b.Len() {
			all := true
			for _, v := range b.Nodes[nn*i : nn*i+nn] {
				all = all && in[v]
			}
			if all {
				out = append(out, elemRef{k, i})
			}
		}
	}
	if facets == 0 {
		return nil, r.errorf(bp, "a boundary condition at Vertex, but the zone has no elements of dimension %d to hold it: not supported (give its faces as elements, or the BC at FaceCenter)", m.Dim-1)
	}
	return out, nil
}

// setEntities gives the elements of member their entities: one per
// distinct set of groups and dimension (dim gives a block's), appended to
// entities in the order of the elements (block, then index); set records
// an element's entity and physical group (its first, the tags sorted).
func setEntities(member map[elemRef][]int32, entities *[]gmsh.Entity, dim func(block int) int, set func(e elemRef, entity, physical int32)) {
	ents := map[string]int32{}
	refs := make([]elemRef, 0, len(member))
	for e := range member {
		refs = append(refs, e)
	}
	slices.SortFunc(refs, func(a, b elemRef) int { return cmp.Or(cmp.Compare(a.block, b.block), cmp.Compare(a.i, b.i)) })
	for _, e := range refs {
		tags := member[e]
		slices.Sort(tags)
		d := dim(e.block)
		key := strconv.Itoa(d)
		for _, t := range tags {
			key += "," + strconv.Itoa(int(t))
		}
		t, ok := ents[key]
		if !ok {
			t = int32(len(*entities) + 1)
			ents[key] = t
			*entities = append(*entities, gmsh.Entity{Dim: d, Tag: t, Physical: tags})
		}
		set(e, t, tags[0])
	}
}
