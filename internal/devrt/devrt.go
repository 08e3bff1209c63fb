// Package devrt is the run time shared by the device backends (opencl and
// cuda): device copies of Dats and Globals, the constant buffer, plan
// arrays on the device, reduction partial results and the launch sequence
// of direct and indirect loops. A backend supplies a Driver (memory,
// copies, kernel launches) and a built kernel; NewProgram returns the
// exec.Program the executor runs. The kernel's parameters are those
// internal/codegen/device generates, in its order.
package devrt

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/plan"
)

// Buffer is a driver's handle to device memory.
type Buffer any

// Kernel is a driver's handle to a built kernel.
type Kernel any

// ArgKind says what a kernel argument is.
type ArgKind uint8

// Kinds of kernel arguments.
const (
	ArgBuffer ArgKind = iota + 1 // device memory
	ArgInt                       // a 32-bit int
	ArgLocal                     // Int bytes of work-group shared memory
)

// Arg is one kernel argument.
type Arg struct {
	Kind ArgKind
	Buf  Buffer
	Int  int
}

// Driver is what the device layer needs of a device API.
type Driver interface {
	// Backend is the name of the backend the driver serves ("opencl").
	Backend() string
	// Describe names the device for messages, e.g. `OpenCL device "cpu"`.
	Describe() string
	// LocalMem is the shared memory of a work group, in bytes.
	LocalMem() int
	Alloc(n int) (Buffer, error)
	Free(b Buffer)
	Write(b Buffer, src unsafe.Pointer, n int) error
	Read(b Buffer, dst unsafe.Pointer, n int) error
	Zero(b Buffer, n int) error
	// ReadAt copies n bytes from byte offset off of b to dst.
	ReadAt(b Buffer, off int, dst unsafe.Pointer, n int) error
	// WriteAt copies n bytes from src to byte offset off of b; src may
	// be reused once it returns.
	WriteAt(b Buffer, off int, src unsafe.Pointer, n int) error
	// Copy copies the first n bytes of src to dst, on the device.
	Copy(dst, src Buffer, n int) error
	// Launch queues kernel k with args on groups work groups of local
	// items each.
	Launch(k Kernel, args []Arg, groups, local int) error
}

// Program is a built device kernel for one loop signature.
type Program struct {
	drv     Driver
	owner   any // the backend instance, which owns the device copies
	src     string
	lay     *device.Layout
	k       Kernel
	release func() // frees the kernel

	part []byte // reused buffer for reading partial results
	// folds holds, by argument, each reduction argument's device buffer
	// of partial results: the bound call writes one slot
	// (foldRing.bound), the others may hold earlier calls' results
	// waiting to be folded.
	folds []*foldRing

	// consts is the device copy of the constants the kernel uses, packed
	// as lay.Consts says; constHost its host image and constSeen the
	// version of each constant it holds (0: not yet copied).
	consts    Buffer
	constHost []byte
	constSeen []uint64
	// pristine, when the kernel could write the constant buffer
	// (Layout.ConstsWritable), holds the declared values on the device,
	// copied over consts before each launch.
	pristine Buffer

	needs *exec.PlanNeeds // nil for a direct loop

	// The bound loop, between Bind and Finish: its device plan (nil for a
	// direct loop), its kernel arguments, the one holding the colours'
	// block offset, and the partial results the last launch wrote.
	l              *core.Loop
	dp             *devicePlan
	args           []Arg
	blockOffsetArg int
	slots          int
}

// NewProgram makes the program for loop l (l.Sig set) from kernel k, built
// from src generated with layout lay. owner identifies the backend
// instance; release, if not nil, frees the kernel when the program is
// released.
func NewProgram(drv Driver, owner any, l *core.Loop, lay *device.Layout, src string, k Kernel, release func()) (*Program, error) {
	p := &Program{drv: drv, owner: owner, src: src, lay: lay, k: k, release: release,
		folds: make([]*foldRing, len(l.Args))}
	if lay.Indirect && !lay.PlanFree {
		// Every element of a written-back dataset is stored back, so all
		// its arguments constrain the colouring; datasets too large to
		// stage take no local memory.
		p.needs = &exec.PlanNeeds{Modifies: make([]bool, len(l.Args)), Unstaged: make([]bool, len(l.Args)),
			SharedBudget: device.StagingBudget(l, lay.Reductions, drv.LocalMem(), lay.WorkGroupSize()), TooLarge: p.tooLarge}
		for i := range l.Args {
			if d := lay.Inds[i]; d >= 0 {
				// Atomic increments need no colouring.
				p.needs.Modifies[i] = lay.DSModified[d] && !lay.Atomic
				p.needs.Unstaged[i] = lay.DSGlobal[d]
			}
		}
		if lay.Atomic {
			// Nothing is staged: one element per work item.
			p.needs.BlockSize = lay.WorkGroupSize()
		}
	}
	if lay.ConstBytes > 0 {
		buf, err := drv.Alloc(lay.ConstBytes)
		if err != nil {
			p.Release()
			return nil, fmt.Errorf("%s: allocating the constant buffer: %w", l.Name(), err)
		}
		p.consts = buf
		runtime.AddCleanup(p, func(b Buffer) { drv.Free(b) }, buf)
		p.constHost = make([]byte, lay.ConstBytes)
		p.constSeen = make([]uint64, len(lay.Consts))
		if lay.ConstsWritable() {
			if p.pristine, err = drv.Alloc(lay.ConstBytes); err != nil {
				p.Release()
				return nil, fmt.Errorf("%s: allocating the constant buffer: %w", l.Name(), err)
			}
			runtime.AddCleanup(p, func(b Buffer) { drv.Free(b) }, p.pristine)
		}
	}
	return p, nil
}

