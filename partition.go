package op2

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/engine"
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

// A library missing on some ranks only fails a collective call on every
// rank: the error matches the sentinel there too.
func init() {
	dist.Share("mpi", ErrMPIUnavailable)
	dist.Share("mpi-finalized", mpi.ErrFinalized)
	dist.Share("metis", ErrMETISUnavailable)
	dist.Share("ptscotch", ErrPTScotchUnavailable)
	dist.Share("petsc", ErrPETScUnavailable)
	dist.Share("backend", ErrBackendUnavailable)
	dist.Share("compiler", ErrNoCompiler)
}

// meshDat is a Dat as the engine partitions and renumbers it
// (engine.MeshData).
type meshDat[T Scalar] struct{ d *Dat[T] }

func (m meshDat[T]) Storage() *core.Storage { return &m.d.s }

// Omitted reports whether checkpoints leave the dat out (SetNoCheckpoint).
func (m meshDat[T]) Omitted() bool { return m.d.keep.Omit.Load() }

func (m meshDat[T]) Replace(values []byte) {
	d := m.d
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

func (m meshDat[T]) Zeros(n int) {
	d := m.d
	d.dropDevice()
	d.data, d.s.Host, d.s.Len = adoptPinned[T](d, nil, &d.pin), nil, n // n scalars
	d.s.State = core.StateHostUnallocated
	d.s.AllocHost = func() {
		d.data = repinned[T](d, n, &d.pin)
		d.s.Host = hostPtr(d.data)
	}
}

func (m meshDat[T]) Permute(order []int32) {
	d := m.d
	dim := d.s.Dim
	old := slices.Clone(d.data[:len(order)*dim])
	for k, e := range order {
		copy(d.data[k*dim:(k+1)*dim], old[int(e)*dim:(int(e)+1)*dim])
	}
}

// meshMap is a Map as the engine partitions it (engine.MeshMap).
type meshMap struct{ m *Map }

func (m meshMap) Map() *core.Map { return &m.m.c }

// Adopt makes table (allocated by the partitioner for it) the map's
// table, unpinning the old one.
func (m meshMap) Adopt(table []int32) {
	m.m.table64 = nil // NewMap64's rows, replaced too
	m.m.c.Table = adoptPinned(m.m, table, &m.m.pin)
}

// mpiWorld returns the MPI world of the process, initialising MPI the
// first time when the program was started by an MPI launcher; nil
// without one.
func mpiWorld() (*mpi.World, error) { return rt.proc.World() }

// agreeArgs shares the check of a collective call's arguments (err:
// this rank's refusal, or nil) under MPI, so that no rank waits in the
// call for one that refused its arguments: this rank's own error comes
// back as it is, as without MPI; a rank that finds its arguments good
// gets an error naming the ranks that refused theirs, or the calls the
// others are at. what names the call, the same on every rank.
func agreeArgs(what string, err error) error {
	w, werr := mpiWorld()
	if werr != nil || w == nil || w.Size() == 1 || w.Finalized() {
		return err // after Finalize the call itself says MPI has ended
	}
	if aerr := mpiFatal(dist.AgreeStep(w, what, err)); aerr != nil && err == nil {
		return fmt.Errorf("op2: %w", aerr)
	}
	return err
}

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
// otherwise. No loop, collective call (Gather, Checkpoint...) or solve
// may run afterwards: under a launcher they return an error saying MPI
// has ended. Calling it again does nothing.
func Finalize() error {
	forced := lock(forCollective, "Finalize")
	defer unlock()
	if forced != nil {
		return forced
	}
	err := rt.proc.petsc.Finalize()
	err = errors.Join(err, rt.proc.AutoUnfinished())
	if w, _ := mpiWorld(); w != nil {
		return errors.Join(err, w.Finalize())
	}
	return err
}

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
	coords *core.Storage // the RCB coordinates or the owners
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
	return Partitioner{kind: "rcb", coords: storageOf(coords)}
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
	return Partitioner{kind: "auto", m: m, coords: storageOf(coords)}
}

