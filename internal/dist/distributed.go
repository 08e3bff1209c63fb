package dist

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/rss"
	"github.com/goop2/op2/internal/sparsity"
)

// BlockMesh is one rank's block of a mesh before partitioning. The ranks'
// blocks of each set, concatenated in rank order, make the set's global
// numbering. Of each map, Table holds the rows of the rank's block of its
// source set with global target numbers; of each dat, the values of the
// rank's block of its set.
type BlockMesh struct {
	Sets []Set // Size is the rank's block
	Maps []Map
	Dats []BlockDat
	// ReplaceMap, when set, receives each map's local table (map i) as
	// soon as the layout has it, in place of Result.Local.Maps[i], and
	// the BlockMesh drops the map's block table: the caller can drop it
	// too, so that a map's two tables are not held longer than needed.
	// The table is the caller's to keep.
	ReplaceMap func(i int, table []int32)
	// ReleaseMaps, when set, is called once the block's map tables are
	// no longer needed (after the migration, before the layout): the
	// caller may drop them then (its maps get their local tables through
	// ReplaceMap later).
	ReleaseMaps func()
	// Base is the global number of every set's first element: 0, but
	// for tests that number a small mesh beyond 2³¹ (the same on every
	// rank). The global numbers of a set are [Base, Base+its global
	// size).
	Base int64
}

// BlockDat is a dat's values on one rank's block.
type BlockDat struct {
	Name   string
	Set    int
	Elem   int    // bytes per element
	Values []byte // Elem bytes per element of the block
	// Replace, when set, receives the values of the rank's local
	// elements in place of Result.Dats, as soon as they are ready, so
	// that the caller can drop the block's values then. The values are
	// the caller's to keep (a fresh allocation, aligned for any scalar
	// type).
	Replace func(values []byte)
}

// Result is one rank's part of a partitioned mesh, as PartitionBlocks
// builds it.
type Result struct {
	Local Local
	// Dats are the values of every local element (core, owned, exec and
	// non-exec halo), per dat of the BlockMesh (nil for dats with a
	// Replace function).
	Dats [][]byte
	// GlobalSizes are the sets' sizes over all ranks.
	GlobalSizes []int
	// Cut counts the map entries whose source and target elements have
	// different owners (Cut); EdgeCuts the edge cut on each map's graph
	// (EdgeCut; 0 for maps of arity < 2); MetisCut METIS's own figure.
	Cut      int
	EdgeCuts []int
	MetisCut int
	// Phases are the steps on this rank: "partition", "migrate",
	// "layout", "values".
	Phases []Phase
}

// Phase is the time a step took on this rank and the process's peak
// resident memory when it ended.
type Phase struct {
	Name    string
	Seconds float64
	MaxRSS  int64
}

// PartitionBlocks partitions a mesh declared in blocks over the ranks of c
// and lays it out, collectively (every rank calls it with its block and
// the same Partitioning; its Coords and Owner are the rank's block's). It
// returns the same layout as Owners and Layout on the gathered mesh, but
// no rank holds more than its block, its part and its halo (except that
// the "metis" partitioning gathers the partitioned map's graph on rank 0,
// METIS being sequential): owners are chosen and spread where the
// elements are declared, elements migrate to their owners and to the
// ranks whose halo they are in, and each rank builds its sections, local
// maps and exchange lists from what it received.
//
// A rank's failure (a map entry out of range, bad coordinates) is shared,
// so that every rank returns an error.
func PartitionBlocks(c Comm, m *BlockMesh, p Partitioning) (*Result, error) {
	d, err := newDistMesh(c, m)
	if err != nil {
		return nil, err
	}
	res := &Result{GlobalSizes: make([]int, len(m.Sets))}
	for s := range m.Sets {
		res.GlobalSizes[s] = d.bl[s].total()
	}
	// Start-up is where a rank's memory peaks (its block, the records in
	// flight and its new part live together): the heap is collected more
	// often meanwhile (a tenth of the live heap may be garbage, not all
	// of it: on 2.88 M cells on 2 ranks a max RSS of 433-456 MiB per
	// rank instead of 467-498 MiB at a quarter, in the same time), and
	// the caller's garbage (a mesh read and declared) goes first.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	debug.FreeOSMemory()
	start := time.Now()
	phase := func(name string) {
		res.Phases = append(res.Phases, Phase{Name: name, Seconds: time.Since(start).Seconds(), MaxRSS: rss.Peak()})
		// The garbage collector sizes the heap by what is live after a
		// collection: collecting between steps, when one step's
		// temporaries are dead, keeps the next step's peak low; and
		// the freed pages go back to the system at once (the runtime
		// returns them slowly), so that the next step's peak does not
		// stand on them.
		debug.FreeOSMemory()
		start = time.Now()
	}
	owner, metisCut, err := d.owners(p)
	if err != nil {
		return nil, err
	}
	res.MetisCut = metisCut
	phase("partition")
	recs, err := d.migrate(owner, res)
	if err != nil {
		return nil, err
	}
	for i := range m.Maps {
		m.Maps[i].Table = nil
	}
	if m.ReleaseMaps != nil {
		m.ReleaseMaps()
	}
	phase("migrate")
	if err := d.layout(owner, recs, res); err != nil {
		return nil, err
	}
	phase("layout")
	if err := d.moveValues(res); err != nil {
		return nil, err
	}
	d.dests, d.order, d.need = nil, nil, nil
	phase("values")
	return res, nil
}

// distMesh is a rank's block with the blocks' bounds.
type distMesh struct {
	c        Comm
	m        *BlockMesh
	bl       []blocks // per set
	mapsFrom [][]int  // per set, the maps from it
	datsOn   [][]int  // per set, the dats on it
	recSize  []int    // per set, bytes of an element record
	width    int      // bytes of a global number in a record: 4 or 8
	// What moving the dats' values needs, per set: the ranks each
	// element of the block went to (migrate), the order in which this
	// rank received its elements and the non-exec halo it fetched
	// (layout).
	dests    []dests
	chunk    []int     // per set, the block's elements each round of its migration covers
	rounds   []int     // per set, the rounds (the same on every rank)
	order    [][]int32 // local element -> received record (migrated, then non-exec)
	migrated []int     // records received in the migration
	need     [][]int64 // the non-exec halo's global numbers, as fetched
	// spreadTargets are, per map, the owners of its entries' targets
	// where the spread looked them up, until the migration takes them.
	spreadTargets [][]int32
}

// dests lists, for each element of a rank's block of a set, the ranks
// it went to (its owner first) in compressed row form.
type dests struct{ start, rank []int32 }