// Source is the generated source.
func (p *Program) Source() string { return p.src }

// Release frees the reduction buffers and the kernel. The constant buffer
// goes when the program is collected.
func (p *Program) Release() {
	p.freeFolds()
	if p.release != nil {
		p.release()
		p.release = nil
	}
}

// PlanNeeds: indirect loops run by the blocks of a plan whose staged data
// fits the device's shared memory.
func (p *Program) PlanNeeds() *exec.PlanNeeds { return p.needs }

func (p *Program) tooLarge(l *core.Loop, nshared int) error {
	lay := p.lay
	var staged []string
	for d := 0; d < lay.NInd; d++ {
		if !lay.DSGlobal[d] {
			a := &l.Args[lay.DSArg[d]]
			staged = append(staged, fmt.Sprintf("%s through map %q", a.Data.Describe(), a.Map.Name))
		}
	}
	return fmt.Errorf("one element's indirect data (%d bytes: %s) does not fit the %d bytes of local memory of %s; use fewer or smaller indirect arguments, or a host backend",
		nshared, strings.Join(staged, ", "), p.drv.LocalMem(), p.drv.Describe())
}

// devBuf is a Dat's or Global's device copy.
type devBuf struct {
	drv   Driver
	owner any
	buf   Buffer
	// n elements of dim values of esize bytes; soa: stored
	// structure-of-arrays (component k of element e at k*n + e).
	soa           bool
	n, dim, esize int
}

// Upload, Download and DownloadRange copy nothing for no bytes: an
// empty Dat has no host memory (its pointer may be nil) and, stored
// structure-of-arrays, an empty device image.
func (d *devBuf) Upload(s *core.Storage) error {
	if !d.soa || s.Bytes() == 0 {
		return d.drv.Write(d.buf, s.Host, s.Bytes())
	}
	return d.soaRows(unsafe.Slice((*byte)(s.Host), s.Bytes()), 0, true)
}

func (d *devBuf) Download(s *core.Storage) error {
	if !d.soa || s.Bytes() == 0 {
		return d.drv.Read(d.buf, s.Host, s.Bytes())
	}
	return d.soaRows(unsafe.Slice((*byte)(s.Host), s.Bytes()), 0, false)
}

func (d *devBuf) DownloadRange(dst unsafe.Pointer, off, n int) error {
	if !d.soa || n == 0 {
		return d.drv.ReadAt(d.buf, off, dst, n)
	}
	row := d.dim * d.esize
	if off%row != 0 || n%row != 0 {
		return fmt.Errorf("a structure-of-arrays device copy is read by whole elements (offset %d, %d bytes, %d-byte elements)", off, n, row)
	}
	return d.soaRows(unsafe.Slice((*byte)(dst), n), off/row, false)
}

// stagingBytes is the size of the host buffers through which a
// structure-of-arrays device copy is written and read, a slice of
// elements at a time.
const stagingBytes = 4 << 20

// staging holds host buffers of stagingBytes, reused: a fresh buffer the
// size of the Dat costs a page fault every 4 KiB, which made transposing
// Airfoil's q (23 MB) into it take 17 ms on an H100's host (1.8 ms into
// memory already touched on a 2-core Xeon VM, BenchmarkTranspose).
var staging = sync.Pool{New: func() any { b := make([]byte, stagingBytes); return &b }}

