package engine

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/ptscotch"
)

// Partition distributes the blocks this rank declared over the MPI ranks
// of w (see op2.Partition), with the partitioner kind (on map m, or on the
// dat coords: coordinates for "rcb", owners for "owners"), and marks the
// mesh partitioned. Every rank calls it; errors are shared before the
// ranks meet. Once it succeeds, the process holds none of the blocks:
// their sets, maps and dats are the program's alone, collected when it
// drops them, as in one process (and left out of checkpoints then).
// Caller holds the lock.
func (p *Process) Partition(w *mpi.World, kind string, m *core.Map, coords *core.Storage) (*dist.Result, error) {
	res, err := p.partition(w, kind, m, coords)
	if err == nil {
		p.job.SetPartitioned()
		p.blocks = blocks{}
	}
	return res, err
}

func (p *Process) partition(w *mpi.World, kind string, pm *core.Map, pcoords *core.Storage) (*dist.Result, error) {
	ds := &p.blocks
	// The ranks' declarations must agree: the same sets, maps and dats
	// in the same order, and the same partitioner.
	var shape strings.Builder
	fmt.Fprintf(&shape, "partitioner %s\n", kind)
	index := map[*core.Set]int{}
	blk := &dist.BlockMesh{Base: dist.NumberBase()}
	for i, s := range ds.sets {
		index[s] = i
		fmt.Fprintf(&shape, "set %q\n", s.Name)
		blk.Sets = append(blk.Sets, dist.Set{Name: s.Name, Size: s.Owned})
	}
	part := dist.Partitioning{Kind: kind, Map: -1}
	for i, mm := range ds.maps {
		m := mm.Map()
		fmt.Fprintf(&shape, "map %q %d->%d arity %d\n", m.Name, index[m.From], index[m.To], m.Arity)
		bm := dist.Map{Name: m.Name, From: index[m.From], To: index[m.To], Arity: m.Arity, Table: m.Table[:blockRows(m)]}
		if t := blockTable64(mm); t != nil {
			bm.Table, bm.Table64 = nil, t
		}
		blk.Maps = append(blk.Maps, bm)
		if m == pm {
			part.Map = i
		}
	}
	// Dats declared without values and not used since, on every rank,
	// move as nothing: they stay zeros, allocated at first use.
	// As many flags on every rank, however many Dats each declared (a
	// rank that declared others is told so below, SameDeclarations).
	most := []int64{int64(len(ds.dats))}
	if err := w.AllreduceInt64(most, mpi.Max); err != nil {
		return nil, err
	}
	used := make([]byte, (most[0]+7)/8)
	for i, dd := range ds.dats {
		if dd.Storage().State != core.StateHostUnallocated || pcoords != nil && dd.Storage() == pcoords {
			used[i/8] |= 1 << (i % 8)
		}
	}
	if err := w.AllreduceOr(used); err != nil {
		return nil, err
	}
	// A rank's own failure is shared before the ranks meet, so that no
	// rank waits for one that has given up.
	var failed error
	coords := -1
	var zeros []MeshData
	for i, dd := range ds.dats {
		s := dd.Storage()
		fmt.Fprintf(&shape, "dat %q on %d %s dim %d\n", s.Name, index[s.Set], s.Type, s.Dim)
		if used[i/8]&(1<<(i%8)) == 0 {
			zeros = append(zeros, dd)
			continue
		}
		if err := s.HostAccess(false); err != nil {
			failed = cmp.Or(failed, err)
			continue
		}
		elem := s.Dim * s.Type.Size()
		if pcoords != nil && dd.Storage() == pcoords {
			coords = len(blk.Dats)
		}
		blk.Dats = append(blk.Dats, dist.BlockDat{Name: s.Name, Set: index[s.Set], Elem: elem,
			Values: unsafe.Slice((*byte)(s.Host), s.Set.Owned*elem), Replace: dd.Replace})
	}
	blk.ReplaceMap = func(i int, table []int32) { ds.maps[i].Adopt(table) }
	blk.ReleaseMaps = func() {
		for _, m := range ds.maps {
			m.Adopt(nil)
		}
	}
	var what string
	switch {
	case failed != nil:
	case kind == "":
		failed = errors.New("no partitioner (use BlockPartitioner, RCBPartitioner, METISPartitioner, PTScotchPartitioner, AutoPartitioner or OwnerPartitioner)")
	case kind == "rcb" && pcoords == nil:
		failed = errors.New("RCBPartitioner: no coordinates (a nil Dat)")
	case kind == "rcb" && coords < 0:
		failed = errors.New("RCBPartitioner: the coordinates dat was not declared before Partition")
	case kind == "owners" && pcoords == nil:
		failed = errors.New("OwnerPartitioner: no owners (a nil Dat)")
	case kind == "owners" && coords < 0:
		failed = errors.New("OwnerPartitioner: the owners dat was not declared before Partition")
	case kind == "owners" && pcoords.Dim != 1:
		failed = fmt.Errorf("OwnerPartitioner: dat %q has dim %d; it needs one owner rank per element (dim 1)", pcoords.Name, pcoords.Dim)
	case (kind == "metis" || kind == "ptscotch") && pm == nil:
		failed = fmt.Errorf("%s: no map (a nil Map)", partitionerName(kind))
	case (kind == "metis" || kind == "ptscotch") && part.Map < 0:
		failed = fmt.Errorf("%s: the map was not declared before Partition", partitionerName(kind))
	case kind == "ptscotch":
		part.Kind = "graph"
		part.Graph = func(xadj []int64, adj []int32, parts int) ([]int32, error) {
			return ptscotch.Part(w, xadj, adj, parts)
		}
		what = fmt.Sprintf("PTScotchPartitioner on map %q", blk.Maps[part.Map].Name)
	case kind == "rcb":
		dd := pcoords
		b := blk.Dats[coords].Values
		part.Coords = unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
		part.CoordDim, part.CoordSet = dd.Dim, index[dd.Set]
		what = fmt.Sprintf("RCBPartitioner on dat %q", dd.Name)
	case kind == "metis":
		what = fmt.Sprintf("METISPartitioner on map %q", blk.Maps[part.Map].Name)
	case kind == "owners":
		dd := pcoords
		b := blk.Dats[coords].Values
		part.Owner = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
		part.OwnerSet = index[dd.Set]
		what = fmt.Sprintf("OwnerPartitioner on dat %q", dd.Name)
	}
	if err := dist.AgreeStep(w, "Partition", failed); err != nil {
		return nil, err
	}
	if err := dist.SameDeclarations(w, shape.String()); err != nil {
		return nil, err
	}
	res, err := dist.PartitionBlocks(w, blk, part)
	if err != nil {
		if what != "" {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return nil, err
	}
	l := &res.Local
	for i, s := range ds.sets {
		ls := &l.Sets[i]
		s.Core, s.Owned, s.Exec, s.Total = ls.Core, ls.Owned, ls.Exec, ls.Total
		h := dist.NewSetHalo(ls, res.GlobalSizes[i])
		h.Base = blk.Base
		s.Halo = h
		if s.Index != nil {
			p.api.RefillIndex(s) // the elements' global numbers in the new layout
		}
	}
	for _, dd := range zeros {
		s := dd.Storage()
		dd.Zeros(s.Set.Total * s.Dim)
	}
	return res, nil
}

// AutoPartitioner is the partitioner op2.AutoPartitioner chooses for the
// job: "ptscotch" when it has a map and PT-Scotch loads on every rank,
// else "rcb" when it has coordinates, else "block". The ranks of w decide
// together (w nil: this process alone).
func AutoPartitioner(w *mpi.World, haveMap, haveCoords bool) (string, error) {
	missing := []byte{0}
	if !haveMap || ptscotch.Load() != nil {
		missing[0] = 1
	}
	if w != nil && w.Size() > 1 {
		if err := w.AllreduceOr(missing); err != nil {
			return "", err
		}
	}
	switch {
	case missing[0] == 0:
		return "ptscotch", nil
	case haveCoords:
		return "rcb", nil
	}
	return "block", nil
}

// PartitionSummary is op2.PartitionInfo.String: the partitioner, the
// ranks, the map entries that cross ranks, the edge cut of each map's
// graph (maps and cuts, in step) and, for METIS, its own figure.
func PartitionSummary(partitioner string, ranks, cut int, maps []string, cuts []int, metisCut int) string {
	var b strings.Builder
	rs := "ranks"
	if ranks == 1 {
		rs = "rank"
	}
	fmt.Fprintf(&b, "partition %s on %d %s: %d map entries cross ranks", partitioner, ranks, rs, cut)
	for i, name := range maps {
		if i == 0 {
			b.WriteString("; edge cut per map graph: ")
		} else {
			b.WriteString(", ")
		}
		if !exec.PlainName(name) {
			name = strconv.Quote(name)
		}
		fmt.Fprintf(&b, "%s %d", name, cuts[i])
	}
	if partitioner == "metis" {
		fmt.Fprintf(&b, " (METIS reported edge cut %d)", metisCut)
	}
	return b.String()
}

// partitionerName is the function that makes a partitioner of kind.
func partitionerName(kind string) string {
	if kind == "metis" {
		return "METISPartitioner"
	}
	return "PTScotchPartitioner"
}
