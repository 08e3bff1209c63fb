package unstructured

import (
	"fmt"
	"math"
	"slices"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/facets"
	"github.com/goop2/op2/mesh/gmsh"
)

// blockFile is a mesh file that readBlock reads by blocks.
type blockFile interface {
	// scan returns the file's counts, keeping no node and no element
	// (gmsh.ScanFile's); its error is the file's, the same on every rank.
	// It is collective.
	scan(c collective.Comm) (*gmsh.Part, error)
	// read returns what keep selects of the file (gmsh.ReadFilePart's),
	// with its physical groups and entities. It is collective; agreed
	// reports whether its error is every rank's already.
	read(c collective.Comm, keep gmsh.Keep) (*gmsh.Part, error)
	agreed() bool
}

// gmshFile is a Gmsh .msh file read by blocks.
type gmshFile string

func (f gmshFile) scan(collective.Comm) (*gmsh.Part, error) { return gmsh.ScanFile(string(f)) }
func (f gmshFile) read(_ collective.Comm, keep gmsh.Keep) (*gmsh.Part, error) {
	return gmsh.ReadFilePart(string(f), keep)
}
func (gmshFile) agreed() bool { return false }

// readGmshBlock reads this rank's blocks of the Gmsh file at path, as
// fromGmsh takes them from the whole mesh, without any rank holding more
// than its blocks: every rank streams the file twice (gmsh.ScanFile to
// count, gmsh.ReadFilePart to keep its block of the nodes, of the cells
// and of each type of other element); readBlock does the rest. A 2.2
// file's element written once per group is counted once where its copies
// follow one another, as Gmsh writes them (fromGmsh finds copies anywhere
// in the file). It is collective, and its error is every rank's.
func readGmshBlock(c collective.Comm, path string) (*source, error) {
	return readBlock(c, path, gmshFile(path))
}

