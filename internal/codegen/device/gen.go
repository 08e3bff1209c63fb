package device

import (
	"fmt"
	"math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
)

// DefaultWorkGroupSize is the number of work items per work group (CUDA
// threads per block) when Options.WorkGroupSize is 0: OP2's GPU default.
// The size is fixed in each kernel's head (OpenCL's reqd_work_group_size,
// CUDA's __launch_bounds__), so programs of different sizes have different
// sources.
const DefaultWorkGroupSize = 64

// MinWorkGroupSize and MaxWorkGroupSize bound Options.WorkGroupSize: a
// warp (32) at least, and at most the 1024 threads of a CUDA block (many
// OpenCL GPUs stop at 256 or 1024; a device's own limit is checked when
// the backend opens).
const (
	MinWorkGroupSize = 32
	MaxWorkGroupSize = 1024
)

// CheckWorkGroupSize returns an error unless n is a valid
// Options.WorkGroupSize: 0 (the default, DefaultWorkGroupSize) or a power
// of two from MinWorkGroupSize to MaxWorkGroupSize. The generated
// reduction tree halves its step from n/2, so n must be a power of two.
func CheckWorkGroupSize(n int) error {
	if n == 0 || n >= MinWorkGroupSize && n <= MaxWorkGroupSize && n&(n-1) == 0 {
		return nil
	}
	return fmt.Errorf("device work-group size %d is not allowed: %s", n, allowedWorkGroupSizes())
}

// ParseWorkGroupSize reads a work-group size written in decimal ("" is 0,
// the default) and checks it with CheckWorkGroupSize.
func ParseWorkGroupSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil {
		return 0, fmt.Errorf("device work-group size %q is not a number: %s", s, allowedWorkGroupSizes())
	}
	if err := CheckWorkGroupSize(n); err != nil {
		return 0, err
	}
	return n, nil
}

// CheckWorkGroupLimit returns an error when work groups of n items (0:
// DefaultWorkGroupSize) exceed limit, the most a device allows (what names
// the device, or the kernel on it, for the message). A limit of 0 or less
// (not known) passes.
func CheckWorkGroupLimit(n, limit int, what string) error {
	if n == 0 {
		n = DefaultWorkGroupSize
	}
	if limit <= 0 || n <= limit {
		return nil
	}
	msg := fmt.Sprintf("device work-group size %d is larger than the %d work items per group %s allows", n, limit, what)
	if fit := 1 << (bits.Len(uint(limit)) - 1); fit >= MinWorkGroupSize {
		return fmt.Errorf("%s; use %d or less", msg, fit)
	}
	return fmt.Errorf("%s; the device backends need at least %d", msg, MinWorkGroupSize)
}

// allowedWorkGroupSizes says which work-group sizes CheckWorkGroupSize
// accepts.
func allowedWorkGroupSizes() string {
	var sizes []string
	for s := MinWorkGroupSize; s <= MaxWorkGroupSize; s *= 2 {
		sizes = append(sizes, strconv.Itoa(s))
	}
	return fmt.Sprintf("use a power of two from %d to %d (%s), or 0 for the default %d",
		MinWorkGroupSize, MaxWorkGroupSize, strings.Join(sizes, ", "), DefaultWorkGroupSize)
}

// MaxDirectGroups caps the work groups of a direct loop; each work item
// then handles several elements.
const MaxDirectGroups = 4096

// privateLimit is the largest argument, in bytes per element (all map
// entries of a vector argument together), that reaches the kernel as a
// pointer to a private copy.
//
// Why private copies: OpenCL C 1.2 has no generic address space. A pointer
// parameter without a qualifier points to __private memory, so if the
// kernel received pointers into __global or __local memory its parameters
// would need those qualifiers, and the kernel could not pass them on to
// helper functions written as plain C (`void add(double *a, const double
// *b)`): every helper would need a variant per address space. Instead
// the generated stub copies each argument's values into a private array,
// calls the kernel with pointers to the copies, and copies modified values
// back (increments are accumulated in zeroed private arrays, as OP2 does).
// The user's kernel and its helpers are then unmodified C whose pointers
// are all private, on every OpenCL 1.2 device; on GPUs the copies live in
// registers. Generic addressing (OpenCL 2.0+) would avoid the copies but is
// optional in OpenCL 3.0 and missing on many devices, so it is not relied
// on.
//
// Copies cost time on some devices (PoCL keeps private arrays in memory),
// so only arguments the kernel passes on get them: to a function or macro,
// into a pointer variable, through pointer arithmetic (see
// cfront.SourceModel.PassedOn); an argument the kernel only indexes or
// dereferences gets a qualified pointer, which is just as valid there.
//
// Copies of large arguments would exhaust registers and private memory,
// so an argument above this size is passed as a __global or __local
// pointer instead (the kernel's parameter gets the qualifier); the kernel
// may index it but cannot pass it to a helper function with an unqualified
// pointer parameter. Global reductions are always private accumulators
// (their dim is limited by op2.MaxReductionDim).
const privateLimit = 1024

// Layout is what a loop's signature says about how its code is organised.
type Layout struct {
	Base    []int  // first argument with the same data, per argument
	Inds    []int  // indirect dataset of each argument, -1 if none
	NInd    int    // number of indirect datasets (unique dat and map)
	DSArg   []int  // first argument of each dataset
	dsStage []bool // dataset values are staged into local memory (else zeroed: increments only)
	// dsCombine is, per dataset, the access (MIN or MAX) with which its
	// staged copy is combined into the dat, or 0 where it is copied back
	// (or added, for increments).
	dsCombine  []core.Access
	DSGlobal   []bool // dataset elements are too large to stage: accessed in global memory
	DSModified []bool // dataset is modified
	Indirect   bool   // some argument goes through a map
	// callInColour: the kernel calls run thread colour by thread colour
	// (some argument modifies data through a map other than by a private
	// increment).
	callInColour bool
	globalFence  bool  // a dataset in global memory is modified: colour barriers fence global memory
	Reductions   []int // Global reduction arguments
	// Atomic: the loop uses the atomics scheme (see Scheme): indirect
	// data stays in global memory and increments are added atomically,
	// so the plan need not colour anything.
	Atomic bool
	// Warp: an Atomic loop's increments through maps are summed per
	// target within a warp first (Scheme Warp on a dialect with
	// WarpMatch).
	Warp bool
	// PlanFree: an Atomic loop run without an execution plan, like a
	// direct loop: each work item takes elements of the range in turn and
	// reaches indirect data through the map tables themselves
	// (op2_mt<j>, one per map: MapParam), with no staging, colours or
	// blocks to build. Loops over extruded sets keep the plan.
	PlanFree bool
	// MapParam is, per argument, the first argument through the same map
	// (whose table the plan-free kernel takes), or -1 for an argument
	// through no map; nil unless PlanFree.
	MapParam []int
	soa      bool   // Options.SoA
	wg       int    // work items per work group (Options.WorkGroupSize, resolved)
	priv     []bool // the kernel gets a pointer to a private copy of the argument
	// alias is, per argument, the earlier argument whose private copy it
	// shares (it passes the same elements of the same data), or -1.
	alias []int
	// unshared is, per argument, why it cannot have a private copy
	// although it would need one ("" if none).
	unshared []string
	// constGlobal: the constants (Consts) take more than the device's
	// constant memory (Options.ConstMem), so their buffer is read-only
	// device memory instead (Dialect.ReadOnlyGlobal).
	constGlobal bool
	// consts are the constants the kernel source uses, packed into one
	// buffer (see constLocals), in constant memory unless constGlobal.
	Consts     []ConstSlot
	ConstBytes int
	src        *userSource // the kernel source, read
	d          *Dialect    // the language written
	kdef       int         // the kernel's definition in src.defs
	passed     []bool      // per kernel parameter: the kernel passes it on (cfront.SourceModel.PassedOn)
}

// ConstSlot is a constant's place in the constant buffer.
type ConstSlot struct {
	Const  *core.Const
	Offset int // bytes from the start of the buffer
}

// StagingBudget is the local memory a work group of workGroupSize items
// may use for staged indirect data on a device with localMem bytes of
// local memory: what the reductions' scratch (one value per work item)
// and a reserve of 1 KiB leave.
func StagingBudget(l *core.Loop, reductions []int, localMem, workGroupSize int) int {
	scratch := 0
	for _, i := range reductions {
		scratch += workGroupSize * l.Args[i].Data.Type.Size()
	}
	return localMem - scratch - 1024
}

// Scheme is how a device loop applies increments through maps.
type Scheme uint8

const (
	// Staged is OP2's original GPU scheme: a block's indirect data is
	// staged in shared memory, increments are applied thread colour by
	// thread colour, and blocks run block colour by block colour.
	Staged Scheme = iota
	// Atomics is OP2's current default on GPUs: indirect data is read
	// and incremented in global memory, each increment added with an
	// atomic operation, and every block runs at once. It applies to
	// loops whose only modifications through maps are increments (INC)
	// of arguments with private accumulators; other loops use Staged.
	// Increments then reach a target in an order that varies from run to
	// run, so floating-point sums may differ in their last bits.
	Atomics
	// Warp is Atomics in which, where the dialect can (Dialect.WarpMatch:
	// CUDA), the threads of a warp incrementing one target through a map
	// argument first add their increments together, in lane order, and
	// one of them adds the sum atomically: fewer atomic operations where
	// consecutive elements share targets (a mesh's edges ordered by
	// their first cell). Elsewhere it is Atomics.
	Warp
)

// String is the scheme's name, as ParseScheme reads it.
func (s Scheme) String() string {
	switch s {
	case Atomics:
		return "atomics"
	case Warp:
		return "warp"
	}
	return "staged"
}

// ParseScheme reads a scheme's name: "staged" (or ""), "atomics" or
// "warp".
func ParseScheme(name string) (Scheme, error) {
	switch name {
	case "", "staged":
		return Staged, nil
	case "atomics":
		return Atomics, nil
	case "warp":
		return Warp, nil
	}
	return Staged, fmt.Errorf("unknown device scheme %q (staged, atomics or warp)", name)
}

// CheckLayout returns an error unless name is a device data layout's name
// (ParseLayout).
func CheckLayout(name string) error {
	_, err := ParseLayout(name, false)
	return err
}

// ParseLayout reads a device data layout's name, "aos" or "soa", and
// reports whether it is structure-of-arrays; "" is the default, which is
// structure-of-arrays on a GPU (gpu), where it lets the threads of a warp
// read consecutive words, and array-of-structs elsewhere (CPU devices read
// an element's values from one cache line).
func ParseLayout(name string, gpu bool) (soa bool, err error) {
	switch name {
	case "":
		return gpu, nil
	case "aos":
		return false, nil
	case "soa":
		return true, nil
	}
	return false, fmt.Errorf("unknown device layout %q (aos or soa)", name)
}

// Analyse works out the Layout of the loop's code for a device with
// localMem bytes of local memory per work group, in the Staged scheme.
func Analyse(d *Dialect, l *core.Loop, localMem int) (*Layout, error) {
	return AnalyseScheme(d, l, localMem, Staged)
}

// AnalyseScheme is Analyse for a chosen scheme; a loop the Atomics scheme
// does not apply to gets the Staged layout.
func AnalyseScheme(d *Dialect, l *core.Loop, localMem int, scheme Scheme) (*Layout, error) {
	return AnalyseWith(d, l, localMem, Options{Scheme: scheme})
}

// Options are a device backend's choices of how loops run.
type Options struct {
	// Scheme is how increments through maps are applied.
	Scheme Scheme
	// SoA stores Dats of dim > 1 structure-of-arrays in device memory
	// (component k of element e at k*stride + e; see SoAStorage): the
	// threads of a work group then read consecutive addresses. The
	// kernel still sees each element's values together: arguments read
	// from device memory get private copies, and staged data stays
	// element by element in shared memory. Data some loop cannot read
	// so is stored element by element instead (AoSNeeded).
	SoA bool
	// WorkGroupSize is the number of work items per work group (CUDA
	// threads per block) the code is generated and launched for; 0 means
	// DefaultWorkGroupSize. Other values must pass CheckWorkGroupSize.
	WorkGroupSize int
	// ConstMem is not a choice but the device's: the bytes of constant
	// memory a kernel's constants may take (OpenCL's
	// CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, CUDA's total constant memory).
	// Constants that take more are kept in read-only device memory
	// instead, so that any program runs; 0 means NominalConstMem (source
	// generated without a device), and a negative value that the device
	// takes no constant buffer (every program's constants are kept in
	// device memory).
	ConstMem int
}

// NominalConstMem is the constant memory assumed when Options.ConstMem is
// 0: 64 KiB, the least an OpenCL 1.2 full-profile device has and what
// every CUDA device has.
const NominalConstMem = 64 << 10

// constsGlobal reports whether constants taking bytes bytes are kept in
// read-only device memory rather than in the constant memory of a device
// with constMem bytes of it (Options.ConstMem): exactly when they do not
// fit.
func constsGlobal(bytes, constMem int) bool {
	if constMem == 0 {
		constMem = NominalConstMem
	}
	return bytes > max(constMem, 0)
}