func newDistMesh(c Comm, m *BlockMesh) (*distMesh, error) {
	d := &distMesh{c: c, m: m, mapsFrom: make([][]int, len(m.Sets)), datsOn: make([][]int, len(m.Sets))}
	sizes := make([]int64, len(m.Sets))
	for s, set := range m.Sets {
		sizes[s] = int64(set.Size)
	}
	got, err := collective.Allgather(c, collective.Int64Bytes(sizes))
	if err != nil {
		return nil, err
	}
	d.bl = make([]blocks, len(m.Sets))
	for s := range m.Sets {
		st := make([]int, c.Size()+1)
		st[0] = int(m.Base)
		for r, b := range got {
			st[r+1] = st[r] + int(collective.BytesInt64(b)[s])
		}
		d.bl[s] = blocks{start: st}
	}
	for i, mp := range m.Maps {
		d.mapsFrom[mp.From] = append(d.mapsFrom[mp.From], i)
	}
	for i, dd := range m.Dats {
		d.datsOn[dd.Set] = append(d.datsOn[dd.Set], i)
	}
	// Records carry global numbers in 4 bytes when every set's fit
	// int32, else in 8.
	d.width = 4
	for s := range m.Sets {
		if d.bl[s].end() > math.MaxInt32 {
			d.width = 8
		}
	}
	d.recSize = make([]int, len(m.Sets))
	for s := range m.Sets {
		n := d.width + 4 // global number; kind and owner
		for _, mi := range d.mapsFrom[s] {
			n += d.width * m.Maps[mi].Arity
		}
		d.recSize[s] = n
	}
	return d, AgreeStep(c, "Partition: checking the blocks", d.validate())
}

// validate checks the rank's block: table and value lengths, and every
// map entry against the target set's global size.
func (d *distMesh) validate() error {
	m := d.m
	for _, mp := range m.Maps {
		from, to := m.Sets[mp.From], m.Sets[mp.To]
		if mp.entries() != from.Size*mp.Arity {
			return fmt.Errorf("map %q from %q to %q: %d entries, want %d (%d elements × arity %d)",
				mp.Name, from.Name, to.Name, mp.entries(), from.Size*mp.Arity, from.Size, mp.Arity)
		}
		lo, hi := int64(d.bl[mp.To].start[0]), d.bl[mp.To].end()
		first := d.first(mp.From)
		for i := range mp.entries() {
			if v := mp.at(i); v < lo || v >= hi {
				return fmt.Errorf("map %q from %q to %q: entry %d (element %d, column %d) is %d, outside the target set [%d,%d)",
					mp.Name, from.Name, to.Name, first*mp.Arity+i, first+i/mp.Arity, i%mp.Arity, v, lo, hi)
			}
		}
	}
	for _, dd := range m.Dats {
		if len(dd.Values) < m.Sets[dd.Set].Size*dd.Elem {
			return fmt.Errorf("dat %q: %d bytes for %d elements of %d bytes", dd.Name, len(dd.Values), m.Sets[dd.Set].Size, dd.Elem)
		}
	}
	return nil
}

// first is the global number of the rank's first element of set s.
func (d *distMesh) first(s int) int { return d.bl[s].start[d.c.Rank()] }

// fetch asks, for each global element of set s in need (sorted, unique),
// the rank holding it for rec bytes that fill writes for the element (its
// index in that rank's block), and returns the records in need's order.
func (d *distMesh) fetch(s int, need []int64, rec int, fill func(i int, dst []byte)) ([]byte, error) {
	ranks := d.c.Size()
	send := make([][]byte, ranks)
	// Each element is asked for by its index in its home rank's block,
	// which fits 32 bits whatever the global numbers.
	ask := make([]int32, len(need))
	for i := 0; i < len(need); {
		q := d.bl[s].home(need[i])
		j := i
		for j < len(need) && int(need[j]) < d.bl[s].start[q+1] {
			ask[j] = int32(int(need[j]) - d.bl[s].start[q])
			j++
		}
		send[q] = collective.Int32Bytes(ask[i:j])
		i = j
	}
	got, err := d.c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	for q, b := range got {
		req := collective.BytesInt32(b)
		out := make([]byte, len(req)*rec)
		for k, i := range req {
			fill(int(i), out[k*rec:(k+1)*rec])
		}
		send[q] = out
	}
	got, err = d.c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	return joined(got), nil
}

// targetOwners returns, for map mi's table on this rank, the owner of
// each entry's target.
func (d *distMesh) targetOwners(mi int, owner [][]int32) ([]int32, error) {
	mp := &d.m.Maps[mi]
	if lo, span, ok := denseSpan(mp); ok {
		return d.targetOwnersDense(mi, owner, lo, span)
	}
	// The targets are looked up as 32-bit offsets from the set's first
	// number where the set has fewer than 2³² elements.
	if b := d.bl[mp.To]; b.total() < math.MaxUint32 {
		base := int64(b.start[0])
		return targetOwnersBy(d, mi, owner, func(g int64) uint32 { return uint32(g - base) })
	}
	return targetOwnersBy(d, mi, owner, func(g int64) int64 { return g })
}

// targetOwnersOnce is targetOwners, taking those the spread found where
// it did.
func (d *distMesh) targetOwnersOnce(mi int, owner [][]int32) ([]int32, error) {
	if mi < len(d.spreadTargets) && d.spreadTargets[mi] != nil {
		to := d.spreadTargets[mi]
		d.spreadTargets[mi] = nil
		return to, nil
	}
	return d.targetOwners(mi, owner)
}

// targetOwnersBy is targetOwners with the targets' keys in a table given
// by key.
func targetOwnersBy[K uint32 | int64](d *distMesh, mi int, owner [][]int32, key func(int64) K) ([]int32, error) {
	mp := &d.m.Maps[mi]
	// The distinct targets, asked for once each; the table then maps
	// each to its owner.
	h := newTable[K](mp.entries() / 8)
	var need []int64
	for k := range mp.entries() {
		if g := mp.at(k); h.find(key(g)) < 0 {
			h.put(key(g), 0)
			need = append(need, g)
		}
	}
	slices.Sort(need)
	recs, err := d.fetch(mp.To, need, 4, func(i int, dst []byte) {
		binary.LittleEndian.PutUint32(dst, uint32(owner[mp.To][i]))
	})
	if err != nil {
		return nil, err
	}
	for i, g := range need {
		h.put(key(g), int32(binary.LittleEndian.Uint32(recs[4*i:])))
	}
	need, recs = nil, nil
	out := make([]int32, mp.entries())
	for k := range out {
		out[k] = h.find(key(mp.at(k)))
	}
	return out, nil
}

