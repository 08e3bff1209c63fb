package op2

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/mpi"
)

// haloExchange exchanges halos and combines reductions around each loop of
// a partitioned run (exec.Halo). Following OP2: before a loop, a Dat is
// exchanged when its halo is out of date and the loop reads it (READ or
// RW) through a map, or directly while the loop also computes the exec
// halo; after the loop, every Dat it modified has an out-of-date halo. The
// owned values are always complete, because every element touching an
// owned element runs on its owner (owner-compute over the exec halo).
type haloExchange struct {
	w       *mpi.World
	pending []*datHalo
	recvs   []mpi.Msg
	sends   []mpi.Msg
	// Exchanges counts the Dat exchanges started (tests).
	exchanges int
}

// datHalo is a Dat's exchange buffers.
type datHalo struct {
	s    *core.Storage
	set  *setHalo
	elem int
	send []byte // pinned: MPI reads it after the call that posts it
	recv []byte
}

func (h *haloExchange) buffers(s *core.Storage, sh *setHalo) *datHalo {
	if d, ok := s.HaloBuf.(*datHalo); ok {
		return d
	}
	d := &datHalo{s: s, set: sh, elem: s.Dim * s.Type.Size()}
	ns, nr := 0, 0
	for _, n := range sh.neighbours {
		ns += len(n.Send)
		nr += int(n.RecvExec[1]-n.RecvExec[0]) + int(n.RecvNonexec[1]-n.RecvNonexec[0])
	}
	d.send = make([]byte, ns*d.elem+1)
	d.recv = make([]byte, nr*d.elem+1)
	core.KeepPinned(d, &d.send[0], &d.recv[0])
	s.HaloBuf = d
	return d
}

func needsExchange(l *core.Loop, i int) bool {
	a := &l.Args[i]
	if a.Kind == core.ArgGlobal || !a.Data.HaloStale || (a.Access != core.Read && a.Access != core.RW) {
		return false
	}
	if a.Map != nil {
		return true
	}
	// A direct argument's halo matters when the exec halo runs; any
	// other argument of the same Dat through a map is covered by i's
	// Base.
	return l.IterEnd() > l.Set.Owned
}

// Begin starts the exchanges l needs and sets the other ranks' INC
// reductions to zero, so that the declared value is counted once.
func (h *haloExchange) Begin(l *core.Loop) error {
	h.pending, h.recvs, h.sends = h.pending[:0], h.recvs[:0], h.sends[:0]
	for i := range l.Args {
		if l.Sig.Base[i] != i {
			continue
		}
		a := &l.Args[i]
		if a.Kind == core.ArgGlobal && a.Access == core.Inc && h.w.Rank() != 0 {
			if err := a.Data.HostAccess(true); err != nil {
				return err
			}
			clear(unsafe.Slice((*byte)(a.Data.Host), a.Data.Bytes()))
		}
		exchange := needsExchange(l, i)
		for j := i + 1; j < len(l.Args) && !exchange; j++ {
			exchange = l.Sig.Base[j] == i && needsExchange(l, j)
		}
		if !exchange {
			continue
		}
		s := a.Data
		sh, ok := s.Set.Halo.(*setHalo)
		s.HaloStale = false
		if !ok || len(sh.neighbours) == 0 {
			continue
		}
		if err := s.HostAccess(false); err != nil {
			return fmt.Errorf("%s: argument %d: %w", l.Name(), i, err)
		}
		d := h.buffers(s, sh)
		so, ro := 0, 0
		tag := int32(s.ID % 30000)
		for _, n := range sh.neighbours {
			if len(n.Send) > 0 {
				b := d.send[so*d.elem:]
				mpi.Pack(unsafe.Pointer(&b[0]), s.Host, n.Send, d.elem)
				h.sends = append(h.sends, mpi.Msg{Buf: uintptr(unsafe.Pointer(&b[0])), Bytes: int64(len(n.Send) * d.elem), Rank: int32(n.Rank), Tag: tag})
				so += len(n.Send)
			}
			if k := int(n.RecvExec[1]-n.RecvExec[0]) + int(n.RecvNonexec[1]-n.RecvNonexec[0]); k > 0 {
				b := d.recv[ro*d.elem:]
				h.recvs = append(h.recvs, mpi.Msg{Buf: uintptr(unsafe.Pointer(&b[0])), Bytes: int64(k * d.elem), Rank: int32(n.Rank), Tag: tag})
				ro += k
			}
		}
		h.pending = append(h.pending, d)
		h.exchanges++
	}
	if len(h.recvs)+len(h.sends) == 0 {
		return nil
	}
	return h.w.Start(h.recvs, h.sends)
}

