package op2

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unsafe"
	"weak"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/engine"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/ptscotch"
)

// ErrMPIUnavailable is matched (errors.Is) by the errors returned when a
// program started under mpirun cannot use the MPI library.
var ErrMPIUnavailable = mpi.ErrUnavailable

// ErrMETISUnavailable is matched by the error Partition returns when the
// METIS partitioner is chosen and its library cannot be loaded.
var ErrMETISUnavailable = dist.ErrNoMETIS

// ErrPTScotchUnavailable is matched by the error Partition returns when
// the PT-Scotch partitioner is chosen and its library cannot be loaded on
// some rank.
var ErrPTScotchUnavailable = ptscotch.ErrUnavailable

// process is the state every runtime of the process shares: one value,
// the default runtime's (rt.proc), which every runtime holds. The engine
// part (engine.Process) owns the lock and, under it, the recorded loops
// and what runs them, the crash report's view of the running loop and
// the process's MPI job; the fields here are the declared objects,
// PETSc's use, and the blocks of the mesh declared before Partition.
type process struct {
	*engine.Process

	// declared records every set, map, dat and subset the program
	// declares, without keeping them alive, so that Renumber can reorder
	// all of them.
	declared struct {
		sync.Mutex
		sets    []weak.Pointer[Set]
		maps    []weak.Pointer[Map]
		dats    []func() distData // nil once the dat is collected
		subsets []weak.Pointer[Subset]
		live    int // entries after the last pruning
	}
	// petscState is the process's use of PETSc: the MPI world it runs on
	// when GoOP2 started MPI for it (a program not started by a
	// launcher), and the number of PETSc solvers made, for their option
	// prefixes.
	petscState struct {
		sync.Mutex
		own     *mpi.World // MPI started for PETSc alone (a world of one), or nil
		solvers int
	}
	// addKernels are the kernels adding one Dat's values to another's,
	// by C type and dim.
	addKernels sync.Map

	// The blocks of the mesh this rank declared before Partition, in
	// declaration order.
	sets []*Set
	maps []*Map
	dats []distData
}

// distData is a Dat as Partition sees it.
type distData interface {
	storage() *core.Storage
	replace(values []byte) // new host values for every local element
	zeros(n int)           // n scalar zeros, allocated at first use (as NewDat with nil values)
	permute(order []int32) // element k's values become those of element order[k] (Renumber)
}

func (d *Dat[T]) storage() *core.Storage { return &d.s }

// dropDevice frees the device copy, whose values are being replaced.
func (d *Dat[T]) dropDevice() {
	if d.s.Dev != nil {
		d.s.Dev.Free()
		d.s.Dev = nil
	}
}

func (d *Dat[T]) replace(values []byte) {
	n := len(values) / d.s.Type.Size()
	d.dropDevice()
	if uintptr(unsafe.Pointer(unsafe.SliceData(values)))%unsafe.Alignof(*new(T)) == 0 && n > 0 {
		// Adopted as it is (dist allocates it for this): no copy.
		d.data = adoptPinned(d, unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(values))), n), &d.pin)
	} else {
		d.data = repinned[T](d, n, &d.pin)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d.data))), len(values)), values)
	}
	d.s.Host, d.s.Len, d.s.State, d.s.AllocHost = hostPtr(d.data), n, core.StateDeviceUnallocated, nil
}

func (d *Dat[T]) zeros(n int) {
	d.dropDevice()
	d.data, d.s.Host, d.s.Len = adoptPinned[T](d, nil, &d.pin), nil, n // n scalars
	d.s.State = core.StateHostUnallocated
	d.s.AllocHost = func() {
		d.data = repinned[T](d, n, &d.pin)
		d.s.Host = hostPtr(d.data)
	}
}

// mpiWorld returns the MPI world of the process, initialising MPI the
// first time when the program was started by an MPI launcher; nil
// without one.
func mpiWorld() (*mpi.World, error) { return rt.proc.World() }

// distributing reports whether declarations are a rank's block of a mesh
// still to be partitioned.
func distributing() (bool, error) { return rt.proc.Distributing() }

// Rank is this process's MPI rank: 0 without MPI.
func Rank() int {
	if w, _ := mpiWorld(); w != nil {
		return w.Rank()
	}
	return 0
}