// denseSpan returns the least of map mp's entries and the span of their
// range, and whether that span is at most the number of entries (as
// where a rank's block of the source set refers to a block of the target
// set): then an array over the range costs no more than the table.
func denseSpan(mp *Map) (lo int64, span int, ok bool) {
	n := mp.entries()
	if n == 0 {
		return 0, 0, false
	}
	lo, hi := mp.at(0), mp.at(0)
	for k := range n {
		g := mp.at(k)
		lo, hi = min(lo, g), max(hi, g)
	}
	if hi-lo >= int64(n) {
		return 0, 0, false
	}
	return lo, int(hi-lo) + 1, true
}

// targetOwnersDense is targetOwners on an array over the targets' range
// [lo, lo+span): marked where a target is, the targets in order are what
// to ask for, without a sort, and each entry's owner is then one read.
func (d *distMesh) targetOwnersDense(mi int, owner [][]int32, lo int64, span int) ([]int32, error) {
	mp := &d.m.Maps[mi]
	at := make([]int32, span) // 1 where a target is; then its owner
	for k := range mp.entries() {
		at[mp.at(k)-lo] = 1
	}
	n := 0
	for _, v := range at {
		n += int(v)
	}
	need := make([]int64, 0, n)
	for i, v := range at {
		if v != 0 {
			need = append(need, lo+int64(i))
		}
	}
	recs, err := d.fetch(mp.To, need, 4, func(i int, dst []byte) {
		binary.LittleEndian.PutUint32(dst, uint32(owner[mp.To][i]))
	})
	if err != nil {
		return nil, err
	}
	for i, g := range need {
		at[g-lo] = int32(binary.LittleEndian.Uint32(recs[4*i:]))
	}
	need, recs = nil, nil
	out := make([]int32, mp.entries())
	for k := range out {
		out[k] = at[mp.at(k)-lo]
	}
	return out, nil
}

// blockOwnersOf gives the owners BlockOwners gives the rank's block of set s.
func (d *distMesh) blockOwnersOf(s int) []int32 {
	n, ranks := d.bl[s].total(), d.c.Size()
	first := d.first(s) - d.bl[s].start[0]
	o := make([]int32, d.m.Sets[s].Size)
	r := 0
	for i := range o {
		g := first + i
		for g >= n*(r+1)/ranks {
			r++
		}
		o[i] = int32(r)
	}
	return o
}

// owners chooses the owner of each element of the rank's block of every
// set (the distributed Owners).
func (d *distMesh) owners(p Partitioning) ([][]int32, int, error) {
	m, ranks := d.m, d.c.Size()
	owner := make([][]int32, len(m.Sets))
	metisCut := 0
	switch p.Kind {
	case "block":
		for s := range owner {
			owner[s] = d.blockOwnersOf(s)
		}
		return owner, 0, nil
	case "rcb":
		first := d.first(p.CoordSet) - d.bl[p.CoordSet].start[0]
		if len(p.Coords) != m.Sets[p.CoordSet].Size*max(p.CoordDim, 1) {
			return nil, 0, AgreeStep(d.c, "Partition: the coordinates", fmt.Errorf("%d coordinates for the %d elements of set %q (dim %d)", len(p.Coords), m.Sets[p.CoordSet].Size, m.Sets[p.CoordSet].Name, p.CoordDim))
		}
		o, err := rcbDistributed(d.c, p.Coords, p.CoordDim, first, ranks)
		if err != nil {
			return nil, 0, err
		}
		owner[p.CoordSet] = o
	case "owners":
		var err error
		set := m.Sets[p.OwnerSet]
		if len(p.Owner) != set.Size {
			err = fmt.Errorf("%d owners for the %d elements of set %q", len(p.Owner), set.Size, set.Name)
		}
		for e, r := range p.Owner {
			if err == nil && (r < 0 || int(r) >= ranks) {
				err = fmt.Errorf("element %d of set %q has owner %d, not a rank (0 to %d)", d.first(p.OwnerSet)+e, set.Name, r, ranks-1)
			}
		}
		if err := AgreeStep(d.c, "Partition: the owners", err); err != nil {
			return nil, 0, err
		}
		owner[p.OwnerSet] = append(make([]int32, 0, len(p.Owner)), p.Owner...) // never nil: spread tells done sets by it
	case "metis":
		o, cut, err := d.metisOwners(p.Map)
		if err != nil {
			return nil, 0, err
		}
		owner[m.Maps[p.Map].To], metisCut = append(make([]int32, 0, len(o)), o...), cut
	case "graph":
		o, err := d.graphOwners(p.Map, p.Graph)
		if err != nil {
			return nil, 0, err
		}
		owner[m.Maps[p.Map].To] = append(make([]int32, 0, len(o)), o...)
	default:
		return nil, 0, fmt.Errorf("unknown partitioner %q (block, rcb, metis, graph or owners)", p.Kind)
	}
	if err := d.spread(owner); err != nil {
		return nil, 0, err
	}
	return owner, metisCut, nil
}

// metisOwners gathers map mi's table on rank 0, partitions its graph with
// METIS there and sends each rank the owners of its block of the target
// set.
func (d *distMesh) metisOwners(mi int) ([]int32, int, error) {
	mp := &d.m.Maps[mi]
	send := make([][]byte, d.c.Size())
	dense, err := d.denseTable(mp)
	if err := AgreeStep(d.c, "Partition: METIS's graph", err); err != nil {
		return nil, 0, err
	}
	send[0] = collective.Int32Bytes(dense)
	got, err := d.c.Alltoallv(send)
	if err != nil {
		return nil, 0, err
	}
	clear(send)
	var failed error
	cut := 0
	if d.c.Rank() == 0 {
		whole := *mp
		whole.Table = collective.BytesInt32(slices.Concat(got...))
		n := d.bl[mp.To].total()
		xadj, adj := Adjacency(&whole, n)
		o, c, err := METISOwners(n, xadj, adj, d.c.Size())
		failed, cut = err, c
		if err == nil {
			for q := range send {
				b := d.bl[mp.To]
				send[q] = append(collective.Int32Bytes(o[b.start[q]-b.start[0]:b.start[q+1]-b.start[0]]), binary.LittleEndian.AppendUint32(nil, uint32(c))...)
			}
		}
	}
	if err := AgreeStep(d.c, "Partition: METIS on rank 0", failed); err != nil {
		return nil, 0, err
	}
	got, err = d.c.Alltoallv(send)
	if err != nil {
		return nil, 0, err
	}
	b := got[0]
	if len(b) < 4 {
		return nil, 0, errors.New("dist: internal error: no METIS partition from rank 0")
	}
	cut = int(binary.LittleEndian.Uint32(b[len(b)-4:]))
	return collective.BytesInt32(b[:len(b)-4]), cut, nil
}