// soaRows copies host, the elements from first on stored by element
// (array-of-structs), to the structure-of-arrays device copy (up) or from
// it, through a staging buffer: for each slice of elements, the staging
// buffer holds each component's values together, which move to or from
// the device as one copy per component.
func (d *devBuf) soaRows(host []byte, first int, up bool) error {
	row := d.dim * d.esize
	count := len(host) / row
	per := stagingBytes / row
	var stage []byte
	if per == 0 { // an element larger than a staging buffer
		per, stage = 1, make([]byte, row)
	} else {
		b := staging.Get().(*[]byte)
		defer staging.Put(b)
		stage = *b
	}
	for a := 0; a < count; a += per {
		m := min(per, count-a)
		part := host[a*row : (a+m)*row]
		seg := m * d.esize // one component's values of the slice
		if up {
			transpose(stage, part, m, d.dim, d.esize)
		}
		for k := 0; k < d.dim; k++ {
			off, p := (k*d.n+first+a)*d.esize, unsafe.Pointer(&stage[k*seg])
			var err error
			if up {
				err = d.drv.WriteAt(d.buf, off, p, seg)
			} else {
				err = d.drv.ReadAt(d.buf, off, p, seg)
			}
			if err != nil {
				return err
			}
		}
		if !up {
			transpose(part, stage, d.dim, m, d.esize)
		}
	}
	return nil
}

// transpose writes into dst the cols × rows transpose of src, a rows ×
// cols matrix of size-byte values stored by rows. Values of 1, 2, 4 and
// 8 bytes at aligned addresses move as words (a Dat's upload to a
// structure-of-arrays device copy: Airfoil's 90 MB took 40 ms a byte
// copy at a time); others byte by byte.
func transpose(dst, src []byte, rows, cols, size int) {
	if len(dst) == 0 {
		return
	}
	switch {
	case size == 8 && aligned(dst, src, 8):
		transposeWords(words[uint64](dst), words[uint64](src), rows, cols)
	case size == 4 && aligned(dst, src, 4):
		transposeWords(words[uint32](dst), words[uint32](src), rows, cols)
	case size == 2 && aligned(dst, src, 2):
		transposeWords(words[uint16](dst), words[uint16](src), rows, cols)
	case size == 1:
		transposeWords(dst, src, rows, cols)
	default:
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				copy(dst[(c*rows+r)*size:(c*rows+r+1)*size], src[(r*cols+c)*size:(r*cols+c+1)*size])
			}
		}
	}
}

// aligned says whether dst and src start at multiples of n bytes.
func aligned(dst, src []byte, n uintptr) bool {
	return uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%n == 0 && uintptr(unsafe.Pointer(unsafe.SliceData(src)))%n == 0
}

// words views b, aligned for W, as W values.
func words[W uint16 | uint32 | uint64](b []byte) []W {
	var w W
	return unsafe.Slice((*W)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(w)))
}

// transposeWords is transpose for one word a value: src is read in order,
// dst written in cols sequential streams.
func transposeWords[W byte | uint16 | uint32 | uint64](dst, src []W, rows, cols int) {
	src, dst = src[:rows*cols], dst[:rows*cols]
	for r := 0; r < rows; r++ {
		row := src[r*cols : (r+1)*cols]
		for c, v := range row {
			dst[c*rows+r] = v
		}
	}
}

func (d *devBuf) Owner() any { return d.owner }
func (d *devBuf) Free()      { d.drv.Free(d.buf) }

// The device-side operations of core.DeviceOps: none copies through the
// host.
func (d *devBuf) Zero(s *core.Storage) error { return d.drv.Zero(d.buf, s.Bytes()) }
func (d *devBuf) CopyTo(dst core.DeviceBuffer, n int) error {
	return d.drv.Copy(dst.(*devBuf).buf, d.buf, n)
}
func (d *devBuf) AllocLike(s *core.Storage) (core.DeviceBuffer, error) {
	return newDevBuf(d.drv, d.owner, s, false, d.soa)
}

// newDevBuf allocates the device copy of s, filled with zeros if zeroed.
// With soa, a Dat of dim > 1 is stored structure-of-arrays
// (device.SoAStorage).
func newDevBuf(drv Driver, owner any, s *core.Storage, zeroed, soa bool) (*devBuf, error) {
	buf, err := drv.Alloc(s.Bytes())
	if err != nil {
		return nil, err
	}
	if zeroed {
		if err := drv.Zero(buf, s.Bytes()); err != nil {
			drv.Free(buf)
			return nil, err
		}
	}
	d := &devBuf{drv: drv, owner: owner, buf: buf, dim: s.Dim, esize: s.Type.Size()}
	if row := d.dim * d.esize; row > 0 {
		d.n = s.Bytes() / row
	}
	d.soa = soa && device.SoAStorage(s)
	// Storage is the first field of its Dat or Global, so this frees
	// the device memory when the Dat or Global is collected.
	runtime.AddCleanup(s, func(d *devBuf) { d.Free() }, d)
	return d, nil
}