// Wait completes the exchanges and copies what arrived into the halos.
func (h *haloExchange) Wait(l *core.Loop) error {
	if len(h.pending) == 0 {
		return nil
	}
	if err := h.w.Wait(); err != nil {
		return fmt.Errorf("%s: halo exchange: %w", l.Name(), err)
	}
	for _, d := range h.pending {
		s := d.s
		if err := s.HostAccess(true); err != nil { // the device copy, if any, is now stale
			return err
		}
		ro := 0
		for _, n := range d.set.neighbours {
			for _, rng := range [2][2]int32{n.RecvExec, n.RecvNonexec} {
				k := int(rng[1]-rng[0]) * d.elem
				if k == 0 {
					continue
				}
				dst := unsafe.Slice((*byte)(unsafe.Add(s.Host, int(rng[0])*d.elem)), k)
				copy(dst, d.recv[ro:ro+k])
				ro += k
			}
		}
	}
	clear(h.pending)
	h.pending = h.pending[:0]
	return nil
}

// End marks modified halos out of date and combines the reductions: every
// rank gathers every rank's result and folds them in rank order, so the
// result is the same bits on every rank and repeatable.
func (h *haloExchange) End(l *core.Loop) error {
	for i := range l.Args {
		a := &l.Args[i]
		if a.Kind != core.ArgGlobal && a.Access.Modifies() {
			a.Data.HaloStale = true
		}
	}
	for _, i := range l.Sig.Reductions {
		if l.Sig.Base[i] != i {
			continue
		}
		a := &l.Args[i]
		s := a.Data
		if err := s.HostAccess(true); err != nil {
			return err
		}
		mine := unsafe.Slice((*byte)(s.Host), s.Bytes())
		all := make([]byte, len(mine)*h.w.Size())
		if err := h.w.Allgather(mine, all); err != nil {
			return fmt.Errorf("%s: reduction of %s across ranks: %w", l.Name(), s.Describe(), err)
		}
		combine(s.Type, a.Access, mine, all)
	}
	return nil
}

// combine folds the ranks' values in all (rank after rank) into dst.
func combine(t core.ScalarType, acc core.Access, dst, all []byte) {
	le := binary.LittleEndian
	switch t {
	case core.Float64:
		fold(acc, dst, all, math.Float64frombits, math.Float64bits, le.Uint64, le.PutUint64)
	case core.Float32:
		fold(acc, dst, all, math.Float32frombits, math.Float32bits, le.Uint32, le.PutUint32)
	case core.Int32:
		fold(acc, dst, all, func(u uint32) int32 { return int32(u) }, func(v int32) uint32 { return uint32(v) }, le.Uint32, le.PutUint32)
	case core.Uint32:
		fold(acc, dst, all, func(u uint32) uint32 { return u }, func(v uint32) uint32 { return v }, le.Uint32, le.PutUint32)
	case core.Int64:
		fold(acc, dst, all, func(u uint64) int64 { return int64(u) }, func(v int64) uint64 { return uint64(v) }, le.Uint64, le.PutUint64)
	}
}

func fold[T int32 | int64 | uint32 | float32 | float64, U uint32 | uint64](acc core.Access, dst, all []byte,
	from func(U) T, to func(T) U, get func([]byte) U, put func([]byte, U)) {
	size, n := int(unsafe.Sizeof(U(0))), len(dst)
	ranks := len(all) / n
	for k := 0; k < n; k += size {
		v := from(get(all[k:]))
		for r := 1; r < ranks; r++ {
			x := from(get(all[r*n+k:]))
			switch acc {
			case core.Inc:
				v += x
			case core.Min:
				v = min(v, x)
			case core.Max:
				v = max(v, x)
			}
		}
		put(dst[k:], to(v))
	}
}
