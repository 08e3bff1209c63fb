package devrt

import (
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/core"
)

// foldDepth is how many calls' partial results of one reduction argument
// a Program keeps on the device at once: a loop that only reduces into a
// Global, repeated, leaves each call's partial results in the next of
// foldDepth slots of one device buffer, and folds everything pending on
// that Global once in foldDepth calls, reading the slots in one copy.
const foldDepth = 32

// foldRing is a reduction argument's device buffer of partial results,
// foldDepth slots of slotBytes each, and the pending folds of the calls
// that wrote them.
type foldRing struct {
	buf       Buffer
	slotBytes int
	fd        [foldDepth]*pendingFold
	cur       int    // the slot the bound (or last) call writes
	next      int    // the slot after the last call's pending one
	host      []byte // the slots read back (fetch), at their device offsets
}

// pendingFold is a call's partial results of a reduction left on the
// device, in slot k of its ring, until the host needs the Global s:
// Settle then reads and folds them (core.Pending).
type pendingFold struct {
	drv     Driver
	r       *foldRing
	k       int
	n       int  // bytes of partial results
	fetched bool // read into r.host since the call wrote them
	slots   int
	acc     core.Access
	s       *core.Storage // the Global, while the fold is pending
	// kernel and set name the loop for messages (its core.Loop may be
	// reused once it has run).
	kernel, set string
}

// Settle reads the partial results from the device, with those of every
// other fold pending in the ring (one copy, after the work queued
// before), and folds them into the Global in work-group order, as the
// synchronous path does (core.Pending).
func (fd *pendingFold) Settle() error {
	if fd.s == nil {
		return nil
	}
	s := fd.s
	fd.s = nil
	if !fd.fetched {
		if err := fd.r.fetch(fd.drv, fd); err != nil {
			return fmt.Errorf("%s: reading the partial results of %s: %w", fd.loopName(), s.Describe(), err)
		}
	}
	off := fd.k * fd.r.slotBytes
	combine(fd.acc, s, fd.r.host[off:off+fd.n], fd.slots)
	return nil
}

// Drop forgets the fold, whose Global's values are overwritten
// (core.Storage.HostOverwrite): its partial results are never read, and
// its slot is free for the next call (core.Pending).
func (fd *pendingFold) Drop() { fd.s = nil }

// pending says whether the fold waits to be folded.
func (fd *pendingFold) pending() bool { return fd != nil && fd.s != nil }

// loopName names the fold's loop for messages, as core.Loop.Name does.
func (fd *pendingFold) loopName() string {
	return fmt.Sprintf("loop %q over set %q", fd.kernel, fd.set)
}

// wait settles the fold, if it is pending, through its Global: everything
// pending on the Global is folded, in order.
func (fd *pendingFold) wait() error {
	if !fd.pending() {
		return nil
	}
	return fd.s.Settle()
}

// fetch reads the slots of every pending fold not yet read, first among
// them fd's, into r.host with one copy of the bytes from the first such
// slot to the end of the last.
func (r *foldRing) fetch(drv Driver, fd *pendingFold) error {
	lo, hi := fd.k, fd.k
	for k, f := range r.fd {
		if f.pending() && !f.fetched {
			lo, hi = min(lo, k), max(hi, k)
		}
	}
	if len(r.host) < foldDepth*r.slotBytes {
		r.host = make([]byte, foldDepth*r.slotBytes)
	}
	from, to := lo*r.slotBytes, hi*r.slotBytes+r.fd[hi].n
	if err := drv.ReadAt(r.buf, from, unsafe.Pointer(&r.host[from]), to-from); err != nil {
		return err
	}
	for k := lo; k <= hi; k++ {
		if f := r.fd[k]; f.pending() || f == fd {
			f.fetched = true
		}
	}
	return nil
}

// anyPending reports whether a call's results wait in the ring.
func (r *foldRing) anyPending() bool {
	for _, f := range r.fd {
		if f.pending() {
			return true
		}
	}
	return false
}

// ring returns reduction argument i's ring.
func (p *Program) ring(i int) *foldRing {
	r := p.folds[i]
	if r == nil {
		r = &foldRing{}
		p.folds[i] = r
	}
	return r
}

// bound returns the ring's buffer and the byte offset of the slot the
// bound call writes (bindPartials).
func (r *foldRing) bound() (Buffer, int) { return r.buf, r.cur * r.slotBytes }

// bindPartials binds a slot of argument i's ring to the call, with room
// for need bytes (foldRing.bound). The slot is the first when no call's
// results wait in the ring (a program that reads the Global after each
// loop, or after every few, uses the same slots in the same order, so
// that its launches repeat for CUDA graphs), the last call's again when
// its results were folded or dropped, else the next, whose fold, if
// still pending, is settled first with everything pending on its Global.
func (p *Program) bindPartials(i, need int) error {
	r := p.ring(i)
	if r.buf == nil || r.slotBytes < need {
		// A larger buffer: the pending folds' results are in the old one.
		for _, f := range r.fd {
			if err := f.wait(); err != nil {
				return err
			}
		}
		if r.buf != nil {
			p.drv.Free(r.buf)
			r.buf, r.slotBytes = nil, 0
		}
		buf, err := p.drv.Alloc(foldDepth * need)
		if err != nil {
			return err
		}
		r.buf, r.slotBytes = buf, need
	}
	k := r.cur
	switch {
	case r.fd[k].pending():
		k = r.next
	case !r.anyPending():
		k = 0
	}
	if err := r.fd[k].wait(); err != nil {
		return err
	}
	r.cur = k
	return nil
}

// readLater leaves argument i's n bytes of partial results (slots of
// them) on the device, in the slot the call wrote, and their folding into
// the Global pending; the next call writes the next slot.
func (p *Program) readLater(l *core.Loop, i, n, slots int) error {
	r := p.ring(i)
	fd := r.fd[r.cur]
	if fd == nil {
		fd = &pendingFold{drv: p.drv, r: r, k: r.cur}
		r.fd[r.cur] = fd
	}
	a := &l.Args[i]
	if err := a.Data.HostWillChange(); err != nil {
		return err
	}
	fd.n, fd.fetched, fd.slots, fd.acc, fd.s = n, false, slots, a.Access, a.Data
	fd.kernel, fd.set = l.Kernel.Name, l.SetName()
	a.Data.SetPending(fd)
	r.next = (r.cur + 1) % foldDepth
	return nil
}

// settleFolds folds every pending partial result of the program.
func (p *Program) settleFolds() error {
	var first error
	for _, r := range p.folds {
		if r == nil {
			continue
		}
		for _, fd := range r.fd {
			if err := fd.wait(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// freeFolds settles every pending fold and frees the rings' buffers.
func (p *Program) freeFolds() {
	// Pending partial results reach their Globals first; an error there
	// is the device's, which its next use reports.
	_ = p.settleFolds()
	for i, r := range p.folds {
		if r != nil && r.buf != nil {
			p.drv.Free(r.buf)
		}
		p.folds[i] = nil
	}
}