// Ranks is the number of MPI ranks: 1 without MPI.
func Ranks() int {
	if w, _ := mpiWorld(); w != nil {
		return w.Size()
	}
	return 1
}

// Finalize ends MPI in a program started by an MPI launcher (every rank
// must call it before exiting; mpirun reports ranks that exit without it),
// and PETSc before it when a Solver used PETSc (in a program not started
// by a launcher, with the MPI GoOP2 started for PETSc). It does nothing
// otherwise. No loop or solve may run afterwards.
func Finalize() error {
	forced := lock(forCollective)
	defer unlock()
	if forced != nil {
		return forced
	}
	err := finalizePETSc()
	if w, _ := mpiWorld(); w != nil {
		return errors.Join(err, w.Finalize())
	}
	return err
}

// LevelTrace is the log level, below slog.LevelDebug, of the events of
// every loop: its start and end and, under MPI, each halo exchange (Dat,
// neighbours, bytes), each with the rank, so that a job's log shows where
// every rank stands. OP2_LOG=trace chooses it.
const LevelTrace = exec.LevelTrace

// mpiFatal ends the job when err says that an MPI wait ran out of time
// (engine.Process.Fatal); any other error is returned as it is.
func mpiFatal(err error) error { return rt.proc.Fatal(err) }

// Abort stops every rank of an MPI job after printing err on this rank;
// without MPI it exits the process. Use it when one rank fails, so that the
// others do not wait for it forever.
func Abort(err error) { rt.proc.Abort(err) }

// Partitioner chooses which rank owns each element; see Partition.
type Partitioner struct {
	kind   string
	coords distData
	m      *Map
}

// BlockPartitioner keeps the declared numbering and gives each rank a
// contiguous block of every set.
func BlockPartitioner() Partitioner { return Partitioner{kind: "block"} }

// RCBPartitioner partitions coords' set by recursive coordinate bisection
// of its coordinates (a float64 Dat of dim 1, 2 or 3, such as Airfoil's
// node coordinates) and spreads the partition to the other sets through
// the maps.
func RCBPartitioner(coords *Dat[float64]) Partitioner {
	return Partitioner{kind: "rcb", coords: coords}
}

// METISPartitioner partitions the target set of m with METIS
// (METIS_PartGraphKway, loaded at run time from libmetis.so.5), on the
// graph in which two elements are adjacent when a row of m holds both (for
// Airfoil's pecell, edges to cells: cells sharing an edge), and spreads
// the partition to the other sets through the maps.
func METISPartitioner(m *Map) Partitioner { return Partitioner{kind: "metis", m: m} }

// PTScotchPartitioner partitions the target set of m with PT-Scotch
// (SCOTCH_dgraphPart, loaded at run time from Debian's libptscotch-7.0;
// OP2_PTSCOTCH_LIBRARY names another build), on the same graph as
// METISPartitioner, but distributed: every rank contributes the edges of
// its block of the map and holds its block of the graph, and the ranks
// partition it together. The partition spreads to the other sets through
// the maps.
func PTScotchPartitioner(m *Map) Partitioner { return Partitioner{kind: "ptscotch", m: m} }

// AutoPartitioner chooses for the job: PTScotchPartitioner(m) when
// PT-Scotch loads on every rank, else RCBPartitioner(coords), or
// BlockPartitioner when coords is nil. PartitionInfo.Partitioner names the
// choice.
func AutoPartitioner(m *Map, coords *Dat[float64]) Partitioner {
	p := Partitioner{kind: "auto", m: m}
	if coords != nil {
		p.coords = coords
	}
	return p
}

// resolve turns an AutoPartitioner into the partitioner it chooses; the
// ranks decide together (w nil: this process alone).
func (p Partitioner) resolve(w *mpi.World) (Partitioner, error) {
	if p.kind != "auto" {
		return p, nil
	}
	missing := []byte{0}
	if p.m == nil || ptscotch.Load() != nil {
		missing[0] = 1
	}
	if w != nil && w.Size() > 1 {
		if err := w.AllreduceOr(missing); err != nil {
			return p, mpiFatal(fmt.Errorf("op2: Partition (rank %d of %d): choosing the partitioner: %w", w.Rank(), w.Size(), err))
		}
	}
	switch {
	case missing[0] == 0:
		return PTScotchPartitioner(p.m), nil
	case p.coords != nil:
		return Partitioner{kind: "rcb", coords: p.coords}, nil
	}
	return BlockPartitioner(), nil
}