// With returns o with scheme (read by ParseScheme; "" keeps o's) and
// workGroupSize (0 keeps o's) in place of its own, as a device backend
// builds a loop in a way other than its configured one. The size must
// pass CheckWorkGroupSize and CheckWorkGroupLimit against limit, the most
// work items per group of the device what names.
func (o Options) With(scheme string, workGroupSize, limit int, what string) (Options, error) {
	if scheme != "" {
		s, err := ParseScheme(scheme)
		if err != nil {
			return o, err
		}
		o.Scheme = s
	}
	if workGroupSize != 0 {
		if err := CheckWorkGroupSize(workGroupSize); err != nil {
			return o, err
		}
		if err := CheckWorkGroupLimit(workGroupSize, limit, what); err != nil {
			return o, err
		}
		o.WorkGroupSize = workGroupSize
	}
	return o, nil
}

// SoAStorage reports whether, with Options.SoA, the device copy of s is
// stored structure-of-arrays: Dats (not Globals) of dim > 1 that no loop
// has needed element by element (core.Storage.DeviceAoS; see AoSNeeded).
func SoAStorage(s *core.Storage) bool { return !s.IsGlobal() && s.Dim > 1 && !s.DeviceAoS }

// AoSNeeded is AnalyseWith's error for a loop that cannot read some of
// its data structure-of-arrays (Options.SoA): an argument too large for
// the private copy the kernel would read it through, or one that must see
// another argument's writes to the same element, so may not have a copy.
// The device backends then store that data element by element
// (core.Storage.KeepAoSOnDevice) and analyse the loop again: the layout
// is chosen per Dat, and no loop is refused for it.
type AoSNeeded struct {
	Loop string
	Data []*core.Storage // each once
	Why  []string        // per Data, why
}

func (e *AoSNeeded) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: data the loop cannot read structure-of-arrays:", e.Loop)
	for i, s := range e.Data {
		fmt.Fprintf(&b, " %s (%s);", s.Describe(), e.Why[i])
	}
	return strings.TrimSuffix(b.String(), ";")
}

// SoAData reports whether argument i's data is stored structure-of-arrays
// on the device, so that the kernel takes its stride (op2_stride<i>)
// after its pointer.
func (lay *Layout) SoAData(l *core.Loop, i int) bool {
	return lay.soa && SoAStorage(l.Args[i].Data)
}

// SoA reports whether the layout stores Dats of dim > 1
// structure-of-arrays on the device (Options.SoA).
func (lay *Layout) SoA() bool { return lay.soa }

// WorkGroupSize is the number of work items per work group the code is
// generated for: every launch of it must use this size.
func (lay *Layout) WorkGroupSize() int { return lay.wg }

// ConstsGlobal reports whether the kernel reads its constants from
// read-only device memory, because they take more than the device's
// constant memory (Options.ConstMem), rather than from constant memory.
// The buffer and its updates are the same either way.
func (lay *Layout) ConstsGlobal() bool { return lay.constGlobal }

// ConstsWritable reports whether a kernel casting a constant's const away
// could write the constant buffer: some constant is too large for a
// private copy, so the kernel reads it in the buffer, and the dialect
// lets such a cast build (Dialect.ConstsCastable). The device runtime
// then restores the buffer before each launch, so that every loop sees
// the declared values.
func (lay *Layout) ConstsWritable() bool {
	if !lay.d.ConstsCastable {
		return false
	}
	for _, s := range lay.Consts {
		if s.Const.Dim > 1 && s.Const.Bytes() > privateLimit {
			return true
		}
	}
	return false
}

// AnalyseWith is Analyse with a backend's options; a loop the Atomics
// scheme does not apply to gets the Staged layout.
func AnalyseWith(d *Dialect, l *core.Loop, localMem int, opts Options) (*Layout, error) {
	scheme := opts.Scheme
	if err := CheckWorkGroupSize(opts.WorkGroupSize); err != nil {
		return nil, err
	}
	wg := opts.WorkGroupSize
	if wg == 0 {
		wg = DefaultWorkGroupSize
	}
	if l.Kernel.CXX && d.CXXPrelude == "" {
		return nil, fmt.Errorf("%s: kernel %q is C++ (Kernel.CXX), and the %s backend compiles %s only: C++ for OpenCL is not generated (PoCL, the driver GoOP2 is tested with, refuses -cl-std=CLC++); run C++ kernels on sequential, openmp or cuda, or write the kernel in C", l.Name(), l.Kernel.Name, d.Name, d.Language)
	}
	n := len(l.Args)
	m, err := cfront.Model(l.Kernel.Info)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the kernel source: %w", l.Name(), err)
	}
	u := newUserSource(m)
	if err := u.renameBuiltins(d); err != nil {
		return nil, fmt.Errorf("%s: reading the kernel source's directives as %s compiles them: %w", l.Name(), d.Language, err)
	}
	sig := l.Sig
	lay := &Layout{Base: sig.Base, Inds: sig.Ind, NInd: sig.NInd, DSArg: sig.DSArg, Reductions: sig.Reductions, priv: make([]bool, n), src: u, d: d, soa: opts.SoA, wg: wg}
	info := l.Kernel.Info
	lay.kdef = slices.IndexFunc(u.Defs, func(f cfront.FuncDecl) bool { return f.NameAt == info.NameStart })
	if lay.kdef < 0 {
		return nil, fmt.Errorf("%s: the %s generator cannot find the definition of %q that the kernel reader found", l.Name(), d.Name, l.Kernel.Name)
	}
	var names []string
	var depth []int
	for _, p := range info.Params {
		names = append(names, p.Name)
		depth = append(depth, max(p.Depth, 1))
	}
	passed := u.PassedOn(&u.Defs[lay.kdef], names, depth)
	lay.passed = passed
	lay.dsStage = make([]bool, lay.NInd)
	lay.DSGlobal = make([]bool, lay.NInd)
	lay.DSModified = make([]bool, lay.NInd)
	lay.dsCombine = make([]core.Access, lay.NInd)
	// A dataset is staged only if a work group's worth of its elements
	// fits the staging budget; larger elements are read and written in
	// global memory, where the plan's colouring keeps them race free.
	stageMax := StagingBudget(l, lay.Reductions, localMem, wg) / wg
	for i := range l.Args {
		a := &l.Args[i]
		bytes := copyBytes(a)
		// Private copies cost time on some devices, so only arguments
		// the kernel passes on (to helper functions, pointer variables)
		// get them; increments through a map and reductions are always
		// accumulated privately, as OP2 does.
		inc := a.Map != nil && hostc.Combining(a.Access)
		// A disabled optional argument is a private pointer, so that a
		// kernel may pass it on (the kernel gets a null pointer). An index
		// argument is a private copy of its value (one int), so that a
		// kernel writing through its parameter cannot change the index
		// data every loop over the set reads.
		// An untyped (void) pointer parameter is cast by the kernel to a
		// plain pointer, which OpenCL takes as private: it gets a
		// private copy as if passed on.
		untyped := i < len(info.Params) && info.Params[i].Untyped
		lay.priv[i] = a.IsReduction() || a.Off || a.Index || bytes <= privateLimit && (inc || untyped || i < len(passed) && passed[i])
		if a.Kind == core.ArgMat {
			// The element matrix is always private: the kernel fills
			// it, and it is added (or stored) at the block offsets.
			lay.priv[i] = true
		}
	}
	if err := checkPrivateArrays(d, l, lay.priv, wg); err != nil {
		return nil, err
	}
	lay.sharePrivateCopies(l)
	for i := n - 1; i >= 0; i-- {
		a := &l.Args[i]
		if d := lay.Inds[i]; d >= 0 {
			lay.Indirect = true
			lay.DSGlobal[d] = a.ElemValues()*a.Data.Type.Size() > stageMax || l.Check && !dsWritten(l, lay.Inds, d)
			if a.Kind == core.ArgMat {
				// A matrix's blocks are reached at their offsets in
				// global memory; the plan colours its elements by the
				// row map, so no two work items of a colour add to
				// one row.
				lay.DSGlobal[d] = true
			} else if a.Access != core.Inc {
				lay.dsStage[d] = true
			}
			if a.Access.Modifies() {
				lay.DSModified[d] = true
				if !hostc.Combining(a.Access) || !lay.priv[i] {
					lay.callInColour = true
				}
				if a.Access == core.Min || a.Access == core.Max {
					lay.dsCombine[d] = a.Access
				}
			}
		}
	}
	if (scheme == Atomics || scheme == Warp) && lay.Indirect && lay.atomicsApply(l) {
		lay.Atomic, lay.callInColour = true, false
		lay.Warp = scheme == Warp && d.WarpMatch
		for d := range lay.DSGlobal {
			lay.DSGlobal[d] = true
		}
		lay.planFree(l)
	}
	if err := lay.soaCopies(l); err != nil {
		return nil, err
	}
	for d := 0; d < lay.NInd; d++ {
		if lay.DSGlobal[d] && lay.DSModified[d] && !lay.Atomic {
			lay.globalFence = true
		}
	}
	for _, c := range l.Consts {
		if why := cfront.OpenCLNameProblem(c.Name); why != "" {
			return nil, fmt.Errorf("const %q: its name is %s; rename the constant", c.Name, why)
		}
		off := (lay.ConstBytes + 7) &^ 7
		lay.Consts = append(lay.Consts, ConstSlot{Const: c, Offset: off})
		lay.ConstBytes = off + c.Bytes()
	}
	lay.constGlobal = len(lay.Consts) > 0 && constsGlobal(lay.ConstBytes, opts.ConstMem)
	if err := constsOutsideFunctions(l, u, d); err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name(), err)
	}
	// A dat modified through a map is written back from its staged copy,
	// so no other argument may modify it, except that several datasets
	// that only increment it may (each copy is added back), and several
	// that only take minima (or only maxima) of it (each copy is combined
	// back).
	for i := range l.Args {
		a := &l.Args[i]
		d := lay.Inds[i]
		if d < 0 || !lay.DSModified[d] || lay.DSArg[d] != i {
			continue
		}
		for j := range l.Args {
			b := &l.Args[j]
			// Views of different components of one Dat are staged and
			// written back component by component: they never meet.
			if !a.Overlaps(b) || lay.Inds[j] == d || !b.Access.Modifies() {
				continue
			}
			e := lay.Inds[j]
			if e >= 0 && lay.dsCombine[d] != 0 && lay.dsCombine[d] == lay.dsCombine[e] {
				continue
			}
			if e < 0 || lay.dsStage[d] || lay.dsStage[e] {
				return nil, fmt.Errorf("%s: the opencl backend stages %s in local memory and writes it back, so the loop may not also pass it as argument %d (%s); pass it through one map, or use a host backend",
					l.Name(), a.Data.Describe(), j, b.Describe())
			}
		}
	}
	return lay, nil
}

// soaCopies gives private copies to the arguments whose values the kernel
// would otherwise reach by a pointer into structure-of-arrays device
// memory (direct arguments and datasets not staged), since the kernel
// expects an element's values together. An argument that cannot have one
// makes its data stored element by element instead: the error is an
// *AoSNeeded naming that data.
func (lay *Layout) soaCopies(l *core.Loop) error {
	if !lay.soa {
		return nil
	}
	var need *AoSNeeded
	for i := range l.Args {
		if why := lay.soaUnreadable(l, i); why != "" {
			if need == nil {
				need = &AoSNeeded{Loop: l.Name()}
			}
			if s := l.Args[i].Data; !slices.Contains(need.Data, s) {
				need.Data = append(need.Data, s)
				need.Why = append(need.Why, fmt.Sprintf("argument %d (%s): %s", i, l.Args[i].Describe(), why))
			}
		}
	}
	if need != nil {
		return need
	}
	for i := range l.Args {
		if !lay.needsSoACopy(l, i) {
			continue
		}
		lay.priv[i] = true
		if j := lay.alias[i]; j >= 0 {
			lay.priv[j] = true
		}
	}
	for i := range l.Args {
		if j := lay.alias[i]; j >= 0 {
			lay.priv[i] = lay.priv[j]
		}
	}
	return nil
}

// needsSoACopy reports whether argument i reads structure-of-arrays device
// memory through a pointer, so needs a private copy: its data is stored so,
// and it is neither staged (element by element in shared memory) nor
// already private.
func (lay *Layout) needsSoACopy(l *core.Loop, i int) bool {
	a := &l.Args[i]
	if !lay.SoAData(l, i) || a.Off || lay.priv[i] {
		return false
	}
	d := lay.Inds[i]
	return a.Kind == core.ArgDirect || d >= 0 && lay.DSGlobal[d]
}

// copyBytes is the size of argument a's values for one element, which a
// private copy holds: dim × value size, times the arity for a vector
// argument.
func copyBytes(a *core.Arg) int {
	bytes := a.Dim() * a.Data.Type.Size()
	if a.Kind == core.ArgVector {
		bytes *= a.Map.Arity
	}
	return bytes
}

