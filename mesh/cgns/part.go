package cgns

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"

	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/mesh/gmsh"
)

// Layout is what Scan finds of a CGNS file without reading its arrays
// whole: the counts a process of a parallel job needs to choose its
// blocks (Part, as gmsh.ScanFile gives them for a Gmsh file), and where
// each element section's elements go among those of their kind.
type Layout struct {
	// Part holds the file's counts: Dim, NumNodes, DenseTags (true: node
	// i is vertex i+1 of the zone) and Counts (Unique as Counts). It
	// keeps no node and no element, and no group: ReadPart finds them.
	Part *gmsh.Part

	path string
	zp   string
	pdim int
	// sections in the order of their element numbers.
	secs []partSection
	// walked counts the MIXED connectivity values this process's scan
	// read (none on ScanOn's ranks but 0).
	walked int64
}

// partSection is one element section as Scan saw it.
type partSection struct {
	s          int // its index in the file, from 1
	name, path string
	typ        int   // its ElementType_t (mixed for MIXED)
	start, end int64 // its element numbers
	size       int64 // its connectivity values
	// before[t] is the number of elements of kind t in the sections
	// before it; count[t] its own.
	before, count map[gmsh.Type]int64
	// marks, for a MIXED section, are where Scan's walk crossed each
	// window: a walk for some elements starts at the last mark before
	// them (walkMixed).
	marks []mixedMark
}

// mixedMark is a point of a MIXED section's walk: element elem (from 0)
// starts at connectivity value value (from 0), and seen[t] elements of
// kind t come before it in the section.
type mixedMark struct {
	elem, value int64
	seen        map[gmsh.Type]int64
}

// errStop ends a walk early (walkMixed).
var errStop = errors.New("stop")

// openReader opens path for reading, as Read does.
func openReader(path string) (*reader, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cgns: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("cgns: %s: not a regular file", path)
	}
	r := &reader{path: path, size: st.Size(), elems: map[gmsh.Type]*elems{}}
	if r.f, err = cg.Open(path, cg.Read); err != nil {
		return nil, r.call("", err)
	}
	return r, nil
}

// Scan reads the layout of the CGNS file at path and checks it as Read
// does, holding none of its large arrays: a section of one element kind
// is known by its counts, and a MIXED section's elements are counted by
// kind from its connectivity, read a window at a time (walkMixed). Its
// errors are Read's.
func Scan(path string) (*Layout, error) { return ScanOn(collective.Single{}, path) }

// ScanOn is Scan for the ranks of c, together: only rank 0 walks the
// MIXED sections' connectivity and sends the others their counts and
// marks, so that the file's MIXED sections are read once, not once per
// rank. Every rank reads the headers and gets the same error, naming
// the ranks that failed (collective.AgreeStep).
func ScanOn(c collective.Comm, path string) (*Layout, error) {
	l, err := scan(path, c.Rank() == 0)
	if err := collective.AgreeStep(c, "cgns: scan "+path, err); err != nil {
		return nil, err // one process: scan's own error
	}
	if c.Size() > 1 {
		var mine []int64
		if c.Rank() == 0 {
			mine = l.mixedCounts()
		}
		got, err := collective.Allgather(c, collective.Int64Bytes(mine))
		if err != nil {
			return nil, err
		}
		if c.Rank() != 0 {
			l.setMixedCounts(collective.BytesInt64(got[0]))
		}
	}
	l.countKinds()
	return l, nil
}