// resolve turns an AutoPartitioner into the partitioner it chooses; the
// ranks decide together (w nil: this process alone).
func (p Partitioner) resolve(w *mpi.World) (Partitioner, error) {
	if p.kind != "auto" {
		return p, nil
	}
	kind, err := engine.AutoPartitioner(w, p.m != nil, p.coords != nil)
	if err != nil {
		return p, mpiFatal(fmt.Errorf("op2: Partition (rank %d of %d): choosing the partitioner: %w", w.Rank(), w.Size(), err))
	}
	switch kind {
	case "ptscotch":
		return PTScotchPartitioner(p.m), nil
	case "rcb":
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
	return Partitioner{kind: "owners", coords: storageOf(owner)}
}

// With returns p with m as its map and coords as its coordinates where
// p was made without them (METISPartitioner(nil), RCBPartitioner(nil),
// AutoPartitioner(nil, nil)): a package that declares a mesh, as
// mesh/unstructured does, partitions it with the partitioner its user
// chose, on the mesh's own graph and coordinates. Block and owner
// partitioners, and what p was made with, are kept.
func (p Partitioner) With(m *Map, coords *Dat[float64]) Partitioner {
	switch p.kind {
	case "metis", "ptscotch", "auto":
		if p.m == nil {
			p.m = m
		}
	}
	switch p.kind {
	case "rcb", "auto":
		if p.coords == nil {
			p.coords = storageOf(coords)
		}
	}
	return p
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
	maps, cuts := make([]string, len(p.EdgeCuts)), make([]int, len(p.EdgeCuts))
	for i, c := range p.EdgeCuts {
		maps[i], cuts[i] = c.Map, c.EdgeCut
	}
	return engine.PartitionSummary(p.Partitioner, p.Ranks, p.Cut, maps, cuts, p.MetisCut)
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
// be declared after it, and a permuted map made from a partitioned map,
// NewPermutedMap); subsets, sparsities and matrices are declared after
// it, and loops may run only after it.
func Partition(p Partitioner) (*PartitionInfo, error) {
	forced := lock(forCollective, "Partition")
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
	// The ranks agree first that they all partition, with the same
	// partitioner: what follows exchanges without naming it.
	if err := mpiFatal(dist.AgreeStep(w, fmt.Sprintf("Partition with partitioner %q", p.kind), nil)); err != nil {
		return nil, fmt.Errorf("op2: Partition (rank %d of %d): %w", w.Rank(), w.Size(), err)
	}
	if p, err = p.resolve(w); err != nil {
		return nil, err
	}
	var m *core.Map
	if p.m != nil {
		m = &p.m.c
	}
	maps := ds.BlockMaps() // in EdgeCuts' order; the process keeps none after Partition
	res, err := ds.Partition(w, p.kind, m, p.coords)
	if err != nil {
		return nil, mpiFatal(fmt.Errorf("op2: Partition (rank %d of %d): %w", w.Rank(), w.Size(), err))
	}
	info := &PartitionInfo{Partitioner: p.kind, Ranks: w.Size(), Cut: res.Cut, MetisCut: res.MetisCut}
	for i, m := range maps {
		if m.Arity >= 2 {
			info.EdgeCuts = append(info.EdgeCuts, MapEdgeCut{Map: m.Name, EdgeCut: res.EdgeCuts[i]})
		}
	}
	for _, ph := range res.Phases {
		info.Phases = append(info.Phases, PartitionPhase{Name: ph.Name, Seconds: ph.Seconds, MaxRSS: ph.MaxRSS})
	}
	return info, nil
}

// Partitioned reports whether Partition has distributed the mesh over
// more than one MPI rank. Before that, each rank's sets are its block of
// the declared numbering; afterwards Set.DeclaredNumbers gives the
// declared (global) number of each of the rank's owned elements. Readers
// of data in the declared numbering (package hdf5) use it to find each
// element's row.
func Partitioned() bool {
	lock(forNoData, "Partitioned")
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

// HaloStats is this process's halo traffic under MPI (zero without it):
// the point-to-point halo messages it sent and their bytes, and the
// agreements (one small MPI_Allreduce each) before loops and recorded
// chains. The halos of the Dats one loop exchanges travel grouped, one
// message per neighbour; a recorded chain (see Chain) groups those of its
// loops by exchange point, and agrees once. DeviceMessages counts the
// messages handed to MPI as device memory, the halo rows gathered on the
// GPU and never copied to the host (OP2_GPU_DIRECT, see the MPI guide).
type HaloStats struct {
	Messages, Bytes int64
	Agreements      int
	DeviceMessages  int64
}

// ReadHaloStats returns the process's halo traffic so far. It runs no
// recorded loop.
func ReadHaloStats() HaloStats {
	lock(forNoData, "ReadHaloStats")
	defer unlock()
	if rt.proc.Job() == nil {
		return HaloStats{}
	}
	h := rt.proc.Job().Halo()
	m, b := h.Messages()
	return HaloStats{Messages: m, Bytes: b, Agreements: h.Agreements(), DeviceMessages: h.DeviceMessages()}
}