// soaUnreadable is why argument i cannot be read from structure-of-arrays
// device memory ("" if it can): it needs a private copy (needsSoACopy) it
// cannot have.
func (lay *Layout) soaUnreadable(l *core.Loop, i int) string {
	if !lay.needsSoACopy(l, i) {
		return ""
	}
	a := &l.Args[i]
	bytes := copyBytes(a)
	if why := lay.unshared[i]; why != "" {
		return why
	}
	if bytes > privateLimit {
		return fmt.Sprintf("its values take %d bytes per element, more than the %d bytes of a private copy", bytes, privateLimit)
	}
	return ""
}

// planFree makes an Atomic loop PlanFree unless it runs over an extruded
// set or assembles a matrix, whose code keeps the plan's blocks.
func (lay *Layout) planFree(l *core.Loop) {
	if l.Extruded != nil || slices.ContainsFunc(l.Args, func(a core.Arg) bool { return a.Kind == core.ArgMat }) {
		return
	}
	lay.PlanFree = true
	lay.MapParam = make([]int, len(l.Args))
	for i := range l.Args {
		lay.MapParam[i] = -1
		if m := l.Args[i].Map; m != nil {
			lay.MapParam[i] = slices.IndexFunc(l.Args[:i+1], func(a core.Arg) bool { return a.Map == m })
		}
	}
}

// elemIndex is the C expression of the number of the element argument i
// (indirect, its dataset in global memory) reaches from element e (map
// column col for a vector argument): through the map's table in a
// PlanFree loop, else through the block's local numbering (op2_loc) and
// its list of the dataset's elements (op2_map).
func (lay *Layout) elemIndex(l *core.Loop, i int, e, col string) string {
	a := &l.Args[i]
	if lay.PlanFree {
		entry := strconv.Itoa(a.Idx)
		if a.Kind == core.ArgVector {
			entry = col
		}
		return fmt.Sprintf("op2_mt%d[(size_t)(%s) * %d + %s]", lay.MapParam[i], e, a.Map.Arity, entry)
	}
	loc := fmt.Sprintf("op2_loc%d[%s]", i, e)
	if a.Kind == core.ArgVector {
		loc = fmt.Sprintf("op2_loc%d[(size_t)(%s) * %d + %s]", i, e, a.Map.Arity, col)
	}
	return fmt.Sprintf("op2_map%d[%s]", lay.Inds[i], loc)
}

// atomicsApply reports whether the Atomics scheme can run the loop: every
// argument that modifies data through a map increments it into a private
// accumulator, with an element type the dialect adds atomically.
func (lay *Layout) atomicsApply(l *core.Loop) bool {
	for i := range l.Args {
		a := &l.Args[i]
		if a.Map == nil || !a.Access.Modifies() {
			continue
		}
		if a.Access != core.Inc || !lay.priv[i] || lay.d.AtomicAdd[a.Data.Type] == "" {
			return false
		}
	}
	return true
}

// sharePrivateCopies keeps the kernel's view of aliasing arguments what it
// is on the host, where two arguments passing the same element of one Dat
// are pointers to the same values: a write through one is seen through
// the other, and two increments both count. Arguments passing the same
// elements (one Dat directly, or through the same map column, or as
// vectors of the same map) therefore share one private copy: all get one if
// any needs one. Arguments that modify a Dat through different columns of
// a map (or a column and the whole vector) may or may not meet on an
// element, depending on the map's values, so their copies could not be
// kept coherent: they get no private copies, but pointers into the staged
// (or global) data, which alias as on the host (package op2 refuses such
// loops before generation; the generator stays correct for them anyway).
// Increments through a map
// are exempt: each accumulates into its own zeroed copy, which is added to
// the target afterwards, so they combine correctly wherever they meet.
func (lay *Layout) sharePrivateCopies(l *core.Loop) {
	n := len(l.Args)
	lay.alias = make([]int, n)
	lay.unshared = make([]string, n)
	same := func(a, b *core.Arg) bool {
		return a.Data == b.Data && a.View == b.View && a.Comp == b.Comp && a.Kind == b.Kind && a.Map == b.Map && a.Ext.Same(b.Ext) && (a.Kind != core.ArgIndirect || a.Idx == b.Idx)
	}
	for i := range l.Args {
		lay.alias[i] = -1
		a := &l.Args[i]
		if a.Kind == core.ArgGlobal || a.Kind == core.ArgMat || a.Access == core.Min || a.Access == core.Max || a.Index {
			// MIN and MAX arguments keep their own accumulators even
			// when they pass the same elements, as on the host: two
			// candidates written through two of them both count.
			// Index arguments keep their own copies, as on the host
			// (each is a copy of the index, which a kernel may write):
			// in a fused loop each kernel's must stay its own.
			continue
		}
		for j := 0; j < i; j++ {
			if lay.alias[j] < 0 && same(&l.Args[j], a) {
				lay.alias[i] = j
				break
			}
		}
	}
	for i := range l.Args {
		if j := lay.alias[i]; j >= 0 && lay.priv[i] {
			lay.priv[j] = true
		}
	}
	for i := range l.Args {
		a := &l.Args[i]
		if j := lay.alias[i]; j >= 0 {
			lay.priv[i] = lay.priv[j]
		}
		if a.Map == nil || a.Kind == core.ArgMat || a.Access == core.Read || hostc.Combining(a.Access) {
			continue
		}
		for j := range l.Args {
			b := &l.Args[j]
			if j == i || !a.Overlaps(b) || same(a, b) {
				continue
			}
			why := fmt.Sprintf("it and argument %d (%s) may pass the same element of %s, so they must see each other's writes",
				j, b.Describe(), a.Data.Describe())
			for _, k := range []int{i, j} {
				if !hostc.Combining(l.Args[k].Access) {
					lay.priv[k] = false
					if lay.unshared[k] == "" {
						lay.unshared[k] = why
					}
				}
			}
		}
	}
	// Groups whose first member lost its copy lose it together.
	for i := range l.Args {
		if j := lay.alias[i]; j >= 0 {
			lay.priv[i] = lay.priv[j]
			if lay.unshared[i] == "" {
				lay.unshared[i] = lay.unshared[j]
			}
		}
	}
}

// dsWritten reports whether some argument of indirect dataset d modifies it.
func dsWritten(l *core.Loop, inds []int, d int) bool {
	for i := range l.Args {
		if inds[i] == d && l.Args[i].Access.Modifies() {
			return true
		}
	}
	return false
}