func (p *Program) alloc(s *core.Storage) func(zeroed bool) (core.DeviceBuffer, error) {
	return func(zeroed bool) (core.DeviceBuffer, error) {
		d, err := newDevBuf(p.drv, p.owner, s, zeroed, p.lay.SoA())
		if err != nil {
			return nil, err
		}
		return d, nil
	}
}

// prepareData brings every argument's device copy up to date.
func (p *Program) prepareData(l *core.Loop) error {
	for i := range l.Args {
		if l.Sig.Base[i] != i {
			continue
		}
		s := l.Args[i].Data
		read, modifies := false, false
		for j := i; j < len(l.Args); j++ {
			a := &l.Args[j]
			if a.Data != s {
				continue
			}
			f := l.Sig.Args[j].Facts
			if f.Any(core.FactGlobal) {
				// A Global's device copy is only read; reductions
				// combine on the host, and an increment's partial
				// results start from zero, not from its value.
				if a.Access != core.Inc {
					read = true
				}
				continue
			}
			// A direct WRITE replaces every value; a view's
			// (core.Arg.View) only its component's, so the others
			// must be on the device. Check mode reads them too: it
			// finds the values a kernel leaves unwritten by what they
			// held before.
			if !f.Any(core.FactWholeWrite) || l.Check {
				read = true
			}
			if a.Access.Modifies() {
				modifies = true
			}
		}
		if err := s.DeviceAccess(p.owner, read, modifies, p.alloc(s)); err != nil {
			return fmt.Errorf("%s: argument %d: %w", l.Name(), i, err)
		}
	}
	// A matrix argument's block offsets are read like a Dat.
	for i := range l.Args {
		if l.Sig.Args[i].Facts.Any(core.FactMat) {
			s := l.Args[i].Mat.OffsetData
			if err := s.DeviceAccess(p.owner, true, false, p.alloc(s)); err != nil {
				return fmt.Errorf("%s: argument %d: %w", l.Name(), i, err)
			}
		}
	}
	return nil
}

// refreshConsts copies the constants whose values changed since the last
// loop to the device: changing a constant needs no new program. Where the
// kernel could have written the buffer, it is restored from the pristine
// copy otherwise.
func (p *Program) refreshConsts() error {
	changed := false
	for j, s := range p.lay.Consts {
		c := s.Const
		if v := c.Version.Load(); v != p.constSeen[j] || v == 0 {
			copy(p.constHost[s.Offset:s.Offset+c.Bytes()], unsafe.Slice((*byte)(c.Host), c.Bytes()))
			p.constSeen[j] = v
			changed = true
		}
	}
	if !changed {
		if p.pristine == nil {
			return nil
		}
		return p.drv.Copy(p.consts, p.pristine, len(p.constHost))
	}
	for _, b := range []Buffer{p.consts, p.pristine} {
		if b == nil {
			continue
		}
		if err := p.drv.Write(b, unsafe.Pointer(unsafe.SliceData(p.constHost)), len(p.constHost)); err != nil {
			clear(p.constSeen) // copy them all again next time
			return fmt.Errorf("copying the constants to the device: %w", err)
		}
	}
	return nil
}

// tailArgs appends the constant and reduction arguments, with room for
// slots partial results per reduction.
func (p *Program) tailArgs(l *core.Loop, slots int) error {
	if p.consts != nil {
		if err := p.refreshConsts(); err != nil {
			return err
		}
		p.args = append(p.args, Arg{Kind: ArgBuffer, Buf: p.consts})
	}
	for _, i := range p.lay.Reductions {
		a := &l.Args[i]
		if err := p.bindPartials(i, max(slots, 1)*a.Data.Dim*a.Data.Type.Size()); err != nil {
			return err
		}
		buf, off := p.folds[i].bound()
		p.args = append(p.args, Arg{Kind: ArgBuffer, Buf: buf}, Arg{Kind: ArgInt, Int: off / a.Data.Type.Size()},
			Arg{Kind: ArgLocal, Int: p.lay.WorkGroupSize() * a.Data.Type.Size()})
	}
	if len(p.lay.Consts) == 0 && len(p.lay.Reductions) == 0 {
		p.args = append(p.args, Arg{Kind: ArgInt}) // op2_unused
	}
	return nil
}