// readBlock reads this rank's blocks of the mesh file at path, as
// fromGmsh takes them from the whole mesh, without any rank holding more
// than its blocks: f counts the file, then reads the rank's block of the
// nodes, of the cells and of each type of other element; the node tags of
// the elements become indices (tag−1 where the file's tags are 1..N, as
// Gmsh writes them; else through a directory of the tags spread over the
// ranks), and the coordinates a rank's cells need from other blocks, to
// orient them, come from the ranks holding them. It is collective, and
// its error is every rank's.
func readBlock(c collective.Comm, path string, f blockFile) (*source, error) {
	rank, ranks := c.Rank(), c.Size()
	step := func(what string, err error) error {
		if err != nil {
			err = fmt.Errorf("unstructured: %w", err)
		}
		return collective.AgreeStep(c, "unstructured: read the mesh: "+what, err)
	}
	scan, err := f.scan(c)
	var pl *gmshPlan
	if err == nil {
		if pl, err = planGmsh(scan); err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := step("scan", err); err != nil {
		return nil, err
	}
	part, err := f.read(c, pl.keep(scan, rank, ranks))
	switch {
	case f.agreed() && err != nil:
		return nil, fmt.Errorf("unstructured: %w", err)
	case !f.agreed():
		if err := step("read", err); err != nil {
			return nil, err
		}
	}
	// Every element kept, its node tags made indices: a tag that is not a
	// node's is an error, as gmsh.ReadFile says.
	var tags []int64
	for _, b := range part.Blocks {
		tags = append(tags, b.Nodes...)
	}
	slices.Sort(tags)
	tags = slices.Compact(tags)
	index, err := nodeIndices(c, path, part, tags)
	if err != nil {
		return nil, err
	}
	resolve := func(b *gmsh.PartBlock) ([]int32, error) {
		out := make([]int32, len(b.Nodes))
		nn := b.Type.NumNodes()
		for i, tag := range b.Nodes {
			k, _ := slices.BinarySearch(tags, tag)
			if out[i] = index[k]; out[i] < 0 {
				return nil, fmt.Errorf("gmsh: %s: $Elements: %v %d: node tag %d is not in $Nodes", path, b.Type, b.Tags[i/nn], tag)
			}
		}
		return out, nil
	}
	blocks := map[gmsh.Type][]int32{}
	for i := range part.Blocks {
		b := &part.Blocks[i]
		var nodes []int32
		if nodes, err = resolve(b); err != nil {
			break
		}
		blocks[b.Type], b.Nodes = nodes, nil
	}
	if err := step("node tags", err); err != nil {
		return nil, err
	}

	s := &source{dim: pl.kinds[0].kind.Dim(), nodes: int(scan.NumNodes), cells: int(pl.cells), groups: part.Physical, cellTagDim: 1, kinds: pl.kinds}
	if len(pl.kinds) == 1 {
		s.kind = pl.kinds[0].kind
	}
	dim := s.dim
	phys := partPhysical(part)
	start, _ := collective.Block(s.cells, rank, ranks)
	s.firstCell = start
	// The rank's cells, kind after kind: seg[i] of kind i, the first of
	// them its first[i]-th.
	var cellNodes []int32
	var cellTags []int64
	var cellGroups [][]int32
	seg, first := make([]int, len(pl.kinds)), make([]int, len(pl.kinds))
	for i, t := range pl.cellTypes {
		nn := t.NumNodes()
		for _, b := range part.Blocks {
			if b.Type != t {
				continue
			}
			first[i] = int(b.First)
			nodes := blocks[b.Type]
			for j := range b.Len() {
				p := phys(b.Type, b.Entity[j], b.Physical[j])
				if b.Repeat != nil && b.Repeat[j] && seg[i] > 0 {
					last := len(cellGroups) - 1
					cellGroups[last] = append(cellGroups[last], p...)
					continue
				}
				cellNodes = append(cellNodes, nodes[j*nn:(j+1)*nn]...)
				cellTags = append(cellTags, b.Tags[j])
				cellGroups = append(cellGroups, slices.Clone(p))
				seg[i]++
			}
		}
	}
	if pl.merge {
		at, off := start, 0
		for i, t := range pl.cellTypes {
			nn := t.NumNodes()
			if err := distinctCells(c, path, cellNodes[off:off+seg[i]*nn], nn, at, cellTags[at-start:at-start+seg[i]]); err != nil {
				return nil, err
			}
			at, off = at+seg[i], off+seg[i]*nn
		}
	}
	most := int64(1)
	for _, p := range cellGroups {
		slices.Sort(p)
		most = max(most, int64(len(slices.Compact(p))))
	}
	if most, err = maxInt64(c, most); err != nil {
		return nil, err
	}
	s.cellTagDim = int(most)
	s.cellTags = make([]int32, len(cellGroups)*s.cellTagDim)
	for i, p := range cellGroups {
		copy(s.cellTags[i*s.cellTagDim:], slices.Compact(p))
	}

	// The coordinates of the cells' nodes, from the ranks holding them.
	s.firstNode = int(part.FirstNode)
	if dim == 2 {
		// Every rank's nodes in one plane: the ranks' ranges together.
		r, err := zRangeAll(c, zRangeOf(part.X, part.NodeTags))
		if err == nil {
			if err = r.flat(dim); err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
		}
		if err := step("plane", err); err != nil {
			return nil, err
		}
	}
	own := len(part.NodeTags)
	s.x = make([]float64, 0, dim*own)
	for i := range own {
		s.x = append(s.x, part.X[3*i:3*i+dim]...)
	}
	need := slices.Clone(cellNodes)
	slices.Sort(need)
	need = slices.Compact(need)
	xl, err := coordinatesOf(c, need, s.nodes, s.firstNode, s.x, dim)
	if err != nil {
		return nil, err
	}
	local := make([]int32, len(cellNodes))
	for i, v := range cellNodes {
		k, _ := slices.BinarySearch(need, v)
		local[i] = int32(k)
	}
	s.cellNodes = make([]int32, 0, len(local))
	at, off := 0, 0
	for i, kc := range pl.kinds {
		nn := kc.kind.Nodes()
		var oriented []int32
		oriented, err = orient(kc.kind, local[off:off+seg[i]*nn], cellTags[at:at+seg[i]], first[i], xl, dim)
		if err != nil {
			err = fmt.Errorf("%s: %w", path, err)
			break
		}
		for _, k := range oriented {
			s.cellNodes = append(s.cellNodes, need[k])
		}
		at, off = at+seg[i], off+seg[i]*nn
	}
	if err := step("orient", err); err != nil {
		return nil, err
	}

	for _, ft := range pl.facetTypes {
		fk, _ := KindOf(ft)
		tf := facets.Tagged{Kind: fk}
		fn := fk.Nodes()
		for _, b := range part.Blocks {
			if b.Type != ft {
				continue
			}
			nodes := blocks[ft]
			for i := range b.Len() {
				for _, p := range phys(ft, b.Entity[i], b.Physical[i]) {
					tf.Nodes = append(tf.Nodes, nodes[i*fn:(i+1)*fn]...)
					tf.Tags = append(tf.Tags, p)
				}
			}
		}
		s.tagged = append(s.tagged, tf)
	}
	return s, nil
}

// gmshPlan is what readBlock reads of a file, from its counts.
type gmshPlan struct {
	// The cells' types and kinds, with their counts, in declared order
	// (cellsOf's: by type).
	cellTypes []gmsh.Type
	kinds     []kindCount
	// merge: the cells are counted with their repeats once (a 2.2 file
	// with several groups of the cells' dimension).
	merge      bool
	cells      int64
	facetTypes []gmsh.Type
}

// planGmsh checks the file's counts as cellsOf and fromGmsh check a mesh,
// with their errors.
func planGmsh(scan *gmsh.Part) (*gmshPlan, error) {
	if scan.Dim < 2 {
		return nil, errNoCells
	}
	var types []gmsh.Type
	for t := range scan.Counts {
		types = append(types, t)
	}
	slices.Sort(types)
	pl := &gmshPlan{}
	for _, t := range types {
		switch t.Dim() {
		case scan.Dim:
			pl.cellTypes = append(pl.cellTypes, t)
		case scan.Dim - 1:
			pl.facetTypes = append(pl.facetTypes, t)
		}
	}
	pl.merge = len(scan.Entities) == 0 && len(scan.Groups[scan.Dim]) > 1 // see uniqueCells
	for _, t := range pl.cellTypes {
		k, ok := KindOf(t)
		if !ok {
			return nil, fmt.Errorf("the mesh's cells are %vs, which package mesh/topology does not derive", t)
		}
		n := scan.Counts[t]
		if pl.merge {
			n = scan.Unique[t]
		}
		pl.kinds = append(pl.kinds, kindCount{k, int(n)})
		pl.cells += n
	}
	for _, t := range pl.facetTypes {
		if _, ok := KindOf(t); !ok {
			return nil, fmt.Errorf("the mesh has %d %vs", scan.Counts[t], t)
		}
	}
	return pl, nil
}

// keep is what rank keeps: its block of the nodes, of the cells (numbered
// kind after kind, counted with their repeats once when merging) and of
// every other type.
func (pl *gmshPlan) keep(scan *gmsh.Part, rank, ranks int) gmsh.Keep {
	block := func(n int64) gmsh.Range {
		s, c := collective.Block(int(n), rank, ranks)
		return gmsh.Range{Start: int64(s), Count: int64(c)}
	}
	k := gmsh.Keep{Nodes: block(scan.NumNodes), Elements: map[gmsh.Type]gmsh.Range{}, Unique: map[gmsh.Type]bool{}}
	for t, n := range scan.Counts {
		k.Elements[t] = block(n)
	}
	cells := block(pl.cells)
	at := int64(0)
	for i, t := range pl.cellTypes {
		n := int64(pl.kinds[i].count)
		lo, hi := max(cells.Start, at), min(cells.Start+cells.Count, at+n)
		k.Elements[t] = gmsh.Range{Start: lo - at, Count: max(0, hi-lo)}
		k.Unique[t] = pl.merge
		at += n
	}
	return k
}

// partPhysical gives the physical groups of an element of part as
// physicalOf does: its entity's in a 4.1 file, else its tag, if not 0.
func partPhysical(part *gmsh.Part) func(t gmsh.Type, entity, phys int32) []int32 {
	type key struct {
		dim int
		tag int32
	}
	ent := map[key][]int32{}
	for _, e := range part.Entities {
		ent[key{e.Dim, e.Tag}] = e.Physical
	}
	return func(t gmsh.Type, entity, phys int32) []int32 {
		if p, ok := ent[key{t.Dim(), entity}]; ok && len(part.Entities) > 0 {
			return p
		}
		if phys != 0 {
			return []int32{phys}
		}
		return nil
	}
}

// nodeIndices returns the node index of each of tags (sorted, distinct),
// -1 for a tag no node has: tag−1 where the file's tags are dense, else
// what the ranks' directory of the tags says (each rank holding the tags
// that hash to it, of the nodes the ranks hold). Its error is every rank's.
func nodeIndices(c collective.Comm, path string, part *gmsh.Part, tags []int64) ([]int32, error) {
	index := make([]int32, len(tags))
	if part.DenseTags {
		for i, tag := range tags {
			index[i] = -1
			if tag >= 1 && tag <= part.NumNodes {
				index[i] = int32(tag - 1)
			}
		}
		return index, nil
	}
	ranks := c.Size()
	home := func(tag int64) int {
		h := uint64(tag) * 0x9E3779B97F4A7C15
		return int((h >> 33) % uint64(ranks))
	}
	// The directory: (tag, index) of each node at the tag's home.
	send := make([][]int64, ranks)
	for i, tag := range part.NodeTags {
		q := home(tag)
		send[q] = append(send[q], tag, part.FirstNode+int64(i))
	}
	got, err := collective.AlltoallInt64(c, send)
	if err != nil {
		return nil, err
	}
	dir := map[int64]int64{}
	var dup error
	for _, msg := range got {
		for k := 0; k+1 < len(msg); k += 2 {
			tag, i := msg[k], msg[k+1]
			if j, ok := dir[tag]; ok {
				if dup == nil {
					dup = fmt.Errorf("gmsh: %s: $Nodes: node tag %d is given twice (nodes %d and %d of the section)", path, tag, min(i, j)+1, max(i, j)+1)
				}
				continue
			}
			dir[tag] = i
		}
	}
	if dup != nil {
		dup = fmt.Errorf("unstructured: %w", dup)
	}
	if err := collective.AgreeStep(c, "unstructured: read the mesh: node directory", dup); err != nil {
		return nil, err
	}
	// The queries, answered in the order asked.
	ask := make([][]int64, ranks)
	for _, tag := range tags {
		q := home(tag)
		ask[q] = append(ask[q], tag)
	}
	asked, err := collective.AlltoallInt64(c, ask)
	if err != nil {
		return nil, err
	}
	answer := make([][]int64, ranks)
	for q, msg := range asked {
		answer[q] = make([]int64, len(msg))
		for k, tag := range msg {
			i, ok := dir[tag]
			if !ok {
				i = -1
			}
			answer[q][k] = i
		}
	}
	replies, err := collective.AlltoallInt64(c, answer)
	if err != nil {
		return nil, err
	}
	next := make([]int, ranks)
	for i, tag := range tags {
		q := home(tag)
		index[i] = int32(replies[q][next[q]])
		next[q]++
	}
	return index, nil
}

// coordinatesOf returns dim coordinates for each of nodes (sorted,
// distinct, in [0, n)): from x, this rank's block of n nodes from first
// on, or from the ranks whose blocks hold them.
func coordinatesOf(c collective.Comm, nodes []int32, n, first int, x []float64, dim int) ([]float64, error) {
	ranks := c.Size()
	ask := make([][]int64, ranks)
	for _, v := range nodes {
		q := collective.BlockHome(n, ranks, int(v))
		ask[q] = append(ask[q], int64(v))
	}
	asked, err := collective.AlltoallInt64(c, ask)
	if err != nil {
		return nil, err
	}
	answer := make([][]int64, ranks)
	for q, msg := range asked {
		answer[q] = make([]int64, 0, dim*len(msg))
		for _, v := range msg {
			for _, f := range x[(int(v)-first)*dim : (int(v)-first+1)*dim] {
				answer[q] = append(answer[q], int64(math.Float64bits(f)))
			}
		}
	}
	replies, err := collective.AlltoallInt64(c, answer)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, dim*len(nodes))
	next := make([]int, ranks)
	for _, v := range nodes {
		q := collective.BlockHome(n, ranks, int(v))
		for _, b := range replies[q][next[q] : next[q]+dim] {
			out = append(out, math.Float64frombits(uint64(b)))
		}
		next[q] += dim
	}
	return out, nil
}

