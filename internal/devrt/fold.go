package devrt

import (
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/core"
)

// Fence marks the end of an asynchronous copy (AsyncReader).
type Fence any

// AsyncReader is a Driver that copies device memory to the host without
// waiting: a loop's reduction results then travel while later loops are
// queued, and the host waits for them only when it reads the Global (or
// a later loop needs it: core.Storage.SetPending).
type AsyncReader interface {
	// HostBuffer allocates n bytes of host memory the device may copy
	// into after the call that queued the copy returns (pinned).
	HostBuffer(n int) (unsafe.Pointer, error)
	FreeHostBuffer(p unsafe.Pointer)
	NewFence() (Fence, error)
	FreeFence(f Fence)
	// ReadAsync queues a copy of n bytes of b to dst, a HostBuffer,
	// after the work queued before it; f marks its end.
	ReadAsync(b Buffer, dst unsafe.Pointer, n int, f Fence) error
	// Settle waits for the copy f marks.
	Settle(f Fence) error
}

// foldDepth is how many copies of one reduction argument's partial results
// a Program keeps on their way at once: a loop that only reduces into a
// Global, repeated, queues its copies without waiting, and waits (for
// everything pending on that Global) once in foldDepth calls.
const foldDepth = 8

// foldRing is a reduction argument's pending folds, used in turn.
type foldRing struct {
	fd   [foldDepth]*pendingFold
	next int
}

// pendingFold is a reduction argument's partial results on their way to the
// host: the copy into host, which settle folds into the Global s once it
// has arrived. A Program keeps foldDepth per reduction argument, reused.
type pendingFold struct {
	ar    AsyncReader
	fence Fence
	host  unsafe.Pointer
	size  int
	n     int // bytes copied
	slots int
	acc   core.Access
	s     *core.Storage // the Global, while the fold is pending
	// kernel and set name the loop for messages (its core.Loop may be
	// reused once it has run).
	kernel, set string
	// inflight says that the copy may still be on its way (its fence
	// not waited for): a fold dropped (drop) still waits for it before
	// its host memory is reused or freed.
	inflight bool
}

// Settle waits for the copy and folds the partial results into the
// Global, in slot order, as the synchronous path does (core.Pending).
func (fd *pendingFold) Settle() error {
	if fd.s == nil {
		return nil
	}
	s := fd.s
	fd.s = nil
	if err := fd.arrive(); err != nil {
		return fmt.Errorf("%s: reading the partial results of %s: %w", fd.loopName(), s.Describe(), err)
	}
	combine(fd.acc, s, unsafe.Slice((*byte)(fd.host), fd.n), fd.slots)
	return nil
}

// Drop forgets the fold, whose Global's values are overwritten
// (core.Storage.HostOverwrite), without waiting for its copy; the copy is
// waited for before the fold's host memory is reused (core.Pending).
func (fd *pendingFold) Drop() { fd.s = nil }

// arrive waits for the copy, if it may be on its way.
func (fd *pendingFold) arrive() error {
	if !fd.inflight {
		return nil
	}
	fd.inflight = false
	return fd.ar.Settle(fd.fence)
}

// loopName names the fold's loop for messages, as core.Loop.Name does.
func (fd *pendingFold) loopName() string {
	return fmt.Sprintf("loop %q over set %q", fd.kernel, fd.set)
}

// wait settles the fold's pending copy, if any, through its Global, or
// waits for the copy of a fold dropped.
func (fd *pendingFold) wait() error {
	if fd.s != nil {
		return fd.s.Settle()
	}
	if err := fd.arrive(); err != nil {
		return fmt.Errorf("%s: copying the partial results of a reduction: %w", fd.loopName(), err)
	}
	return nil
}

// free releases the fold's host memory and fence, once its copy has
// arrived.
func (fd *pendingFold) free() {
	_ = fd.arrive()
	if fd.host != nil {
		fd.ar.FreeHostBuffer(fd.host)
		fd.host, fd.size = nil, 0
	}
	if fd.fence != nil {
		fd.ar.FreeFence(fd.fence)
		fd.fence = nil
	}
}

// foldFor returns the next of argument i's folds, with room for n bytes;
// if its earlier copy is still pending, everything pending on its Global
// is settled first.
func (p *Program) foldFor(ar AsyncReader, i, n int) (*pendingFold, error) {
	if p.folds == nil {
		p.folds = make([]*foldRing, len(p.red))
	}
	r := p.folds[i]
	if r == nil {
		r = &foldRing{}
		p.folds[i] = r
	}
	fd := r.fd[r.next]
	if fd == nil {
		fd = &pendingFold{ar: ar}
		r.fd[r.next] = fd
	}
	r.next = (r.next + 1) % foldDepth
	if err := fd.wait(); err != nil {
		return nil, err
	}
	if fd.fence == nil {
		f, err := ar.NewFence()
		if err != nil {
			return nil, err
		}
		fd.fence = f
	}
	if fd.size < n {
		if fd.host != nil {
			ar.FreeHostBuffer(fd.host)
			fd.host, fd.size = nil, 0
		}
		h, err := ar.HostBuffer(n)
		if err != nil {
			return nil, err
		}
		fd.host, fd.size = h, n
	}
	return fd, nil
}

// readLater queues the copy of argument i's n bytes of partial results
// (slots of them) and leaves their folding into the Global pending, when
// the driver copies asynchronously; it reports false otherwise.
func (p *Program) readLater(l *core.Loop, i, n, slots int) (bool, error) {
	ar, ok := p.drv.(AsyncReader)
	if !ok {
		return false, nil
	}
	fd, err := p.foldFor(ar, i, n)
	if err != nil {
		return false, fmt.Errorf("%s: %w", l.Name(), err)
	}
	a := &l.Args[i]
	if err := a.Data.HostWillChange(); err != nil {
		return false, err
	}
	if err := ar.ReadAsync(p.red[i], fd.host, n, fd.fence); err != nil {
		return false, fmt.Errorf("%s: reading the partial results of %s: %w", l.Name(), a.Data.Describe(), err)
	}
	fd.n, fd.slots, fd.acc, fd.s, fd.inflight = n, slots, a.Access, a.Data, true
	fd.kernel, fd.set = l.Kernel.Name, l.SetName()
	a.Data.SetPending(fd)
	return true, nil
}

// settleFolds waits for every pending copy of the program's partial
// results and folds them.
func (p *Program) settleFolds() error {
	var first error
	for _, r := range p.folds {
		if r == nil {
			continue
		}
		for _, fd := range r.fd {
			if fd != nil {
				if err := fd.wait(); err != nil && first == nil {
					first = err
				}
			}
		}
	}
	return first
}