// OwnerPartitioner takes the partition of owner's set from owner itself
// (an int32 Dat of dim 1): element e goes to rank owner[e], as a
// partition computed elsewhere would say (OP2's external partitioning).
// The partition spreads to the other sets through the maps, as with
// RCBPartitioner. Every value must be a rank, 0 to Ranks()-1; ranks that
// no value names own nothing of the set.
func OwnerPartitioner(owner *Dat[int32]) Partitioner {
	return Partitioner{kind: "owners", coords: owner}
}

// PartitionInfo describes the partition Partition made.
type PartitionInfo struct {
	// Partitioner is the partitioner's name: "block", "rcb", "metis",
	// "ptscotch" or "owners" (for AutoPartitioner, the one it chose).
	Partitioner string
	Ranks       int
	// Cut is the number of map entries whose source and target elements
	// are owned by different ranks, over every map: the values read
	// across ranks.
	Cut int
	// EdgeCuts is the edge cut of the partition on the graph of each map
	// of arity 2 or more, in the order the maps were declared: the graph
	// METISPartitioner partitions for a map (the map's target set, two
	// elements adjacent when one row of the map holds both, such as the
	// cells sharing an edge for Airfoil's pecell), and the pairs of
	// adjacent elements that different ranks own. It is computed for
	// every partitioner, so that partitioners compare on the same graphs;
	// for METISPartitioner its map's entry is the edge cut METIS
	// minimised. Empty without MPI or on one rank.
	EdgeCuts []MapEdgeCut
	// MetisCut is the edge cut METIS itself reported for its graph (0
	// for the other partitioners, and when METIS did not run: fewer
	// elements than ranks).
	MetisCut int
	// Phases are the steps of Partition on this rank, in order, with
	// their time and the process's peak memory after each: "partition"
	// (choosing the owners), "migrate" (moving elements with their map
	// rows to their owners and halos), "layout" (sections, local maps,
	// exchange lists) and "values" (moving the dats' values, one dat at
	// a time).
	// Empty without MPI or on one rank.
	Phases []PartitionPhase
}

// PartitionPhase is one step of Partition on this rank.
type PartitionPhase struct {
	Name    string
	Seconds float64
	// MaxRSS is the process's peak resident memory in bytes when the
	// step ended (getrusage; 0 where the system does not report it).
	MaxRSS int64
}

// MapEdgeCut is the edge cut of a partition on one map's graph (see
// PartitionInfo.EdgeCuts).
type MapEdgeCut struct {
	Map     string // the map's name
	EdgeCut int
}

// String summarises the partition on one line, for logs and reports:
// the partitioner, the ranks, the map entries that cross ranks and the
// edge cut of each map's graph, such as
//
//	partition rcb on 4 ranks: 10608 map entries cross ranks; edge cut per map graph: pedge 3058, pecell 3163, pbedge 6, pcell 7443
//
// METIS's own figure is added only for METISPartitioner.
func (p *PartitionInfo) String() string {
	var b strings.Builder
	ranks := "ranks"
	if p.Ranks == 1 {
		ranks = "rank"
	}
	fmt.Fprintf(&b, "partition %s on %d %s: %d map entries cross ranks", p.Partitioner, p.Ranks, ranks, p.Cut)
	for i, c := range p.EdgeCuts {
		if i == 0 {
			b.WriteString("; edge cut per map graph: ")
		} else {
			b.WriteString(", ")
		}
		name := c.Map
		if !exec.PlainName(name) {
			name = strconv.Quote(name)
		}
		fmt.Fprintf(&b, "%s %d", name, c.EdgeCut)
	}
	if p.Partitioner == "metis" {
		fmt.Fprintf(&b, " (METIS reported edge cut %d)", p.MetisCut)
	}
	return b.String()
}