// distinctCells checks that no two of the ranks' cells (nn nodes each in
// nodes, this rank's from cell first on, with their element tags) have the
// same nodes in the same order: a 2.2 file's copies of an element that
// do not follow one another, which readGmshBlock would count as two cells
// (fromGmsh finds them, holding the whole mesh). Each cell goes to the
// rank its nodes hash to. Its error is every rank's.
func distinctCells(c collective.Comm, path string, nodes []int32, nn, first int, tags []int64) error {
	ranks := c.Size()
	home := func(row []int32) int {
		h := uint64(14695981039346656037)
		for _, v := range row {
			h = (h ^ uint64(uint32(v))) * 1099511628211
		}
		return int(h % uint64(ranks))
	}
	send := make([][]int64, ranks)
	for i := range len(tags) {
		row := nodes[i*nn : (i+1)*nn]
		q := home(row)
		send[q] = append(send[q], int64(first+i), tags[i])
		for _, v := range row {
			send[q] = append(send[q], int64(v))
		}
	}
	got, err := collective.AlltoallInt64(c, send)
	if err != nil {
		return err
	}
	type cell struct{ index, tag int64 }
	seen := map[[8]int32]cell{}
	var bad error
	for _, msg := range got {
		for k := 0; k+2+nn <= len(msg) && bad == nil; k += 2 + nn {
			key := [8]int32{-1, -1, -1, -1, -1, -1, -1, -1}
			for j := range nn {
				key[j] = int32(msg[k+2+j])
			}
			this := cell{msg[k], msg[k+1]}
			if other, ok := seen[key]; ok {
				a, b := this, other
				if other.index < this.index {
					a, b = other, this
				}
				bad = fmt.Errorf("unstructured: %s: elements %d and %d (cells %d and %d) have the same nodes %v, and are not one after the other: "+
					"a 2.2 file's copies of an element in several physical groups must follow one another, as Gmsh writes them, to be read on several ranks "+
					"(write the mesh in MSH 4.1, or convert it on one process: op2mesh convert)", path, a.tag, b.tag, a.index, b.index, key[:nn])
			}
			seen[key] = this
		}
	}
	return collective.AgreeStep(c, "unstructured: read the mesh: repeated cells", bad)
}