// denseTable is map mp's block table with its entries numbered from 0
// (less the target set's first global number), as int32: what the
// sequential and graph partitioners take. A target set of 2³¹ elements or
// more is an error naming the map.
func (d *distMesh) denseTable(mp *Map) ([]int32, error) {
	b := d.bl[mp.To]
	if b.total() > math.MaxInt32 {
		return nil, fmt.Errorf("map %q: its target set %q has %d elements, more than a graph partitioner's 32-bit vertex numbers allow (use RCBPartitioner, OwnerPartitioner or BlockPartitioner)", mp.Name, d.m.Sets[mp.To].Name, b.total())
	}
	if mp.Table64 == nil && b.start[0] == 0 {
		return mp.Table, nil
	}
	out := make([]int32, mp.entries())
	for k := range out {
		out[k] = int32(mp.at(k) - int64(b.start[0]))
	}
	return out, nil
}

// graphOwners builds the distributed graph of map mi's target set (two
// elements adjacent when one row of the map holds both), each rank its
// block's vertices, and partitions it with part.
func (d *distMesh) graphOwners(mi int, part func(xadj []int64, adj []int32, parts int) ([]int32, error)) ([]int32, error) {
	if part == nil {
		return nil, errors.New("dist: the graph partitioning has no partitioner")
	}
	xadj, adj, err := d.adjacency(&d.m.Maps[mi])
	if err != nil {
		return nil, err
	}
	// The partitioner's memory is C's: the pages the Go heap has freed
	// go back first, so that the two do not add up.
	debug.FreeOSMemory()
	owners, err := part(xadj, adj, d.c.Size())
	if err == nil && len(owners) != len(xadj)-1 {
		err = fmt.Errorf("dist: the graph partitioner gave %d parts for %d vertices", len(owners), len(xadj)-1)
	}
	// A partitioner that failed on some ranks only must not leave the
	// others waiting in the next collective.
	if err := AgreeStep(d.c, "Partition: the graph partitioner", err); err != nil {
		return nil, err
	}
	return owners, nil
}

// adjacency returns the graph of map mp's target set on the rank's block
// of it, as compressed rows: the neighbours of the block's k-th element
// are adj[xadj[k]:xadj[k+1]], global numbers, increasing and distinct.
// Every row of every rank contributes each ordered pair of its distinct
// entries to the rank holding the pair's first element.
func (d *distMesh) adjacency(mp *Map) ([]int64, []int32, error) {
	b := d.bl[mp.To]
	// The graph's vertices are numbered from 0 (global numbers less the
	// set's first), in 32 bits.
	dense, err := d.denseTable(mp)
	if err := AgreeStep(d.c, "Partition: the graph", err); err != nil {
		return nil, nil, err
	}
	rows := len(dense) / max(mp.Arity, 1)
	send := pairMessages(d.c.Size(), func(emit func(q int, a, b int32)) {
		for e := 0; e < rows; e++ {
			row := dense[e*mp.Arity : (e+1)*mp.Arity]
			for _, x := range row {
				q := b.home(int64(x) + int64(b.start[0]))
				for _, y := range row {
					if x != y {
						emit(q, x, y)
					}
				}
			}
		}
	})
	dense = nil
	got, err := collective.AlltoallInt32(d.c, send)
	if err != nil {
		return nil, nil, err
	}
	clear(send)
	xadj, adj := groupPairs(got, int32(d.first(mp.To)-b.start[0]), d.m.Sets[mp.To].Size)
	clear(got)
	// Each element's neighbours sorted, without repeats.
	return xadj, sparsity.CompactRows(xadj, adj), nil
}

// spread is Spread over the ranks: the same rules and order, each rank
// deciding the owners of its block; the votes for a target element go to
// the rank holding it.
func (d *distMesh) spread(owner [][]int32) error {
	var failed error
	d.spreadTargets = make([][]int32, len(d.m.Maps))
	fromTargets := func(mp *Map) []int32 {
		mi := d.mapIndex(mp)
		to, err := d.targetOwners(mi, owner)
		if err != nil {
			failed = errors.Join(failed, err)
			return make([]int32, d.m.Sets[mp.From].Size)
		}
		// Kept for the migration, which takes them when it comes to
		// the map's source set: it would look the same owners up again.
		d.spreadTargets[mi] = to
		o := make([]int32, d.m.Sets[mp.From].Size)
		count := make([]int32, d.c.Size())
		for e := range o {
			o[e] = modeOf(to[e*mp.Arity:(e+1)*mp.Arity], count)
		}
		return o
	}
	toTarget := func(mp *Map) []int32 {
		// Each entry's vote (target, owner of the row) goes to the
		// target's rank.
		// (The target goes by its index in its home rank's block,
		// which fits 32 bits whatever the global numbers.)
		b := d.bl[mp.To]
		from := owner[mp.From]
		rows := mp.entries() / max(mp.Arity, 1)
		send := pairMessages(d.c.Size(), func(emit func(q int, a, b int32)) {
			for e := 0; e < rows; e++ {
				for k := e * mp.Arity; k < (e+1)*mp.Arity; k++ {
					t := mp.at(k)
					q := b.home(t)
					emit(q, int32(int(t)-b.start[q]), from[e])
				}
			}
		})
		o := d.blockOwnersOf(mp.To)
		got, err := collective.AlltoallInt32(d.c, send)
		if err != nil {
			failed = errors.Join(failed, err)
			return o
		}
		clear(send)
		start, votes := groupPairs(got, 0, len(o))
		clear(got)
		count := make([]int32, d.c.Size())
		for t := range o {
			if start[t] < start[t+1] {
				o[t] = modeOf(votes[start[t]:start[t+1]], count)
			}
		}
		return o
	}
	mesh := &Mesh{Sets: d.m.Sets, Maps: d.m.Maps}
	propagate(mesh, owner, fromTargets, toTarget)
	if failed != nil {
		return failed
	}
	for s := range owner {
		if owner[s] == nil {
			owner[s] = d.blockOwnersOf(s)
		}
	}
	return nil
}

