package dist

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/goop2/op2/internal/mpi"
)

// flagsTag is the message tag of ExchangeFlags, apart from the loops'
// (below groupTag+groupTags).
const flagsTag = 32100

// ExchangeFlags is collective: every rank passes its values of one int32
// per element of a set (len(vals) = the set's local elements, owned
// first), and gets the owners' values of its halo elements in place of
// its own (the owned values are sent, the halo's overwritten). sh is the
// set's halo (core.Set.Halo); what names the operation in errors. It is
// how a rank learns, for a subset declared by each rank over its owned
// elements, which of its exec halo elements are in it.
func ExchangeFlags(w World, sh *SetHalo, vals []int32, what string) error {
	if sh == nil || len(sh.Neighbours) == 0 {
		return nil
	}
	ns, nr := 0, 0
	for _, n := range sh.Neighbours {
		ns += len(n.Send)
		nr += int(n.RecvExec[1]-n.RecvExec[0]) + int(n.RecvNonexec[1]-n.RecvNonexec[0])
	}
	send := make([]int32, ns+1) // +1: never empty, so &send[0] exists
	recv := make([]int32, nr+1)
	// MPI reads and writes the buffers after the calls that post them.
	var pin runtime.Pinner
	pin.Pin(&send[0])
	pin.Pin(&recv[0])
	defer pin.Unpin()
	var sends, recvs []mpi.Msg
	so, ro := 0, 0
	for _, n := range sh.Neighbours {
		if len(n.Send) > 0 {
			for j, e := range n.Send {
				send[so+j] = vals[e]
			}
			sends = append(sends, mpi.Msg{Buf: uintptr(unsafe.Pointer(&send[so])), Bytes: int64(4 * len(n.Send)), Rank: int32(n.Rank), Tag: flagsTag})
			so += len(n.Send)
		}
		if k := int(n.RecvExec[1]-n.RecvExec[0]) + int(n.RecvNonexec[1]-n.RecvNonexec[0]); k > 0 {
			recvs = append(recvs, mpi.Msg{Buf: uintptr(unsafe.Pointer(&recv[ro])), Bytes: int64(4 * k), Rank: int32(n.Rank), Tag: flagsTag})
			ro += k
		}
	}
	if err := w.Start(recvs, sends); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := w.Wait(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	ro = 0
	for _, n := range sh.Neighbours {
		for _, rng := range [2][2]int32{n.RecvExec, n.RecvNonexec} {
			k := int(rng[1] - rng[0])
			copy(vals[rng[0]:rng[1]], recv[ro:ro+k])
			ro += k
		}
	}
	return nil
}
