package op2

import (
	"fmt"
	"reflect"
	"runtime"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/engine"
)

// DataState says where the current values of a Dat or Global are when a
// device backend (opencl) is in use, following PyOP2's five states. Data
// moves only when it is stale where it is needed.
type DataState = core.DataState

// The data states.
const (
	DeviceUnallocated = core.StateDeviceUnallocated // no device copy; the host copy is current
	HostUnallocated   = core.StateHostUnallocated   // declared without values and not used yet: nothing allocated
	Device            = core.StateDevice            // only the device copy is current
	Host              = core.StateHost              // only the host copy is current
	Both              = core.StateBoth              // both copies are current
)

// Scalar is the set of element types a Dat, Global or Const can hold.
type Scalar interface {
	~float64 | ~float32 | ~int32 | ~int64 | ~uint32
}

func scalarType[T Scalar]() core.ScalarType {
	var z T
	switch reflect.TypeOf(z).Kind() {
	case reflect.Float64:
		return core.Float64
	case reflect.Float32:
		return core.Float32
	case reflect.Int32:
		return core.Int32
	case reflect.Int64:
		return core.Int64
	}
	return core.Uint32
}

// pinned allocates n values of T whose address may be handed to C code for
// as long as owner is reachable. The memory is ordinary Go memory: slices
// of it stay valid after owner is gone.
func pinned[T any, O any](owner *O, n int) []T {
	if n == 0 {
		return []T{}
	}
	buf := make([]T, n)
	core.KeepPinned(owner, &buf[0])
	return buf
}

// repinned is pinned for an owner whose buffer is replaced during its
// life (a Dat's values, a Map's table, replaced by Partition): *pin
// holds the pinner of the owner's current buffer, which is released here
// so that the garbage collector can free that buffer once the owner
// drops it (a pinned buffer lives as long as its pin).
func repinned[T any, O any](owner *O, n int, pin **runtime.Pinner) []T {
	return adoptPinned(owner, make([]T, n), pin)
}

// adoptPinned makes buf (allocated for it; nil or empty: none) the
// owner's pinned buffer, releasing the one *pin held.
func adoptPinned[T any, O any](owner *O, buf []T, pin **runtime.Pinner) []T {
	if *pin != nil {
		(*pin).Unpin()
		*pin = nil
	}
	if len(buf) > 0 {
		*pin = core.KeepPinned(owner, &buf[0])
	}
	return buf
}

func hostPtr[T any](buf []T) unsafe.Pointer {
	if len(buf) == 0 {
		return nil
	}
	return unsafe.Pointer(&buf[0])
}

// Dat holds dim values of type T for every element of a set, stored element
// after element (array of structs).
type Dat[T Scalar] struct {
	s    core.Storage // first field: device backends tie cleanups to &s
	data []T
	pin  *runtime.Pinner // data's pin (repinned)

	// keep is what checkpoints know of it apart from it (its
	// description, and SetNoCheckpoint's choice).
	keep *engine.Keep
}

// NewDat declares data on set with dim values per element. data supplies
// the initial values (len = set size × dim) and is copied; nil means zeros.
// dim may be at most MaxDim and the values at most MaxDataBytes in all;
// larger shapes are refused with an error naming the numbers.
func NewDat[T Scalar](set *Set, dim int, data []T, name string) (*Dat[T], error) {
	if set == nil {
		return nil, fmt.Errorf("op2: dat %q: set is nil", name)
	}
	n, err := checkShape(fmt.Sprintf("dat %q on set %q", name, set.c.Name), "dim", set.c.Total, dim, scalarType[T]().Size())
	if err != nil {
		return nil, err
	}
	if data != nil && len(data) != set.c.Owned*dim && len(data) != n {
		return nil, fmt.Errorf("op2: dat %q on set %q: %d values given, want %d (set size %d × dim %d)",
			name, set.c.Name, len(data), set.c.Owned*dim, set.c.Owned, dim)
	}
	if _, err := mpiWorld(); err != nil {
		return nil, err
	}
	d := &Dat[T]{}
	d.s = core.Storage{Name: name, Type: scalarType[T](), Dim: dim, Set: &set.c, Len: n, ID: core.NewID()}
	// Registered (seen by checkpoints and Renumber) once set up.
	defer registerDat(d)
	if rt.proc.DeclareBlocks() {
		rt.proc.AddBlockData(meshDat[T]{d})
	} else if set.c.Halo != nil && data != nil {
		d.s.HaloStale = true // the halo gets the owners' values at the first exchange
	}
	if data == nil && n > 0 {
		// Zeros, allocated where they are first needed: on the host at
		// the first host access or host loop, on the device otherwise.
		d.s.State = core.StateHostUnallocated
		d.s.AllocHost = func() {
			d.data = repinned[T](d, n, &d.pin)
			d.s.Host = hostPtr(d.data)
		}
		return d, nil
	}
	d.data = repinned[T](d, n, &d.pin)
	copy(d.data, data)
	d.s.Host = hostPtr(d.data)
	return d, nil
}