func (d *distMesh) mapIndex(mp *Map) int {
	for i := range d.m.Maps {
		if &d.m.Maps[i] == mp {
			return i
		}
	}
	panic("dist: map not in the mesh")
}

// modeOf is the rank most votes name, the lowest of those that tie;
// count is zeroed scratch of one entry per rank, cleared again of the
// entries the votes used, so that an element costs its own votes, not
// the number of ranks.
func modeOf(votes []int32, count []int32) int32 {
	best := votes[0]
	for _, r := range votes {
		count[r]++
	}
	for _, r := range votes {
		if c, cb := count[r], count[best]; c > cb || c == cb && r < best {
			best = r
		}
	}
	for _, r := range votes {
		count[r] = 0
	}
	return best
}

// Element record kinds.
const (
	kindCore    = 0
	kindOwned   = 1
	kindExec    = 2
	kindNonexec = 3
)

// records are a set's element records on one rank: fixed-size records of
// the global number, the kind (2 bits) and owner (30 bits) in one word,
// and the rows of the maps from the set (global targets). Global numbers
// take 4 bytes when every set's fit int32, else 8 (distMesh.width).
type records struct {
	b     []byte // the migrated records
	nb    []byte // the non-exec halo's records, after them
	n0    int    // records in b
	size  int
	width int // bytes of a global number: 4 or 8
}

func (r *records) n() int { return r.n0 + len(r.nb)/r.size }

// rec is record i's bytes.
func (r *records) rec(i int) []byte {
	if i < r.n0 {
		return r.b[i*r.size : (i+1)*r.size]
	}
	i -= r.n0
	return r.nb[i*r.size : (i+1)*r.size]
}
func (r *records) global(i int) int64 { return getNumber(r.rec(i), r.width) }
func (r *records) kind(i int) int32 {
	return int32(binary.LittleEndian.Uint32(r.rec(i)[r.width:]) >> 30)
}
func (r *records) owner(i int) int32 {
	return int32(binary.LittleEndian.Uint32(r.rec(i)[r.width:]) & (1<<30 - 1))
}

// section is record i's place in the layout's order before its global
// number: its kind, then its owner, as one key below 3×ranks.
func (r *records) section(i, ranks int) int32 {
	return r.kind(i)*int32(ranks) + r.owner(i)
}
func (r *records) entry(i, k int) int64 {
	return getNumber(r.rec(i)[r.width+4+r.width*k:], r.width)
}

// getNumber reads a global number of width bytes (4 or 8).
func getNumber(b []byte, width int) int64 {
	if width == 4 {
		return int64(int32(binary.LittleEndian.Uint32(b)))
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// putNumber writes global number g in width bytes (4 or 8).
func putNumber(b []byte, width int, g int64) {
	if width == 4 {
		binary.LittleEndian.PutUint32(b, uint32(g))
		return
	}
	binary.LittleEndian.PutUint64(b, uint64(g))
}

// setKindOwner rewrites a record's kind and owner.
func (d *distMesh) setKindOwner(rec []byte, kind, owner int32) {
	binary.LittleEndian.PutUint32(rec[d.width:], uint32(kind)<<30|uint32(owner)) // ranks < 2^30
}

// fillRecord writes the record of element i of the rank's block of set s.
func (d *distMesh) fillRecord(s, i int, kind, owner int32, dst []byte) {
	w := d.width
	putNumber(dst, w, int64(d.first(s)+i))
	d.setKindOwner(dst, kind, owner)
	off := w + 4
	for _, mi := range d.mapsFrom[s] {
		mp := &d.m.Maps[mi]
		switch {
		case w == 4 && mp.Table64 == nil:
			copy(dst[off:], collective.Int32Bytes(mp.Table[i*mp.Arity:(i+1)*mp.Arity]))
			off += 4 * mp.Arity
		default:
			for k := i * mp.Arity; k < (i+1)*mp.Arity; k++ {
				putNumber(dst[off:], w, mp.at(k))
				off += w
			}
		}
	}
}

// migrate classifies every element of the rank's blocks (core on its
// owner when all its targets are owned there too, else owned on its owner
// and in the exec halo of every other rank owning one of its targets) and
// sends its record to each rank that will hold it. It also counts the
// partition's cut and edge cuts. It returns the records this rank
// received, per set.
func (d *distMesh) migrate(owner [][]int32, res *Result) ([]records, error) {
	m, ranks := d.m, d.c.Size()
	// Set by set, so that only one set's target owners, destinations
	// and outgoing records are held at a time.
	stats := make([]int64, 1+len(m.Maps))
	d.dests = make([]dests, len(m.Sets))
	recs := make([]records, len(m.Sets))
	stamp := make([]int, ranks)
	visit := 0
	tOwner := make([][]int32, len(m.Maps)) // the set's maps' target owners
	for s, set := range m.Sets {
		for _, mi := range d.mapsFrom[s] {
			var err error
			if tOwner[mi], err = d.targetOwnersOnce(mi, owner); err != nil {
				return nil, err
			}
			if err := d.cutStats(mi, owner[m.Maps[mi].From], tOwner[mi], stats); err != nil {
				return nil, err
			}
		}
		// Destinations of each element: its owner (core or owned) and
		// the other owners of its targets (exec), in CSR form.
		ds := dests{start: make([]int32, set.Size+1)}
		for i := 0; i < set.Size; i++ {
			visit++
			o := owner[s][i]
			stamp[o] = visit
			ds.rank = append(ds.rank, o)
			for _, mi := range d.mapsFrom[s] {
				mp := &m.Maps[mi]
				for _, q := range tOwner[mi][i*mp.Arity : (i+1)*mp.Arity] {
					if stamp[q] != visit {
						stamp[q] = visit
						ds.rank = append(ds.rank, q)
					}
				}
			}
			ds.start[i+1] = int32(len(ds.rank))
		}
		d.dests[s] = ds
		for _, mi := range d.mapsFrom[s] {
			tOwner[mi] = nil
		}
		// The records travel in rounds of a bounded size (the same
		// rounds carry the values later, so that they arrive in the same
		// order).
		if err := d.planRounds(s); err != nil {
			return nil, err
		}
		size := d.recSize[s]
		b, err := d.sendToDests(s, size, func(i int, j int, dst []byte) {
			rs := ds.rank[ds.start[i]:ds.start[i+1]]
			kind := int32(kindExec)
			switch {
			case j > 0:
			case len(rs) > 1:
				kind = kindOwned
			default:
				kind = kindCore
			}
			d.fillRecord(s, i, kind, rs[0], dst)
		})
		if err != nil {
			return nil, err
		}
		recs[s] = records{b: b, size: size, n0: len(b) / size, width: d.width}
	}
	stats, err := collective.SumInt64(d.c, stats)
	if err != nil {
		return nil, err
	}
	res.Cut = int(stats[0])
	res.EdgeCuts = make([]int, len(m.Maps))
	for mi := range m.Maps {
		res.EdgeCuts[mi] = int(stats[1+mi])
	}
	return recs, nil
}

// cutStats adds map mi's entries whose source and target owners differ to
// stats[0] and, for a map of arity 2 or more, its graph's edge cut on this
// rank's block of the target set to stats[1+mi]: the pairs of a row's
// targets on different ranks, sent to the rank holding the pair's first
// element, which counts each pair once.
func (d *distMesh) cutStats(mi int, from, to []int32, stats []int64) error {
	mp, ranks := &d.m.Maps[mi], d.c.Size()
	for k, o := range to {
		if o != from[k/mp.Arity] {
			stats[0]++
		}
	}
	if mp.Arity < 2 {
		return nil
	}
	// Each pair as its two numbers from the target set's first, packed
	// into one 8-byte key, or two for a set of 2³² elements or more.
	base := int64(d.bl[mp.To].start[0])
	wide := d.bl[mp.To].total() >= 1<<32
	pairs := make([][]byte, ranks)
	var row []int64
	for e := 0; e < d.m.Sets[mp.From].Size; e++ {
		ro := to[e*mp.Arity : (e+1)*mp.Arity]
		if oneRank(ro) {
			continue // most rows: no pair of theirs is cut
		}
		row = mp.row(e, row)
		for x, a := range row {
			for y, b := range row {
				if a < b && ro[x] != ro[y] {
					q := d.bl[mp.To].home(a)
					if wide {
						pairs[q] = binary.LittleEndian.AppendUint64(pairs[q], uint64(a-base))
						pairs[q] = binary.LittleEndian.AppendUint64(pairs[q], uint64(b-base))
					} else {
						pairs[q] = binary.LittleEndian.AppendUint64(pairs[q], uint64(a-base)<<32|uint64(b-base))
					}
				}
			}
		}
	}
	got, err := d.c.Alltoallv(pairs)
	if err != nil {
		return err
	}
	var all []int64
	for _, v := range got {
		all = append(all, collective.BytesInt64(v)...)
	}
	if wide {
		keys := unsafe.Slice((*[2]int64)(unsafe.Pointer(unsafe.SliceData(all))), len(all)/2)
		slices.SortFunc(keys, func(x, y [2]int64) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) })
		stats[1+mi] = int64(len(slices.Compact(keys)))
		return nil
	}
	slices.Sort(all)
	stats[1+mi] = int64(len(slices.Compact(all)))
	return nil
}

