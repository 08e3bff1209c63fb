// Package disttest simulates the ranks of an MPI job in one process, for
// tests of distributed algorithms (package dist): each rank is a goroutine
// holding a *Proc, which has the methods of dist.World (the collective
// operations Alltoallv, Allgather and AllreduceOr, and non-blocking
// point-to-point messages through Start and Wait). It does not import
// package dist, so that dist's own tests can use it.
//
// Every wait is bounded: a rank that waits longer than the world's timeout
// for the other ranks (a collective that not every rank joins, a message
// never sent) gets an *mpi.TimeoutError, as a real job under
// OP2_MPI_TIMEOUT does, so that a test whose ranks take different paths
// fails instead of hanging. Ranks that call different collective
// operations at the same step all get an error naming both.
package disttest

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/mpi"
)

// DefaultTimeout bounds every wait of a World made with a zero timeout.
const DefaultTimeout = 10 * time.Second

// World is a simulated job of Size ranks.
type World struct {
	n       int
	timeout time.Duration
	procs   []*Proc

	mu      sync.Mutex
	changed chan struct{}      // closed and replaced at every change
	rounds  map[int]*round     // collective operations in progress, by step
	mail    map[route][][]byte // messages sent and not yet received, in order
}

// round is one collective operation: what each rank brought.
type round struct {
	op       []string   // each rank's operation ("" until it arrives)
	in       [][][]byte // each rank's contribution
	arrived  int
	finished int
}

type route struct{ from, to, tag int }

// New returns a world of n ranks whose waits fail after timeout
// (DefaultTimeout when 0).
func New(n int, timeout time.Duration) *World {
	if n < 1 {
		panic(fmt.Sprintf("disttest: a world of %d ranks", n))
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	w := &World{n: n, timeout: timeout, changed: make(chan struct{}), rounds: map[int]*round{}, mail: map[route][][]byte{}}
	for r := range n {
		w.procs = append(w.procs, &Proc{w: w, rank: r})
	}
	return w
}

// Proc returns rank r's end of the world.
func (w *World) Proc(r int) *Proc { return w.procs[r] }

// Run runs f on every rank of w, each in its own goroutine, and returns
// each rank's error once all have returned. A rank that panics fails with
// an error holding the panic and its stack.
func (w *World) Run(f func(p *Proc) error) []error {
	errs := make([]error, w.n)
	var wg sync.WaitGroup
	for r, p := range w.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					errs[r] = fmt.Errorf("rank %d panicked: %v\n%s", r, v, debug.Stack())
				}
			}()
			errs[r] = f(p)
		}()
	}
	wg.Wait()
	return errs
}

// Run runs f on n simulated ranks (see World.Run) whose waits fail after
// timeout.
func Run(n int, timeout time.Duration, f func(p *Proc) error) []error {
	return New(n, timeout).Run(f)
}

// notify wakes every waiting rank; w.mu is held.
func (w *World) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// wait waits, with w.mu held, until done reports true or the world's
// timeout since start passes; it reports whether done holds.
func (w *World) wait(start time.Time, done func() bool) bool {
	deadline := start.Add(w.timeout)
	for !done() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		ch := w.changed
		w.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-ch:
		case <-t.C:
		}
		t.Stop()
		w.mu.Lock()
	}
	return true
}

// Proc is one simulated rank. Its methods are called from that rank's
// goroutine only, as MPI's are from one thread.
type Proc struct {
	w    *World
	rank int
	step int       // collective operations called so far
	recv []mpi.Msg // receives posted and not yet completed by Wait
	sent int64     // bytes sent, by every operation
	// deviceMemory is what DeviceMemory reports (SetDeviceMemory).
	deviceMemory bool
}

// Rank is this rank's number.
func (p *Proc) Rank() int { return p.rank }

// Size is the number of ranks.
func (p *Proc) Size() int { return p.w.n }

// DeviceMemory reports whether this rank's messages may be device memory,
// as a CUDA-aware MPI's are (SetDeviceMemory; false unless set). The
// simulated network reads and writes any message at its address.
func (p *Proc) DeviceMemory() bool { return p.deviceMemory }

// SetDeviceMemory sets what DeviceMemory reports.
func (p *Proc) SetDeviceMemory(on bool) { p.deviceMemory = on }

// SentBytes is the number of bytes this rank has sent so far, in every
// operation (tests of communication volume).
func (p *Proc) SentBytes() int64 { return p.sent }

// collective joins the rank's next collective operation op with its
// contribution and returns every rank's, by rank.
func (p *Proc) collective(op string, mine [][]byte) ([][][]byte, error) {
	w := p.w
	start := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	step := p.step
	p.step++
	rd := w.rounds[step]
	if rd == nil {
		rd = &round{op: make([]string, w.n), in: make([][][]byte, w.n)}
		w.rounds[step] = rd
	}
	rd.op[p.rank] = op
	rd.in[p.rank] = mine
	rd.arrived++
	if rd.arrived == w.n {
		w.notify()
	}
	if !w.wait(start, func() bool { return rd.arrived == w.n }) {
		var missing []int
		for r, o := range rd.op {
			if o == "" {
				missing = append(missing, r)
			}
		}
		return nil, fmt.Errorf("disttest: ranks %v never joined: %w", missing, &mpi.TimeoutError{Rank: p.rank, Op: op, Waited: w.timeout})
	}
	rd.finished++
	if rd.finished == w.n {
		delete(w.rounds, step)
	}
	for r, o := range rd.op {
		if o != op {
			return nil, fmt.Errorf("disttest: collective operation %d: rank %d called %s while rank %d called %s", step, p.rank, op, r, o)
		}
	}
	return rd.in, nil
}