// buildHint explains, for a failed build, which arguments and constants
// the kernel receives as qualified pointers although it passes them on:
// a helper function with plain pointer parameters cannot take those.
func (lay *Layout) BuildHint(l *core.Loop) string {
	var notes []string
	for i := range l.Args {
		if ps := l.Kernel.Info.Params; i < len(ps) && ps[i].Untyped && !lay.priv[i] {
			notes = append(notes, fmt.Sprintf("argument %d (%s) is larger than %d bytes per element, so the kernel gets its untyped parameter %q as a %s pointer, which it cannot cast to a plain pointer (nor pass to helper functions with plain pointer parameters); declare the parameter with its type, and cast to %s pointers if it must",
				i, l.Args[i].Describe(), privateLimit, ps[i].Text, lay.qualifier(l, i), lay.qualifier(l, i)))
			continue
		}
		if i < len(lay.passed) && lay.passed[i] && !lay.priv[i] {
			why := fmt.Sprintf("is larger than %d bytes per element", privateLimit)
			if lay.unshared[i] != "" {
				why = "cannot have a private copy: " + lay.unshared[i]
			}
			notes = append(notes, fmt.Sprintf("argument %d (%s) %s, so the kernel gets it as a %s pointer, which helper functions with plain pointer parameters cannot take",
				i, l.Args[i].Describe(), why, lay.qualifier(l, i)))
		}
	}
	for _, s := range lay.Consts {
		if s.Const.Dim > 1 && s.Const.Bytes() > privateLimit {
			notes = append(notes, fmt.Sprintf("constant %q is larger than %d bytes, so kernels see it as a %s pointer, which helper functions with plain pointer parameters cannot take",
				s.Const.Name, privateLimit, lay.constQualifier()))
		}
	}
	if lay.d.ConstTable == lay.d.Constant && l.Kernel.Info != nil {
		if m, err := cfront.Model(l.Kernel.Info); err == nil && len(m.ConstTables) > 0 {
			notes = append(notes, fmt.Sprintf("the kernel source's file-scope const tables are in %s's %s address space, as OpenCL C 1.2 requires: index them directly; a helper function's plain pointer parameter, or a plain local pointer, cannot take one (copy the values into a local array first)",
				lay.d.Name, lay.d.ConstTable))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "note (" + lay.d.Name + "): " + strings.Join(notes, "; ")
}

// qualifier is the OpenCL address space of the memory that kernel
// parameter i points to when the argument is not passed as a private
// copy.
func (lay *Layout) qualifier(l *core.Loop, i int) string {
	a := &l.Args[i]
	switch a.Kind {
	case core.ArgIndirect, core.ArgVector:
		if !lay.DSGlobal[lay.Inds[i]] {
			return lay.d.Local
		}
	case core.ArgGlobal:
		if a.IsReduction() {
			return lay.d.Private
		}
	}
	return lay.d.Global
}

// paramText is the declaration of kernel parameter i in the generated
// code: the parameter of a READ argument with const values
// (core.Param.ReadOnlyText), and one that is not a private copy with the
// address-space qualifier of the memory it points to (a typedef'd
// pointer spelled out, so that the qualifier qualifies the values).
func (lay *Layout) paramText(l *core.Loop, i int) string {
	p := &l.Kernel.Info.Params[i]
	if i >= len(l.Args) {
		return p.Text
	}
	readOnly := core.ReadOnlyArg(&l.Args[i])
	if lay.priv[i] {
		if readOnly {
			return p.ReadOnlyText()
		}
		return p.Text
	}
	text := p.Text
	switch {
	case p.Plain != "":
		text = p.Plain // a typedef'd pointer: qualify what it points to
		if readOnly || p.ConstData {
			text = "const " + text
		}
	case readOnly:
		text = p.ReadOnlyText()
	}
	return lay.qualifier(l, i) + " " + text
}

// vectorCast is the cast, at the kernel's call, of the pointer array
// passed for vector argument i to the type of the kernel's parameter:
// C converts T ** to neither const T ** nor void ** by itself, nor C++.
func (lay *Layout) vectorCast(l *core.Loop, i int) string {
	a := &l.Args[i]
	base := lay.d.typeName(a.Data.Type)
	q := ""
	if ps := l.Kernel.Info.Params; i < len(ps) {
		p := &ps[i]
		if p.Untyped {
			base = "void"
		}
		if core.ReadOnlyArg(a) || p.ConstData {
			base = "const " + base
		}
	}
	if !lay.priv[i] && lay.qualifier(l, i) != "" {
		q = lay.qualifier(l, i) + " "
	}
	return fmt.Sprintf("(%s%s **)", q, base)
}

// funcName is the name a function the kernel source defines gets in the
// generated code: the prefix keeps user functions apart from OpenCL's
// built-in functions (dot, length, clamp...) and from generated names.
func funcName(name string) string { return "op2_f_" + name }

// replaceLongLong returns s with every `long long` (the words, with any
// blanks between them) replaced by int64.
func replaceLongLong(s, int64 string) string {
	word := func(i int) bool { return i >= 0 && i < len(s) && clex.IsIdentChar(s[i]) }
	var b strings.Builder
	pos := 0
	for i := 0; i+4 <= len(s); i++ {
		if s[i] != 'l' || !strings.HasPrefix(s[i:], "long") || word(i-1) {
			continue
		}
		j := i + 4
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\f' || s[j] == '\r') {
			j++
		}
		if j == i+4 || !strings.HasPrefix(s[j:], "long") || word(j+4) {
			continue
		}
		b.WriteString(s[pos:i])
		b.WriteString(int64)
		pos = j + 4
		i = pos - 1
	}
	if pos == 0 {
		return s
	}
	b.WriteString(s[pos:])
	return b.String()
}

// constQualifier qualifies pointers to the constants' buffer: constant
// memory, or read-only device memory when the constants do not fit there
// (Layout.ConstsGlobal).
func (lay *Layout) constQualifier() string {
	if lay.constGlobal {
		return lay.d.ReadOnlyGlobal
	}
	return lay.d.Constant
}

// hiddenParam is the parameter through which every function of the kernel
// source, and the stub, receives the constants: a pointer to their
// buffer, restrict in read-only device memory (nothing writes it while a
// kernel runs), so that the compiler may read it through a read-only
// cache.
func (lay *Layout) hiddenParam() string {
	if lay.constGlobal {
		return lay.d.ReadOnlyGlobal + " char *restrict op2_consts"
	}
	return lay.d.Constant + " char *op2_consts"
}

// kernelSource returns the user's kernel source made into OpenCL C:
//
//   - #include directives of standard headers whose content OpenCL C has
//     built in are dropped (the line stays, empty);
//   - every function the source defines is renamed with funcName, in its
//     definition, its prototypes and every call (in bodies and in macros);
//   - when the kernel uses constants, every such function gets the hidden
//     first parameter op2_consts (and every call passes it on), and its
//     body starts with a read-only local per constant it may use, in a
//     block around the original body so that the function's own variables
//     may shadow a constant; a parameter named like a constant shadows it;
//   - file-scope const variables with initialisers (lookup tables) are
//     put in the __constant address space, as OpenCL C 1.2 requires;
//   - parameters of the kernel that are not private copies get their
//     address-space qualifiers, and those of READ arguments const values
//     (see paramText; the kernel's prototypes get the same list);
//   - the names the source declares that the dialect has built in (a
//     struct double3, a typedef uint, a macro float4) are renamed
//     (userSource.renameEdits);
//   - `long long` becomes OpenCL's 64-bit `long`.
func kernelSource(l *core.Loop, lay *Layout, u *userSource) (string, error) {
	k := l.Kernel
	info := k.Info
	hasConsts := len(lay.Consts) > 0
	var params []string
	if hasConsts {
		params = append(params, lay.hiddenParam())
	}
	for i := range info.Params {
		params = append(params, lay.paramText(l, i))
	}
	kernelList := u.renameText(strings.Join(params, ", "))
	for _, at := range slices.Backward(identAt(kernelList, "register")) { // see register below
		kernelList = kernelList[:at] + kernelList[at+len("register"):]
	}
	if len(params) == 0 {
		kernelList = "void"
	}
	list := func(f *cfront.FuncDecl) edit {
		switch {
		case f.Name == k.Name:
			return edit{f.ListStart, f.ListEnd, kernelList}
		case !hasConsts:
			return edit{f.ListStart, f.ListStart, ""}
		case f.EmptyList:
			return edit{f.ListStart, f.ListEnd, lay.hiddenParam()}
		}
		return edit{f.ListStart, f.ListStart, lay.hiddenParam() + ", "}
	}
	var edits []edit
	// First, so that at equal positions they come before other edits.
	for _, c := range u.MathCalls {
		for _, a := range u.ArgSpans(c.Open) {
			edits = append(edits, edit{a[0], a[0], "(double)("}, edit{a[1], a[1], ")"})
		}
	}
	for _, s := range u.includes {
		edits = append(edits, edit{s[0], s[1], ""})
	}
	for _, at := range u.ConstTables {
		edits = append(edits, edit{at, at, lay.d.ConstTable + " "})
	}
	for _, at := range u.ConstPtrs {
		edits = append(edits, edit{at, at, " " + lay.d.Constant + " "})
	}
	for i := range u.Defs {
		f := &u.Defs[i]
		edits = append(edits, edit{f.NameAt, f.NameAt + len(f.Name), funcName(f.Name)}, list(f))
		if hasConsts {
			edits = append(edits, edit{f.BodyOpen + 1, f.BodyOpen + 1, constLocals(lay, u, i) + " {"},
				edit{f.BodyClose, f.BodyClose, "}"})
		}
		// __func__ (and GCC's __FUNCTION__, __PRETTY_FUNCTION__) names
		// the function as the source does, not as renamed, in its body
		// and the macros used there: the string it stands for, as the
		// host's lane forms do (hostc functionNames).
		name := strconv.Quote(f.Name)
		if usesFuncName(u.Src) {
			// (In C++ __PRETTY_FUNCTION__ is the signature: left alone.)
			define, undef := fmt.Sprintf("\n#define __func__ %s\n#define __FUNCTION__ %s\n", name, name), "\n#undef __func__\n#undef __FUNCTION__\n"
			if !k.CXX {
				define += fmt.Sprintf("#define __PRETTY_FUNCTION__ %s\n", name)
				undef += "#undef __PRETTY_FUNCTION__\n"
			}
			edits = append(edits, edit{f.BodyOpen, f.BodyOpen, define}, edit{f.BodyClose + 1, f.BodyClose + 1, undef})
		}
		body := u.Code[f.BodyOpen:f.BodyClose]
		if lay.d == OpenCL {
			// OpenCL C has no static variables in functions: a static
			// const table there (its values fixed) becomes a plain
			// const one, the same values every call.
			for _, at := range identAt(body, "static") {
				// The declaration: from the statement's start to its
				// initialiser (const static int t[] = ...).
				if constObject(body, at) {
					edits = append(edits, edit{f.BodyOpen + at, f.BodyOpen + at + len("static"), ""})
				}
			}
		}
	}
	// register, a hint compilers ignore, is none of OpenCL C 1.2 or
	// C++17 (CUDA); the kernel's own parameter list is replaced whole.
	var kernelLists [][2]int // where the kernel's parameter lists are
	for _, fs := range [][]cfront.FuncDecl{u.Defs, u.Protos} {
		for _, f := range fs {
			if f.Name == k.Name {
				kernelLists = append(kernelLists, [2]int{f.ListStart, f.ListEnd})
			}
		}
	}
	for _, at := range identAt(u.Code, "register") {
		if !slices.ContainsFunc(kernelLists, func(r [2]int) bool { return r[0] <= at && at < r[1] }) {
			edits = append(edits, edit{at, at + len("register"), ""})
		}
	}
	for i := range u.Protos {
		f := &u.Protos[i]
		if u.Defined[f.Name] {
			edits = append(edits, edit{f.NameAt, f.NameAt + len(f.Name), funcName(f.Name)}, list(f))
		}
	}
	for _, c := range u.Calls {
		edits = append(edits, edit{c.NameAt, c.NameAt + len(c.Name), funcName(c.Name)})
		if hasConsts {
			arg := "op2_consts, "
			if c.Empty {
				arg = "op2_consts"
			}
			edits = append(edits, edit{c.Open + 1, c.Open + 1, arg})
		}
	}
	edits = append(edits, u.renameEdits(edits)...)
	// [[...]] attributes are blanked in place (same offsets, so they never
	// collide with the edits).
	src := []byte(k.Source)
	for _, sp := range u.StdAttrs {
		for i := sp[0]; i < sp[1]; i++ {
			if src[i] != '\n' {
				src[i] = ' '
			}
		}
	}
	return replaceLongLong(applyEdits(string(src), edits), lay.d.Int64), nil
}

// definedNames returns the names of the functions the source defines,
// once each, in order, when the source may reach one other than by a
// call it spells: a macro's replacement text names one or pastes names
// (##), or the source uses one as a value (a function pointer); else
// none, as the edits rename every name.
func (u *userSource) definedNames() []string {
	known := map[int]bool{}
	for _, f := range u.Defs {
		known[f.NameAt] = true
	}
	for _, f := range u.Protos {
		known[f.NameAt] = true
	}
	for _, c := range u.Calls {
		known[c.NameAt] = true
	}
	var names []string
	tested := u.testedNames()
	other := false
	for _, md := range u.MacroDefs {
		other = other || strings.Contains(u.directive(md.At), "##")
	}
	for _, f := range u.Defs {
		if slices.Contains(names, f.Name) || tested[f.Name] {
			continue // a name #ifdef tests stays what the source makes it
		}
		names = append(names, f.Name)
		other = other || u.MacroIdents[f.Name]
		for _, at := range identAt(u.Code, f.Name) {
			other = other || !known[at]
		}
	}
	if !other {
		return nil
	}
	return names
}

// usesFuncName reports whether a source may name __func__, __FUNCTION__
// or __PRETTY_FUNCTION__ (in its code or its macros).
func usesFuncName(src string) bool {
	return strings.Contains(src, "__func__") || strings.Contains(src, "__FUNCTION__") || strings.Contains(src, "__PRETTY_FUNCTION__")
}

// directive returns the directive starting at offset at of the source
// (continuation lines joined in place), comments and literals blanked.
func (u *userSource) directive(at int) string {
	return clex.Blank(u.Src[at:clex.LogicalLineEnd(u.Src, at)], true, nil)
}

// testedNames returns the names the source's conditional directives test
// (#ifdef NAME, #ifndef NAME, defined(NAME)).
func (u *userSource) testedNames() map[string]bool {
	tested := map[string]bool{}
	for _, m := range conditionalRE.FindAllStringIndex(u.Src, -1) {
		for _, id := range clex.Identifiers(u.directive(m[0])) {
			tested[id] = true
		}
	}
	return tested
}

// conditionalRE finds conditional directives (#if, #ifdef, #ifndef,
// #elif).
var conditionalRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*(?:if|elif)`)

// emptyList reports whether the function the source defines as name
// takes no parameters.
func (u *userSource) emptyList(name string) bool {
	for _, f := range u.Defs {
		if f.Name == name {
			return f.EmptyList || strings.TrimSpace(u.Code[f.ListStart:f.ListEnd]) == "void"
		}
	}
	return false
}

// constObject reports whether the declaration whose static is at offset
// at of body declares a const object: const among the specifiers (before
// a struct's body, a declarator's '[' or '('), or, for a pointer, after
// its last '*' (a pointer to const is no const object).
func constObject(body string, at int) bool {
	start := strings.LastIndexAny(body[:at], ";{}") + 1
	decl, _, _ := strings.Cut(body[start:], ";")
	decl, _, _ = strings.Cut(decl, "=")
	if k := strings.LastIndexByte(decl, '*'); k >= 0 {
		return slices.Contains(clex.Identifiers(decl[k+1:]), "const")
	}
	if k := strings.IndexAny(decl, "{[("); k >= 0 {
		decl = decl[:k]
	}
	return slices.Contains(clex.Identifiers(decl), "const")
}

// identAt returns the offsets in code (comments and literals blanked) of
// the identifier name, standing alone.
func identAt(code, name string) []int {
	var at []int
	for i := 0; ; {
		j := clex.IndexIdent(code[i:], name)
		if j < 0 {
			return at
		}
		at = append(at, i+j)
		i += j + len(name)
	}
}

// constsOutsideFunctions refuses a C++ kernel that uses a constant, or
// calls a function of its source that uses constants, outside the bodies
// of its file-scope functions (in a namespace's functions or a struct's
// member functions): the device generator passes the constants' values to
// file-scope functions only (a hidden parameter), so code elsewhere could
// not see them. A C kernel has no such code.
func constsOutsideFunctions(l *core.Loop, u *userSource, d *Dialect) error {
	if !l.Kernel.CXX || len(l.Consts) == 0 {
		return nil
	}
	for _, c := range l.Consts {
		if u.OutsideIdents[c.Name] {
			return fmt.Errorf("the C++ kernel %q uses constant %q outside its file-scope functions (in a namespace, a struct's member function or a declaration): on %s, constants reach only functions defined at file scope; move that code to a file-scope function, pass the value as a parameter, or rename what shares the constant's name", l.Kernel.Name, c.Name, d.Name)
		}
	}
	for _, c := range u.Calls {
		if c.Outside {
			return fmt.Errorf("the C++ kernel %q calls its function %q outside its file-scope functions (in a namespace, a struct's member function or a file-scope initializer): with constants declared, its file-scope functions take them as a hidden parameter, which code there cannot pass; move that code to a file-scope function", l.Kernel.Name, c.Name)
		}
	}
	return nil
}

// constLocals declares, for the body of definition i, a read-only local
// per constant the body or a macro may use, read from the constants'
// buffer: a scalar's value, or a const pointer to an array's values (a
// private copy of them up to privateLimit bytes, else in the buffer
// itself: __constant memory, or read-only __global memory when the
// constants do not fit constant memory). Assigning to either is a compile
// error, so kernels cannot change a constant.
// Constants named like a parameter of the function, or like a typedef of
// the source, are left out: the parameter (or the type) is what the name
// means there.
func constLocals(lay *Layout, u *userSource, i int) string {
	f := &u.Defs[i]
	var b strings.Builder
	for _, s := range lay.Consts {
		c := s.Const
		if slices.Contains(f.Params, c.Name) || u.Typedefs[c.Name] || !(u.BodyIdents[i][c.Name] || u.MacroIdents[c.Name]) {
			continue
		}
		t := lay.d.typeName(c.Type)
		cs := lay.constQualifier()
		// A macro of the source named like the constant, defined where
		// the body starts, is what the name means there (as in the host
		// code, where the constant's own name is a macro the source's
		// redefines): the local is declared only where none is.
		macro := slices.Contains(u.Macros, c.Name)
		if macro {
			fmt.Fprintf(&b, "\n#ifndef %s\n", c.Name)
		}
		switch {
		case c.Dim == 1:
			fmt.Fprintf(&b, " const %s %s = *(%s %s *)(op2_consts + %d);", t, c.Name, cs, t, s.Offset)
		case c.Bytes() <= privateLimit:
			// A private copy, so that the array may be passed on to
			// helper functions taking plain C pointers.
			fmt.Fprintf(&b, " %s op2_cv_%s[%d]; for (int op2_k = 0; op2_k < %d; op2_k++) op2_cv_%s[op2_k] = ((%s %s *)(op2_consts + %d))[op2_k]; const %s *const %s = op2_cv_%s;",
				t, c.Name, c.Dim, c.Dim, c.Name, cs, t, s.Offset, t, c.Name, c.Name)
		default:
			fmt.Fprintf(&b, " %s %s *const %s = (%s %s *)(op2_consts + %d);", cs, t, c.Name, cs, t, s.Offset)
		}
		// The body may declare its own variable of the name, leaving
		// this one unused: no warning.
		fmt.Fprintf(&b, " (void)%s;", c.Name)
		if macro {
			b.WriteString("\n#endif\n")
		}
	}
	return b.String()
}

// typeName is the dialect's spelling of a scalar type.
func (d *Dialect) typeName(t core.ScalarType) string {
	if t == core.Int64 {
		return d.Int64
	}
	return t.CName()
}

// provided are macros the prelude defines when the kernel source uses the
// name without defining it: what C headers give that OpenCL C or NVRTC
// lacks.
var provided = []Macro{
	{"MIN", "#define MIN(a, b) ((a) < (b) ? (a) : (b))"},
	{"MAX", "#define MAX(a, b) ((a) > (b) ? (a) : (b))"},
	{"INT8_MIN", "#define INT8_MIN (-128)"},
	{"INT8_MAX", "#define INT8_MAX 127"},
	{"UINT8_MAX", "#define UINT8_MAX 255"},
	{"INT16_MIN", "#define INT16_MIN (-32768)"},
	{"INT16_MAX", "#define INT16_MAX 32767"},
	{"UINT16_MAX", "#define UINT16_MAX 65535"},
	{"INT32_MIN", "#define INT32_MIN (-2147483647 - 1)"},
	{"INT32_MAX", "#define INT32_MAX 2147483647"},
	{"UINT32_MAX", "#define UINT32_MAX 4294967295U"},
	{"INT64_MIN", "#define INT64_MIN (-9223372036854775807L - 1)"},
	{"INT64_MAX", "#define INT64_MAX 9223372036854775807L"},
	{"UINT64_MAX", "#define UINT64_MAX 18446744073709551615UL"},
	{"SIZE_MAX", "#define SIZE_MAX ((size_t)-1)"},
	// math.h's constants: NVRTC has no math.h; OpenCL C defines them
	// (hence the guards).
	{"M_E", ifUndefined("M_E", "2.718281828459045235360287471352662498")},
	{"M_LOG2E", ifUndefined("M_LOG2E", "1.442695040888963407359924681001892137")},
	{"M_LOG10E", ifUndefined("M_LOG10E", "0.434294481903251827651128918916605082")},
	{"M_LN2", ifUndefined("M_LN2", "0.693147180559945309417232121458176568")},
	{"M_LN10", ifUndefined("M_LN10", "2.302585092994045684017991454684364208")},
	{"M_PI", ifUndefined("M_PI", "3.141592653589793238462643383279502884")},
	{"M_PI_2", ifUndefined("M_PI_2", "1.570796326794896619231321691639751442")},
	{"M_PI_4", ifUndefined("M_PI_4", "0.785398163397448309615660845819875721")},
	{"M_1_PI", ifUndefined("M_1_PI", "0.318309886183790671537767526745028724")},
	{"M_2_PI", ifUndefined("M_2_PI", "0.636619772367581343075535053490057448")},
	{"M_2_SQRTPI", ifUndefined("M_2_SQRTPI", "1.128379167095512573896158903121545172")},
	{"M_SQRT2", ifUndefined("M_SQRT2", "1.414213562373095048801688724209698079")},
	{"M_SQRT1_2", ifUndefined("M_SQRT1_2", "0.707106781186547524400844362104849039")},
	// As CUDA's math_constants.h spells them (OpenCL C has its own).
	{"INFINITY", ifUndefined("INFINITY", "__int_as_float(0x7f800000U)")},
	{"HUGE_VAL", ifUndefined("HUGE_VAL", "__longlong_as_double(0x7ff0000000000000ULL)")},
	{"NAN", ifUndefined("NAN", "__int_as_float(0x7fffffffU)")},
	// limits.h and float.h (LP64, IEEE 754), which NVRTC lacks too.
	{"CHAR_BIT", ifUndefined("CHAR_BIT", "8")},
	{"SCHAR_MIN", ifUndefined("SCHAR_MIN", "(-128)")},
	{"SCHAR_MAX", ifUndefined("SCHAR_MAX", "127")},
	{"UCHAR_MAX", ifUndefined("UCHAR_MAX", "255")},
	{"CHAR_MIN", ifUndefined("CHAR_MIN", "(-128)")},
	{"CHAR_MAX", ifUndefined("CHAR_MAX", "127")},
	{"SHRT_MIN", ifUndefined("SHRT_MIN", "(-32768)")},
	{"SHRT_MAX", ifUndefined("SHRT_MAX", "32767")},
	{"USHRT_MAX", ifUndefined("USHRT_MAX", "65535")},
	{"INT_MIN", ifUndefined("INT_MIN", "(-2147483647 - 1)")},
	{"INT_MAX", ifUndefined("INT_MAX", "2147483647")},
	{"UINT_MAX", ifUndefined("UINT_MAX", "4294967295U")},
	{"LONG_MIN", ifUndefined("LONG_MIN", "(-9223372036854775807L - 1)")},
	{"LONG_MAX", ifUndefined("LONG_MAX", "9223372036854775807L")},
	{"ULONG_MAX", ifUndefined("ULONG_MAX", "18446744073709551615UL")},
	{"LLONG_MIN", ifUndefined("LLONG_MIN", "(-9223372036854775807LL - 1)")},
	{"LLONG_MAX", ifUndefined("LLONG_MAX", "9223372036854775807LL")},
	{"ULLONG_MAX", ifUndefined("ULLONG_MAX", "18446744073709551615ULL")},
	{"FLT_RADIX", ifUndefined("FLT_RADIX", "2")},
	{"FLT_MANT_DIG", ifUndefined("FLT_MANT_DIG", "24")},
	{"DBL_MANT_DIG", ifUndefined("DBL_MANT_DIG", "53")},
	{"FLT_DIG", ifUndefined("FLT_DIG", "6")},
	{"DBL_DIG", ifUndefined("DBL_DIG", "15")},
	{"FLT_MIN_EXP", ifUndefined("FLT_MIN_EXP", "(-125)")},
	{"DBL_MIN_EXP", ifUndefined("DBL_MIN_EXP", "(-1021)")},
	{"FLT_MAX_EXP", ifUndefined("FLT_MAX_EXP", "128")},
	{"DBL_MAX_EXP", ifUndefined("DBL_MAX_EXP", "1024")},
	{"FLT_MIN_10_EXP", ifUndefined("FLT_MIN_10_EXP", "(-37)")},
	{"DBL_MIN_10_EXP", ifUndefined("DBL_MIN_10_EXP", "(-307)")},
	{"FLT_MAX_10_EXP", ifUndefined("FLT_MAX_10_EXP", "38")},
	{"DBL_MAX_10_EXP", ifUndefined("DBL_MAX_10_EXP", "308")},
	{"FLT_EPSILON", ifUndefined("FLT_EPSILON", "1.19209290e-07F")},
	{"DBL_EPSILON", ifUndefined("DBL_EPSILON", "2.2204460492503131e-16")},
	{"FLT_MIN", ifUndefined("FLT_MIN", "1.17549435e-38F")},
	{"DBL_MIN", ifUndefined("DBL_MIN", "2.2250738585072014e-308")},
	{"FLT_MAX", ifUndefined("FLT_MAX", "3.40282347e+38F")},
	{"DBL_MAX", ifUndefined("DBL_MAX", "1.7976931348623157e+308")},
	{"memcpy", "static void *op2_memcpy(void *op2_d, const void *op2_s, size_t op2_n) { char *op2_a = (char *)op2_d; const char *op2_b = (const char *)op2_s; for (size_t op2_i = 0; op2_i < op2_n; op2_i++) op2_a[op2_i] = op2_b[op2_i]; return op2_d; }\n#define memcpy(d, s, n) op2_memcpy(d, s, n)"},
	{"memset", "static void *op2_memset(void *op2_d, int op2_v, size_t op2_n) { char *op2_a = (char *)op2_d; for (size_t op2_i = 0; op2_i < op2_n; op2_i++) op2_a[op2_i] = (char)op2_v; return op2_d; }\n#define memset(d, v, n) op2_memset(d, v, n)"},
}

// Macro is a definition the prelude holds when the kernel source uses
// its name without declaring it (see provided, Dialect.Library).
type Macro struct{ Name, Def string }

// ifUndefined defines name as value unless the dialect defines it.
func ifUndefined(name, value string) string {
	return "#ifndef " + name + "\n#define " + name + " " + value + "\n#endif"
}

type writer struct {
	strings.Builder
	d      *Dialect
	shared [][2]string // shared-memory parameters so far: type, name
}

// sharedParam is the parameter declaring shared-memory buffer name of
// element type t: a Local pointer, or its offset in dynamic shared memory
// (Dialect.SharedOffsets; sharedDecls then declares the pointer).
func (w *writer) sharedParam(t, name string) string {
	if w.d.SharedOffsets {
		w.shared = append(w.shared, [2]string{t, name})
		return "int " + name + "_at"
	}
	return fmt.Sprintf("%s %s *%s", w.d.Local, t, name)
}

// sharedDecls declares, at the start of the stub's body, the pointers to
// the shared buffers whose offsets are parameters.
func (w *writer) sharedDecls() {
	if len(w.shared) == 0 {
		return
	}
	w.p("  extern __shared__ double op2_dynamic_shared[];\n")
	for _, s := range w.shared {
		w.p("  %s *const %s = (%s *)((char *)op2_dynamic_shared + %s_at);\n  (void)%s;\n", s[0], s[1], s[0], s[1], s[1])
	}
}

// p writes format with the dialect's spellings in place of its $words
// ($global, $local, $lbarrier, $gbarrier, $bbarrier, $localid, $groupid,
// $globalid, $globalsize, $kernel), then formatted like fmt.Fprintf. The
// arguments are not expanded, so user source passes through unchanged.
func (w *writer) p(format string, a ...any) {
	fmt.Fprintf(&w.Builder, w.d.spell(format), a...)
}

// Generate writes the whole OpenCL program for the loop: the prelude, the
// user's source (between the dialect's StrictConstPush and
// StrictConstPop), and a __kernel stub named op2_stub. Every name the
// generated code introduces starts with op2_ (user sources may not use
// the prefix), and every macro the user source defines is undefined
// before the stub, so no user name can change the stub's meaning.
func Generate(l *core.Loop, lay *Layout) (string, error) {
	u := lay.src
	user, err := kernelSource(l, lay, u)
	if err != nil {
		return "", err
	}
	d := lay.d
	w := writer{d: d}
	w.p("/* Generated by GoOP2 (%s) for kernel %s. Do not edit. */\n", d.Name, l.Kernel.Name)
	w.p("%s", d.Preamble)
	if l.Kernel.CXX {
		w.p("%s", d.CXXPrelude)
	}
	var undef []string
	for _, m := range append(provided, d.Library...) {
		if u.Uses(m.Name) && !u.Declares(m.Name) {
			w.p("%s\n", m.Def)
			undef = append(undef, m.Name)
		}
	}
	// The functions the source defines are renamed where it spells them;
	// where a macro makes their names (APPLY(f, x), helper_##n) or the
	// source uses them as values (function pointers), a macro of each
	// name renames them too.
	renamedByMacro := u.definedNames()
	for _, name := range renamedByMacro {
		switch {
		case len(lay.Consts) == 0:
			w.p("#define %s %s\n", name, funcName(name))
		case u.emptyList(name):
			// The constants reach every function as its first parameter.
			w.p("#define %s() %s(op2_consts)\n", name, funcName(name))
		default:
			w.p("#define %s(...) %s(op2_consts, __VA_ARGS__)\n", name, funcName(name))
		}
	}
	w.p("\n%s/* user kernel %s */\n%s\n/* end of user kernel */\n%s", d.StrictConstPush, l.Kernel.Name, user, d.StrictConstPop)
	for _, m := range append(append(undef, renamedByMacro...), u.Macros...) {
		w.p("#undef %s\n", u.deviceName(m))
	}
	w.p("\n")
	if lay.PlanFree {
		planFreeStub(&w, l, lay)
	} else if lay.Indirect {
		indirectStub(&w, l, lay)
	} else {
		directStub(&w, l, lay)
	}
	return w.String(), nil
}

// dataParams declares one $global pointer per distinct Dat, Global or
// Mat, then one to the block offsets of each matrix argument.
func dataParams(w *writer, l *core.Loop, lay *Layout) {
	for i := range l.Args {
		if lay.Base[i] == i {
			w.p("    $global %s *restrict op2_d%d,\n", w.d.typeName(l.Args[i].Data.Type), i)
			if lay.SoAData(l, i) {
				w.p("    int op2_stride%d,\n", i)
			}
		}
	}
	for i := range l.Args {
		if l.Args[i].Kind == core.ArgMat {
			w.p("    $global const int *restrict op2_moff%d,\n", i)
		}
	}
}

// tailParams declares the constants and the reduction buffers and ends the
// parameter list. Each reduction has its buffer of partial results, the
// offset in it, in values, of the call's slots (op2_ro: a buffer holds the
// partial results of several calls, devrt's ring) and its scratch.
func tailParams(w *writer, l *core.Loop, lay *Layout) {
	var ps []string
	if len(lay.Consts) > 0 {
		ps = append(ps, "    "+lay.hiddenParam())
	}
	for _, i := range lay.Reductions {
		t := w.d.typeName(l.Args[i].Data.Type)
		ps = append(ps, fmt.Sprintf("    %s %s *op2_red%d", w.d.Global, t, i), fmt.Sprintf("    int op2_ro%d", i), "    "+w.sharedParam(t, fmt.Sprintf("op2_rs%d", i)))
	}
	if len(ps) == 0 {
		ps = append(ps, "    int op2_unused")
	}
	w.p("%s)\n{\n", strings.Join(ps, ",\n"))
	w.sharedDecls()
}

// argInit declares each reduction's private accumulator and the private
// copies of Globals that are read.
func argInit(w *writer, l *core.Loop, lay *Layout) {
	for i := range l.Args {
		a := &l.Args[i]
		if a.Kind != core.ArgGlobal || !lay.priv[i] || a.Off {
			continue
		}
		t, dim := w.d.typeName(a.Data.Type), a.Data.Dim
		init := fmt.Sprintf("op2_d%d[op2_k]", lay.Base[i])
		if a.Access == core.Inc {
			init = "0"
		}
		w.p("  %s op2_p%d[%d];\n  for (int op2_k = 0; op2_k < %d; op2_k++) op2_p%d[op2_k] = %s;\n", t, i, dim, dim, i, init)
	}
}

// reductionFinish combines the work group's accumulators with a tree in
// local memory and stores the group's result in slot of the call's
// partials.
func reductionFinish(w *writer, l *core.Loop, lay *Layout, slot string) {
	for _, i := range lay.Reductions {
		a := &l.Args[i]
		dim := a.Data.Dim
		w.p("  for (int op2_k = 0; op2_k < %d; op2_k++) {\n", dim)
		w.p("    op2_rs%d[op2_lid] = op2_p%d[op2_k];\n    $lbarrier;\n", i, i)
		w.p("    for (int op2_step = %d; op2_step > 0; op2_step >>= 1) {\n", lay.wg/2)
		w.p("      if (op2_lid < op2_step) { %s }\n", treeCombine(a, fmt.Sprintf("op2_rs%d[op2_lid]", i), fmt.Sprintf("op2_rs%d[op2_lid + op2_step]", i)))
		w.p("      $lbarrier;\n    }\n")
		w.p("    if (op2_lid == 0) op2_red%d[op2_ro%d + (%s) * %d + op2_k] = op2_rs%d[0];\n", i, i, slot, dim, i)
		w.p("    $lbarrier;\n  }\n")
	}
}

// treeCombine writes the statement folding work item src's accumulator
// of reduction argument a into dst's, in a work group's tree. The host
// folds each partial result into the Global (hostc.Combine), so a NaN
// one is dropped there (if (v < g) is false); in the tree a NaN
// accumulator would instead hide the values folded into it after it, so
// a floating-point MIN or MAX replaces a NaN dst by src: the group's
// result is the minimum (maximum) of its non-NaN accumulators, NaN when
// all are.
func treeCombine(a *core.Arg, dst, src string) string {
	if (a.Access == core.Min || a.Access == core.Max) && (a.Data.Type == core.Float64 || a.Data.Type == core.Float32) {
		op := "<"
		if a.Access == core.Max {
			op = ">"
		}
		return fmt.Sprintf("if (%s %s %s || %s != %s) %s = %s;", src, op, dst, dst, dst, dst, src)
	}
	return hostc.Combine(a.Access, dst, src)
}

// target is the address of the first value of argument i's target for
// element e (map column col for a vector argument): in the dat for direct
// arguments and datasets in global memory, else in the staged copy. In the
// dat, elements are the Dat's dim apart, and a view of one component
// (core.Arg.View) starts at its component; a staged copy holds only the
// values the kernel sees (a view's one component).
func target(l *core.Loop, lay *Layout, i int, e, col string) string {
	a := &l.Args[i]
	dim := a.Data.Dim
	comp := ""
	if a.Comp != 0 {
		comp = fmt.Sprintf(" + %d", a.Comp)
	}
	layer := layerValues(l, i, col)
	switch a.Kind {
	case core.ArgDirect:
		return fmt.Sprintf("op2_d%d + (size_t)(%s) * %d%s%s", lay.Base[i], e, dim, layer, comp)
	case core.ArgGlobal:
		return fmt.Sprintf("op2_d%d", lay.Base[i])
	}
	d := lay.Inds[i]
	if lay.DSGlobal[d] {
		return fmt.Sprintf("op2_d%d + (size_t)%s * %d%s%s", lay.Base[i], lay.elemIndex(l, i, e, col), dim, layer, comp)
	}
	loc := fmt.Sprintf("op2_loc%d[%s]", i, e)
	if a.Kind == core.ArgVector {
		loc = fmt.Sprintf("op2_loc%d[(size_t)(%s) * %d + %s]", i, e, a.Map.Arity, col)
	}
	if a.View {
		dim = 1 // only the view's component is staged
	}
	return fmt.Sprintf("op2_s%d + %s * %d%s", d, loc, dim, layer)
}

// layerValues is, in a loop over an extruded set, the C expression
// (with a leading " + ") of the offset within its column of the values
// argument i reaches in layer op2_layer through map entry col (a C
// expression, for a vector argument; see core.ArgExt), or "" for an
// argument whose data is not extruded. Vector arguments read their
// entries' start layers and offsets from the arrays extTables declares.
func layerValues(l *core.Loop, i int, col string) string {
	a := &l.Args[i]
	if a.Ext == nil {
		return ""
	}
	if a.Kind == core.ArgVector {
		return fmt.Sprintf(" + (op2_xs%d[%s] + op2_layer * op2_xo%d[%s]) * %d", i, col, i, col, a.Data.LayerDim())
	}
	c := 0
	if a.Kind == core.ArgIndirect {
		c = a.Idx
	}
	return fmt.Sprintf(" + (%s) * %d", a.Ext.Layer(c, "op2_layer"), a.Data.LayerDim())
}

// extTables declares, in a loop over an extruded set, the start layers
// and layer offsets of the entries of each extruded vector argument
// (op2_xs<i>, op2_xo<i>), which layerValues reads.
func extTables(w *writer, l *core.Loop) {
	for i := range l.Args {
		a := &l.Args[i]
		if a.Ext == nil || a.Kind != core.ArgVector {
			continue
		}
		for _, t := range []struct {
			name string
			v    []int32
		}{{"op2_xs", a.Ext.Start}, {"op2_xo", a.Ext.Offset}} {
			vals := make([]string, len(t.v))
			for j, v := range t.v {
				vals[j] = strconv.Itoa(int(v))
			}
			w.p("  const int %s%d[%d] = {%s};\n", t.name, i, len(t.v), strings.Join(vals, ", "))
		}
	}
}

// layersOpen opens, in a loop over an extruded set, the loop over the
// layers of a column (op2_layer), in increasing order; layersClose
// closes it.
//
// With variable layers (core.Loop.RangeArg) the loop still runs every
// layer, so that all work items of a group reach the same barriers, and
// only the layers of the element's range call the kernel (see
// layerActive); the direct stub, which has no barriers, runs the range.
func layersOpen(w *writer, l *core.Loop, lay *Layout, e string, direct bool, indent string) {
	if l.Extruded == nil {
		return
	}
	if h := l.RangeArg(); h >= 0 && direct {
		w.p("%sfor (int op2_layer = %s; op2_layer < %s; op2_layer++) {\n", indent, rangeAt(l, lay, h, e, 0), rangeAt(l, lay, h, e, 1))
		return
	}
	w.p("%sfor (int op2_layer = 0; op2_layer < %d; op2_layer++) {\n", indent, l.Extruded.Layers)
}

// rangeAt is component k (0: the first layer, 1: one past the last) of
// element e's layer range in the hidden argument h.
func rangeAt(l *core.Loop, lay *Layout, h int, e string, k int) string {
	b := lay.Base[h]
	if lay.SoAData(l, h) {
		return fmt.Sprintf("op2_d%d[(size_t)(%s) + (size_t)%d * op2_stride%d]", b, e, k, b)
	}
	return fmt.Sprintf("op2_d%d[(size_t)(%s) * 2 + %d]", b, e, k)
}

// layerActive is the condition (with a leading " && ", or "") that
// layer op2_layer is in element e's range, with variable layers.
func layerActive(l *core.Loop, lay *Layout, e string) string {
	h := l.RangeArg()
	if h < 0 {
		return ""
	}
	return fmt.Sprintf(" && op2_layer >= %s && op2_layer < %s", rangeAt(l, lay, h, e, 0), rangeAt(l, lay, h, e, 1))
}

func layersClose(w *writer, l *core.Loop, indent string) {
	if l.Extruded != nil {
		w.p("%s}\n", indent)
	}
}

// valuePlace is a C expression that is the same for two map entries col
// of argument i (a vector) exactly when they reach the same values: the
// address of the first (target), or in structure-of-arrays global memory
// its index there, whose layer offset (extruded data) counts in strides,
// as at's.
func valuePlace(l *core.Loop, lay *Layout, i int, e, col string) string {
	if lay.SoAData(l, i) && lay.DSGlobal[lay.Inds[i]] {
		return fmt.Sprintf("((size_t)(%s) + (size_t)(0%s) * op2_stride%d)", lay.elemIndex(l, i, e, col), layerValues(l, i, col), lay.Base[i])
	}
	return "(" + target(l, lay, i, e, col) + ")"
}

// at is component op2_k of argument i's target for element e (map column
// col for a vector argument), as an lvalue: target(...)[op2_k], or in
// structure-of-arrays device memory the element's index plus op2_k strides.
func at(l *core.Loop, lay *Layout, i int, e, col string) string {
	a := &l.Args[i]
	if !lay.SoAData(l, i) {
		return fmt.Sprintf("(%s)[op2_k]", target(l, lay, i, e, col))
	}
	idx := e
	if a.Kind != core.ArgDirect {
		if !lay.DSGlobal[lay.Inds[i]] {
			return fmt.Sprintf("(%s)[op2_k]", target(l, lay, i, e, col))
		}
		idx = lay.elemIndex(l, i, e, col)
	}
	k := "op2_k"
	if a.Comp != 0 {
		k = fmt.Sprintf("(op2_k + %d)", a.Comp) // a view of one component
	}
	return fmt.Sprintf("op2_d%d[(size_t)(%s) + (size_t)(%s%s) * op2_stride%d]", lay.Base[i], idx, k, layerValues(l, i, col), lay.Base[i])
}

// incDecls declares, at the top of an element's pass, the private
// accumulators of increments (zeroed), minima and maxima (holding the
// identity, see hostc.Identity) through a map, and the pointer arrays of
// vector ones, which the colour loop combines into their targets.
func incDecls(w *writer, l *core.Loop, lay *Layout, indent string) {
	for i := range l.Args {
		a := &l.Args[i]
		if a.Kind == core.ArgMat {
			r, c := a.MatShape()
			w.p("%s%s op2_p%d[%d];\n%sfor (int op2_k = 0; op2_k < %d; op2_k++) op2_p%d[op2_k] = 0;\n", indent, w.d.typeName(a.Data.Type), i, r*c, indent, r*c, i)
			continue
		}
		if a.Map == nil || !hostc.Combining(a.Access) || !lay.priv[i] || lay.alias[i] >= 0 {
			continue
		}
		t, dim := w.d.typeName(a.Data.Type), a.Dim()
		id := w.d.identity(a.Access, a.Data.Type)
		if a.Kind == core.ArgIndirect {
			w.p("%s%s op2_p%d[%d];\n%sfor (int op2_k = 0; op2_k < %d; op2_k++) op2_p%d[op2_k] = %s;\n", indent, t, i, dim, indent, dim, i, id)
			continue
		}
		ar := a.Map.Arity
		w.p("%s%s op2_p%d[%d][%d];\n%sfor (int op2_j = 0; op2_j < %d; op2_j++) for (int op2_k = 0; op2_k < %d; op2_k++) op2_p%d[op2_j][op2_k] = %s;\n",
			indent, t, i, ar, dim, indent, ar, dim, i, id)
		w.p("%s%s *op2_v%d[%d];\n%sfor (int op2_j = 0; op2_j < %d; op2_j++) op2_v%d[op2_j] = op2_p%d[op2_j];\n", indent, t, i, ar, indent, ar, i, i)
	}
}

// callKernel writes the call of the kernel for element e: the private
// copies of the arguments it reads or writes (accumulators of increments
// through a map are declared by incDecls, Globals' by argInit), the call,
// and the copying back of what it modified.
func callKernel(w *writer, l *core.Loop, lay *Layout, e, indent string) {
	var args []string
	if len(lay.Consts) > 0 {
		args = append(args, "op2_consts")
	}
	for i := range l.Args {
		a := &l.Args[i]
		if a.Hidden {
			continue // the layer ranges: read by layersOpen and layerActive
		}
		if a.Off {
			args = append(args, "0") // a disabled optional argument
			continue
		}
		if j := lay.alias[i]; j >= 0 && lay.priv[i] {
			// The same elements as argument j: its private copy.
			if a.Kind == core.ArgVector {
				args = append(args, fmt.Sprintf("%sop2_v%d", lay.vectorCast(l, i), j))
			} else {
				args = append(args, fmt.Sprintf("op2_p%d", j))
			}
			continue
		}
		t, dim := w.d.typeName(a.Data.Type), a.Dim()
		switch {
		case a.Kind == core.ArgGlobal:
			if lay.priv[i] {
				args = append(args, fmt.Sprintf("op2_p%d", i))
			} else {
				args = append(args, target(l, lay, i, e, ""))
			}
		case a.Kind == core.ArgVector:
			ar := a.Map.Arity
			if lay.priv[i] && !hostc.Combining(a.Access) {
				// Entries of one row of a modified argument that reach
				// the same element share its copy, as on the host, where
				// they are pointers to the same values: each sees the
				// other's writes, and the write-back below writes the
				// values the kernel left, through whichever entry. (A
				// READ argument's copies are equal anyway.)
				w.p("%s%s op2_p%d[%d][%d];\n%s%s *op2_v%d[%d];\n", indent, t, i, ar, dim, indent, t, i, ar)
				w.p("%sfor (int op2_j = 0; op2_j < %d; op2_j++) {\n", indent, ar)
				w.p("%s  op2_v%d[op2_j] = op2_p%d[op2_j];\n", indent, i, i)
				if a.Access.Modifies() {
					w.p("%s  for (int op2_m = 0; op2_m < op2_j; op2_m++) if (%s == %s) { op2_v%d[op2_j] = op2_v%d[op2_m]; break; }\n",
						indent, valuePlace(l, lay, i, e, "op2_j"), valuePlace(l, lay, i, e, "op2_m"), i, i)
				}
				if !lay.writeOnly(l, i) {
					w.p("%s  for (int op2_k = 0; op2_k < %d; op2_k++) op2_p%d[op2_j][op2_k] = %s;\n", indent, dim, i, at(l, lay, i, e, "op2_j"))
				}
				w.p("%s}\n", indent)
			} else if !lay.priv[i] {
				q := lay.qualifier(l, i)
				w.p("%s%s %s *op2_v%d[%d];\n", indent, q, t, i, ar)
				w.p("%sfor (int op2_j = 0; op2_j < %d; op2_j++) op2_v%d[op2_j] = %s;\n", indent, ar, i, target(l, lay, i, e, "op2_j"))
			}
			args = append(args, fmt.Sprintf("%sop2_v%d", lay.vectorCast(l, i), i))
		case a.Kind == core.ArgMat:
			args = append(args, fmt.Sprintf("op2_p%d", i)) // declared by incDecls
		case !lay.priv[i]:
			args = append(args, target(l, lay, i, e, ""))
		case a.Kind == core.ArgIndirect && hostc.Combining(a.Access):
			args = append(args, fmt.Sprintf("op2_p%d", i)) // declared by incDecls
		case lay.writeOnly(l, i):
			// A WRITE replaces every value and reads none (op2.Write):
			// nothing to copy in, as in OP2.
			w.p("%s%s op2_p%d[%d];\n", indent, t, i, dim)
			args = append(args, fmt.Sprintf("op2_p%d", i))
		default:
			// Direct, or through one map entry.
			w.p("%s%s op2_p%d[%d];\n%sfor (int op2_k = 0; op2_k < %d; op2_k++) op2_p%d[op2_k] = %s;\n",
				indent, t, i, dim, indent, dim, i, at(l, lay, i, e, ""))
			args = append(args, fmt.Sprintf("op2_p%d", i))
		}
	}
	if info := l.Kernel.Info; info != nil {
		// A C++ kernel's reference parameter (T &x) gets the value.
		first := len(args) - len(l.Args)
		for i := range l.Args {
			if i < len(info.Params) && info.Params[i].Ref {
				args[first+i] = "*(" + args[first+i] + ")"
			}
		}
	}
	w.p("%s%s(%s);\n", indent, funcName(l.Kernel.Name), strings.Join(args, ", "))
	for i := range l.Args {
		a := &l.Args[i]
		if !lay.priv[i] || a.Off || a.Hidden || lay.alias[i] >= 0 || a.Access == core.Read && !l.Check || hostc.Combining(a.Access) && a.Map != nil || a.IsReduction() || a.Kind == core.ArgMat {
			continue
		}
		if a.Kind == core.ArgGlobal {
			// Check mode: a write into the copy of a READ Global reaches
			// the device copy, where the run time finds it.
			w.p("%sfor (int op2_k = 0; op2_k < %d; op2_k++) op2_d%d[op2_k] = op2_p%d[op2_k];\n", indent, a.Data.Dim, lay.Base[i], i)
			continue
		}
		dim := a.Dim()
		if a.Kind == core.ArgVector {
			w.p("%sfor (int op2_j = 0; op2_j < %d; op2_j++) for (int op2_k = 0; op2_k < %d; op2_k++) %s = op2_v%d[op2_j][op2_k];\n",
				indent, a.Map.Arity, dim, at(l, lay, i, e, "op2_j"), i)
			continue
		}
		w.p("%sfor (int op2_k = 0; op2_k < %d; op2_k++) %s = op2_p%d[op2_k];\n", indent, dim, at(l, lay, i, e, ""), i)
	}
}

func directStub(w *writer, l *core.Loop, lay *Layout) {
	w.p("$kernel op2_stub(\n    int op2_first, int op2_last,\n", lay.wg)
	dataParams(w, l, lay)
	tailParams(w, l, lay)
	w.p("  const int op2_lid = $localid;\n  (void)op2_lid;\n")
	argInit(w, l, lay)
	extTables(w, l)
	w.p("  for (int op2_n = op2_first + $globalid; op2_n < op2_last; op2_n += $globalsize) {\n")
	layersOpen(w, l, lay, "op2_n", true, "    ")
	callKernel(w, l, lay, "op2_n", "    ")
	layersClose(w, l, "    ")
	w.p("  }\n")
	reductionFinish(w, l, lay, w.d.GroupID)
	w.p("}\n")
}

// writeOnly reports whether argument i's private copy starts with nothing
// copied in: a WRITE (the kernel writes every value and reads none) whose
// copy no other argument shares (see sharePrivateCopies), but for check
// mode, which finds the values a kernel leaves unwritten by what they
// held before.
func (lay *Layout) writeOnly(l *core.Loop, i int) bool {
	return l.Args[i].Access == core.Write && !l.Check && !slices.Contains(lay.alias, i)
}

// planFreeStub is the kernel of a PlanFree loop: a direct loop's range,
// with the tables of the maps, and increments added atomically.
func planFreeStub(w *writer, l *core.Loop, lay *Layout) {
	atomicHelpers(w, l, lay)
	w.p("$kernel op2_stub(\n    int op2_first, int op2_last,\n", lay.wg)
	dataParams(w, l, lay)
	for i := range l.Args {
		if lay.MapParam[i] == i {
			w.p("    $global const int *restrict op2_mt%d,\n", i)
		}
	}
	tailParams(w, l, lay)
	w.p("  const int op2_lid = $localid;\n  (void)op2_lid;\n")
	argInit(w, l, lay)
	w.p("  for (int op2_e = op2_first + $globalid; op2_e < op2_last; op2_e += $globalsize) {\n")
	incDecls(w, l, lay, "    ")
	callKernel(w, l, lay, "op2_e", "    ")
	applyIncrements(w, l, lay, "    ")
	w.p("  }\n")
	reductionFinish(w, l, lay, w.d.GroupID)
	w.p("}\n")
}

// applyIncrements combines the private accumulators of increments, minima
// and maxima through maps with their targets: plainly (the colour loop
// orders them) or, in the Atomics scheme (increments only), atomically.
func applyIncrements(w *writer, l *core.Loop, lay *Layout, indent string) {
	for i := range l.Args {
		a := &l.Args[i]
		if a.Kind == core.ArgMat {
			matBack(w, l, lay, i, indent)
			continue
		}
		if !hostc.Combining(a.Access) || a.Map == nil || !lay.priv[i] || lay.alias[i] >= 0 {
			continue
		}
		dim := a.Dim()
		add := func(dst, val string) string { return "{ " + hostc.Combine(a.Access, dst, val) + " }" }
		if lay.Atomic {
			fn := "op2_atomic_add_" + atomicSuffix(a.Data.Type)
			add = func(dst, val string) string { return fmt.Sprintf("{ %s(&%s, %s); }", fn, dst, val) }
		}
		if lay.Warp { // Atomic: every combining argument through a map is an INC
			warpIncrement(w, l, lay, i, indent)
			continue
		}
		if a.Kind == core.ArgIndirect {
			w.p("%sfor (int op2_k = 0; op2_k < %d; op2_k++) %s\n", indent, dim, add(at(l, lay, i, "op2_e", ""), fmt.Sprintf("op2_p%d[op2_k]", i)))
		} else {
			w.p("%sfor (int op2_j = 0; op2_j < %d; op2_j++) for (int op2_k = 0; op2_k < %d; op2_k++) %s\n",
				indent, a.Map.Arity, dim, add(at(l, lay, i, "op2_e", "op2_j"), fmt.Sprintf("op2_p%d[op2_j][op2_k]", i)))
		}
	}
}

// warpIncrement adds argument i's increments (an INC through a map) to
// their targets in the Warp scheme: per map column, the threads of the
// warp with the same target (the address of its first component) find
// each other (__match_any_sync), the lowest of them sums their increments
// in lane order (__shfl_sync over the group only) and adds the sum
// atomically.
func warpIncrement(w *writer, l *core.Loop, lay *Layout, i int, indent string) {
	a := &l.Args[i]
	t, dim := w.d.typeName(a.Data.Type), a.Dim()
	// Integers are summed unsigned, where overflow wraps as the atomic
	// additions would.
	sum := t
	switch a.Data.Type {
	case core.Int32:
		sum = "unsigned int"
	case core.Int64:
		sum = "unsigned long long"
	}
	fn := "op2_atomic_add_" + atomicSuffix(a.Data.Type)
	col, val := "", fmt.Sprintf("op2_p%d[op2_k]", i)
	in := indent
	if a.Kind != core.ArgIndirect {
		col, val = "op2_j", fmt.Sprintf("op2_p%d[op2_j][op2_k]", i)
		w.p("%sfor (int op2_j = 0; op2_j < %d; op2_j++) {\n", indent, a.Map.Arity)
		in += "  "
	}
	dst := at(l, lay, i, "op2_e", col)
	w.p("%s{\n", in)
	w.p("%s  unsigned long long op2_key;\n%s  { const int op2_k = 0; op2_key = (unsigned long long)&%s; }\n", in, in, dst)
	w.p("%s  const unsigned op2_peers = __match_any_sync(__activemask(), op2_key);\n", in)
	w.p("%s  const bool op2_lead = (int)(threadIdx.x & 31) == __ffs(op2_peers) - 1;\n", in)
	w.p("%s  for (int op2_k = 0; op2_k < %d; op2_k++) {\n", in, dim)
	w.p("%s    %s op2_s = 0;\n", in, sum)
	w.p("%s    for (unsigned op2_q = op2_peers; op2_q; op2_q &= op2_q - 1) op2_s += __shfl_sync(op2_peers, (%s)%s, __ffs(op2_q) - 1);\n", in, sum, val)
	w.p("%s    if (op2_lead) %s(&%s, (%s)op2_s);\n", in, fn, dst, t)
	w.p("%s  }\n%s}\n", in, in)
	if a.Kind != core.ArgIndirect {
		w.p("%s}\n", indent)
	}
}

// matBack adds (INC) or stores (WRITE) matrix argument i's element
// matrix into the matrix's blocks at element op2_e's block offsets, each
// rdim×cdim block row-major; an offset of -1 (a row the element does not
// assemble) is skipped. In the Atomics scheme the additions are atomic.
func matBack(w *writer, l *core.Loop, lay *Layout, i int, indent string) {
	a := &l.Args[i]
	ra, ca, rd, cd := a.Map.Arity, a.Mat.Col.Arity, a.Mat.RDim, a.Mat.CDim
	_, cols := a.MatShape()
	dst := fmt.Sprintf("op2_d%d[(size_t)op2_mo * %d + op2_ma * %d + op2_mb]", lay.Base[i], rd*cd, cd)
	val := fmt.Sprintf("op2_p%d[(op2_mr * %d + op2_ma) * %d + op2_mc * %d + op2_mb]", i, rd, cols, cd)
	var store string
	switch {
	case a.Access == core.Write:
		store = fmt.Sprintf("%s = %s;", dst, val)
	case lay.Atomic:
		store = fmt.Sprintf("op2_atomic_add_%s(&%s, %s);", atomicSuffix(a.Data.Type), dst, val)
	default:
		store = fmt.Sprintf("%s += %s;", dst, val)
	}
	w.p("%sfor (int op2_mr = 0; op2_mr < %d; op2_mr++) for (int op2_mc = 0; op2_mc < %d; op2_mc++) {\n", indent, ra, ca)
	w.p("%s  const int op2_mo = op2_moff%d[((size_t)op2_e * %d + op2_mr) * %d + op2_mc];\n", indent, i, ra, ca)
	w.p("%s  if (op2_mo >= 0) for (int op2_ma = 0; op2_ma < %d; op2_ma++) for (int op2_mb = 0; op2_mb < %d; op2_mb++) { %s }\n", indent, rd, cd, store)
	w.p("%s}\n", indent)
}

// MaxElementMatrixBytes bounds the element matrices of a loop's matrix
// arguments on a device backend (rows × columns × value size, summed over
// the arguments): every work item keeps them privately. It is
// core.MaxDeviceElementMatrixBytes.
const MaxElementMatrixBytes = core.MaxDeviceElementMatrixBytes

// MaxGroupElementMatrixBytes bounds the element matrices of a whole work
// group (MaxElementMatrixBytes's sum times the work-group size). A CPU
// OpenCL driver such as PoCL runs a work group's items on one thread and
// keeps all their private arrays on that thread's stack (8 MiB by
// default on Linux), where more than this would overflow it; on a GPU a
// work group holding this much is far past what performs anyway.
const MaxGroupElementMatrixBytes = 2 << 20

// MaxGroupPrivateBytes bounds, on opencl, all that a work group's items
// keep privately: element matrices, reductions' accumulators, private
// copies of arguments and the pointers to each map entry of a vector
// argument, times the work-group size: three quarters of the 8 MiB
// stack of the thread on which PoCL runs a work group, which 8 MiB of
// them overflowed (SIGSEGV) and 6 MiB did not. CUDA keeps private arrays
// in each thread's local memory, which has no such shared bound.
const MaxGroupPrivateBytes = 6 << 20

// checkPrivateArrays refuses a loop whose matrix arguments' element
// matrices exceed MaxElementMatrixBytes per work item or
// MaxGroupElementMatrixBytes per work group of wg items, or, on opencl,
// whose private arrays (priv: element matrices, reductions'
// accumulators, private copies; and the entry pointers of vector
// arguments) exceed MaxGroupPrivateBytes per work group.
func checkPrivateArrays(d *Dialect, l *core.Loop, priv []bool, wg int) error {
	mats, total := 0, 0
	var matWhat, what []string
	for i := range l.Args {
		a := &l.Args[i]
		if a.Kind == core.ArgVector && !a.Off {
			ptrs := 8 * a.Map.Arity // a pointer to each entry's values
			total += ptrs
			what = append(what, fmt.Sprintf("argument %d (%s): %d entry pointers", i, a.Describe(), a.Map.Arity))
		}
		if !priv[i] || a.Off || a.Index {
			continue
		}
		if a.Kind == core.ArgMat {
			r, c := a.MatShape()
			mats += r * c * a.Data.Type.Size()
			total += r * c * a.Data.Type.Size()
			matWhat = append(matWhat, fmt.Sprintf("argument %d (%s): %d×%d", i, a.Describe(), r, c))
			continue
		}
		bytes := copyBytes(a)
		total += bytes
		what = append(what, fmt.Sprintf("argument %d (%s): %d bytes", i, a.Describe(), bytes))
	}
	fits := func(perItem, bound int) int {
		fit := MinWorkGroupSize
		for fit*2*perItem <= bound {
			fit *= 2
		}
		return fit
	}
	switch {
	case mats > MaxElementMatrixBytes:
		return fmt.Errorf("%s: the element matrices (%s) take %d bytes, more than the %d bytes a work item of the %s backend keeps privately; assemble on a host backend",
			l.Name(), strings.Join(matWhat, "; "), mats, MaxElementMatrixBytes, d.Name)
	case mats*wg > MaxGroupElementMatrixBytes:
		return fmt.Errorf("%s: the element matrices (%s) take %d bytes per work item, %d bytes in a work group of %d items, more than the %d bytes a %s work group may keep privately; use a device work-group size of at most %d",
			l.Name(), strings.Join(matWhat, "; "), mats, mats*wg, wg, MaxGroupElementMatrixBytes, d.Name, fits(mats, MaxGroupElementMatrixBytes))
	case d != OpenCL || total*wg <= MaxGroupPrivateBytes:
		return nil
	}
	if len(matWhat) > 0 {
		what = append([]string{"element matrices " + strings.Join(matWhat, ", ")}, what...)
	}
	fit := fits(total, MaxGroupPrivateBytes)
	advice := fmt.Sprintf("use a device work-group size of at most %d", fit)
	if fit*total > MaxGroupPrivateBytes {
		advice = "run the loop on a host backend, or split it (its reductions, its vector arguments) over several loops"
	}
	return fmt.Errorf("%s: what its work items keep privately (%s) takes %d bytes per work item, %d bytes in a work group of %d items, more than the %d bytes a %s work group may keep privately; %s",
		l.Name(), strings.Join(what, "; "), total, total*wg, wg, MaxGroupPrivateBytes, d.Name, advice)
}

// atomicHelpers defines the atomic additions the Atomics scheme uses.
func atomicHelpers(w *writer, l *core.Loop, lay *Layout) {
	if !lay.Atomic {
		return
	}
	seen := map[core.ScalarType]bool{}
	for i := range l.Args {
		a := &l.Args[i]
		if a.Access == core.Inc && a.Map != nil && !seen[a.Data.Type] {
			seen[a.Data.Type] = true
			w.p("%s", w.d.AtomicAdd[a.Data.Type])
		}
	}
	w.p("\n")
}

// stagedAt is the value in device memory of staged value op2_i of dataset
// d (element op2_i / dim of the block's list, component op2_i % dim, where
// dim is the values staged per element: 1 for a view of one component, whose
// value is at its component of the Dat's element, else the Dat's dim).
func stagedAt(l *core.Loop, lay *Layout, d int) string {
	i := lay.DSArg[d]
	a := &l.Args[i]
	dim, stride, base := a.ElemValues(), a.Data.Dim, lay.Base[i]
	k := fmt.Sprintf("op2_i %% %d", dim)
	if a.View {
		k = strconv.Itoa(a.Comp)
	}
	if lay.SoAData(l, i) {
		return fmt.Sprintf("op2_d%d[(size_t)op2_map%d[op2_i / %d] + (size_t)(%s) * op2_stride%d]", base, d, dim, k, base)
	}
	return fmt.Sprintf("op2_d%d[%s + (size_t)op2_map%d[op2_i / %d] * %d]", base, k, d, dim, stride)
}

func indirectStub(w *writer, l *core.Loop, lay *Layout) {
	atomicHelpers(w, l, lay)
	w.p("$kernel op2_stub(\n", lay.wg)
	dataParams(w, l, lay)
	for d := 0; d < lay.NInd; d++ {
		w.p("    $global const int *restrict op2_ind_map%d, $global const int *restrict op2_ind_offs%d, $global const int *restrict op2_ind_sizes%d,\n", d, d, d)
	}
	for i := range l.Args {
		if l.Args[i].Map != nil {
			w.p("    $global const int *restrict op2_loc%d,\n", i)
		}
	}
	w.p("    $global const int *restrict op2_blkmap, $global const int *restrict op2_offset, $global const int *restrict op2_nelems,\n")
	w.p("    $global const int *restrict op2_nthrcol, $global const int *restrict op2_thrcol,\n")
	w.p("    int op2_block_offset,\n    %s,\n", w.sharedParam("char", "op2_shared"))
	tailParams(w, l, lay)

	w.p("  const int op2_lid = $localid;\n")
	w.p("  const int op2_bid = op2_blkmap[$groupid + op2_block_offset];\n")
	w.p("  const int op2_nelem = op2_nelems[op2_bid], op2_first = op2_offset[op2_bid];\n")
	staged := slices.Contains(lay.DSGlobal, false)
	if staged {
		w.p("  int op2_nbytes = 0;\n")
	}
	for d := 0; d < lay.NInd; d++ {
		a := &l.Args[lay.DSArg[d]]
		t, dim := w.d.typeName(a.Data.Type), a.ElemValues()
		if a.Kind == core.ArgMat {
			continue // reached at its block offsets
		}
		w.p("  $global const int *const op2_map%d = op2_ind_map%d + op2_ind_offs%d[op2_bid];\n", d, d, d)
		if lay.DSGlobal[d] {
			continue
		}
		w.p("  const int op2_size%d = op2_ind_sizes%d[op2_bid];\n", d, d)
		w.p("  $local %s *const op2_s%d = ($local %s *)(op2_shared + op2_nbytes);\n", t, d, t)
		// Each dataset's area is rounded up to 16 bytes, as in plan.NShared.
		w.p("  op2_nbytes += (op2_size%d * %d * (int)sizeof(%s) + 15) & ~15;\n", d, dim, t)
	}
	if staged {
		w.p("  (void)op2_nbytes;\n")
	}
	// Stage in (or zero) every indirect dataset kept in local memory.
	for d := 0; d < lay.NInd; d++ {
		if lay.DSGlobal[d] {
			continue
		}
		a := &l.Args[lay.DSArg[d]]
		dim := a.ElemValues()
		src := stagedAt(l, lay, d)
		if !lay.dsStage[d] {
			src = "0"
		}
		w.p("  for (int op2_i = op2_lid; op2_i < op2_size%d * %d; op2_i += %d) op2_s%d[op2_i] = %s;\n", d, dim, lay.wg, d, src)
	}
	w.p("  $lbarrier;\n")
	argInit(w, l, lay)
	extTables(w, l)

	// The elements: every work item makes the same number of passes so
	// that all reach the barriers of the coloured increments. In a loop
	// over an extruded set each pass runs the layers of its column
	// (element) in order, each layer's increments applied colour by
	// colour.
	w.p("  const int op2_nelem2 = op2_nelem > 0 ? %d * (1 + (op2_nelem - 1) / %d) : 0;\n", lay.wg, lay.wg)
	w.p("  for (int op2_n = op2_lid; op2_n < op2_nelem2; op2_n += %d) {\n", lay.wg)
	w.p("    const int op2_e = op2_n + op2_first;\n")
	layersOpen(w, l, lay, "op2_e", false, "    ")
	if !lay.Atomic {
		w.p("    int op2_col = -1;\n")
	}
	incDecls(w, l, lay, "    ")
	w.p("    if (op2_n < op2_nelem%s) {\n", layerActive(l, lay, "op2_e"))
	if lay.Atomic {
		// Atomics: no colours; each increment is added atomically.
		callKernel(w, l, lay, "op2_e", "      ")
		applyIncrements(w, l, lay, "      ")
		w.p("    }\n")
		layersClose(w, l, "    ")
		w.p("  }\n")
	} else {
		if !lay.callInColour {
			callKernel(w, l, lay, "op2_e", "      ")
		}
		w.p("      op2_col = op2_thrcol[op2_e];\n    }\n")
		w.p("    for (int op2_c = 0; op2_c < op2_nthrcol[op2_bid]; op2_c++) {\n      if (op2_col == op2_c) {\n")
		if lay.callInColour {
			callKernel(w, l, lay, "op2_e", "        ")
		}
		applyIncrements(w, l, lay, "        ")
		fence := "$lbarrier"
		if lay.globalFence {
			fence = "$bbarrier"
		}
		w.p("      }\n      " + fence + ";\n    }\n")
		layersClose(w, l, "    ")
		w.p("  }\n")
	}

	// Write back what changed in local memory.
	for d := 0; d < lay.NInd; d++ {
		if !lay.DSModified[d] || lay.DSGlobal[d] {
			continue
		}
		a := &l.Args[lay.DSArg[d]]
		dim := a.ElemValues()
		dst := stagedAt(l, lay, d)
		src := fmt.Sprintf("op2_s%d[op2_i]", d)
		var store string
		switch {
		case !lay.dsStage[d]:
			store = dst + " += " + src + ";"
		case lay.dsCombine[d] != 0:
			// Minima or maxima: the staged copy started from the dat's
			// values, but another dataset of the same dat may have
			// lowered (raised) them since.
			store = "{ " + hostc.Combine(lay.dsCombine[d], dst, src) + " }"
		default:
			store = dst + " = " + src + ";"
		}
		w.p("  for (int op2_i = op2_lid; op2_i < op2_size%d * %d; op2_i += %d) %s\n", d, dim, lay.wg, store)
		// Another dataset of the same dat may add to the same elements.
		w.p("  $gbarrier;\n")
	}
	reductionFinish(w, l, lay, "op2_bid")
	w.p("}\n")
}