// oneRank reports whether every rank of ranks is the first.
func oneRank(ranks []int32) bool {
	for _, r := range ranks[1:] {
		if r != ranks[0] {
			return false
		}
	}
	return true
}

// roundBytes bounds what one round of a set's migration sends from a
// rank, so that the send buffer is small beside the rank's part.
var roundBytes = 8 << 20 // a variable for the tests

// planRounds chooses how many of the block's elements of set s each
// round of its migration covers, and the number of rounds, the same on
// every rank (the most any rank needs).
func (d *distMesh) planRounds(s int) error {
	per := d.recSize[s]
	for _, di := range d.datsOn[s] {
		per = max(per, d.m.Dats[di].Elem)
	}
	ds := d.dests[s]
	n := d.m.Sets[s].Size
	fan := 1.0 // records per element
	if n > 0 {
		fan = float64(len(ds.rank)) / float64(n)
	}
	chunk := max(1, int(float64(roundBytes)/(float64(per)*fan)))
	rounds, err := collective.Allgather(d.c, collective.Int64Bytes([]int64{int64((n + chunk - 1) / chunk)}))
	if err != nil {
		return err
	}
	most := 0
	for _, b := range rounds {
		most = max(most, int(collective.BytesInt64(b)[0]))
	}
	if d.chunk == nil {
		d.chunk, d.rounds = make([]int, len(d.m.Sets)), make([]int, len(d.m.Sets))
	}
	d.chunk[s], d.rounds[s] = chunk, most
	return nil
}

// sendToDests sends size bytes for each element of this rank's block of
// set s to each rank it goes to (d.dests), fill writing the bytes for
// element i's j-th destination, in the rounds plan chose, and returns
// what this rank received, in arrival order: by round, then by sender,
// then in the sender's order. Records and each dat's values arrive in
// the same order.
func (d *distMesh) sendToDests(s, size int, fill func(i, j int, dst []byte)) ([]byte, error) {
	ranks := d.c.Size()
	// Every rank learns how much it receives, for one buffer.
	counts := make([]int64, ranks)
	for _, q := range d.dests[s].rank {
		counts[q] += int64(size)
	}
	send := make([][]byte, ranks)
	for q := range send {
		send[q] = binary.LittleEndian.AppendUint64(nil, uint64(counts[q]))
	}
	got, err := d.c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, b := range got {
		total += int(binary.LittleEndian.Uint64(b))
	}
	out := make([]byte, 0, total)
	err = d.sendRounds(s, size, fill, func(got [][]byte) {
		for _, b := range got {
			out = append(out, b...)
		}
	})
	if err != nil {
		return nil, err
	}
	if len(out) != total {
		return nil, fmt.Errorf("dist: internal error: rank %d received %d bytes of set %q, expected %d", d.c.Rank(), len(out), d.m.Sets[s].Name, total)
	}
	return out, nil
}

// sendRounds is sendToDests handing what each round brings, by sender,
// to take, instead of gathering it.
func (d *distMesh) sendRounds(s, size int, fill func(i, j int, dst []byte), take func(got [][]byte)) error {
	ranks := d.c.Size()
	ds := d.dests[s]
	n, chunk := d.m.Sets[s].Size, d.chunk[s]
	send := make([][]byte, ranks)
	off := make([]int, ranks+1)
	for r := 0; r < d.rounds[s]; r++ {
		lo, hi := min(r*chunk, n), min((r+1)*chunk, n)
		clear(off)
		for _, q := range ds.rank[ds.start[lo]:ds.start[hi]] {
			off[q+1] += size
		}
		for q := range ranks {
			off[q+1] += off[q]
		}
		buf := make([]byte, off[ranks])
		for q := range send {
			send[q] = buf[off[q]:off[q+1]] // capacity to the end: one buffer for MPI
		}
		for i := lo; i < hi; i++ {
			for j, q := range ds.rank[ds.start[i]:ds.start[i+1]] {
				fill(i, j, buf[off[q]:off[q]+size])
				off[q] += size
			}
		}
		got, err := d.c.Alltoallv(send)
		if err != nil {
			return err
		}
		take(got)
	}
	return nil
}