// Name is the dat's name.
func (d *Dat[T]) Name() string { return d.s.Name }

// Dim is the number of values per element; for a dat on an extruded set
// (NewExtrudedDat), per column: the layers times LayerDim.
func (d *Dat[T]) Dim() int { return d.s.Dim }

// Set is the set the dat lives on; for a dat on an extruded set, its
// base set (see ExtrudedSet).
func (d *Dat[T]) Set() *Set { return setOf(d.s.Set) }

// Data returns the values of the owned elements for reading and writing
// (element e's values are Data()[e*dim : (e+1)*dim]). On a device backend
// it first brings the host copy up to date and marks the device copy stale,
// so call it again after later loops rather than keeping the slice. Under
// MPI it may be called on some ranks only: the values it gives may be
// changed, so the next loop that reads the dat's halo (through a map)
// exchanges it; use DataRO to read without that.
//
// Data panics with the error DataErr would return: the failure of a
// recorded loop it runs first (see Chain), or of the copy from the device
// (a device error, which may come from an earlier, asynchronous loop).
// DataErr is the form for programs that handle those failures.
func (d *Dat[T]) Data() []T { return orPanic(d.dataErr("Dat.Data")) }

// DataErr is Data, returning as an error what Data panics with: the
// failure of a recorded loop it runs first, or of the copy of the values
// from the device. On error it returns nil and nothing has changed.
func (d *Dat[T]) DataErr() ([]T, error) { return d.dataErr("Dat.DataErr") }

// dataErr is DataErr for the API call named api.
func (d *Dat[T]) dataErr(api string) ([]T, error) {
	forced := lock(forStorage(&d.s), api)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	if err := rt.proc.HostRead("Data", &d.s); err != nil {
		return nil, err
	}
	if err := d.s.HostAccess(true); err != nil {
		return nil, apiError(err)
	}
	dist.HostWrite(&d.s)
	return d.data[:d.s.Set.Owned*d.s.Dim], nil
}

// DataRO returns a copy of the values of the owned elements, for reading.
// Changing the copy never changes the dat, on any backend (use Data to
// change values). On device backends the device copy stays valid. Like
// Data, it panics with the error its Err form, DataROErr, would return.
func (d *Dat[T]) DataRO() []T { return orPanic(d.dataROErr("Dat.DataRO")) }

// DataROErr is DataRO, returning as an error the failure of a recorded
// loop it runs first or of the copy from the device.
func (d *Dat[T]) DataROErr() ([]T, error) { return d.dataROErr("Dat.DataROErr") }

// dataROErr is DataROErr for the API call named api.
func (d *Dat[T]) dataROErr(api string) ([]T, error) {
	forced := lock(forStorage(&d.s), api)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	if err := rt.proc.HostRead("DataRO", &d.s); err != nil {
		return nil, err
	}
	if err := d.s.HostAccess(false); err != nil {
		return nil, apiError(err)
	}
	return append([]T(nil), d.data[:d.s.Set.Owned*d.s.Dim]...), nil
}

// State says where the dat's current values are: on the host, on a
// device, or both (see DataState). A dat declared without values is
// HostUnallocated until first used; host backends and host access then make
// it DeviceUnallocated (host copy only).
func (d *Dat[T]) State() DataState {
	lock(forStatus, "Dat.State")
	defer unlock()
	return d.s.State
}

// Sync brings the host copy of the dat's values up to date, copying them
// from the device when a device backend holds the only current ones (the
// device copy stays valid), and returns an error if that copy fails. On
// host backends, and when the host copy is current, it does nothing and
// returns nil. It is the error-returning way to do what Data and DataRO
// do before they return the values.
func (d *Dat[T]) Sync() error {
	forced := lock(forStorage(&d.s), "Dat.Sync")
	defer unlock()
	if forced != nil {
		return forced
	}
	return syncHost(&d.s)
}

// syncHost makes the host copy of s current without marking the device
// copy stale (engine.SyncHost). Data never allocated stays so: there is
// nothing to copy, and Data allocates it (zeros) without a device access.
func syncHost(s *core.Storage) error { return apiError(engine.SyncHost(s)) }

// Arg passes the dat directly: the kernel gets a T* to the loop element's values.
func (d *Dat[T]) Arg(acc Access) Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Data: storageOf(d), Access: acc, Kind: core.ArgDirect}}}
}

