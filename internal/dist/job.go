package dist

import (
	"errors"
	"fmt"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/mpi"
)

// World is what a partitioned run needs from MPI: Comm's all-to-all for
// partitioning and agreements, and for the loops' halo exchanges and
// reductions a bitwise-OR all-reduce, an all-gather and non-blocking
// point-to-point messages. Every rank calls the collective operations in
// the same order. An *mpi.World is a World; package disttest simulates
// ranks in one process.
type World interface {
	Comm
	// AllreduceOr replaces buf with the bitwise OR of every rank's buf
	// (all the same length).
	AllreduceOr(buf []byte) error
	// Allgather gathers every rank's send (all the same length) into
	// recv, in rank order; len(recv) = Size()*len(send).
	Allgather(send, recv []byte) error
	// Start posts recvs, then sends, without waiting for them; Wait
	// completes them. The buffers must stay put until Wait returns.
	Start(recvs, sends []mpi.Msg) error
	// Wait completes every message Start posted. When it times out, the
	// error is an *mpi.TimeoutError whose Pending lists the messages not
	// complete (indices into the receives, then the sends).
	Wait() error
	// DeviceMemory reports whether messages may be device memory (CUDA
	// device addresses), which the MPI library reads and writes itself.
	DeviceMemory() bool
}

var _ World = (*mpi.World)(nil)

// Job is one process's part in a distributed run: its World, whether the
// mesh is partitioned yet, and the halo exchange its loops use once it is.
// The op2 run time holds one per process (every runtime of the process
// shares it); tests make one per simulated rank.
type Job struct {
	w           World
	partitioned bool
	halo        *Halo
}

// NewJob returns the job of the rank w is, before Partition.
func NewJob(w World) *Job { return &Job{w: w, halo: NewHalo(w)} }

// World is the job's communicator.
func (j *Job) World() World { return j.w }

// Partitioned reports whether SetPartitioned was called.
func (j *Job) Partitioned() bool { return j.partitioned }

// SetPartitioned records that the mesh is laid out over the ranks: from
// now on loops exchange halos (Exchange).
func (j *Job) SetPartitioned() { j.partitioned = true }

// Exchange is the halo exchange loops run under (the executor's Halo) once
// the mesh is partitioned; nil before.
func (j *Job) Exchange() *Halo {
	if !j.partitioned {
		return nil
	}
	return j.halo
}

// Halo is the job's halo exchange, partitioned or not (tests that change
// how it behaves before Partition).
func (j *Job) Halo() *Halo { return j.halo }

// SetHalo is a partitioned set's numbering and exchange lists: what
// core.Set.Halo holds in a distributed run.
type SetHalo struct {
	Global     []int64 // the global number of each local element
	Neighbours []Neighbour
	GlobalSize int // the number of elements over all ranks
	// Base is the set's first global number (BlockMesh.Base): 0 but in
	// tests. An element's row in arrays of the whole set (Gather, files)
	// is its global number less Base.
	Base int64
	// lists are the exchange lists as core.RowLists (rowLists).
	lists *rowLists
}

// rowLists are a set's exchange lists as core.RowLists, which a device
// backend moves on the device: each neighbour's send rows and receive
// rows (its exec halo, then its non-exec halo).
type rowLists struct {
	send, recv []*core.RowList
	// sendAll and recvAll are every neighbour's send (receive) rows one
	// after another, in neighbour order (whole, made the first time).
	sendAll, recvAll *core.RowList
}

// whole returns every neighbour's send rows, or with recv their receive
// rows, as one list, in neighbour order: a Dat alone in an exchange has
// its parts of the messages one after another in that order, so its rows
// move on a device in one launch.
func (rl *rowLists) whole(recv bool) *core.RowList {
	all, lists := &rl.sendAll, rl.send
	if recv {
		all, lists = &rl.recvAll, rl.recv
	}
	if *all == nil {
		var idx []int32
		for _, l := range lists {
			idx = append(idx, l.Idx...)
		}
		*all = core.NewRowList(idx)
	}
	return *all
}

// rowLists returns the set's exchange lists, made the first time.
func (h *SetHalo) rowLists() *rowLists {
	if h.lists != nil {
		return h.lists
	}
	rl := &rowLists{}
	for _, n := range h.Neighbours {
		var recv []int32
		for _, rng := range [2][2]int32{n.RecvExec, n.RecvNonexec} {
			for e := rng[0]; e < rng[1]; e++ {
				recv = append(recv, e)
			}
		}
		rl.send = append(rl.send, core.NewRowList(n.Send))
		rl.recv = append(rl.recv, core.NewRowList(recv))
	}
	h.lists = rl
	return rl
}

// NewSetHalo is the SetHalo of a rank's part ls of a set of globalSize
// elements (numbered from 0: set Base otherwise).
func NewSetHalo(ls *LocalSet, globalSize int) *SetHalo {
	return &SetHalo{Global: ls.Global, Neighbours: ls.Neighbours, GlobalSize: globalSize}
}

// Row is local element i's row in arrays of the whole set: its global
// number less Base.
func (h *SetHalo) Row(i int) int64 { return h.Global[i] - h.Base }

// Rows are the rows (Row) of the local elements [0, n).
func (h *SetHalo) Rows(n int) []int64 {
	out := make([]int64, n)
	for i, g := range h.Global[:n] {
		out[i] = g - h.Base
	}
	return out
}

// TimedOut reports whether err holds an *mpi.TimeoutError: an MPI wait ran
// out of time (OP2_MPI_TIMEOUT), after which MPI's state is unusable and
// the job must be aborted.
func TimedOut(err error) bool {
	var te *mpi.TimeoutError
	return errors.As(err, &te)
}

// SameDeclarations checks that every rank declared the same mesh shape
// (sets, maps, dats, partitioner: one line each) as rank 0, giving every
// rank the same error otherwise.
func SameDeclarations(c Comm, shape string) error {
	got, err := collective.Allgather(c, []byte(shape))
	if err != nil {
		return err
	}
	for r, b := range got {
		if string(b) != string(got[0]) {
			return fmt.Errorf("rank %d declared a different mesh from rank 0 (every rank must declare the same sets, maps and dats in the same order, and choose the same partitioner):\nrank 0:\n%srank %d:\n%s", r, got[0], r, b)
		}
	}
	return nil
}
