// Package core holds the type-erased runtime objects shared by the public op2
// package and the backends: sets, maps, data storage, constants, kernels, loop
// arguments and the loop Signature. (The backend registry and the run-time
// configuration are in internal/exec.) Users never import it; they use
// package op2.
package core

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"
)

// ScalarType is the element type of a Dat, Global or Const.
type ScalarType uint8

// The supported element types.
const (
	Float64 ScalarType = iota + 1
	Float32
	Int32
	Int64
	Uint32
)

// CName is the C spelling of the type used in generated code.
func (t ScalarType) CName() string {
	switch t {
	case Float64:
		return "double"
	case Float32:
		return "float"
	case Int32:
		return "int"
	case Int64:
		return "long long"
	case Uint32:
		return "unsigned int"
	}
	return "?"
}

// String is the Go spelling of the type, used in error messages.
func (t ScalarType) String() string {
	switch t {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	case Uint32:
		return "uint32"
	}
	return fmt.Sprintf("ScalarType(%d)", uint8(t))
}

// IsFloat reports whether t is a floating-point type, whose sums depend
// on the order of their terms.
func (t ScalarType) IsFloat() bool { return t == Float64 || t == Float32 }

// Size is the size of one value in bytes.
func (t ScalarType) Size() int {
	switch t {
	case Float64, Int64:
		return 8
	case Float32, Int32, Uint32:
		return 4
	}
	return 0
}

// Access is how a loop argument uses its data.
type Access uint8

// Access modes, as in OP2.
const (
	Read Access = iota + 1
	Write
	RW
	Inc
	Min
	Max
)