// storageOf is d's storage, nil for a nil Dat.
func storageOf[T Scalar](d *Dat[T]) *core.Storage {
	if d == nil {
		return nil
	}
	return &d.s
}

// ArgMap passes the dat through column idx of m (with access Min or Max,
// see the Access constants): the kernel gets a T* to
// the values of element m[e][idx].
func (d *Dat[T]) ArgMap(acc Access, m *Map, idx int) Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Data: storageOf(d), Map: mapCore(m), Idx: idx, Access: acc, Kind: core.ArgIndirect}}}
}

// ArgVec passes the dat through every column of m: the kernel gets a T**
// holding one pointer per column.
func (d *Dat[T]) ArgVec(acc Access, m *Map) Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Data: storageOf(d), Map: mapCore(m), Idx: -1, Access: acc, Kind: core.ArgVector}}}
}

// Zero sets every value of the dat to zero (PyOP2's Dat.zero). On a device
// backend whose copy is current it zeroes the device copy without any
// copy between host and device: the device copy is then the current one
// and the host copy stale (state Device). Otherwise it zeroes the host
// copy. A dat declared without values, never used, stays unallocated
// (HostUnallocated: it is zero already). Under MPI it is this rank's
// own business (other ranks need not call it): the rank's elements are
// zeroed, halos included, and the next loop that reads the dat's halo
// exchanges it, since other ranks' halo copies of them may be stale. The
// error reports a device failure.
func (d *Dat[T]) Zero() error { return d.zero(forStorage(&d.s), "Dat.Zero") }

// zero is Zero under the lock of mode m, for the API call named api.
func (d *Dat[T]) zero(m engine.Mode, api string) error {
	forced := lock(m, api)
	defer unlock()
	if forced != nil {
		return forced
	}
	if err := rt.proc.HostWrote(&d.s); err != nil {
		return err
	}
	dist.HostWrite(&d.s)
	return apiError(d.s.Zero())
}

// CopyTo copies every value of d to dst (PyOP2's Dat.copy), which must live
// on the same set with the same dim; otherwise it returns an error naming
// both dats and changes nothing. When d's current values are on a device,
// and only there or dst has a copy on the same device, the copy is made
// on the device (dst's device copy is allocated if needed and becomes
// the current one, state Device); otherwise it is made on the host and
// dst's host copy becomes the current one. Nothing is copied between
// host and device either way. Under MPI halos are copied too, and, as
// after Data, the next loop that reads dst's halo exchanges it. Copying a
// dat to itself does nothing.
func (d *Dat[T]) CopyTo(dst *Dat[T]) error {
	if dst == nil {
		return fmt.Errorf("op2: copying %s: destination dat is nil", d.s.Describe())
	}
	if dst.s.Set != d.s.Set || dst.s.Extruded != d.s.Extruded {
		return fmt.Errorf("op2: copying %s to %s: the dats live on different sets", d.s.Describe(), dst.s.Describe())
	}
	if dst.s.Dim != d.s.Dim {
		return fmt.Errorf("op2: copying %s to %s: dims differ (%d and %d)", d.s.Describe(), dst.s.Describe(), d.s.Dim, dst.s.Dim)
	}
	forced := lock(forStorage(&d.s), "Dat.CopyTo")
	defer unlock()
	if forced != nil {
		return forced
	}
	if dst != d {
		if err := rt.proc.HostRead("CopyTo", &d.s); err != nil {
			return err
		}
		if err := rt.proc.HostWrote(&dst.s); err != nil {
			return err
		}
		dist.HostWrite(&dst.s)
	}
	return apiError(dst.s.CopyFrom(&d.s))
}