// dataArgs appends one buffer per distinct Dat, Global or Mat, then the
// block offsets of each matrix argument.
func (p *Program) dataArgs(l *core.Loop) {
	for i := range l.Args {
		if l.Sig.Base[i] == i {
			d := l.Args[i].Data.Dev.(*devBuf)
			p.args = append(p.args, Arg{Kind: ArgBuffer, Buf: d.buf})
			if p.lay.SoAData(l, i) {
				p.args = append(p.args, Arg{Kind: ArgInt, Int: d.n}) // op2_stride<i>
			}
		}
	}
	for i := range l.Args {
		if l.Sig.Args[i].Facts.Any(core.FactMat) {
			p.args = append(p.args, Arg{Kind: ArgBuffer, Buf: l.Args[i].Mat.OffsetData.Dev.(*devBuf).buf}) // op2_moff<i>
		}
	}
}

// Bind makes every argument's device copy current, sets the kernel's data,
// plan, constant and reduction arguments, and uploads the plan's arrays the
// first time the plan is used.
func (p *Program) Bind(l *core.Loop, pl *exec.Plan) error {
	var dp *devicePlan
	if pl != nil {
		if pl.Device == nil {
			var err error
			if pl.Device, err = p.uploadPlan(l, pl.Plan); err != nil {
				return fmt.Errorf("%s: %w", l.Name(), err)
			}
		}
		dp = pl.Device.(*devicePlan)
	}
	if err := p.checkRange(l, dp); err != nil {
		return fmt.Errorf("%s: %w", l.Name(), err)
	}
	if err := p.prepareData(l); err != nil {
		return err
	}
	p.args = p.args[:0]
	var err error
	if dp != nil {
		err = p.bindIndirect(l, dp)
	} else {
		err = p.bindDirect(l)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", l.Name(), err)
	}
	p.l, p.dp = l, dp
	return nil
}

// bindDirect sets a direct loop's arguments: the range (set per launch),
// the data, constants and reductions.
func (p *Program) bindDirect(l *core.Loop) error {
	p.args = append(p.args, Arg{Kind: ArgInt}, Arg{Kind: ArgInt})
	p.dataArgs(l)
	if p.lay.PlanFree {
		for i := range l.Args {
			if p.lay.MapParam[i] != i {
				continue
			}
			buf, err := mapTable(p.drv, p.owner, l.Args[i].Map)
			if err != nil {
				return err
			}
			p.args = append(p.args, Arg{Kind: ArgBuffer, Buf: buf}) // op2_mt<i>
		}
	}
	return p.tailArgs(l, p.directGroups(l.IterEnd()))
}

// bindIndirect sets an indirect loop's arguments; the colours' block
// offset is set per launch.
func (p *Program) bindIndirect(l *core.Loop, dp *devicePlan) error {
	p.dataArgs(l)
	for d := 0; d < p.lay.NInd; d++ {
		for _, buf := range []Buffer{dp.indMap[d], dp.indOffs[d], dp.indSizes[d]} {
			p.args = append(p.args, Arg{Kind: ArgBuffer, Buf: buf})
		}
	}
	for i := range l.Args {
		if l.Args[i].Map != nil {
			p.args = append(p.args, Arg{Kind: ArgBuffer, Buf: dp.locMap[i]})
		}
	}
	for _, buf := range []Buffer{dp.blkMap, dp.offset, dp.nelems, dp.nthrcol, dp.thrcol} {
		p.args = append(p.args, Arg{Kind: ArgBuffer, Buf: buf})
	}
	p.blockOffsetArg = len(p.args)
	p.args = append(p.args, Arg{Kind: ArgInt}, Arg{Kind: ArgLocal, Int: dp.p.NShared})
	if err := p.tailArgs(l, dp.p.NBlocks); err != nil {
		return err
	}
	if dp.p.NBlocksOwned < dp.p.NBlocks {
		// A distributed run launches the exec halo's blocks in a pass
		// of their own: the owned pass must not fold what they left in
		// their slots last time.
		return p.resetPartials(l, dp.p.NBlocks)
	}
	return nil
}

// resetPartials fills every partial result slot with the reduction's
// identity.
func (p *Program) resetPartials(l *core.Loop, slots int) error {
	for _, i := range p.lay.Reductions {
		s := l.Args[i].Data
		one := identity(l.Args[i].Access, s.Type)
		n := slots * s.Dim * len(one)
		if cap(p.part) < n {
			p.part = make([]byte, n)
		}
		part := p.part[:n]
		for k := 0; k < n; k += len(one) {
			copy(part[k:], one)
		}
		buf, off := p.folds[i].bound()
		if err := p.drv.WriteAt(buf, off, unsafe.Pointer(unsafe.SliceData(part)), n); err != nil {
			return fmt.Errorf("%s: resetting the partial results of %s: %w", l.Name(), s.Describe(), err)
		}
	}
	return nil
}