// moveValues gives every dat its values on this rank's local elements,
// one dat at a time: the elements' values travel as their records did
// (from the rank that declared them, to each rank they went to, in the
// same order) and the non-exec halo's are fetched again. A dat with a
// Replace function gets its values through it, and the BlockMesh drops its
// block's values, so that a dat's old and new values and one message are
// all a rank holds of it at once; the others' go to Result.Dats.
func (d *distMesh) moveValues(res *Result) error {
	m := d.m
	res.Dats = make([][]byte, len(m.Dats))
	at := make([][]int32, len(m.Sets)) // per set, received record -> local element
	for di := range m.Dats {
		dd := &m.Dats[di]
		s, elem := dd.Set, dd.Elem
		if at[s] == nil {
			at[s] = inverse(d.order[s])
		}
		// Each value goes from the message to its local element.
		vals := make([]byte, len(d.order[s])*elem)
		k := 0 // the received record
		put := func(got [][]byte) {
			for _, b := range got {
				for p := 0; p < len(b); p += elem {
					i := int(at[s][k])
					copy(vals[i*elem:(i+1)*elem], b[p:p+elem])
					k++
				}
			}
		}
		err := d.sendRounds(s, elem, func(i, _ int, dst []byte) {
			copy(dst, dd.Values[i*elem:(i+1)*elem])
		}, put)
		if err != nil {
			return err
		}
		if elem > 0 && k != d.migrated[s] {
			return fmt.Errorf("dist: internal error: rank %d received %d values of dat %q, expected %d", d.c.Rank(), k, dd.Name, d.migrated[s])
		}
		halo, err := d.fetch(s, d.need[s], elem, func(i int, dst []byte) {
			copy(dst, dd.Values[i*elem:(i+1)*elem])
		})
		if err != nil {
			return err
		}
		put([][]byte{halo})
		if dd.Replace != nil {
			dd.Values = nil
			dd.Replace(vals)
		} else {
			res.Dats[di] = vals
		}
	}
	return nil
}

// inverse is the inverse of the permutation p.
func inverse(p []int32) []int32 {
	inv := make([]int32, len(p))
	for i, k := range p {
		inv[k] = int32(i)
	}
	return inv
}

// joined returns the messages one after the other: the receive buffer
// itself when they lie so in it (as MPI's do), else a copy.
func joined(got [][]byte) []byte {
	var all []byte
	for _, b := range got {
		if len(b) == 0 {
			continue
		}
		if all != nil && cap(all) > len(all) && unsafe.SliceData(all[len(all):cap(all)]) == unsafe.SliceData(b) {
			all = all[:len(all)+len(b)]
			continue
		}
		if all == nil {
			all = b
			continue
		}
		all = append(slices.Clip(all), b...)
	}
	return all
}

// fetchFromOwners returns the records of the elements need (sorted, unique)
// of set t, as non-exec halo, in need's order: the ranks that declared
// them say who owns them, and the owners send the records they received
// in the migration (so that the declared blocks' map tables are not
// needed after it). order and lk are this rank's received records of t,
// sorted, and their lookup.
func (d *distMesh) fetchFromOwners(t int, need []int64, owner [][]int32, recs []records, order []int32, lk *index) ([]byte, error) {
	ranks, size := d.c.Size(), d.recSize[t]
	own, err := d.fetch(t, need, 4, func(i int, dst []byte) {
		binary.LittleEndian.PutUint32(dst, uint32(owner[t][i]))
	})
	if err != nil {
		return nil, err
	}
	req := make([][]byte, ranks)  // per owner, the global numbers asked for, increasing
	pos := make([][]int32, ranks) // and their positions in need
	for p, g := range need {
		q := int32(binary.LittleEndian.Uint32(own[4*p:]))
		req[q] = binary.LittleEndian.AppendUint64(req[q], uint64(g))
		pos[q] = append(pos[q], int32(p))
	}
	own = nil
	asked, err := d.c.Alltoallv(req)
	if err != nil {
		return nil, err
	}
	asks := make([][]int64, ranks)
	for q, b := range asked {
		asks[q] = collective.BytesInt64(b)
	}
	r := &recs[t]
	owned := d.owned(order, r)
	var failed error
	send := make([][]byte, ranks)
	for q, asked := range asks {
		out := make([]byte, len(asked)*size)
		for j, g := range asked {
			i := lk.find(g)
			if i < 0 || int(i) >= owned {
				failed = fmt.Errorf("dist: internal error: rank %d asked rank %d for element %d of set %q, which it does not own", q, d.c.Rank(), g, d.m.Sets[t].Name)
				break
			}
			dst := out[j*size : (j+1)*size]
			copy(dst, r.rec(int(order[i])))
			d.setKindOwner(dst, kindNonexec, int32(d.c.Rank()))
		}
		send[q] = out
	}
	if err := AgreeStep(d.c, "Partition: the non-exec halo", failed); err != nil {
		return nil, err
	}
	got, err := d.c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(need)*size)
	for q, b := range got {
		for j, p := range pos[q] {
			copy(out[int(p)*size:], b[j*size:(j+1)*size])
		}
	}
	return out, nil
}

// owned is the number of owned records among order (the first ones:
// core, then owned, sorted by kind).
func (d *distMesh) owned(order []int32, r *records) int {
	n := sort.Search(len(order), func(i int) bool { return r.kind(int(order[i])) >= kindExec })
	return n
}

// sortMigrated returns the order of the records r of set s that this
// rank received in the migration: core by global number, then owned by
// global number, then the exec halo by owner and global number. (The
// exec halo's owners differ from this rank; core and owned elements are
// all this rank's, so one key serves: the kind, then the owner, then the
// global number.) The records came by round, then by sender, each
// sender's in increasing global numbers from its block (sendToDests):
// ordered by sender, they are ordered by global number, so that two
// counting sorts do.
func (d *distMesh) sortMigrated(s int, r *records) []int32 {
	ranks, b := d.c.Size(), d.bl[s]
	idx := make([]int32, r.n())
	for i := range idx {
		idx[i] = int32(i)
	}
	stableSort(idx, func(i int32) int32 { return int32(b.home(r.global(int(i)))) }, ranks)
	stableSort(idx, func(i int32) int32 { return r.section(int(i), ranks) }, 3*ranks)
	return idx
}

