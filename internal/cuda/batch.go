package cuda

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"
)

// A batch holds kernel launches queued on the host (Device.Batch): they
// reach the device together when the batch is full or when anything else
// is asked of the device (a copy, a wait, a free, an event), so that the
// device sees every operation in the order the program asked for it. A
// batch seen before is replayed as a CUDA graph, one launch for all its
// kernels; one seen for the first time is launched kernel by kernel, so
// that a sequence that never repeats costs no graph.

// launch is one queued kernel launch; its parameters' values are
// nparams 8-byte slots of the batch's vals.
type launch struct {
	fn                    uintptr // CUfunction
	groups, local, shared uint32
	nparams               uint32
}

// graphAPI is what a batch needs of the driver. launchAll launches ls in
// order, the parameters of each in turn in vals, and returns the index of
// the launch that failed with the error; instantiate makes a graph of ls
// run one after another and returns its executable form.
type graphAPI interface {
	launchAll(ls []launch, vals []uint64) (failed int, err error)
	canGraph() bool
	instantiate(ls []launch, vals []uint64) (unsafe.Pointer, error)
	launchGraph(exec unsafe.Pointer) error
	destroyGraph(exec unsafe.Pointer)
}

// Batch limits: launches per batch; graphs kept (the one replayed least
// recently goes first); batches remembered as seen once (forgotten all
// together beyond it); graphs the driver may fail to make before graphs
// go off.
const (
	batchLaunches = 32
	batchGraphs   = 64
	batchSeen     = 1024
	batchMakeFail = 3
)

// graph is a batch replayed as a CUDA graph, with the launches it was
// made of (a hash match is checked against them).
type graph struct {
	exec     unsafe.Pointer // CUgraphExec
	launches []launch
	vals     []uint64
}

type batch struct {
	api      graphAPI
	launches []launch
	vals     []uint64
	labels   []string // each launch's loop, for errors
	graphs   map[uint64]*graph
	order    []uint64 // graphs' keys, replayed least recently first
	seen     map[uint64]bool
	makeFail int   // graphs the driver failed to make
	noGraphs error // why graphs are not used, once that reached batchMakeFail
	late     error // a flush's error no caller could return, for the next
	// graphsOff, if not nil, is told why graphs went off.
	graphsOff func(error)

	// Counts for tests: batches launched kernel by kernel, replayed as
	// graphs, and graphs made.
	direct, replayed, made int
}

func newBatch(api graphAPI) *batch {
	return &batch{api: api, graphs: make(map[uint64]*graph), seen: make(map[uint64]bool)}
}

// add queues a launch with the parameter values vals (copied), for the
// loop label; it flushes the batch when full.
func (b *batch) add(l launch, vals []uint64, label string) error {
	b.launches = append(b.launches, l)
	b.vals = append(b.vals, vals...)
	b.labels = append(b.labels, label)
	if len(b.launches) >= batchLaunches {
		return b.flush()
	}
	return nil
}

// QueuedError is the failure of kernel launches queued in a batch, which
// reached the device together at a flush (the batch full, or a copy, a
// wait, a free asked of the device): it may be a launch's of an earlier
// loop, or of a flush no caller could report then, and launches queued
// before the failing one ran.
type QueuedError struct{ Err error }

func (e *QueuedError) Error() string { return e.Err.Error() }
func (e *QueuedError) Unwrap() error { return e.Err }

// MayHaveRun reports that launches of the batch may have run, whichever
// call returned the error (the executor's rule: exec.PartlyRan), so that
// no loop is run again for it.
func (e *QueuedError) MayHaveRun() bool { return true }

// flush sends the queued launches to the device (send); a failure is a
// *QueuedError.
func (b *batch) flush() error {
	if err := b.send(); err != nil {
		return &QueuedError{Err: err}
	}
	return nil
}

// send sends the queued launches to the device: as the graph of a batch
// seen before (made now if it was seen once), else one by one.
func (b *batch) send() error {
	if err := b.late; err != nil {
		b.late = nil
		return errors.Join(err, b.send())
	}
	if len(b.launches) == 0 {
		return nil
	}
	defer b.clear()
	if len(b.launches) == 1 || b.noGraphs != nil || !b.api.canGraph() {
		return b.launchAll()
	}
	key := b.key()
	if g := b.graphs[key]; g != nil && slices.Equal(g.launches, b.launches) && slices.Equal(g.vals, b.vals) {
		b.replayed++
		if i := slices.Index(b.order, key); i >= 0 && i < len(b.order)-1 {
			b.order = append(slices.Delete(b.order, i, i+1), key)
		}
		return b.wrap(b.api.launchGraph(g.exec), "cuGraphLaunch")
	}
	if !b.seen[key] {
		if len(b.seen) >= batchSeen {
			clear(b.seen)
		}
		b.seen[key] = true
		return b.launchAll()
	}
	exec, err := b.api.instantiate(b.launches, b.vals)
	if err != nil {
		// The kernels may still run one by one. The error may be a
		// passing one (memory) or an earlier kernel's (a device
		// error sticks to the context): graphs go off only when it
		// keeps failing.
		if b.makeFail++; b.makeFail >= batchMakeFail {
			b.noGraphs = err
			if b.graphsOff != nil {
				b.graphsOff(err)
			}
		}
		return b.launchAll()
	}
	if old := b.graphs[key]; old != nil {
		b.drop(key, old)
	}
	if len(b.order) >= batchGraphs {
		b.drop(b.order[0], b.graphs[b.order[0]])
	}
	b.graphs[key] = &graph{exec: exec, launches: slices.Clone(b.launches), vals: slices.Clone(b.vals)}
	b.order = append(b.order, key)
	b.made++
	b.replayed++
	return b.wrap(b.api.launchGraph(exec), "cuGraphLaunch")
}

func (b *batch) launchAll() error {
	b.direct++
	i, err := b.api.launchAll(b.launches, b.vals)
	if err != nil {
		return fmt.Errorf("cuda: launching loop %s (queued with %d others; the error may be an earlier kernel's): %w", b.labels[i], len(b.launches)-1, err)
	}
	return nil
}

// wrap names the batch's loops in err.
func (b *batch) wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("cuda: %s of the loops %s: %w", what, strings.Join(slices.Compact(slices.Clone(b.labels)), ", "), err)
}

func (b *batch) clear() {
	b.launches, b.vals = b.launches[:0], b.vals[:0]
	clear(b.labels)
	b.labels = b.labels[:0]
}

// drop destroys graph g, kept under key.
func (b *batch) drop(key uint64, g *graph) {
	b.api.destroyGraph(g.exec)
	delete(b.graphs, key)
	if i := slices.Index(b.order, key); i >= 0 {
		b.order = slices.Delete(b.order, i, i+1)
	}
}

// forget destroys every graph (their kernels are about to be unloaded)
// and forgets the batches seen; queued launches must have been flushed.
func (b *batch) forget() {
	for _, key := range slices.Clone(b.order) {
		b.drop(key, b.graphs[key])
	}
	clear(b.seen)
}

// key hashes the queued launches and their parameters (FNV-1a, a word
// at a time).
func (b *batch) key() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	for _, l := range b.launches {
		mix(uint64(l.fn))
		mix(uint64(l.groups)<<32 | uint64(l.local))
		mix(uint64(l.shared)<<32 | uint64(l.nparams))
	}
	for _, v := range b.vals {
		mix(v)
	}
	return h
}