// identity is the value a reduction starts from, in t's bytes.
func identity(acc core.Access, t core.ScalarType) []byte {
	b := make([]byte, t.Size())
	if acc == core.Inc {
		return b
	}
	var v uint64
	low := acc == core.Max
	switch t {
	case core.Float64:
		v = math.Float64bits(math.Inf(1))
		if low {
			v = math.Float64bits(math.Inf(-1))
		}
	case core.Float32:
		v = uint64(math.Float32bits(float32(math.Inf(1))))
		if low {
			v = uint64(math.Float32bits(float32(math.Inf(-1))))
		}
	case core.Int32:
		v = uint64(uint32(math.MaxInt32))
		if low {
			v = uint64(uint32(1 << 31))
		}
	case core.Int64:
		v = uint64(math.MaxInt64)
		if low {
			v = 1 << 63
		}
	case core.Uint32:
		v = math.MaxUint32
		if low {
			v = 0
		}
	}
	for k := range b {
		b[k] = byte(v >> (8 * k))
	}
	return b
}

// directGroups is the number of work groups a direct loop over n elements
// is launched on: one element per work item, up to device.MaxDirectGroups
// groups (each work item then handles several elements).
func (p *Program) directGroups(n int) int {
	wg := p.lay.WorkGroupSize()
	return min((n+wg-1)/wg, device.MaxDirectGroups)
}

// Launch queues the kernel over a range of elements (direct loops) or of
// block colours (indirect loops).
func (p *Program) Launch(r exec.Range) error {
	if p.dp == nil {
		n := r.Last - r.First
		groups := p.directGroups(n)
		if p.slots > 0 {
			// Partial results are per work group: fold those of the
			// previous range before this one overwrites them.
			if err := p.finishReductions(p.l, p.slots, false); err != nil {
				return err
			}
		}
		p.args[0].Int, p.args[1].Int = r.First, r.Last
		if err := p.drv.Launch(p.k, p.args, groups, p.lay.WorkGroupSize()); err != nil {
			return fmt.Errorf("%s: %w", p.l.Name(), err)
		}
		p.slots = groups
		return nil
	}
	// Each block writes its own partial result slot.
	p.slots = p.dp.p.NBlocks
	for c := r.First; c < r.Last; c++ {
		p.args[p.blockOffsetArg].Int = int(p.dp.p.ColOffset[c])
		if err := p.drv.Launch(p.k, p.args, int(p.dp.p.NColBlk[c]), p.lay.WorkGroupSize()); err != nil {
			err = fmt.Errorf("%s: %w", p.l.Name(), err)
			if c > r.First {
				return exec.PartlyRan(err) // the colours before it were queued
			}
			return err
		}
	}
	return nil
}

// Finish leaves the reductions' partial results on the device, their
// folding into the Globals pending until the host needs them (readLater).
func (p *Program) Finish(l *core.Loop) error {
	err := p.finishReductions(l, p.slots, true)
	p.l, p.dp, p.slots = nil, nil, 0
	clear(p.args) // keep no buffer alive
	p.args = p.args[:0]
	return err
}

// checkRange refuses a loop whose element numbers or partial reduction
// results would overflow the C int the generated stub indexes them with
// (element offsets into Dats are computed in size_t; the staged data is
// bounded by local memory), and a plan whose staged data does not fit
// what the program's work groups have for it.
func (p *Program) checkRange(l *core.Loop, dp *devicePlan) error {
	const maxInt = 1<<31 - 1
	if dp == nil {
		if limit := maxInt - device.MaxDirectGroups*p.lay.WorkGroupSize(); l.IterEnd() > limit {
			return fmt.Errorf("the %s backend runs direct loops over at most %d elements; set %q has %d", p.drv.Backend(), limit, l.Set.Name, l.IterEnd())
		}
		for _, i := range p.lay.Reductions {
			if s := l.Args[i].Data; foldDepth*device.MaxDirectGroups*s.Dim > maxInt {
				return fmt.Errorf("the %s backend keeps up to %d partial results of a direct loop for each of %d calls: dim %d of %s exceeds the int range", p.drv.Backend(), device.MaxDirectGroups, foldDepth, s.Dim, s.Describe())
			}
		}
		return nil
	}
	if dp.p.NShared > p.needs.SharedBudget {
		// The executor keys plans by loop, not by program: a plan made
		// for a program of the loop with a smaller work group (less
		// reduction scratch) may not fit this one.
		return fmt.Errorf("the plan's blocks stage %d bytes, more than the %d bytes a work group of %d items has for them on %s: the plan was chosen for another program of the loop",
			dp.p.NShared, p.needs.SharedBudget, p.lay.WorkGroupSize(), p.drv.Describe())
	}
	for _, i := range p.lay.Reductions {
		if s := l.Args[i].Data; foldDepth*dp.p.NBlocks*s.Dim > maxInt {
			return fmt.Errorf("the %s backend keeps one partial result per block for each of %d calls: %d × %d blocks × dim %d of %s exceed the int range; use a smaller Global or a larger block size", p.drv.Backend(), foldDepth, foldDepth, dp.p.NBlocks, s.Dim, s.Describe())
		}
	}
	return nil
}