// maxInt64 is the largest v over the ranks.
// zRangeAll merges r over the ranks of c; every rank gets the same.
func zRangeAll(c collective.Comm, r zRange) (zRange, error) {
	v := []int64{r.loTag, r.hiTag, r.n}
	for k := range 3 {
		v = append(v, int64(math.Float64bits(r.lo[k])), int64(math.Float64bits(r.hi[k])))
	}
	got, err := collective.Allgather(c, collective.Int64Bytes(v))
	if err != nil {
		return zRange{}, err
	}
	var all zRange
	for _, b := range got {
		w := collective.BytesInt64(b)
		if len(w) != len(v) {
			return zRange{}, fmt.Errorf("a rank sent %d values for the nodes' extent, want %d", len(w), len(v))
		}
		o := zRange{loTag: w[0], hiTag: w[1], n: w[2]}
		for k := range 3 {
			o.lo[k], o.hi[k] = math.Float64frombits(uint64(w[3+2*k])), math.Float64frombits(uint64(w[4+2*k]))
		}
		all = all.merge(o)
	}
	return all, nil
}

func maxInt64(c collective.Comm, v int64) (int64, error) {
	got, err := collective.Allgather(c, collective.Int64Bytes([]int64{v}))
	if err != nil {
		return 0, err
	}
	for _, b := range got {
		if w := collective.BytesInt64(b); len(w) == 1 {
			v = max(v, w[0])
		}
	}
	return v, nil
}
