package op2

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
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
	registerDat(d)
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
// Data panics if copying the values from the device fails (a device error,
// which may come from an earlier, asynchronous loop). Call Sync first to
// get that failure as an error: after a Sync that returned nil, Data and
// DataRO do not panic until the next loop.
func (d *Dat[T]) Data() []T {
	forced := lock(forStorage(&d.s))
	defer unlock()
	mustForce(forced)
	mustHost(d.s.HostAccess(true))
	dist.HostWrite(&d.s)
	return d.data[:d.s.Set.Owned*d.s.Dim]
}

// DataRO returns a copy of the values of the owned elements, for reading.
// Changing the copy never changes the dat, on any backend (use Data to
// change values). On device backends the device copy stays valid. Like
// Data, it panics if copying from the device fails; see Sync.
func (d *Dat[T]) DataRO() []T {
	forced := lock(forStorage(&d.s))
	defer unlock()
	mustForce(forced)
	mustHost(d.s.HostAccess(false))
	return append([]T(nil), d.data[:d.s.Set.Owned*d.s.Dim]...)
}

// State says where the dat's current values are: on the host, on a
// device, or both (see DataState). A dat declared without values is
// HostUnallocated until first used; host backends and host access then make
// it DeviceUnallocated (host copy only).
func (d *Dat[T]) State() DataState {
	lock(forStatus)
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
	forced := lock(forStorage(&d.s))
	defer unlock()
	if forced != nil {
		return forced
	}
	return syncHost(&d.s)
}

// syncHost makes the host copy of s current without marking the device
// copy stale. Data never allocated stays so: there is nothing to copy,
// and Data allocates it (zeros) without a device access.
func syncHost(s *core.Storage) error {
	if s.State == core.StateHostUnallocated {
		return nil
	}
	return apiError(s.HostAccess(false))
}

// mustHost panics with err, as the package reports it, when copying
// values from the device failed.
func mustHost(err error) {
	if err != nil {
		panic(apiError(err))
	}
}

// Arg passes the dat directly: the kernel gets a T* to the loop element's values.
func (d *Dat[T]) Arg(acc Access) Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Data: &d.s, Access: acc, Kind: core.ArgDirect}}}
}

// ArgMap passes the dat through column idx of m (with access Min or Max,
// see the Access constants): the kernel gets a T* to
// the values of element m[e][idx].
func (d *Dat[T]) ArgMap(acc Access, m *Map, idx int) Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Data: &d.s, Map: mapCore(m), Idx: idx, Access: acc, Kind: core.ArgIndirect}}}
}

// ArgVec passes the dat through every column of m: the kernel gets a T**
// holding one pointer per column.
func (d *Dat[T]) ArgVec(acc Access, m *Map) Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Data: &d.s, Map: mapCore(m), Idx: -1, Access: acc, Kind: core.ArgVector}}}
}

// Global is a small array of dim values shared by all elements: read by
// kernels, or the target of a reduction (Inc, Min, Max).
type Global[T Scalar] struct {
	s    core.Storage // first field: device backends tie cleanups to &s
	data []T
}

// NewGlobal declares a Global of dim values; data (len dim) gives the
// initial values and is copied; nil means zeros. dim may be at most
// MaxDim (and at most MaxReductionDim for a Global used in a reduction).
func NewGlobal[T Scalar](dim int, data []T, name string) (*Global[T], error) {
	if _, err := checkShape(fmt.Sprintf("global %q", name), "dim", 1, dim, scalarType[T]().Size()); err != nil {
		return nil, err
	}
	if data != nil && len(data) != dim {
		return nil, fmt.Errorf("op2: global %q: %d values given, want dim = %d", name, len(data), dim)
	}
	g := &Global[T]{}
	g.data = pinned[T](g, dim)
	copy(g.data, data)
	g.s = core.Storage{Name: name, Type: scalarType[T](), Dim: dim, Host: hostPtr(g.data), Len: dim, ID: core.NewID()}
	return g, nil
}

// Name is the global's name.
func (g *Global[T]) Name() string { return g.s.Name }

// Dim is the number of values.
func (g *Global[T]) Dim() int { return g.s.Dim }

// Data returns the values for reading and writing; after a reduction loop
// they hold the initial values combined with every contribution. It panics
// if copying the values from the device fails; see Sync.
func (g *Global[T]) Data() []T {
	forced := lock(forStorage(&g.s))
	defer unlock()
	mustForce(forced)
	mustHost(g.s.HostAccess(true))
	return g.data
}

// DataRO returns a copy of the values, for reading. Changing the copy
// never changes the Global, on any backend (use Data to change values).
// It panics if copying the values from the device fails; see Sync.
func (g *Global[T]) DataRO() []T {
	forced := lock(forStorage(&g.s))
	defer unlock()
	mustForce(forced)
	mustHost(g.s.HostAccess(false))
	return append([]T(nil), g.data...)
}

// Sync brings the host copy of the global's values up to date and returns
// an error if copying them from the device fails, instead of panicking as
// Data and DataRO do; see Dat.Sync.
func (g *Global[T]) Sync() error {
	forced := lock(forStorage(&g.s))
	defer unlock()
	if forced != nil {
		return forced
	}
	return syncHost(&g.s)
}

// State says where the global's current values are (see DataState).
func (g *Global[T]) State() DataState {
	lock(forStatus)
	defer unlock()
	return g.s.State
}