// finishReductions reads each reduction's per-group results and combines
// them into the Global's host copy, in group order; later, leaves them
// pending on the device (readLater).
func (p *Program) finishReductions(l *core.Loop, slots int, later bool) error {
	for _, i := range p.lay.Reductions {
		a := &l.Args[i]
		s := a.Data
		n := slots * s.Dim * s.Type.Size()
		if later && slots > 0 {
			if err := p.readLater(l, i, n, slots); err != nil {
				return err
			}
			continue
		}
		if err := s.HostAccess(true); err != nil {
			return err
		}
		if slots == 0 {
			continue
		}
		if cap(p.part) < n {
			p.part = make([]byte, n)
		}
		part := p.part[:n]
		buf, off := p.folds[i].bound()
		if err := p.drv.ReadAt(buf, off, unsafe.Pointer(unsafe.SliceData(part)), len(part)); err != nil {
			return fmt.Errorf("%s: reading the partial results of %s: %w", l.Name(), s.Describe(), err)
		}
		combine(a.Access, s, part, slots)
	}
	return nil
}

// combine folds slots partial results (dim values each) into s's host values.
func combine(acc core.Access, s *core.Storage, part []byte, slots int) {
	switch s.Type {
	case core.Float64:
		fold(acc, unsafe.Slice((*float64)(s.Host), s.Dim), unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(part))), slots*s.Dim))
	case core.Float32:
		fold(acc, unsafe.Slice((*float32)(s.Host), s.Dim), unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(part))), slots*s.Dim))
	case core.Int32:
		fold(acc, unsafe.Slice((*int32)(s.Host), s.Dim), unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(part))), slots*s.Dim))
	case core.Int64:
		fold(acc, unsafe.Slice((*int64)(s.Host), s.Dim), unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(part))), slots*s.Dim))
	case core.Uint32:
		fold(acc, unsafe.Slice((*uint32)(s.Host), s.Dim), unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(part))), slots*s.Dim))
	}
}

// fold combines the partial results part, in order, into dst as the host
// backends combine theirs (hostc.Combine): a MIN or MAX takes a partial
// result only when it is smaller (larger), so a NaN one leaves dst as it
// was, and of -0 and +0 the one in dst stays (Go's min and max would
// return the NaN and order -0 below +0).
func fold[T int32 | int64 | uint32 | float32 | float64](acc core.Access, dst, part []T) {
	dim := len(dst)
	for g := 0; g < len(part)/dim; g++ {
		for k := 0; k < dim; k++ {
			v := part[g*dim+k]
			switch acc {
			case core.Inc:
				dst[k] += v
			case core.Min:
				if v < dst[k] {
					dst[k] = v
				}
			case core.Max:
				if v > dst[k] {
					dst[k] = v
				}
			}
		}
	}
}

// devicePlan is an execution plan with its arrays on the device.
type devicePlan struct {
	p                         *plan.Plan
	drv                       Driver
	indMap, indOffs, indSizes []Buffer
	locMap                    []Buffer // by argument
	blkMap, offset, nelems    Buffer
	nthrcol, thrcol           Buffer
}

// Release frees the plan's device arrays (queued launches that use them
// still complete: device APIs free a buffer once nothing needs it).
func (dp *devicePlan) Release() {
	for _, bufs := range [][]Buffer{dp.indMap, dp.indOffs, dp.indSizes, dp.locMap,
		{dp.blkMap, dp.offset, dp.nelems, dp.nthrcol, dp.thrcol}} {
		for _, buf := range bufs {
			if buf != nil {
				dp.drv.Free(buf)
			}
		}
	}
}