func (a Access) String() string {
	switch a {
	case Read:
		return "READ"
	case Write:
		return "WRITE"
	case RW:
		return "RW"
	case Inc:
		return "INC"
	case Min:
		return "MIN"
	case Max:
		return "MAX"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// Modifies reports whether the access changes the data.
func (a Access) Modifies() bool { return a != Read }

// IsReduction reports whether a is a Global reduction mode.
func (a Access) IsReduction() bool { return a == Inc || a == Min || a == Max }

var lastID atomic.Uint64

// NewID returns a process-unique identity for a runtime object.
func NewID() uint64 { return lastID.Add(1) }

// Set is an iteration set. Its elements are numbered in sections: core
// elements [0,Core), the rest of the owned elements [Core,Owned), the exec
// halo [Owned,Exec) and the non-exec halo [Exec,Total). Without MPI all four
// ends equal the set size.
type Set struct {
	Name                     string
	Core, Owned, Exec, Total int
	ID                       uint64
	// Halo is the run time's exchange lists for the set in a distributed
	// run; nil otherwise.
	Halo any
	// Index is the set's index data, made by package op2 the first time a
	// loop passes an element's index (op2.ArgIdx, Map.ArgIdx): an int32
	// Dat of dim 1 on the set holding each element's number in the
	// declared (global) numbering; nil until then. Loops read it like
	// any Dat, so index arguments need nothing of their own in generated
	// code, plans or data movement. IndexOwner keeps its memory alive.
	Index      *Storage
	IndexOwner any
	// Declared is, after op2.Renumber reordered the set, each element's
	// number in the numbering the set was declared with; nil when the
	// set keeps its declared order.
	Declared []int32
	// Looped says that a loop has used the set (as its iteration set, or
	// through a map or a Dat) or a sparsity holds its numbering:
	// op2.Renumber refuses it from then on.
	Looped bool
	// SubsetOf is, for a subset's iteration set, the ID of the set it is
	// a subset of; 0 otherwise.
	SubsetOf uint64
}

// Map is a table of Arity indices into To for each element of From.
type Map struct {
	Name     string
	From, To *Set
	Arity    int
	Table    []int32 // len = From.Total*Arity; pinned for the map's lifetime
	ID       uint64
	// LocalityUnchecked says that the map's numbering is still to be
	// looked at for locality, by the first loop bound through it (after
	// any renumbering); only under the loop lock.
	LocalityUnchecked bool
	// Device is a device backend's copy of Table, nil until one makes it.
	Device any
	// Print is this rank's part of the map's fingerprint, computed by
	// dist.MapPrint for the source set's halo For; only under the lock.
	Print MapPrintCache
}

// MapPrintCache is a map's cached fingerprint part (dist.MapPrint).
type MapPrintCache struct {
	Parts [3]int64
	For   any // the source set's Halo it was computed with
	Valid bool
}

// Ptr is the address of the first entry (nil for an empty map).
func (m *Map) Ptr() unsafe.Pointer {
	if len(m.Table) == 0 {
		return nil
	}
	return unsafe.Pointer(&m.Table[0])
}

// Storage is the memory of a Dat or a Global, type-erased: the host copy,
// and, once a device backend has used it, a device copy, with the state
// saying which of the two is current (seed 000's five states).
type Storage struct {
	Name  string
	Type  ScalarType
	Dim   int
	Set   *Set           // nil for a Global
	Host  unsafe.Pointer // nil while State is StateHostUnallocated or Len is 0
	Len   int            // number of scalar values
	ID    uint64
	State DataState
	Dev   DeviceBuffer // nil while State is StateDeviceUnallocated or StateHostUnallocated

	// HaloStale says that the halo elements' values are out of date: a
	// loop modified the data since the last exchange (distributed runs).
	// Only what every rank does alike changes it (loops, collective
	// reads, declarations), so it is the same on every rank.
	HaloStale bool
	// HostDirty says that this rank changed the data's values on the host
	// (Data, DataWO, Zero, CopyTo) since the last exchange: other ranks'
	// halo copies of its elements may be out of date. It is this rank's
	// alone; the ranks agree on it before the next loop that reads the
	// halo (distributed runs).
	HostDirty bool
	// pending are steps every access runs first, in order (SetPending):
	// device reductions whose results are on their way.
	pending []Pending
	// LoopWritten says that a loop (or a matrix product) has written the
	// values at least once: automatic checkpoints count a host read of
	// such data as a point a restarted run must reach by running loops.
	LoopWritten bool
	// Matrix names what a matrix's values are (a Mat's Describe), empty
	// for Dats and Globals; a matrix's storage has no Set, like a
	// Global's, and Len values: its nonzeros.
	Matrix string

	// AllocHost allocates the zeroed host copy of storage declared without
	// values; it sets Host. Nil once the host copy exists.
	AllocHost func()

	// DeviceAoS says that device backends store the data element by
	// element (array-of-structs) whatever their layout setting, because a
	// loop could not read it structure-of-arrays (KeepAoSOnDevice). It
	// only ever changes from false to true, and is part of a loop's key
	// (AppendKey), so programs built for either layout are never mixed up.
	DeviceAoS bool

	// Extruded is, for a Dat on an extruded set, that set; nil otherwise.
	// Such storage lives on the extruded set's base set (Set) with all
	// the layers of a column together: Dim is the layers times the
	// values per layer (LayerDim), so that partitioning, halos,
	// and renumbering move whole columns like any Dat's elements.
	Extruded *Extrusion
}

// Extrusion is an extruded set (op2.ExtrudedSet): Layers copies of each
// element of Base stacked in a column. A loop over it runs over the
// columns (the elements of Base), and within a column over the layers in
// increasing order.
type Extrusion struct {
	Name   string
	Base   *Set
	Layers int
	ID     uint64
	// Ranges, for an extruded set with a variable number of layers, is
	// an int32 Dat of dim 2 on Base: the first layer and one past the
	// last of each column, 0 <= first <= last <= Layers. A loop over
	// the set passes it as its last argument, marked Hidden. Nil when
	// every column has all Layers layers.
	Ranges *Storage
}

// LayerDim is the number of values per element that a kernel sees: for a
// Dat on an extruded set the values of one layer, otherwise Dim.
func (s *Storage) LayerDim() int {
	if s.Extruded != nil {
		return s.Dim / s.Extruded.Layers
	}
	return s.Dim
}

// IsGlobal reports whether the storage belongs to a Global.
func (s *Storage) IsGlobal() bool { return s.Set == nil }

// Bytes is the size of the data in bytes.
func (s *Storage) Bytes() int { return s.Len * s.Type.Size() }

// Describe names the storage for error messages, e.g. `dat "q" (float64, dim 4) on set "cells"`.
func (s *Storage) Describe() string {
	if s.Matrix != "" {
		return s.Matrix
	}
	if s.Set == nil {
		return fmt.Sprintf("global %q (%s, dim %d)", s.Name, s.Type, s.Dim)
	}
	if x := s.Extruded; x != nil {
		return fmt.Sprintf("dat %q (%s, dim %d) on extruded set %q (%d layers of set %q)", s.Name, s.Type, s.LayerDim(), x.Name, x.Layers, s.Set.Name)
	}
	return fmt.Sprintf("dat %q (%s, dim %d) on set %q", s.Name, s.Type, s.Dim, s.Set.Name)
}

// Const is a named read-only value visible to every kernel.
type Const struct {
	Name    string
	Type    ScalarType
	Dim     int
	Host    unsafe.Pointer // Dim values, pinned
	Version atomic.Uint64  // bumped on every change of value
	ID      uint64
}

// Bytes is the size of the value in bytes.
func (c *Const) Bytes() int { return c.Dim * c.Type.Size() }

// Kernel is the user's C source and the name of the function to call.
type Kernel struct {
	Name   string
	Source string
	ID     uint64
	Sum    [16]byte    // hash of Name and Source: kernels with equal content share programs
	Info   *KernelInfo // what was read from Source: parameters, positions
	// CXX says the source is C++ (op2.Kernel.CXX): host backends compile
	// the wrapper with the C++ compiler, and the generated code calls
	// the kernel in a way that C++ accepts (references, exact pointer
	// types).
	CXX bool
	// HaloOnly says the kernel is GoOP2's own and does nothing: its loops
	// only bring a halo up to date (Mat.Mult's x), and run on several
	// ranks only, so automatic checkpoints do not count them.
	HaloOnly bool
}

// KernelSum is a kernel's Sum: a hash of its name, its (normalised)
// source and whether it is C++.
func KernelSum(name, source string, cxx bool) [16]byte {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(source))
	if cxx {
		h.Write([]byte("\x00c++"))
	}
	var sum [16]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// ArgKind tells how an argument reaches the kernel.
type ArgKind uint8

// Kinds of loop arguments.
const (
	ArgDirect   ArgKind = iota + 1 // dat on the loop set: T* to the element
	ArgIndirect                    // dat through one map column: T* to the target element
	ArgVector                      // dat through every map column: T** with Arity entries
	ArgGlobal                      // Global: T* to its values
	ArgMat                         // matrix through a row and a column map: T* to the zeroed element matrix
)

// MatArg is what a matrix argument adds to Arg: its column map (Arg.Map
// is the row map), the block dims, and where each element's blocks are in
// the matrix's values (see package sparsity's Offsets).
type MatArg struct {
	Col        *Map
	RDim, CDim int
	// Offsets holds, for element e, row entry i and column entry j of
	// the maps, the block index of (row, column) in the values at
	// [(e*Map.Arity+i)*Col.Arity+j], or -1 for a row the element does
	// not assemble (a halo row in a distributed run); pinned while the
	// Sparsity lives.
	Offsets []int32
	// OffsetData is Offsets as read-only int32 storage (Host pointing at
	// them), which device backends copy to the device like a Dat.
	OffsetData *Storage
}

// NewIndexStorage returns read-only int32 storage over idx, named by what:
// a matrix argument's block offsets (MatArg.OffsetData) or a pattern's
// row pointers and column indices, which device backends copy to the
// device like a Dat. It points at idx, which must not move or change
// while the storage is used.
func NewIndexStorage(what string, idx []int32) *Storage {
	s := &Storage{Name: what, Type: Int32, Dim: 1, Len: len(idx), ID: NewID(), Matrix: what}
	if len(idx) > 0 {
		s.Host = unsafe.Pointer(&idx[0])
	}
	return s
}

// MatShape is the shape of a matrix argument's element matrix: rows (row
// map arity × row block dim) by cols (column map arity × column block
// dim).
func (a *Arg) MatShape() (rows, cols int) {
	return a.Map.Arity * a.Mat.RDim, a.Mat.Col.Arity * a.Mat.CDim
}

// Arg is one argument of a parallel loop.
type Arg struct {
	Data   *Storage
	Map    *Map // nil unless Kind is ArgIndirect or ArgVector
	Idx    int  // map column for ArgIndirect
	Access Access
	Kind   ArgKind
	// Off marks a disabled optional argument (op2.Opt with false): the
	// kernel gets a null pointer, and the loop moves, stages, checks and
	// reduces nothing for it. The run time passes it as a READ Global
	// of one value (OffData) that no generated code touches, so that no
	// other part of the run time needs a case of its own for it.
	Off bool
	// Optional marks an argument made by op2.Opt, enabled or not: the
	// same on every rank whatever each rank's flag (distributed runs
	// check that the flags agree).
	Optional bool
	// Index marks an index argument (op2.ArgIdx, Map.ArgIdx): a READ of
	// its set's index data (Set.Index). Generated code gives the kernel
	// a private copy of the value, so that a kernel writing through its
	// parameter cannot change the index later loops see.
	Index bool
	// View marks an argument passing one component of its Dat (a
	// DatView in package op2): the kernel sees a Dat of dim 1 whose
	// value for element e is component Comp of Data's element e
	// (address e*Data.Dim + Comp). Comp is 0 for other arguments.
	View bool
	// Comp is the component a view passes (View).
	Comp int
	// Mat is set for ArgMat arguments.
	Mat *MatArg
	// Hidden marks the argument that passes the layer ranges of a
	// loop over an extruded set with variable layers (Extrusion.Ranges):
	// a direct READ that generated code reads for the bounds of each
	// column's layers and does not pass to the kernel.
	Hidden bool
	// Ext is set, in a loop over an extruded set (Loop.Extruded), for
	// the arguments whose data is on an extruded set: it says which
	// layer each map entry reaches (for a direct argument, one entry:
	// the loop's layer). Other arguments of such a loop (Globals, data
	// on plain sets) reach the same values in every layer.
	Ext *ArgExt
}

// ArgExt says, for each map entry of an argument of an extruded loop
// (one entry for a direct argument), which layer of the target column it
// reaches in layer l of the loop: Start[i] + l*Offset[i].
type ArgExt struct {
	Start, Offset []int32
}

// Same reports whether x and y reach the same layers (either may be nil:
// an argument whose data is not extruded); two extruded maps over one
// base map with the same start layers and offsets pass the same values.
func (x *ArgExt) Same(y *ArgExt) bool {
	if x == nil || y == nil {
		return x == y
	}
	return slices.Equal(x.Start, y.Start) && slices.Equal(x.Offset, y.Offset)
}

// DirectExt is the ArgExt of a direct argument: layer l of the column.
var DirectExt = &ArgExt{Start: []int32{0}, Offset: []int32{1}}

// Layer returns the C expression of the layer that map entry i of an
// extruded argument reaches when the loop's layer is the C expression
// layer.
func (x *ArgExt) Layer(i int, layer string) string {
	s, o := x.Start[i], x.Offset[i]
	switch {
	case o == 0:
		return fmt.Sprint(s)
	case s == 0 && o == 1:
		return layer
	case s == 0:
		return fmt.Sprintf("%s * %d", layer, o)
	case o == 1:
		return fmt.Sprintf("%s + %d", layer, s)
	}
	return fmt.Sprintf("%s * %d + %d", layer, o, s)
}

// Dim is the number of values per element the kernel gets for the
// argument: 1 for a view of one component (Arg.View), the values of one
// layer for data on an extruded set (Storage.LayerDim), the data's dim
// otherwise. Data.Dim stays the stride between elements in memory.
func (a *Arg) Dim() int {
	if a.View {
		return 1
	}
	return a.Data.LayerDim()
}

// ElemValues is the number of values of one element of the argument's
// data that loops move, stage and count: 1 for a view of one component,
// the data's dim otherwise (a whole column for data on an extruded set,
// whose layers one element's loop runs through).
func (a *Arg) ElemValues() int {
	if a.View {
		return 1
	}
	return a.Data.Dim
}

// Overlaps reports whether arguments a and b may reach the same values:
// they pass the same data, and not two views of different components.
func (a *Arg) Overlaps(b *Arg) bool {
	return a.Data == b.Data && !(a.View && b.View && a.Comp != b.Comp)
}

// MapPtr is the address the generated code gets for the argument's map:
// the map's table, or for a matrix argument its block offsets.
func (a *Arg) MapPtr() unsafe.Pointer {
	if a.Kind == ArgMat {
		if len(a.Mat.Offsets) == 0 {
			return nil
		}
		return unsafe.Pointer(&a.Mat.Offsets[0])
	}
	return a.Map.Ptr()
}

// offData holds the one-value stand-in storages of disabled arguments,
// one per element type, with their values in offValues (a global
// variable: it never moves and is never collected).
var (
	offData   [Uint32 + 1]*Storage
	offValues [Uint32 + 1]uint64
)

func init() {
	for t := Float64; t <= Uint32; t++ {
		offData[t] = &Storage{Name: "disabled optional argument", Type: t, Dim: 1, Len: 1, Host: unsafe.Pointer(&offValues[t]), ID: NewID()}
	}
}

// OffArg is the argument that stands for a disabled optional argument of
// element type t: a READ Global of one value, marked Off.
func OffArg(t ScalarType) Arg {
	return Arg{Data: offData[t], Access: Read, Kind: ArgGlobal, Off: true}
}

// Describe names the argument for error messages.
func (a *Arg) Describe() string {
	if a.Data == nil {
		return "invalid argument (no data)"
	}
	if a.Off {
		return fmt.Sprintf("disabled optional argument (%s)", a.Data.Type)
	}
	if s := a.Data.Set; s != nil && a.Data == s.Index {
		if a.Kind == ArgIndirect {
			return fmt.Sprintf("index of the target of map %q[%d] in set %q (int32)", a.Map.Name, a.Idx, s.Name)
		}
		return fmt.Sprintf("iteration index of set %q (int32)", s.Name)
	}
	data := a.Data.Describe()
	if a.View {
		data = fmt.Sprintf("component %d of %s", a.Comp, data)
	}
	switch a.Kind {
	case ArgIndirect:
		return fmt.Sprintf("%s, %s through map %q[%d]", data, a.Access, a.Map.Name, a.Idx)
	case ArgVector:
		return fmt.Sprintf("%s, %s through all %d entries of map %q", data, a.Access, a.Map.Arity, a.Map.Name)
	case ArgMat:
		return fmt.Sprintf("%s, %s through row map %q and column map %q", data, a.Access, a.Map.Name, a.Mat.Col.Name)
	}
	return fmt.Sprintf("%s, %s", data, a.Access)
}

// IndirectModify reports whether the argument changes data through a map,
// which is what makes a loop need colouring.
func (a *Arg) IndirectModify() bool {
	return (a.Kind == ArgIndirect || a.Kind == ArgVector || a.Kind == ArgMat) && a.Access.Modifies()
}

// Loop is one invocation of a parallel loop: the kernel, the iteration set
// and the arguments. Backends must not keep it after Run returns.
type Loop struct {
	Kernel *Kernel
	Set    *Set
	Args   []Arg
	Consts []*Const // the constants the kernel refers to, sorted by name
	// Check is check mode: the generated code lets writes through READ
	// arguments reach the data (no private or staged copies of them), so
	// that the run time can find them.
	Check bool
	// Sig is the signature of the loop's shape, set by the run time before
	// the loop reaches a backend.
	Sig *Signature
	// Extruded is, for a loop over an extruded set, that set; Set is
	// then its base set (the columns), and generated code runs the
	// kernel for each layer of a column in increasing order. Nil
	// otherwise.
	Extruded *Extrusion
}

// RangeArg is the position of the hidden argument passing the layer
// ranges of a loop over an extruded set with variable layers (the last
// argument), or -1.
func (l *Loop) RangeArg() int {
	if n := len(l.Args); n > 0 && l.Args[n-1].Hidden {
		return n - 1
	}
	return -1
}

// SetName is the name of the set the loop runs over: the extruded set's
// for a loop over one, else its iteration set's.
func (l *Loop) SetName() string {
	if l.Extruded != nil {
		return l.Extruded.Name
	}
	return l.Set.Name
}

// Name identifies the loop in messages: the kernel name and the set.
func (l *Loop) Name() string {
	if l.Extruded != nil {
		return fmt.Sprintf("loop %q over extruded set %q", l.Kernel.Name, l.Extruded.Name)
	}
	return fmt.Sprintf("loop %q over set %q", l.Kernel.Name, l.Set.Name)
}

// NeedsColouring reports whether any argument modifies data through a map.
func (l *Loop) NeedsColouring() bool {
	for i := range l.Args {
		if l.Args[i].IndirectModify() {
			return true
		}
	}
	return false
}

// IterEnd is one past the last element the loop runs over: the owned
// elements, plus the exec halo when the loop modifies data through a map
// (owner compute under MPI). Without MPI both are the set size.
func (l *Loop) IterEnd() int {
	if l.NeedsColouring() {
		return l.Set.Exec
	}
	return l.Set.Owned
}

// KeepPinned pins the objects that ptrs point to, so that their addresses
// may be stored in C memory, for as long as owner is reachable; when owner
// is collected they are unpinned. The pinned objects stay ordinary Go
// memory: slices of them remain valid after owner is gone.
func KeepPinned[O any](owner *O, ptrs ...any) *runtime.Pinner {
	p := new(runtime.Pinner)
	for _, x := range ptrs {
		p.Pin(x)
	}
	runtime.AddCleanup(owner, func(p *runtime.Pinner) { p.Unpin() }, p)
	return p
}