// Partition distributes the mesh over the MPI ranks. Before it, each rank
// has declared its block of every set (rank 0 may declare everything, the
// others sets of size 0), with maps holding indices in the global
// numbering: the blocks of each set concatenated in rank order. Partition
// is collective: every rank calls it, with the same partitioner. It
// chooses an owner for every element where the element is declared,
// moves each element to its owner and to the ranks whose halo it is in,
// and each rank lays out its elements in the order core | owned | exec
// halo | non-exec halo, with maps renumbered and Dat values moved: no
// rank holds more than its declared block, its part and its halo (METIS,
// being sequential, gathers its map's graph on rank 0). Afterwards
// Set.Size and Dat.Data cover the rank's owned elements, Set.GlobalSize
// the whole set, and Dat.Gather collects values in the declared global
// numbering. Without MPI, or on one rank, it changes nothing.
//
// Every set, map and dat must be declared before Partition (dats may also
// be declared after it); loops may run only after it.
func Partition(p Partitioner) (*PartitionInfo, error) {
	forced := lock(forCollective)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	ds := rt.proc
	w, err := ds.World()
	if err != nil {
		return nil, err
	}
	if w == nil || w.Size() == 1 {
		if p.kind == "" {
			return nil, errors.New("op2: Partition: no partitioner (use BlockPartitioner, RCBPartitioner, METISPartitioner, PTScotchPartitioner, AutoPartitioner or OwnerPartitioner)")
		}
		p, _ = p.resolve(nil)
		return &PartitionInfo{Partitioner: p.kind, Ranks: 1}, nil
	}
	if ds.Partitioned() {
		return nil, errors.New("op2: Partition: the mesh is already partitioned")
	}
	if p, err = p.resolve(w); err != nil {
		return nil, err
	}
	info := &PartitionInfo{Partitioner: p.kind, Ranks: w.Size()}
	if err := ds.partition(w, p, info); err != nil {
		return nil, mpiFatal(fmt.Errorf("op2: Partition (rank %d of %d): %w", w.Rank(), w.Size(), err))
	}
	ds.Job().SetPartitioned()
	return info, nil
}