// Alltoallv sends send[q] to rank q and returns what each rank sent this
// one, indexed by sender.
func (p *Proc) Alltoallv(send [][]byte) ([][]byte, error) {
	if len(send) != p.w.n {
		return nil, fmt.Errorf("MPI_Alltoallv: %d send buffers for %d ranks", len(send), p.w.n)
	}
	mine := make([][]byte, len(send))
	for q, b := range send {
		mine[q] = slices.Clone(b)
		p.sent += int64(len(b))
	}
	all, err := p.collective("MPI_Alltoallv", mine)
	if err != nil {
		return nil, err
	}
	got := make([][]byte, p.w.n)
	for q := range got {
		got[q] = slices.Clone(all[q][p.rank])
	}
	return got, nil
}

// Allgather gathers every rank's send (all the same length) into recv,
// in rank order; len(recv) = Size()*len(send).
func (p *Proc) Allgather(send, recv []byte) error {
	if len(recv) != p.w.n*len(send) {
		return fmt.Errorf("MPI_Allgather: receive buffer of %d bytes, want %d", len(recv), p.w.n*len(send))
	}
	p.sent += int64(len(send) * p.w.n)
	all, err := p.collective("MPI_Allgather", [][]byte{slices.Clone(send)})
	if err != nil {
		return err
	}
	for r, in := range all {
		if len(in[0]) != len(send) {
			return fmt.Errorf("MPI_Allgather: rank %d sent %d bytes, rank %d %d", r, len(in[0]), p.rank, len(send))
		}
		copy(recv[r*len(send):], in[0])
	}
	return nil
}

// AllreduceOr replaces buf with the bitwise OR of every rank's buf (all
// the same length).
func (p *Proc) AllreduceOr(buf []byte) error {
	p.sent += int64(len(buf))
	all, err := p.collective("MPI_Allreduce", [][]byte{slices.Clone(buf)})
	if err != nil {
		return err
	}
	for r, in := range all {
		if len(in[0]) != len(buf) {
			return fmt.Errorf("MPI_Allreduce: rank %d reduced %d bytes, rank %d %d", r, len(in[0]), p.rank, len(buf))
		}
	}
	clear(buf)
	for _, in := range all {
		for i, b := range in[0] {
			buf[i] |= b
		}
	}
	return nil
}

// msgBytes is the memory of m: m.Buf is pinned (or C) memory that stays
// put until Wait returns, by Start's contract.
func msgBytes(m *mpi.Msg) []byte {
	if m.Bytes == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&m.Buf))), m.Bytes)
}

// Start posts recvs, then sends, without waiting for them; Wait completes
// them. A send's bytes are copied at once (the simulated network buffers
// every message), so only receives wait. Messages between two ranks with
// one tag arrive in the order they were posted.
func (p *Proc) Start(recvs, sends []mpi.Msg) error {
	for _, m := range slices.Concat(recvs, sends) {
		if m.Rank < 0 || int(m.Rank) >= p.w.n {
			return fmt.Errorf("MPI_Isend/MPI_Irecv: rank %d outside [0,%d)", m.Rank, p.w.n)
		}
		if m.Bytes < 0 || (m.Bytes > 0 && m.Buf == 0) {
			return fmt.Errorf("MPI_Isend/MPI_Irecv: a message of %d bytes at %#x", m.Bytes, m.Buf)
		}
	}
	p.recv = append(p.recv, recvs...)
	if len(sends) == 0 {
		return nil
	}
	w := p.w
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range sends {
		m := &sends[i]
		k := route{from: p.rank, to: int(m.Rank), tag: int(m.Tag)}
		w.mail[k] = append(w.mail[k], slices.Clone(msgBytes(m)))
		p.sent += m.Bytes
	}
	w.notify()
	return nil
}

// Wait completes every receive Start posted, copying each message into
// its buffer. When some do not arrive within the world's timeout it fails
// with an *mpi.TimeoutError whose Pending lists them (indices into the
// receives posted); a message longer than its receive is an error, as
// MPI's truncation.
func (p *Proc) Wait() error {
	w := p.w
	start := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	done := make([]bool, len(p.recv))
	left := len(p.recv)
	var truncated error
	take := func() bool {
		for i := range p.recv {
			if done[i] {
				continue
			}
			m := &p.recv[i]
			k := route{from: int(m.Rank), to: p.rank, tag: int(m.Tag)}
			q := w.mail[k]
			if len(q) == 0 {
				continue
			}
			got := q[0]
			if len(q) == 1 {
				delete(w.mail, k)
			} else {
				w.mail[k] = q[1:]
			}
			if int64(len(got)) > m.Bytes && truncated == nil {
				truncated = fmt.Errorf("MPI_Waitall: a message of %d bytes from rank %d (tag %d) into a receive of %d bytes", len(got), m.Rank, m.Tag, m.Bytes)
			}
			copy(msgBytes(m), got)
			done[i] = true
			left--
		}
		return left == 0 || truncated != nil
	}
	ok := w.wait(start, take)
	recv := p.recv
	p.recv = nil
	switch {
	case truncated != nil:
		return truncated
	case !ok:
		te := &mpi.TimeoutError{Rank: p.rank, Op: "MPI_Waitall", Waited: w.timeout}
		for i := range recv {
			if !done[i] {
				te.Pending = append(te.Pending, i)
			}
		}
		return te
	}
	return nil
}