// Arg passes the Global with the given access (Read, Inc, Min or Max).
func (g *Global[T]) Arg(acc Access) Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Data: &g.s, Access: acc, Kind: core.ArgGlobal}}}
}

// Const is a named value that every kernel can read by that name, as a
// scalar (dim 1) or an array. Changing it with Set takes effect in the next
// loop without recompiling anything.
type Const[T Scalar] struct {
	c    core.Const
	mu   sync.Mutex // guards data, pending and latest
	data []T
	// pending counts the assignments recorded after recorded loops (see
	// Set) not yet made; latest holds the last one's values.
	pending int
	latest  []T
	reg     *constRegistry
}

// constRegistry holds a runtime's constants by name; kernels refer to them
// by name.
type constRegistry struct {
	sync.Mutex
	byName map[string]*core.Const
	gen    atomic.Uint64 // bumped when a constant is declared or removed
}

func newConstRegistry() *constRegistry {
	return &constRegistry{byName: map[string]*core.Const{}}
}

// NewConst declares a constant with dim values (len(data) must equal dim)
// in the default runtime (see NewConstIn).
// The name must be a C identifier not used by another constant, and not a
// C keyword (such as for, double or return), a stdint.h or stddef.h type
// name (int32_t, size_t...), an OpenCL C keyword, type or built-in (global,
// local, constant, kernel, half, float4, image2d_t, get_global_id...: they
// would break the kernel on the opencl backend), nor start with op2_ or OP2_ (reserved for
// GoOP2's generated code), __, or _ and a capital letter. dim may be at
// most MaxDim.
func NewConst[T Scalar](dim int, data []T, name string) (*Const[T], error) {
	return NewConstIn(Default(), dim, data, name)
}

// NewConstIn declares a constant in runtime r: kernels of loops run by r
// see it by name. The rules are NewConst's.
func NewConstIn[T Scalar](r *Runtime, dim int, data []T, name string) (*Const[T], error) {
	if why := core.ConstNameProblem(name); why != "" {
		return nil, fmt.Errorf("op2: const %q: %s", name, why)
	}
	if _, err := checkShape(fmt.Sprintf("const %q", name), "dim", 1, dim, scalarType[T]().Size()); err != nil {
		return nil, err
	}
	if len(data) != dim {
		return nil, fmt.Errorf("op2: const %q: dim %d with %d values; need one value per component", name, dim, len(data))
	}
	c := &Const[T]{reg: r.consts}
	c.data = pinned[T](c, dim)
	copy(c.data, data)
	c.c = core.Const{Name: name, Type: scalarType[T](), Dim: dim, Host: hostPtr(c.data), ID: core.NewID()}
	c.c.Version.Store(1)
	reg := r.consts
	reg.Lock()
	defer reg.Unlock()
	if _, dup := reg.byName[name]; dup {
		return nil, fmt.Errorf("op2: const %q is already declared", name)
	}
	reg.byName[name] = &c.c
	reg.gen.Add(1)
	return c, nil
}

// Name is the constant's name.
func (c *Const[T]) Name() string { return c.c.Name }

// Value returns a copy of the current value: the last one Set gave, even
// when that assignment is recorded after recorded loops (see Set). It is
// safe to call while other goroutines call Set or run loops, and does
// not wait for running loops.
func (c *Const[T]) Value() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending > 0 {
		return append([]T(nil), c.latest...)
	}
	return append([]T(nil), c.data...)
}

// Set changes the value (same number of values as dim). Loops issued after
// it see the new value.
func (c *Const[T]) Set(values ...T) error {
	if len(values) != c.c.Dim {
		return fmt.Errorf("op2: const %q: %d values given, want dim = %d", c.c.Name, len(values), c.c.Dim)
	}
	// Not while a loop runs, and after the recorded loops (see Chain),
	// which see the value of when they were issued: at once when none of
	// them uses the constant, else recorded after them.
	lock(forNoData)
	defer unlock()
	switch rt.proc.RecordConst(&c.c, &c.mu, &c.pending, unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), c.c.Bytes())) {
	case engine.AssignRecorded:
		c.mu.Lock()
		c.latest = append(c.latest[:0], values...)
		c.pending++
		c.mu.Unlock()
		return nil
	case engine.AssignForced:
		if forced := rt.proc.Force(); forced != nil {
			return forced
		}
	}
	c.set(values)
	return nil
}

// set copies values into the constant.
func (c *Const[T]) set(values []T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	copy(c.data, values)
	c.c.Version.Add(1)
}

// Remove withdraws the constant: later kernels can no longer refer to it,
// and its name may be declared again.
func (c *Const[T]) Remove() {
	reg := c.reg
	reg.Lock()
	defer reg.Unlock()
	if reg.byName[c.c.Name] == &c.c {
		delete(reg.byName, c.c.Name)
		reg.gen.Add(1)
	}
}

// constsUsed lists, sorted by name, the constants whose names occur as
// identifiers in the kernel source.
func (reg *constRegistry) used(idents map[string]bool) ([]*core.Const, uint64) {
	reg.Lock()
	defer reg.Unlock()
	var used []*core.Const
	for name, c := range reg.byName {
		if idents[name] {
			used = append(used, c)
		}
	}
	sort.Slice(used, func(i, j int) bool { return used[i].Name < used[j].Name })
	return used, reg.gen.Load()
}

func isCIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}