func (ds *process) partition(w *mpi.World, p Partitioner, info *PartitionInfo) error {
	// The ranks' declarations must agree: the same sets, maps and dats
	// in the same order, and the same partitioner.
	var shape strings.Builder
	fmt.Fprintf(&shape, "partitioner %s\n", p.kind)
	index := map[*core.Set]int{}
	blk := &dist.BlockMesh{}
	for i, s := range ds.sets {
		index[&s.c] = i
		fmt.Fprintf(&shape, "set %q\n", s.c.Name)
		blk.Sets = append(blk.Sets, dist.Set{Name: s.c.Name, Size: s.c.Owned})
	}
	part := dist.Partitioning{Kind: p.kind, Map: -1}
	for i, m := range ds.maps {
		fmt.Fprintf(&shape, "map %q %d->%d arity %d\n", m.c.Name, index[m.c.From], index[m.c.To], m.c.Arity)
		blk.Maps = append(blk.Maps, dist.Map{Name: m.c.Name, From: index[m.c.From], To: index[m.c.To], Arity: m.c.Arity, Table: m.c.Table[:min(len(m.c.Table), m.c.From.Owned*m.c.Arity)]})
		if m == p.m {
			part.Map = i
		}
	}
	// Dats declared without values and not used since, on every rank,
	// move as nothing: they stay zeros, allocated at first use.
	used := make([]byte, (len(ds.dats)+7)/8)
	for i, dd := range ds.dats {
		if dd.storage().State != core.StateHostUnallocated || p.coords != nil && dd.storage() == p.coords.storage() {
			used[i/8] |= 1 << (i % 8)
		}
	}
	if err := w.AllreduceOr(used); err != nil {
		return err
	}
	// A rank's own failure is shared before the ranks meet, so that no
	// rank waits for one that has given up.
	var failed error
	coords := -1
	var zeros []distData
	for i, dd := range ds.dats {
		s := dd.storage()
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
		if p.coords != nil && dd.storage() == p.coords.storage() {
			coords = len(blk.Dats)
		}
		blk.Dats = append(blk.Dats, dist.BlockDat{Name: s.Name, Set: index[s.Set], Elem: elem,
			Values: unsafe.Slice((*byte)(s.Host), s.Set.Owned*elem), Replace: dd.replace})
	}
	blk.ReplaceMap = func(i int, table []int32) { ds.maps[i].adopt(table) }
	blk.ReleaseMaps = func() {
		for _, m := range ds.maps {
			m.adopt(nil)
		}
	}
	var what string
	switch {
	case failed != nil:
	case p.kind == "":
		failed = errors.New("no partitioner (use BlockPartitioner, RCBPartitioner, METISPartitioner, PTScotchPartitioner, AutoPartitioner or OwnerPartitioner)")
	case p.kind == "rcb" && coords < 0:
		failed = errors.New("RCBPartitioner: the coordinates dat was not declared before Partition")
	case p.kind == "owners" && coords < 0:
		failed = errors.New("OwnerPartitioner: the owners dat was not declared before Partition")
	case p.kind == "owners" && p.coords.storage().Dim != 1:
		failed = fmt.Errorf("OwnerPartitioner: dat %q has dim %d; it needs one owner rank per element (dim 1)", p.coords.storage().Name, p.coords.storage().Dim)
	case p.kind == "metis" && part.Map < 0:
		failed = errors.New("METISPartitioner: the map was not declared before Partition")
	case p.kind == "ptscotch" && part.Map < 0:
		failed = errors.New("PTScotchPartitioner: the map was not declared before Partition")
	case p.kind == "ptscotch":
		part.Kind = "graph"
		part.Graph = func(xadj []int64, adj []int32, parts int) ([]int32, error) {
			return ptscotch.Part(w, xadj, adj, parts)
		}
		what = fmt.Sprintf("PTScotchPartitioner on map %q", blk.Maps[part.Map].Name)
	case p.kind == "rcb":
		dd := p.coords.storage()
		b := blk.Dats[coords].Values
		part.Coords = unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
		part.CoordDim, part.CoordSet = dd.Dim, index[dd.Set]
		what = fmt.Sprintf("RCBPartitioner on dat %q", dd.Name)
	case p.kind == "metis":
		what = fmt.Sprintf("METISPartitioner on map %q", blk.Maps[part.Map].Name)
	case p.kind == "owners":
		dd := p.coords.storage()
		b := blk.Dats[coords].Values
		part.Owner = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
		part.OwnerSet = index[dd.Set]
		what = fmt.Sprintf("OwnerPartitioner on dat %q", dd.Name)
	}
	if err := dist.AgreeStep(w, "Partition", failed); err != nil {
		return err
	}
	if err := dist.SameDeclarations(w, shape.String()); err != nil {
		return err
	}
	res, err := dist.PartitionBlocks(w, blk, part)
	if err != nil {
		if what != "" {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return err
	}
	info.Cut, info.MetisCut = res.Cut, res.MetisCut
	for i, m := range ds.maps {
		if m.c.Arity >= 2 {
			info.EdgeCuts = append(info.EdgeCuts, MapEdgeCut{Map: m.c.Name, EdgeCut: res.EdgeCuts[i]})
		}
	}
	for _, ph := range res.Phases {
		info.Phases = append(info.Phases, PartitionPhase{Name: ph.Name, Seconds: ph.Seconds, MaxRSS: ph.MaxRSS})
	}
	l := &res.Local
	for i, s := range ds.sets {
		ls := &l.Sets[i]
		s.c.Core, s.c.Owned, s.c.Exec, s.c.Total = ls.Core, ls.Owned, ls.Exec, ls.Total
		s.c.Halo = dist.NewSetHalo(ls, res.GlobalSizes[i])
		if s.c.Index != nil {
			fillIndex(&s.c) // the elements' global numbers in the new layout
		}
	}
	for _, dd := range zeros {
		s := dd.storage()
		dd.zeros(s.Set.Total * s.Dim)
	}
	return nil
}

// adopt makes table (allocated by the partitioner for it) the map's
// table, unpinning the old one.
func (m *Map) adopt(table []int32) { m.c.Table = adoptPinned(m, table, &m.pin) }

// GlobalSize is the number of elements of the set over all ranks (Size
// without MPI).
func (s *Set) GlobalSize() int {
	if h, ok := s.c.Halo.(*dist.SetHalo); ok {
		return h.GlobalSize
	}
	return s.c.Owned
}

// Partitioned reports whether Partition has distributed the mesh over
// more than one MPI rank. Before that, each rank's sets are its block of
// the declared numbering; afterwards Set.DeclaredNumbers gives the
// declared (global) number of each of the rank's owned elements. Readers
// of data in the declared numbering (package hdf5) use it to find each
// element's row.
func Partitioned() bool {
	lock(forNoData)
	defer unlock()
	return rt.proc.Partitioned()
}

// declareDistributed refuses sets and maps declared after Partition.
func declareDistributed(what string) error {
	if _, err := mpiWorld(); err != nil {
		return err
	}
	if rt.proc.Partitioned() {
		return fmt.Errorf("op2: %s declared after Partition: declare every set and map before partitioning the mesh", what)
	}
	return nil
}

// Gather collects the values of every element of the dat, over all ranks,
// in the declared global numbering (OP2's op_fetch_data): rank 0 gets
// them, the other ranks nil. It is collective: every rank must call it.
// Without MPI it returns a copy of the values, in the declared numbering
// also after Renumber (where Data has the new order).
func (d *Dat[T]) Gather() ([]T, error) {
	forced := lock(forCollective)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	owned := d.s.Set.Owned * d.s.Dim
	h, ok := d.s.Set.Halo.(*dist.SetHalo)
	w := rt.proc.Started()
	if ok && w != nil {
		// A rank that cannot read its values says so to every rank.
		what := fmt.Sprintf("Gather of dat %q on set %q", d.s.Name, d.s.Set.Name)
		if err := mpiFatal(dist.AgreeStep(w, what, d.s.HostAccess(false))); err != nil {
			return nil, fmt.Errorf("op2: %s: %w", what, err)
		}
	} else if err := d.s.HostAccess(false); err != nil {
		return nil, err
	}
	if !ok || w == nil {
		if decl := d.s.Set.Declared; decl != nil {
			return toDeclared(d.data[:owned], d.s.Dim, decl), nil
		}
		return append([]T(nil), d.data[:owned]...), nil
	}
	// Each rank sends rank 0 its owned values with their global numbers.
	var out []T
	if w.Rank() == 0 {
		out = make([]T, h.GlobalSize*d.s.Dim)
	}
	elem := d.s.Dim * d.s.Type.Size()
	vals := unsafe.Slice((*byte)(d.s.Host), d.s.Set.Owned*elem)
	if err := dist.GatherRows(w, h.Global[:d.s.Set.Owned], vals, elem, rawBytes(out)); err != nil {
		return nil, mpiFatal(fmt.Errorf("op2: Gather of %s: %w", d.s.Describe(), err))
	}
	return out, nil
}

// Gather collects the map's table over all ranks in the declared global
// numbering: element e's arity entries at [e*arity, (e+1)*arity), holding
// global indices of the target set. Rank 0 gets them, the other ranks
// nil. It is collective: every rank must call it. Without MPI it returns
// a copy of the table (as Values does), except after Renumber: then rows
// and entries are in the declared numbering, as under MPI.
func (m *Map) Gather() ([]int32, error) {
	lock(forNoData)
	defer unlock()
	from, ok := m.c.From.Halo.(*dist.SetHalo)
	w := rt.proc.Started()
	if !ok || w == nil {
		tab := append([]int32(nil), m.c.Table[:m.c.From.Owned*m.c.Arity]...)
		if to := m.c.To.Declared; to != nil {
			for i, t := range tab {
				tab[i] = to[t]
			}
		}
		if from := m.c.From.Declared; from != nil {
			tab = toDeclared(tab, m.c.Arity, from)
		}
		return tab, nil
	}
	to, ok := m.c.To.Halo.(*dist.SetHalo)
	if !ok {
		return nil, fmt.Errorf("op2: Gather of map %q: its target set %q is not partitioned", m.c.Name, m.c.To.Name)
	}
	what := fmt.Sprintf("Gather of map %q", m.c.Name)
	if err := mpiFatal(dist.AgreeStep(w, what, nil)); err != nil {
		return nil, fmt.Errorf("op2: %s: %w", what, err)
	}
	// Each rank sends rank 0 its owned rows, in global numbers.
	k, owned := m.c.Arity, m.c.From.Owned
	rows := make([]int32, owned*k)
	for i, t := range m.c.Table[:owned*k] {
		rows[i] = to.Global[t]
	}
	var out []int32
	if w.Rank() == 0 {
		out = make([]int32, from.GlobalSize*k)
	}
	if err := dist.GatherRows(w, from.Global[:owned], rawBytes(rows), 4*k, rawBytes(out)); err != nil {
		return nil, mpiFatal(fmt.Errorf("op2: Gather of map %q: %w", m.c.Name, err))
	}
	return out, nil
}