// Clone returns a new dat named name on d's set with d's dim and a copy
// of d's values (PyOP2's Dat.duplicate), made as CopyTo makes it: on the
// device when d's current values are there, else on the host. Under MPI
// it is this rank's own business, like CopyTo: the clone's halo values
// are copied too, and the next loop that reads its halo exchanges it.
func (d *Dat[T]) Clone(name string) (*Dat[T], error) {
	c, err := NewDat[T](setOf(d.s.Set), d.s.Dim, nil, name)
	if err != nil {
		return nil, err
	}
	c.s.Extruded = d.s.Extruded // a clone of a dat on an extruded set is on it too
	if err := d.CopyTo(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Nbytes is the size in bytes of the values this process holds for the
// dat (PyOP2's Dat.nbytes): every element's dim values, the halo's
// included under MPI, whether or not they are allocated yet.
func (d *Dat[T]) Nbytes() int { return d.s.Bytes() }

// DataWO returns the values of the owned elements for writing only
// (PyOP2's Dat.data_wo): the host copy becomes the
// current one and the device copy stale, as with Data, but nothing is
// copied from the device, so the slice holds stale values wherever the
// device held the current ones. Set every value you keep; read only what
// you wrote. Under MPI, as after Data, the halos are exchanged before
// the next loop that reads them.
//
// DataWO copies nothing, so it can fail only as a recorded loop it runs
// first fails (see Chain): it panics with that error, which DataWOErr
// returns.
func (d *Dat[T]) DataWO() []T { return orPanic(d.dataWOErr(forStorage(&d.s), "Dat.DataWO")) }

// DataWOErr is DataWO, returning as an error the failure of a recorded
// loop it runs first.
func (d *Dat[T]) DataWOErr() ([]T, error) { return d.dataWOErr(forStorage(&d.s), "Dat.DataWOErr") }

// dataWOErr is DataWOErr under the lock of mode m, for the API call
// named api.
func (d *Dat[T]) dataWOErr(m engine.Mode, api string) ([]T, error) {
	forced := lock(m, api)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	if err := rt.proc.HostWrote(&d.s); err != nil {
		return nil, err
	}
	d.s.WriteOnly()
	dist.HostWrite(&d.s)
	return d.data[:d.s.Set.Owned*d.s.Dim], nil
}

// Range returns a copy of the values of the n elements first,
// first+1, ..., first+n-1 (n×dim values), copied from wherever they are
// current: on a device backend whose copy alone is current, only those
// values are copied from the device and the dat's state does not change.
// The elements must be owned elements (under MPI, in the rank's local
// numbering: halo elements are refused); a range outside [0, Size) is
// refused with an error, as is a failing copy from the device.
func (d *Dat[T]) Range(first, n int) ([]T, error) {
	owned := d.s.Set.Owned
	if first < 0 || n < 0 || first > owned || n > owned-first {
		return nil, fmt.Errorf("op2: %s: range of %d elements from element %d is outside the %d owned elements", d.s.Describe(), n, first, owned)
	}
	out := make([]T, n*d.s.Dim)
	if n == 0 {
		return out, nil
	}
	var z T
	size := int(unsafe.Sizeof(z))
	forced := lock(forStorage(&d.s), "Dat.Range")
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	if err := rt.proc.HostRead("Range", &d.s); err != nil {
		return nil, err
	}
	if err := d.s.ReadRange(unsafe.Pointer(&out[0]), first*d.s.Dim*size, len(out)*size); err != nil {
		return nil, apiError(err)
	}
	return out, nil
}

// Gather collects the values of every element of the dat, over all ranks,
// in the declared global numbering (OP2's op_fetch_data): rank 0 gets
// them, the other ranks nil. It is collective: every rank must call it.
// Without MPI it returns a copy of the values, in the declared numbering
// also after Renumber (where Data has the new order).
func (d *Dat[T]) Gather() ([]T, error) {
	forced := lock(forCollective, "Dat.Gather")
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	return engine.GatherDat(rt.proc.Process, &d.s, &d.data)
}

// GatherBlock collects the values of this rank's block of the dat's
// elements in the declared global numbering: the elements [start,
// start+len(values)/Dim) of the even split mesh.Block and hdf5.Block
// give (n/ranks elements each, one more on the first n mod ranks ranks).
// It is collective: every rank must call it. Each rank sends its owned
// values to the ranks whose blocks hold them, so no rank holds more than
// its own values and its block (Gather gives rank 0 every value). Without
// MPI it returns 0 and what Gather returns. Parallel writers use it: each
// rank writes its block at its place in the file.
func (d *Dat[T]) GatherBlock() (start int, values []T, err error) {
	if !rt.proc.Gathered(d.s.Set) {
		v, err := d.Gather()
		return 0, v, err
	}
	forced := lock(forCollective, "Dat.GatherBlock")
	defer unlock()
	if forced != nil {
		return 0, nil, forced
	}
	start, block, err := engine.GatherDatBlock(rt.proc.Process, &d.s)
	if err != nil {
		return 0, nil, err
	}
	return start, fromBytes[T](block), nil
}

// fromBytes copies b's bytes into a new slice of T.
func fromBytes[T Scalar](b []byte) []T {
	var z T
	out := make([]T, len(b)/int(unsafe.Sizeof(z)))
	copy(rawBytes(out), b)
	return out
}

// dropDevice frees the device copy, whose values are being replaced.
func (d *Dat[T]) dropDevice() {
	if d.s.Dev != nil {
		d.s.Dev.Free()
		d.s.Dev = nil
	}
}