// scan reads the layout of the file at path, walking its MIXED sections'
// connectivity (their counts and marks) only when walk is set;
// countKinds then fills the counts that depend on them.
func scan(path string, walk bool) (*Layout, error) {
	r, err := openReader(path)
	if err != nil {
		return nil, err
	}
	defer r.f.Close()
	zp, pdim, err := r.header()
	if err != nil {
		return nil, err
	}
	if _, err := r.coordList(zp, pdim); err != nil {
		return nil, err
	}
	l := &Layout{path: path, zp: zp, pdim: pdim,
		Part: &gmsh.Part{NumNodes: r.nv, DenseTags: true, Counts: map[gmsh.Type]int64{}, Unique: map[gmsh.Type]int64{}}}
	err = r.eachSection(zp, func(s int, sec cg.Section, sp string, n int64) error {
		size, err := r.f.ElementDataSize(1, 1, s)
		if err != nil {
			return r.call(sp, err)
		}
		if err := r.fits(sp, "connectivity", size); err != nil {
			return err
		}
		ps := partSection{s: s, name: sec.Name, path: sp, typ: sec.Type, start: sec.Start, end: sec.End, size: size, count: map[gmsh.Type]int64{}}
		if sec.Type == mixed {
			if size < 2*n {
				return r.errorf(sp, "MIXED section of %d elements has %d connectivity values, fewer than %d", n, size, 2*n)
			}
			if !walk {
				l.secs = append(l.secs, ps)
				return nil
			}
			err := r.walkMixed(&ps, mixedMark{}, func(i, at int64, k gmsh.Type, _ []int64) error {
				if at >= window*int64(len(ps.marks)+1) {
					ps.marks = append(ps.marks, mixedMark{elem: i, value: at, seen: maps.Clone(ps.count)})
				}
				ps.count[k]++
				return nil
			})
			if err != nil {
				return err
			}
			l.walked += size
		} else {
			k, ok := kinds[sec.Type]
			if !ok {
				return r.errorf(sp, "%s", unsupported(sec.Type))
			}
			if npe := int64(k.NumNodes()); size != n*npe {
				return r.errorf(sp, "%d %s elements have %d connectivity values, want %d", n, cg.TypeName(sec.Type), size, n*npe)
			}
			ps.count[k] = n
		}
		l.secs = append(l.secs, ps)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(l.secs, func(a, b partSection) int { return cmp.Compare(a.start, b.start) })
	return l, nil
}

// countKinds sets each section's elements of each kind before it and
// the Part's counts, from the sections' counts.
func (l *Layout) countKinds() {
	for i := range l.secs {
		ps := &l.secs[i]
		ps.before = map[gmsh.Type]int64{}
		for k, n := range ps.count {
			ps.before[k] = l.Part.Counts[k]
			l.Part.Counts[k] += n
			l.Part.Unique[k] += n
			l.Part.Dim = max(l.Part.Dim, k.Dim())
		}
	}
}

// mixedCounts encodes the MIXED sections' counts and marks, in the order
// of l.secs: per section, its kinds (kind, count), then its marks
// (element, value, kinds seen, (kind, count) each).
func (l *Layout) mixedCounts() []int64 {
	var out []int64
	put := func(m map[gmsh.Type]int64) {
		out = append(out, int64(len(m)))
		for k, n := range m {
			out = append(out, int64(k), n)
		}
	}
	for _, ps := range l.secs {
		if ps.typ != mixed {
			continue
		}
		put(ps.count)
		out = append(out, int64(len(ps.marks)))
		for _, m := range ps.marks {
			out = append(out, m.elem, m.value)
			put(m.seen)
		}
	}
	return out
}

// setMixedCounts sets the MIXED sections' counts and marks from what
// mixedCounts encoded on another rank that read the same file.
func (l *Layout) setMixedCounts(v []int64) {
	get := func() map[gmsh.Type]int64 {
		n := int(v[0])
		m := make(map[gmsh.Type]int64, n)
		for j := range n {
			m[gmsh.Type(v[1+2*j])] = v[2+2*j]
		}
		v = v[1+2*n:]
		return m
	}
	for i := range l.secs {
		ps := &l.secs[i]
		if ps.typ != mixed {
			continue
		}
		ps.count = get()
		ps.marks = nil
		if n := v[0]; n > 0 {
			ps.marks = make([]mixedMark, n)
		}
		v = v[1:]
		for j := range ps.marks {
			ps.marks[j].elem, ps.marks[j].value = v[0], v[1]
			v = v[2:]
			ps.marks[j].seen = get()
		}
	}
}

// window is the most connectivity values of a MIXED section read at once.
var window int64 = 1 << 16

// walkMixed reads MIXED section ps's connectivity a window at a time,
// from mark from (the zero mark: the start), and calls each for every
// element (its index in the section, from 0; the offset of its first
// value, from 0; its kind; its nodes as the file numbers them, valid
// during the call), with r.mixed's checks: CGNS 3.4 writes wrong offsets
// for MIXED sections, so that no part of one can be read through the
// library's partial reads; the connectivity array is read in blocks
// through its cgio layer instead. each returning errStop ends the walk
// without an error.
func (r *reader) walkMixed(ps *partSection, from mixedMark, each func(i, at int64, k gmsh.Type, nodes []int64) error) error {
	n, size := ps.end-ps.start+1, ps.size
	a, err := r.f.IntArray(ps.path + "/ElementConnectivity")
	if err != nil {
		return r.call(ps.path, err)
	}
	if a.Len != size {
		return r.errorf(ps.path, "connectivity of %d values, the section's size says %d", a.Len, size)
	}
	var buf []int64
	next := from.value + 1 // the next value to read, from 1
	// fill reads the next window after what buf holds; false at the end.
	fill := func() (bool, error) {
		if next > size {
			return false, nil
		}
		hi := min(size, next+window-1)
		v, err := a.ReadBlock(next, hi)
		if err != nil {
			return false, r.call(ps.path, err)
		}
		buf = append(slices.Clone(buf), v...)
		next = hi + 1
		return true, nil
	}
	used := from.value // values before buf[0]
	for i := from.elem; i < n; i++ {
		if len(buf) == 0 {
			if ok, err := fill(); err != nil {
				return err
			} else if !ok {
				return r.errorf(ps.path, "element %d of %d: the %d connectivity values end before it", i+1, n, size)
			}
		}
		k, ok := kinds[int(buf[0])]
		if !ok {
			return r.errorf(ps.path, "element %d of the section: %s", i+1, unsupported(int(buf[0])))
		}
		nn := k.NumNodes()
		for len(buf) < 1+nn {
			if ok, err := fill(); err != nil {
				return err
			} else if !ok {
				if i == n-1 {
					return r.errorf(ps.path, "%d elements take %d connectivity values, the section has %d", n, used+1+int64(nn), size)
				}
				return r.errorf(ps.path, "element %d of %d: the %d connectivity values end before it", i+2, n, size)
			}
		}
		if err := each(i, used, k, buf[1:1+nn]); err == errStop {
			return nil
		} else if err != nil {
			return err
		}
		buf, used = buf[1+nn:], used+1+int64(nn)
	}
	if used != size {
		return r.errorf(ps.path, "%d elements take %d connectivity values, the section has %d", n, used, size)
	}
	return nil
}

// ReadPart reads what keep selects of the file Scan read, as
// gmsh.ReadFilePart does of a Gmsh file: the vertices in keep.Nodes and
// the elements of each kind t whose index among the file's elements of
// that kind (by element number, as Read's blocks hold them) is in
// keep.Elements[t], with the 1-based vertex numbers as node tags and the
// element numbers as Tags. Vertices and sections of one kind are read in
// part (cg_coord_read with a range, cg_elements_partial_read); a MIXED
// section a window at a time (walkMixed), keeping its part.
//
// The groups are Read's, over all the ranks of c, when the ranks' keeps
// together select every element once (as gmsh.Keep's blocks do): each
// rank reads its block of every boundary condition's list (through
// cgio) and sends it where it is needed (route), and the ranks agree on
// which groups hold elements, and of what dimension, so that
// Part.Physical is the list Read makes, on every rank. Part.Entities are
// the rank's own: one per distinct set of groups of its elements. It is
// collective, and its error is every rank's.
func (l *Layout) ReadPart(c collective.Comm, keep gmsh.Keep) (*gmsh.Part, error) {
	part, g, err := l.readLocal(keep, c.Rank(), c.Size())
	if err := collective.AgreeStep(c, "cgns: read the part", err); err != nil {
		return nil, err
	}
	if err := l.route(c, part, g, keep); err != nil {
		return nil, err
	}
	g.finish(l, part)
	// One count per boundary condition and dimension, then per section
	// the elements that keep it from being a group of its own.
	nb := len(g.bcs)
	v := make([]int64, 4*nb+len(l.secs)+1)
	for b, bc := range g.bcs {
		for d := range 4 {
			v[4*b+d] = bc.dims[d]
		}
	}
	for i, bad := range g.secBad {
		v[4*nb+i] = bad
	}
	v[len(v)-1] = g.cells
	sum, err := collective.SumInt64(c, v)
	if err != nil {
		return nil, err
	}
	err = l.assign(part, g, sum)
	if err := collective.AgreeStep(c, "cgns: read the groups", err); err != nil {
		return nil, err
	}
	return part, nil
}

// partBC is one boundary condition as a rank sees it.
type partBC struct {
	name, fam string
	dims      [4]int64 // its elements on the rank, by dimension
	// members are its elements on the rank.
	members []elemRef
	// list is the rank's block of its list (listed) of elements or
	// vertices (of vertex, at Vertex), which route sends where it is
	// needed.
	list           []int64
	listed, vertex bool
}

// partGroups is what a rank finds of the groups of its elements.
type partGroups struct {
	zfam   string
	cells  int64 // the rank's elements of the cells' dimension
	bcs    []partBC
	inBC   map[elemRef]bool
	secBad []int64 // per section (Layout.secs): its elements on the rank that are no boundary patch
}

// readLocal reads the rank's nodes and elements, and what its boundary
// conditions say of them.
func (l *Layout) readLocal(keep gmsh.Keep, rank, ranks int) (*gmsh.Part, *partGroups, error) {
	r, err := openReader(l.path)
	if err != nil {
		return nil, nil, err
	}
	defer r.f.Close()
	if _, _, err := r.header(); err != nil {
		return nil, nil, err
	}
	p := l.Part
	if r.nv != p.NumNodes {
		return nil, nil, r.errorf(l.zp, "%d vertices, %d when scanned: the file changed", r.nv, p.NumNodes)
	}
	part := &gmsh.Part{Dim: p.Dim, NumNodes: p.NumNodes, DenseTags: true, Counts: p.Counts, Unique: p.Unique}
	if err := l.readNodes(r, part, keep.Nodes); err != nil {
		return nil, nil, err
	}
	if err := l.readElements(r, part, keep); err != nil {
		return nil, nil, err
	}
	g, err := l.readGroups(r, part, rank, ranks)
	if err != nil {
		return nil, nil, err
	}
	return part, g, nil
}

// clip returns r clipped to [0, n).
func clip(r gmsh.Range, n int64) (lo, hi int64) {
	lo = min(max(r.Start, 0), n)
	hi = min(max(r.Start+max(r.Count, 0), lo), n)
	return lo, hi
}

// readNodes reads the vertices in want.
func (l *Layout) readNodes(r *reader, part *gmsh.Part, want gmsh.Range) error {
	lo, hi := clip(want, part.NumNodes)
	part.FirstNode = lo
	if lo == hi {
		return nil
	}
	gp := l.zp + "/GridCoordinates"
	names, err := r.coordList(l.zp, l.pdim)
	if err != nil {
		return err
	}
	part.X = make([]float64, 3*(hi-lo))
	for k, n := range names {
		v, err := r.f.CoordRange(1, 1, n, lo+1, hi)
		if err != nil {
			return r.call(gp+"/"+n, err)
		}
		for i, xi := range v {
			part.X[3*i+k] = xi
		}
	}
	part.NodeTags = make([]int64, hi-lo)
	for i := range part.NodeTags {
		part.NodeTags[i] = lo + int64(i) + 1
	}
	return nil
}

// chunk is the most elements of a section read at once.
var chunk int64 = 1 << 16

// readElements reads the elements keep selects, section after section.
func (l *Layout) readElements(r *reader, part *gmsh.Part, keep gmsh.Keep) error {
	blocks := map[gmsh.Type]*gmsh.PartBlock{}
	span := map[gmsh.Type][2]int64{}
	for k, n := range part.Counts {
		lo, hi := clip(keep.Elements[k], n)
		if lo < hi {
			span[k] = [2]int64{lo, hi}
			blocks[k] = &gmsh.PartBlock{Type: k, First: lo,
				Nodes: make([]int64, 0, (hi-lo)*int64(k.NumNodes())), Tags: make([]int64, 0, hi-lo)}
		}
	}
	add := func(sp string, k gmsh.Type, id int64, nodes []int64) error {
		b := blocks[k]
		for j, v := range nodes {
			if v < 1 || v > r.nv {
				return r.errorf(sp, "element %d (%v): node %d is %d, outside [1, %d]", id, k, j, v, r.nv)
			}
		}
		b.Nodes = append(b.Nodes, nodes...)
		b.Tags = append(b.Tags, id)
		return nil
	}
	for _, ps := range l.secs {
		if ps.typ == mixed {
			need := false
			for k, n := range ps.count {
				s, ok := span[k]
				need = need || ok && s[0] < ps.before[k]+n && ps.before[k] < s[1]
			}
			if !need {
				continue
			}
			// The rank's elements of each kind in the section, [lo, hi)
			// in the kind's numbering; the walk goes from the last mark
			// before the first of them to the last.
			want := map[gmsh.Type][2]int64{}
			for k, n := range ps.count {
				if s, ok := span[k]; ok {
					if lo, hi := max(s[0], ps.before[k]), min(s[1], ps.before[k]+n); lo < hi {
						want[k] = [2]int64{lo, hi}
					}
				}
			}
			from := mixedMark{}
			for _, m := range ps.marks {
				before := true
				for k, w := range want {
					before = before && ps.before[k]+m.seen[k] <= w[0]
				}
				if !before {
					break
				}
				from = m
			}
			at := map[gmsh.Type]int64{}
			for k := range ps.count {
				at[k] = ps.before[k] + from.seen[k]
			}
			done := func() bool {
				for k, w := range want {
					if at[k] < w[1] {
						return false
					}
				}
				return true
			}
			err := r.walkMixed(&ps, from, func(i, _ int64, k gmsh.Type, nodes []int64) error {
				defer func() { at[k]++ }()
				if s, ok := span[k]; ok && at[k] >= s[0] && at[k] < s[1] {
					return add(ps.path, k, ps.start+i, nodes)
				}
				if done() {
					return errStop
				}
				return nil
			})
			if err != nil {
				return err
			}
			continue
		}
		k := kinds[ps.typ]
		s, ok := span[k]
		if !ok {
			continue
		}
		lo, hi := max(s[0], ps.before[k]), min(s[1], ps.before[k]+ps.count[k])
		npe := int64(k.NumNodes())
		for a := lo; a < hi; a += chunk {
			b := min(hi, a+chunk)
			first := ps.start + a - ps.before[k]
			conn, err := r.f.ElementsPartial(1, 1, ps.s, first, first+b-a-1, (b-a)*npe)
			if err != nil {
				return r.call(ps.path, err)
			}
			for i := range b - a {
				if err := add(ps.path, k, first+i, conn[i*npe:(i+1)*npe]); err != nil {
					return err
				}
			}
		}
	}
	for _, b := range blocks {
		b.Physical = make([]int32, b.Len())
		b.Entity = make([]int32, b.Len())
		part.Blocks = append(part.Blocks, *b)
	}
	slices.SortFunc(part.Blocks, func(a, b gmsh.PartBlock) int {
		return cmp.Or(cmp.Compare(a.Type.Dim(), b.Type.Dim()), cmp.Compare(a.Type, b.Type))
	})
	return nil
}

// findPart returns the rank's element numbered id, if it has it.
func findPart(part *gmsh.Part, id int64) (elemRef, bool) {
	for k := range part.Blocks {
		tags := part.Blocks[k].Tags
		if i, ok := slices.BinarySearch(tags, id); ok {
			return elemRef{k, i}, true
		}
	}
	return elemRef{}, false
}

// holds reports whether a section holds element id.
func (l *Layout) holds(id int64) bool {
	i, _ := slices.BinarySearchFunc(l.secs, id, func(s partSection, id int64) int {
		return cmp.Compare(s.end, id)
	})
	return i < len(l.secs) && l.secs[i].start <= id
}

// readGroups reads the zone's family and the boundary conditions, and
// what they say of the rank's elements, with Read's checks.
func (l *Layout) readGroups(r *reader, part *gmsh.Part, rank, ranks int) (*partGroups, error) {
	g := &partGroups{inBC: map[elemRef]bool{}, secBad: make([]int64, len(l.secs))}
	var err error
	if g.zfam, _, err = r.f.FamName(1, 1, cg.OfZone, 0); err != nil {
		return nil, r.call(l.zp, err)
	}
	for k := range part.Blocks {
		if part.Blocks[k].Type.Dim() == part.Dim {
			g.cells += int64(part.Blocks[k].Len())
		}
	}
	nbc, err := r.f.NBocos(1, 1)
	if err != nil {
		return nil, r.call(l.zp+"/ZoneBC", err)
	}
	for bc := 1; bc <= nbc; bc++ {
		b, err := r.bocoRead(l.zp, bc, false)
		if err != nil {
			return nil, err
		}
		pb := partBC{name: b.b.Name, fam: b.fam, vertex: b.vertex, listed: !b.isRange}
		if !b.isRange {
			if pb.list, err = l.listBlock(r, part, b, rank, ranks); err != nil {
				return nil, err
			}
		} else if b.vertex {
			if pb.members, err = l.vertexFacets(r, part, b); err != nil {
				return nil, err
			}
		} else {
			// An element range: the first element no section holds, then
			// the rank's.
			for id := b.pts[0]; id <= b.pts[1]; {
				i, _ := slices.BinarySearchFunc(l.secs, id, func(s partSection, id int64) int { return cmp.Compare(s.end, id) })
				if i == len(l.secs) || l.secs[i].start > id {
					return nil, r.errorf(b.bp, "element %d: no section holds it", id)
				}
				id = l.secs[i].end + 1
			}
			for k := range part.Blocks {
				tags := part.Blocks[k].Tags
				i, _ := slices.BinarySearch(tags, b.pts[0])
				for ; i < len(tags) && tags[i] <= b.pts[1]; i++ {
					pb.members = append(pb.members, elemRef{k, i})
				}
			}
		}
		g.bcs = append(g.bcs, pb)
	}
	return g, nil
}

// finish counts the rank's elements of each boundary condition by
// dimension, and those of each section that are not facets in no
// boundary condition (which keep a section from being a group).
func (g *partGroups) finish(l *Layout, part *gmsh.Part) {
	for i := range g.bcs {
		pb := &g.bcs[i]
		for _, e := range pb.members {
			pb.dims[part.Blocks[e.block].Type.Dim()]++
			g.inBC[e] = true
		}
	}
	for i, ps := range l.secs {
		for k := range part.Blocks {
			b := &part.Blocks[k]
			lo, _ := slices.BinarySearch(b.Tags, ps.start)
			hi, _ := slices.BinarySearch(b.Tags, ps.end+1)
			for j := lo; j < hi; j++ {
				if b.Type.Dim() != part.Dim-1 || g.inBC[elemRef{k, j}] {
					g.secBad[i]++
				}
			}
		}
	}
}

// listBlock reads the rank's block of the list of boundary condition b
// (its PointList, through cgio) and checks it as Read does: vertices in
// the zone, elements that a section holds.
func (l *Layout) listBlock(r *reader, part *gmsh.Part, b *bocoList, rank, ranks int) ([]int64, error) {
	if b.vertex {
		if err := l.facetsFor(r, part, b); err != nil {
			return nil, err
		}
	}
	var a *cg.IntArray
	var err error
	for _, name := range []string{"PointList", "ElementList"} {
		if a, err = r.f.IntArray(b.bp + "/" + name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, r.call(b.bp, err)
	}
	if a.Len != b.b.NPoints {
		return nil, r.errorf(b.bp, "a list of %d values, the boundary condition says %d", a.Len, b.b.NPoints)
	}
	s, n := collective.Block(int(a.Len), rank, ranks)
	if n == 0 {
		return nil, nil
	}
	pts, err := a.ReadBlock(int64(s)+1, int64(s+n))
	if err != nil {
		return nil, r.call(b.bp, err)
	}
	for _, v := range pts {
		switch {
		case b.vertex && (v < 1 || v > r.nv):
			return nil, r.errorf(b.bp, "vertex %d outside [1, %d]", v, r.nv)
		case !b.vertex && !l.holds(v):
			return nil, r.errorf(b.bp, "element %d: no section holds it", v)
		}
	}
	return pts, nil
}

// facetsFor refuses a Vertex boundary condition in a zone without
// elements one dimension below the cells.
func (l *Layout) facetsFor(r *reader, part *gmsh.Part, b *bocoList) error {
	for k, n := range part.Counts {
		if k.Dim() == part.Dim-1 && n > 0 {
			return nil
		}
	}
	return r.errorf(b.bp, "a boundary condition at Vertex, but the zone has no elements of dimension %d to hold it: not supported (give its faces as elements, or the BC at FaceCenter)", part.Dim-1)
}

// route sends the ranks' blocks of the boundary conditions' lists where
// they are needed, and adds to each condition's members the rank's
// elements it lists: an element goes to the rank whose keep holds it (an
// element of a MIXED section, whose kind only its section's connectivity
// tells, to the ranks holding elements of its window: windowRanks); a
// vertex to the rank whose block of the vertices holds it, which then
// tells each rank, for the nodes of its facets, the conditions listing
// them, so that a facet whose nodes all lie in a condition's points is in
// it. It is collective.
func (l *Layout) route(c collective.Comm, part *gmsh.Part, g *partGroups, keep gmsh.Keep) error {
	// Which lists there are is the file's, the same on every rank.
	lists, vertices := false, false
	for _, pb := range g.bcs {
		lists = lists || pb.listed && !pb.vertex
		vertices = vertices || pb.listed && pb.vertex
	}
	if !lists && !vertices {
		return nil
	}
	ranks := c.Size()
	// Every rank's keep, kind by kind in the order of types.
	types := make([]gmsh.Type, 0, len(l.Part.Counts))
	for k := range l.Part.Counts {
		types = append(types, k)
	}
	slices.Sort(types)
	mine := make([]int64, 0, 2*len(types))
	for _, k := range types {
		lo, hi := clip(keep.Elements[k], l.Part.Counts[k])
		mine = append(mine, lo, hi)
	}
	got, err := collective.Allgather(c, collective.Int64Bytes(mine))
	if err != nil {
		return err
	}
	spans := make([][]int64, ranks)
	for q, b := range got {
		spans[q] = collective.BytesInt64(b)
	}
	owner := func(k gmsh.Type, idx int64) int {
		t, _ := slices.BinarySearch(types, k)
		for q := range ranks {
			if meets(spans[q], t, idx, idx+1) {
				return q
			}
		}
		return -1
	}
	windows := map[[2]int64][]int{} // windowRanks' answers, by section start and window
	holders := func(k gmsh.Type, lo, hi int64) []int {
		t, _ := slices.BinarySearch(types, k)
		return overlapping(spans, t, lo, hi)
	}
	// (what, condition, value): what 0 an element, 1 a vertex.
	send := make([][]int64, ranks)
	for b, pb := range g.bcs {
		for _, v := range pb.list {
			if pb.vertex {
				q := collective.BlockHome(int(l.Part.NumNodes), ranks, int(v-1))
				send[q] = append(send[q], 1, int64(b), v)
				continue
			}
			i, _ := slices.BinarySearchFunc(l.secs, v, func(s partSection, id int64) int { return cmp.Compare(s.end, id) })
			ps := l.secs[i]
			if ps.typ == mixed {
				for _, q := range windowRanks(&ps, v-ps.start, holders, windows) {
					send[q] = append(send[q], 0, int64(b), v)
				}
				continue
			}
			k := kinds[ps.typ]
			if q := owner(k, ps.before[k]+v-ps.start); q >= 0 {
				send[q] = append(send[q], 0, int64(b), v)
			}
		}
	}
	recv, err := collective.AlltoallInt64(c, send)
	if err != nil {
		return err
	}
	type pair struct{ node, bc int64 }
	var held []pair // the conditions listing the vertices of the rank's block
	for _, msg := range recv {
		for j := 0; j+2 < len(msg); j += 3 {
			b, v := int(msg[j+1]), msg[j+2]
			if msg[j] == 1 {
				held = append(held, pair{v, int64(b)})
			} else if e, ok := findPart(part, v); ok {
				g.bcs[b].members = append(g.bcs[b].members, e)
			}
		}
	}
	if !vertices {
		return nil
	}
	slices.SortFunc(held, func(a, b pair) int { return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.bc, b.bc)) })
	held = slices.Compact(held)
	// The nodes of the rank's facets, asked of their homes.
	var nodes []int64
	for k := range part.Blocks {
		if part.Blocks[k].Type.Dim() == part.Dim-1 {
			nodes = append(nodes, part.Blocks[k].Nodes...)
		}
	}
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	ask := make([][]int64, ranks)
	for _, v := range nodes {
		q := collective.BlockHome(int(l.Part.NumNodes), ranks, int(v-1))
		ask[q] = append(ask[q], v)
	}
	asked, err := collective.AlltoallInt64(c, ask)
	if err != nil {
		return err
	}
	answer := make([][]int64, ranks)
	for q, msg := range asked {
		for _, v := range msg {
			i, _ := slices.BinarySearchFunc(held, v, func(p pair, v int64) int { return cmp.Compare(p.node, v) })
			j := i
			for j < len(held) && held[j].node == v {
				j++
			}
			answer[q] = append(answer[q], int64(j-i))
			for _, p := range held[i:j] {
				answer[q] = append(answer[q], p.bc)
			}
		}
	}
	replies, err := collective.AlltoallInt64(c, answer)
	if err != nil {
		return err
	}
	in := make(map[int64][]int64, len(nodes)) // node → the conditions listing it
	next := make([]int, ranks)
	for _, v := range nodes {
		q := collective.BlockHome(int(l.Part.NumNodes), ranks, int(v-1))
		msg := replies[q]
		n := int(msg[next[q]])
		if n > 0 {
			in[v] = msg[next[q]+1 : next[q]+1+n]
		}
		next[q] += 1 + n
	}
	for k := range part.Blocks {
		pb := &part.Blocks[k]
		if pb.Type.Dim() != part.Dim-1 {
			continue
		}
		nn := pb.Type.NumNodes()
		for i := range pb.Len() {
			row := pb.Nodes[nn*i : nn*i+nn]
			for _, b := range in[row[0]] {
				all := true
				for _, v := range row[1:] {
					all = all && slices.Contains(in[v], b)
				}
				if all {
					g.bcs[b].members = append(g.bcs[b].members, elemRef{k, i})
				}
			}
		}
	}
	return nil
}

// windowRanks returns the ranks that may hold element i (from 0) of
// MIXED section ps: its kind is known only to a walk of the section's
// connectivity, but Scan's marks bound it to the window between two
// marks, and so its number among the elements of its kind to the range
// of those of each kind in the window. holders(k, lo, hi) gives the ranks
// holding some of elements [lo, hi) of kind k; a rank is listed once.
// The answer is kept in cache by section and window. Every rank held
// such an element before (route sent it to all): now at most the two or
// so ranks per kind whose parts meet the window.
func windowRanks(ps *partSection, i int64, holders func(k gmsh.Type, lo, hi int64) []int, cache map[[2]int64][]int) []int {
	w := sort.Search(len(ps.marks), func(j int) bool { return ps.marks[j].elem > i })
	key := [2]int64{ps.start, int64(w)}
	if qs, ok := cache[key]; ok {
		return qs
	}
	var from map[gmsh.Type]int64 // the zero mark's: none seen
	if w > 0 {
		from = ps.marks[w-1].seen
	}
	to := ps.count
	if w < len(ps.marks) {
		to = ps.marks[w].seen
	}
	var qs []int
	for k, n := range to {
		if lo := from[k]; lo < n {
			for _, q := range holders(k, ps.before[k]+lo, ps.before[k]+n) {
				if !slices.Contains(qs, q) {
					qs = append(qs, q)
				}
			}
		}
	}
	slices.Sort(qs)
	cache[key] = qs
	return qs
}

// overlapping returns the ranks whose span of kind t's elements meets
// [lo, hi).
func overlapping(spans [][]int64, t int, lo, hi int64) []int {
	var qs []int
	for q, sp := range spans {
		if meets(sp, t, lo, hi) {
			qs = append(qs, q)
		}
	}
	return qs
}

// meets reports whether a rank's span of kind t's elements (sp holds
// each kind's [lo, hi) in turn) meets [lo, hi).
func meets(sp []int64, t int, lo, hi int64) bool {
	return len(sp) > 2*t+1 && sp[2*t] < hi && lo < sp[2*t+1]
}

// vertexFacets returns the rank's elements one dimension below the cells
// whose nodes all lie in the vertex range of a Vertex boundary condition
// (route does a list's).
func (l *Layout) vertexFacets(r *reader, part *gmsh.Part, b *bocoList) ([]elemRef, error) {
	lo, hi := b.pts[0], b.pts[1]
	switch {
	case lo > hi:
		return nil, r.errorf(b.bp, "vertex range [%d, %d] is empty", lo, hi)
	case lo < 1:
		return nil, r.errorf(b.bp, "vertex %d outside [1, %d]", lo, r.nv)
	case hi > r.nv:
		return nil, r.errorf(b.bp, "vertex %d outside [1, %d]", r.nv+1, r.nv)
	}
	if err := l.facetsFor(r, part, b); err != nil {
		return nil, err
	}
	var out []elemRef
	for k := range part.Blocks {
		pb := &part.Blocks[k]
		if pb.Type.Dim() != part.Dim-1 {
			continue
		}
		nn := pb.Type.NumNodes()
		for i := range pb.Len() {
			all := true
			for _, v := range pb.Nodes[nn*i : nn*i+nn] {
				all = all && v >= lo && v <= hi
			}
			if all {
				out = append(out, elemRef{k, i})
			}
		}
	}
	return out, nil
}

// assign makes the groups from the ranks' sums (ReadPart's vector), in
// Read's order, and gives the rank's elements theirs.
func (l *Layout) assign(part *gmsh.Part, g *partGroups, sum []int64) error {
	var groups []gmsh.PhysicalGroup
	byKey := map[string]int32{}
	group := func(dim int, name string) int32 {
		key := strconv.Itoa(dim) + "/" + name
		if t, ok := byKey[key]; ok {
			return t
		}
		t := int32(len(groups) + 1)
		groups = append(groups, gmsh.PhysicalGroup{Dim: dim, Tag: t, Name: name})
		byKey[key] = t
		return t
	}
	member := map[elemRef][]int32{}
	add := func(e elemRef, t int32) {
		if !slices.Contains(member[e], t) {
			member[e] = append(member[e], t)
		}
	}
	if g.zfam != "" && sum[len(sum)-1] > 0 {
		t := group(part.Dim, g.zfam)
		for k := range part.Blocks {
			if part.Blocks[k].Type.Dim() == part.Dim {
				for i := range part.Blocks[k].Len() {
					add(elemRef{k, i}, t)
				}
			}
		}
	}
	nb := len(g.bcs)
	for b, bc := range g.bcs {
		dim := -1
		for d := range 4 {
			if sum[4*b+d] == 0 {
				continue
			}
			if dim >= 0 {
				return fmt.Errorf("cgns: %s: %s/ZoneBC/%s: elements of dimensions %d and %d: a group holds elements of one dimension", l.path, l.zp, bc.name, dim, d)
			}
			dim = d
		}
		if dim < 0 && bc.vertex {
			group(0, bc.name) // as Read: points that hold no face element
			continue
		}
		if dim < 0 {
			continue
		}
		t := group(dim, bc.name)
		var tf int32
		if bc.fam != "" {
			tf = group(dim, bc.fam)
		}
		for _, e := range bc.members {
			add(e, t)
			if bc.fam != "" {
				add(e, tf)
			}
		}
	}
	// Sections in the file's order, as Read makes their groups.
	order := make([]int, len(l.secs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(l.secs[a].s, l.secs[b].s) })
	for _, i := range order {
		ps := l.secs[i]
		if sum[4*nb+i] > 0 {
			continue
		}
		t := group(part.Dim-1, ps.name)
		for k := range part.Blocks {
			b := &part.Blocks[k]
			lo, _ := slices.BinarySearch(b.Tags, ps.start)
			hi, _ := slices.BinarySearch(b.Tags, ps.end+1)
			for j := lo; j < hi; j++ {
				add(elemRef{k, j}, t)
			}
		}
	}
	// The rank's entities: one per distinct set of groups.
	setEntities(member, &part.Entities, func(k int) int { return part.Blocks[k].Type.Dim() }, func(e elemRef, ent, phys int32) {
		part.Blocks[e.block].Entity[e.i], part.Blocks[e.block].Physical[e.i] = ent, phys
	})
	part.Physical = groups
	return nil
}