// uploadPlan copies the plan's arrays to the device.
func (p *Program) uploadPlan(l *core.Loop, pl *plan.Plan) (*devicePlan, error) {
	dp := &devicePlan{p: pl, drv: p.drv, locMap: make([]Buffer, len(l.Args))}
	var err error
	up := func(s []int32) Buffer {
		if err != nil {
			return nil
		}
		var buf Buffer
		if buf, err = p.drv.Alloc(4 * len(s)); err != nil {
			return nil
		}
		if len(s) > 0 {
			err = p.drv.Write(buf, unsafe.Pointer(unsafe.SliceData(s)), 4*len(s))
		}
		return buf
	}
	for d := 0; d < p.lay.NInd; d++ {
		dp.indMap = append(dp.indMap, up(pl.IndMap[d]))
		dp.indOffs = append(dp.indOffs, up(pl.IndOffs[d]))
		dp.indSizes = append(dp.indSizes, up(pl.IndSizes[d]))
	}
	for i := range l.Args {
		if l.Args[i].Map != nil {
			dp.locMap[i] = up(pl.LocMap[i])
		}
	}
	dp.blkMap, dp.offset, dp.nelems = up(pl.BlkMap), up(pl.Offset), up(pl.NElems)
	dp.nthrcol, dp.thrcol = up(pl.NThrCol), up(pl.ThrCol)
	if err != nil {
		dp.Release()
		return nil, fmt.Errorf("copying the execution plan to the device: %w", err)
	}
	return dp, nil
}

// MatVec computes the product m on the device with k, a kernel built from
// device.SpMVSource for m's shape, launched in groups of wg items: it
// makes the matrix, its pattern and x current on the device (copying only
// what is stale), and leaves y's device copy the current one. soa says
// the backend stores Dats of dim > 1 structure-of-arrays.
func MatVec(drv Driver, owner any, k Kernel, wg int, soa bool, m *exec.MatVec) error {
	alloc := func(s *core.Storage) func(zeroed bool) (core.DeviceBuffer, error) {
		return func(zeroed bool) (core.DeviceBuffer, error) { return newDevBuf(drv, owner, s, zeroed, soa) }
	}
	for _, s := range []*core.Storage{m.Values, m.RowPtr, m.ColIdx, m.X} {
		if err := s.DeviceAccess(owner, true, false, alloc(s)); err != nil {
			return fmt.Errorf("%s: Mult: %w", m.Name, err)
		}
	}
	// y's rows beyond Rows (a distributed run's halo) keep their values.
	if err := m.Y.DeviceAccess(owner, m.Rows*m.RDim < m.Y.Len, true, alloc(m.Y)); err != nil {
		return fmt.Errorf("%s: Mult: %w", m.Name, err)
	}
	if m.Rows == 0 {
		return nil
	}
	buf := func(s *core.Storage) Arg { return Arg{Kind: ArgBuffer, Buf: s.Dev.(*devBuf).buf} }
	x, y := m.X.Dev.(*devBuf), m.Y.Dev.(*devBuf)
	args := []Arg{{Kind: ArgInt, Int: m.Rows}, buf(m.Values), buf(m.RowPtr), buf(m.ColIdx),
		buf(m.X), {Kind: ArgInt, Int: x.n}, buf(m.Y), {Kind: ArgInt, Int: y.n}}
	groups := min((m.Rows+wg-1)/wg, device.MaxDirectGroups)
	if err := drv.Launch(k, args, groups, wg); err != nil {
		return fmt.Errorf("%s: Mult on %s: %w", m.Name, drv.Describe(), err)
	}
	return nil
}

// Products builds and keeps a backend's matrix-vector product kernels,
// one per shape (device.SpMV): Mat.Mult of a shape already seen costs a
// map lookup.
type Products struct {
	kernels map[device.SpMV]Kernel
}

// Run computes product m (exec.MatVecer) with the kernel for its shape,
// which build makes from device.SpMVSource in dialect d the first time
// (build gets a stand-in loop naming the product, for its messages and
// caches): on drv, for backend owner, with opts' layout and work-group
// size.
func (ps *Products) Run(drv Driver, owner any, d *device.Dialect, opts device.Options, m *exec.MatVec,
	build func(l *core.Loop, src string) (Kernel, error)) error {
	spec := device.SpMV{Type: m.Values.Type, RDim: m.RDim, CDim: m.CDim,
		XSoA: opts.SoA && device.SoAStorage(m.X), YSoA: opts.SoA && device.SoAStorage(m.Y), WorkGroupSize: opts.WorkGroupSize}
	k, ok := ps.kernels[spec]
	if !ok {
		src, err := device.SpMVSource(d, spec)
		if err != nil {
			return err
		}
		if k, err = build(&core.Loop{Kernel: &core.Kernel{Name: "op2_mult"}, Set: &core.Set{Name: m.Name}}, src); err != nil {
			return err
		}
		if ps.kernels == nil {
			ps.kernels = map[device.SpMV]Kernel{}
		}
		ps.kernels[spec] = k
	}
	wg := opts.WorkGroupSize
	if wg == 0 {
		wg = device.DefaultWorkGroupSize
	}
	return MatVec(drv, owner, k, wg, opts.SoA, m)
}