// layout builds the rank's local mesh from the records it received: the
// sections in Layout's order, the non-exec halo (fetched from the ranks
// holding it), the local maps, the dats' values and the exchange lists.
func (d *distMesh) layout(owner [][]int32, recs []records, res *Result) error {
	m, ranks := d.m, d.c.Size()
	loc := &res.Local
	loc.Sets = make([]LocalSet, len(m.Sets))
	order := make([][]int32, len(m.Sets)) // per set, local element -> record index
	lks := make([]*index, len(m.Sets))
	for s := range m.Sets {
		r := &recs[s]
		idx := d.sortMigrated(s, r)
		ls := &loc.Sets[s]
		ls.Global = make([]int64, len(idx))
		for i, k := range idx {
			ls.Global[i] = r.global(int(k))
			if i > 0 && ls.Global[i] <= ls.Global[i-1] && r.section(int(k), ranks) == r.section(int(idx[i-1]), ranks) {
				return fmt.Errorf("dist: internal error: rank %d received the records of set %q out of order", d.c.Rank(), m.Sets[s].Name)
			}
			switch r.kind(int(k)) {
			case kindCore:
				ls.Core, ls.Owned = i+1, i+1
			case kindOwned:
				ls.Owned = i + 1
			}
		}
		ls.Core = min(ls.Core, ls.Owned)
		ls.Exec = len(idx)
		order[s] = idx
		lks[s] = newIndex(ls.Global)
	}
	// Non-exec halo: targets of owned and exec-halo elements that are not
	// present, fetched from the ranks holding them.
	migrated := make([]int, len(m.Sets))
	for s := range m.Sets {
		migrated[s] = recs[s].n()
	}
	d.need = make([][]int64, len(m.Sets))
	for t := range m.Sets {
		var need []int64
		for s := range m.Sets {
			r := &recs[s]
			col := 0
			for _, mi := range d.mapsFrom[s] {
				mp := &m.Maps[mi]
				if mp.To == t {
					for i := 0; i < migrated[s]; i++ {
						for c := 0; c < mp.Arity; c++ {
							if g := r.entry(i, col+c); lks[t].find(g) < 0 {
								need = append(need, g)
							}
						}
					}
				}
				col += mp.Arity
			}
		}
		slices.Sort(need)
		need = slices.Compact(need)
		d.need[t] = need
		got, err := d.fetchFromOwners(t, need, owner, recs, order[t], lks[t])
		if err != nil {
			return err
		}
		r := &recs[t]
		base := r.n()
		r.nb = got
		idx := make([]int32, len(need))
		for i := range idx {
			idx[i] = int32(base + i)
		}
		// By owner, then global number: need's order is the latter.
		stableSort(idx, func(i int32) int32 { return r.owner(int(i)) }, ranks)
		ls := &loc.Sets[t]
		for _, k := range idx {
			ls.Global = append(ls.Global, r.global(int(k)))
		}
		ls.Total = len(ls.Global)
		order[t] = append(order[t], idx...)
	}
	for s := range m.Sets {
		lks[s] = newIndex(loc.Sets[s].Global)
	}
	// Local maps and values.
	loc.Maps = make([][]int32, len(m.Maps))
	haloOwner := make([][]int32, len(m.Sets)) // per set, the owner of each halo element
	for s := range m.Sets {
		r := &recs[s]
		ls := &loc.Sets[s]
		for _, k := range order[s][ls.Owned:] {
			haloOwner[s] = append(haloOwner[s], r.owner(int(k)))
		}
		col := 0
		for _, mi := range d.mapsFrom[s] {
			mp := &m.Maps[mi]
			tab := make([]int32, ls.Total*mp.Arity)
			for i, k := range order[s] {
				for c := 0; c < mp.Arity; c++ {
					g := r.entry(int(k), col+c)
					w := lks[mp.To].find(g)
					if w < 0 {
						if i < ls.Exec {
							return fmt.Errorf("dist: internal error: rank %d map %q row %d: target %d absent", d.c.Rank(), mp.Name, ls.Global[i], g)
						}
						w = 0
					}
					tab[i*mp.Arity+c] = w
				}
			}
			if m.ReplaceMap != nil {
				m.ReplaceMap(mi, tab)
			} else {
				loc.Maps[mi] = tab
			}
			col += mp.Arity
		}
		recs[s] = records{}
	}
	d.order, d.migrated = order, migrated
	// Exchange lists: this rank's halo elements owned by q are contiguous
	// ranges (exec, then non-exec); q sends them in this rank's order, so
	// this rank tells q their global numbers and q finds its local ones.
	send := make([][]int64, ranks)
	for s := range m.Sets {
		ls := &loc.Sets[s]
		own := haloOwner[s]
		perRank := make([][]int64, ranks)
		for i := ls.Owned; i < ls.Total; {
			q := int(own[i-ls.Owned])
			j := i
			for j < ls.Total && int(own[j-ls.Owned]) == q && (j < ls.Exec) == (i < ls.Exec) {
				j++
			}
			nb := getNeighbour(ls, q)
			if i < ls.Exec {
				nb.RecvExec = [2]int32{int32(i), int32(j)}
			} else {
				nb.RecvNonexec = [2]int32{int32(i), int32(j)}
			}
			perRank[q] = append(perRank[q], ls.Global[i:j]...)
			i = j
		}
		for q := range send {
			send[q] = append(send[q], int64(len(perRank[q])))
			send[q] = append(send[q], perRank[q]...)
		}
	}
	sent := make([][]byte, ranks)
	for q, v := range send {
		sent[q] = collective.Int64Bytes(v)
	}
	gotBytes, err := d.c.Alltoallv(sent)
	if err != nil {
		return err
	}
	for q, b := range gotBytes {
		v := collective.BytesInt64(b)
		p := 0
		for s := range m.Sets {
			if p >= len(v) {
				return errors.New("dist: internal error: a truncated exchange list")
			}
			n := int(v[p])
			p++
			if n == 0 {
				continue
			}
			ls := &loc.Sets[s]
			nb := getNeighbour(ls, q)
			nb.Send = make([]int32, n)
			for k, g := range v[p : p+n] {
				w := lks[s].find(g)
				nb.Send[k] = w
				if w < 0 || int(w) >= ls.Owned {
					return fmt.Errorf("dist: internal error: rank %d asked rank %d for element %d of set %q, not owned there", q, d.c.Rank(), v[p+k], m.Sets[s].Name)
				}
			}
			p += n
		}
	}
	return nil
}
