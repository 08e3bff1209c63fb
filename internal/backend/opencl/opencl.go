// Package opencl is the "opencl" backend: each loop becomes an OpenCL
// kernel, built by the OpenCL driver and run on the selected device (a GPU,
// or the CPU through PoCL). It follows OP2's GPU scheme: the iteration set is
// cut into blocks by the execution plan; a work group stages a block's
// indirect data in local memory, runs the kernel for the block's elements
// and applies increments colour by colour between barriers, then writes
// back; the blocks themselves run colour by colour. Global reductions are
// reduced per work group and combined on the host. Dats and Globals move
// between host and device only when stale (seed 000's data states).
package opencl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/cache"
	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/jit"
	cl "github.com/goop2/op2/internal/opencl"
	"github.com/goop2/op2/internal/plan"
)

// Name is the name the backend is registered under.
const Name = "opencl"

func init() {
	exec.Register(Name, open)
	exec.RegisterGenerator(Name, func(l *core.Loop) (string, error) { return generateFor(l, NominalLocalMem) })
}

// NominalLocalMem is the local memory per work group assumed when source is
// generated without a device (static generation): 32 KiB, the least an
// OpenCL 1.2 full-profile device has.
const NominalLocalMem = 32 << 10

// generateFor generates the loop's source for a device with localMem
// bytes of local memory.
func generateFor(l *core.Loop, localMem int) (string, error) {
	lay, err := device.Analyse(device.OpenCL, l, localMem)
	if err != nil {
		return "", err
	}
	return device.Generate(l, lay)
}

type backend struct {
	ctx      *cl.Context
	cache    *cache.Dir
	programs map[string]*sharedProgram // by source hash, within this context
}

func deviceType(name string) (uint64, error) {
	switch strings.ToLower(name) {
	case "", "all", "any":
		return cl.TypeAll, nil
	case "cpu":
		return cl.TypeCPU, nil
	case "gpu":
		return cl.TypeGPU, nil
	case "accelerator":
		return cl.TypeAccelerator, nil
	case "default":
		return cl.TypeDefault, nil
	}
	return 0, fmt.Errorf("opencl: unknown device type %q (use cpu, gpu, accelerator or all)", name)
}

func open(cfg *exec.Config) (exec.Backend, error) {
	dir, err := cache.Open(cfg.CacheDir)
	if err != nil {
		return nil, err
	}
	ctx, err := openDevice(cfg)
	if err != nil {
		return nil, core.Unavailable(err)
	}
	return &backend{ctx: ctx, cache: dir, programs: map[string]*sharedProgram{}}, nil
}

// openDevice loads the OpenCL library and opens a context on the device
// the configuration selects.
func openDevice(cfg *exec.Config) (*cl.Context, error) {
	typ, err := deviceType(cfg.OpenCLDevice)
	if err != nil {
		return nil, err
	}
	devs, err := cl.Devices(typ)
	if err != nil {
		return nil, err
	}
	var chosen *cl.Device
	var seen []string
	for i := range devs {
		d := &devs[i]
		seen = append(seen, fmt.Sprintf("%q on %q", d.Name, d.Platform))
		if cfg.OpenCLPlatform == "" || strings.Contains(strings.ToLower(d.Platform), strings.ToLower(cfg.OpenCLPlatform)) {
			chosen = d
			break
		}
	}
	if chosen == nil {
		if len(devs) == 0 {
			return nil, fmt.Errorf("opencl: no OpenCL device of type %q found; %s", cfg.OpenCLDevice, cl.InstallHint)
		}
		return nil, fmt.Errorf("opencl: no device on a platform matching %q (found %s)", cfg.OpenCLPlatform, strings.Join(seen, ", "))
	}
	return cl.NewContext(*chosen)
}

func (b *backend) Name() string { return Name }

// Wait blocks until the device has finished every queued loop.
func (b *backend) Wait() error { return b.ctx.Finish() }

func (b *backend) Generate(l *core.Loop) (string, error) {
	return generateFor(l, b.ctx.Device.LocalMem)
}

const buildOptions = "-cl-std=CL1.2"

// build returns a new instance of the stub kernel of the program for src,
// taken from this process, from the disk cache (a device binary keyed by
// source, device and driver, and bound to that key and the source's hash),
// or built by the driver. A cached binary that is damaged, foreign,
// rejected by the driver or lacking the stub is rebuilt.
func (b *backend) build(l *core.Loop, src string) (*cl.Kernel, string, error) {
	d := b.ctx.Device
	h := sha256.Sum256([]byte(strings.Join([]string{"goop2-opencl-v2", d.Platform, d.Name, d.Version, d.Driver, buildOptions, src}, "\x00")))
	key := hex.EncodeToString(h[:])
	if sp, ok := b.programs[key]; ok {
		k, err := sp.p.Kernel(stubName)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", l.Name(), err)
		}
		sp.refs++
		return k, key, nil
	}
	keep := func(p *cl.Program, k *cl.Kernel) (*cl.Kernel, string, error) {
		b.programs[key] = &sharedProgram{p: p, refs: 1}
		return k, key, nil
	}
	srcSum := sha256.Sum256([]byte(src))
	bind := "goop2-opencl-bin\x00" + key + "\x00" + hex.EncodeToString(srcSum[:])
	name := key + ".clbin"
	e, err := b.cache.Get(name, bind)
	if err == nil {
		if p, err := b.ctx.BuildBinary(e.Body, buildOptions); err == nil {
			if k, err := p.Kernel(stubName); err == nil {
				jit.NoteDiskHit()
				return keep(p, k)
			}
			p.Release()
		}
		jit.NoteRebuild() // a valid entry the driver cannot use
	} else if !errors.Is(err, os.ErrNotExist) {
		jit.NoteRebuild()
	}
	p, err := b.ctx.BuildSource(src, buildOptions)
	if err != nil {
		var be *cl.BuildError
		if errors.As(err, &be) {
			de := &core.DeviceBuildError{API: "OpenCL", Device: d.Name, Log: be.Log, Err: err}
			if b.cache.WriteFile(key+".cl", []byte(src)) == nil {
				de.SourcePath = b.cache.File(key + ".cl")
			}
			err = de
		}
		return nil, "", fmt.Errorf("%s: %w", l.Name(), err)
	}
	jit.NoteCompile()
	k, err := p.Kernel(stubName)
	if err != nil {
		p.Release()
		return nil, "", fmt.Errorf("%s: %w", l.Name(), err)
	}
	if bin, err := p.Binary(); err == nil {
		_ = b.cache.Put(name, bind, bin) // a cache that cannot be written only costs a rebuild
	}
	return keep(p, k)
}

// sharedProgram is a built OpenCL program with the number of loop programs
// that use a kernel of it.
type sharedProgram struct {
	p    *cl.Program
	refs int
}

// releaseProgram says a loop program no longer uses the OpenCL program
// built under key; the last one frees it.
func (b *backend) releaseProgram(key string) {
	sp, ok := b.programs[key]
	if !ok {
		return
	}
	if sp.refs--; sp.refs == 0 {
		sp.p.Release()
		delete(b.programs, key)
	}
}

// stubName is the OpenCL kernel every generated program defines.
const stubName = "op2_stub"

func (b *backend) Build(l *core.Loop) (exec.Program, error) {
	if !b.ctx.Device.HasDouble {
		for i := range l.Args {
			if l.Args[i].Data.Type == core.Float64 {
				return nil, fmt.Errorf("%s: argument %d is float64 but OpenCL device %q has no double precision", l.Name(), i, b.ctx.Device.Name)
			}
		}
	}
	lay, err := device.Analyse(device.OpenCL, l, b.ctx.Device.LocalMem)
	if err != nil {
		return nil, err
	}
	if max := b.ctx.Device.ConstMem; max > 0 && lay.ConstBytes > max {
		return nil, fmt.Errorf("%s: the constants the kernel uses take %d bytes, more than the %d bytes of constant memory of OpenCL device %q",
			l.Name(), lay.ConstBytes, max, b.ctx.Device.Name)
	}
	src, err := device.Generate(l, lay)
	if err != nil {
		return nil, err
	}
	k, progKey, err := b.build(l, src)
	if err != nil {
		if hint := lay.BuildHint(l); hint != "" {
			err = fmt.Errorf("%w\n%s", err, hint)
		}
		return nil, err
	}
	p := &program{b: b, src: src, lay: lay, k: k, progKey: progKey, red: make([]*cl.Buffer, len(l.Args))}
	if lay.Indirect {
		// Every element of a written-back dataset is stored back, so all
		// its arguments constrain the colouring; datasets too large to
		// stage take no local memory.
		p.needs = &exec.PlanNeeds{Modifies: make([]bool, len(l.Args)), Unstaged: make([]bool, len(l.Args)),
			SharedBudget: device.StagingBudget(l, lay.Reductions, b.ctx.Device.LocalMem), TooLarge: b.tooLarge(lay)}
		for i := range l.Args {
			if d := lay.Inds[i]; d >= 0 {
				p.needs.Modifies[i] = lay.DSModified[d]
				p.needs.Unstaged[i] = lay.DSGlobal[d]
			}
		}
	}
	if lay.ConstBytes > 0 {
		if p.consts, err = b.ctx.Alloc(lay.ConstBytes); err != nil {
			p.Release()
			return nil, fmt.Errorf("%s: allocating the constant buffer: %w", l.Name(), err)
		}
		ctx := b.ctx
		runtime.AddCleanup(p, func(buf *cl.Buffer) { ctx.Free(buf) }, p.consts)
		p.constHost = make([]byte, lay.ConstBytes)
		p.constSeen = make([]uint64, len(lay.Consts))
	}
	return p, nil
}

// program is one compiled loop signature.
type program struct {
	b       *backend
	src     string
	lay     *device.Layout
	k       *cl.Kernel
	progKey string       // the OpenCL program k belongs to, in b.programs
	red     []*cl.Buffer // partial results of reduction arguments, by argument

	// consts is the device copy of the constants the kernel uses, packed
	// as lay.Consts says; constHost its host image and constSeen the
	// version of each constant it holds (0: not yet copied).
	consts    *cl.Buffer
	constHost []byte
	constSeen []uint64

	needs *exec.PlanNeeds // nil for a direct loop
	part  []byte          // reused buffer for reading partial reduction results

	// The bound loop, between Bind and Finish: its device plan (nil for a
	// direct loop), the kernel argument of the colours' block offset, and
	// the number of partial reduction results the last launch wrote.
	l              *core.Loop
	dp             *devicePlan
	blockOffsetArg int
	slots          int
}

func (p *program) Source() string { return p.src }

// Release frees the program's device memory (its reduction buffers) and its OpenCL kernel, and the OpenCL program when no
// other loop program uses it. The run time calls it when it drops the
// program.
func (p *program) Release() {
	for i, buf := range p.red {
		p.b.ctx.Free(buf)
		p.red[i] = nil
	}
	if p.k != nil {
		p.k.Release()
		p.k = nil
		p.b.releaseProgram(p.progKey)
	}
}

// devBuf is a Dat's or Global's device copy.
type devBuf struct {
	b   *backend
	buf *cl.Buffer
}

func (d *devBuf) Upload(s *core.Storage) error   { return d.b.ctx.Write(d.buf, s.Host, s.Bytes()) }
func (d *devBuf) Download(s *core.Storage) error { return d.b.ctx.Read(d.buf, s.Host, s.Bytes()) }
func (d *devBuf) Owner() any                     { return d.b }
func (d *devBuf) Free()                          { d.b.ctx.Free(d.buf) }

func (b *backend) alloc(s *core.Storage) func(zeroed bool) (core.DeviceBuffer, error) {
	return func(zeroed bool) (core.DeviceBuffer, error) {
		buf, err := b.ctx.Alloc(s.Bytes())
		if err != nil {
			return nil, err
		}
		if zeroed {
			if err := b.ctx.Zero(buf, s.Bytes()); err != nil {
				b.ctx.Free(buf)
				return nil, err
			}
		}
		d := &devBuf{b: b, buf: buf}
		// Storage is the first field of its Dat or Global, so this frees
		// the device memory when the Dat or Global is collected.
		runtime.AddCleanup(s, func(d *devBuf) { d.Free() }, d)
		return d, nil
	}
}

// prepareData brings every argument's device copy up to date.
func (p *program) prepareData(l *core.Loop) error {
	for i := range l.Args {
		if p.lay.Base[i] != i {
			continue
		}
		s := l.Args[i].Data
		read, modifies := false, false
		for j := i; j < len(l.Args); j++ {
			a := &l.Args[j]
			if a.Data != s {
				continue
			}
			if a.Kind == core.ArgGlobal {
				read = true // a Global's device copy is only read; reductions combine on the host
				continue
			}
			if !(a.Kind == core.ArgDirect && a.Access == core.Write) {
				read = true
			}
			if a.Access.Modifies() {
				modifies = true
			}
		}
		if err := s.DeviceAccess(p.b, read, modifies, p.b.alloc(s)); err != nil {
			return fmt.Errorf("%s: argument %d: %w", l.Name(), i, err)
		}
	}
	return nil
}

// refreshConsts copies the constants whose values changed since the
// last loop to the device: changing a constant needs no new program.
func (p *program) refreshConsts() error {
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
		return nil
	}
	if err := p.b.ctx.Write(p.consts, unsafe.Pointer(&p.constHost[0]), len(p.constHost)); err != nil {
		clear(p.constSeen) // copy them all again next time
		return fmt.Errorf("copying the constants to the device: %w", err)
	}
	return nil
}

// setTail sets the constant and reduction arguments starting at index next.
func (p *program) setTail(l *core.Loop, next, slots int) error {
	if p.consts != nil {
		if err := p.refreshConsts(); err != nil {
			return err
		}
		if err := p.k.SetBuffer(next, p.consts); err != nil {
			return err
		}
		next++
	}
	for _, i := range p.lay.Reductions {
		a := &l.Args[i]
		need := max(slots, 1) * a.Data.Dim * a.Data.Type.Size()
		if p.red[i] == nil || p.red[i].Size < need {
			p.b.ctx.Free(p.red[i])
			buf, err := p.b.ctx.Alloc(need)
			if err != nil {
				return err
			}
			p.red[i] = buf
		}
		if err := p.k.SetBuffer(next, p.red[i]); err != nil {
			return err
		}
		if err := p.k.SetLocal(next+1, device.WorkGroupSize*a.Data.Type.Size()); err != nil {
			return err
		}
		next += 2
	}
	if len(p.lay.Consts) == 0 && len(p.lay.Reductions) == 0 {
		return p.k.SetInt(next, 0)
	}
	return nil
}

func (p *program) setData(l *core.Loop, next int) (int, error) {
	for i := range l.Args {
		if p.lay.Base[i] != i {
			continue
		}
		if err := p.k.SetBuffer(next, l.Args[i].Data.Dev.(*devBuf).buf); err != nil {
			return 0, err
		}
		next++
	}
	return next, nil
}

// PlanNeeds: indirect loops run by the blocks of a plan whose staged data
// fits the device's local memory.
func (p *program) PlanNeeds() *exec.PlanNeeds { return p.needs }

// Bind makes every argument's device copy current, sets the kernel's data,
// plan, constant and reduction arguments, and uploads the plan's arrays the
// first time the plan is used.
func (p *program) Bind(l *core.Loop, pl *exec.Plan) error {
	var dp *devicePlan
	if pl != nil {
		if pl.Device == nil {
			var err error
			if pl.Device, err = p.b.uploadPlan(l, p.lay, pl); err != nil {
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

// Launch queues the kernel over a range of elements (direct loops) or of
// block colours (indirect loops).
func (p *program) Launch(r exec.Range) error {
	if p.dp == nil {
		n := r.Last - r.First
		groups := min((n+device.WorkGroupSize-1)/device.WorkGroupSize, device.MaxDirectGroups)
		if p.slots > 0 {
			// Partial results are per work group: fold those of the
			// previous range before this one overwrites them.
			if err := p.finishReductions(p.l, p.slots); err != nil {
				return err
			}
		}
		for _, err := range []error{p.k.SetInt(0, r.First), p.k.SetInt(1, r.Last)} {
			if err != nil {
				return fmt.Errorf("%s: %w", p.l.Name(), err)
			}
		}
		if err := p.b.ctx.Launch(p.k, groups, device.WorkGroupSize); err != nil {
			return fmt.Errorf("%s: %w", p.l.Name(), err)
		}
		p.slots = groups
		return nil
	}
	// Each block writes its own partial result slot.
	p.slots = p.dp.p.NBlocks
	for c := r.First; c < r.Last; c++ {
		if err := p.k.SetInt(p.blockOffsetArg, int(p.dp.p.ColOffset[c])); err != nil {
			return fmt.Errorf("%s: %w", p.l.Name(), err)
		}
		if err := p.b.ctx.Launch(p.k, int(p.dp.p.NColBlk[c]), device.WorkGroupSize); err != nil {
			return fmt.Errorf("%s: %w", p.l.Name(), err)
		}
	}
	return nil
}

// Finish folds the reductions' partial results into the Globals.
func (p *program) Finish(l *core.Loop) error {
	err := p.finishReductions(l, p.slots)
	p.l, p.dp, p.slots = nil, nil, 0
	return err
}

// checkRange refuses a loop whose element numbers or partial reduction
// results would overflow the OpenCL C int the generated stub indexes them
// with (element offsets into Dats are computed in size_t; the staged data
// is bounded by local memory).
func (p *program) checkRange(l *core.Loop, dp *devicePlan) error {
	const maxInt = 1<<31 - 1
	if dp == nil {
		if n := l.IterEnd(); n > maxInt-device.MaxDirectGroups*device.WorkGroupSize {
			return fmt.Errorf("the opencl backend runs direct loops over at most %d elements; set %q has %d", maxInt-device.MaxDirectGroups*device.WorkGroupSize, l.Set.Name, n)
		}
		return nil
	}
	for _, i := range p.lay.Reductions {
		if s := l.Args[i].Data; dp.p.NBlocks*s.Dim > maxInt {
			return fmt.Errorf("the opencl backend keeps one partial result per block: %d blocks × dim %d of %s exceed the int range; use a smaller Global or a larger block size", dp.p.NBlocks, s.Dim, s.Describe())
		}
	}
	return nil
}

// bindDirect sets a direct loop's kernel arguments, but for the range.
func (p *program) bindDirect(l *core.Loop) error {
	next, err := p.setData(l, 2)
	if err != nil {
		return err
	}
	groups := min((l.IterEnd()+device.WorkGroupSize-1)/device.WorkGroupSize, device.MaxDirectGroups)
	return p.setTail(l, next, groups)
}

// bindIndirect sets an indirect loop's kernel arguments, but for the
// colour's block offset.
func (p *program) bindIndirect(l *core.Loop, dp *devicePlan) error {
	next, err := p.setData(l, 0)
	if err != nil {
		return err
	}
	for d := 0; d < p.lay.NInd; d++ {
		for _, buf := range []*cl.Buffer{dp.indMap[d], dp.indOffs[d], dp.indSizes[d]} {
			if err := p.k.SetBuffer(next, buf); err != nil {
				return err
			}
			next++
		}
	}
	for i := range l.Args {
		if l.Args[i].Map == nil {
			continue
		}
		if err := p.k.SetBuffer(next, dp.locMap[i]); err != nil {
			return err
		}
		next++
	}
	for _, buf := range []*cl.Buffer{dp.blkMap, dp.offset, dp.nelems, dp.nthrcol, dp.thrcol} {
		if err := p.k.SetBuffer(next, buf); err != nil {
			return err
		}
		next++
	}
	p.blockOffsetArg = next
	if err := p.k.SetLocal(next+1, dp.p.NShared); err != nil {
		return err
	}
	return p.setTail(l, next+2, dp.p.NBlocks)
}

// finishReductions reads each reduction's per-group results and combines
// them into the Global's host copy, in group order.
func (p *program) finishReductions(l *core.Loop, slots int) error {
	for _, i := range p.lay.Reductions {
		a := &l.Args[i]
		s := a.Data
		if err := s.HostAccess(true); err != nil {
			return err
		}
		if slots == 0 {
			continue
		}
		n := slots * s.Dim * s.Type.Size()
		if cap(p.part) < n {
			p.part = make([]byte, n)
		}
		part := p.part[:n]
		if err := p.b.ctx.Read(p.red[i], unsafe.Pointer(&part[0]), len(part)); err != nil {
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
		fold(acc, unsafe.Slice((*float64)(s.Host), s.Dim), unsafe.Slice((*float64)(unsafe.Pointer(&part[0])), slots*s.Dim))
	case core.Float32:
		fold(acc, unsafe.Slice((*float32)(s.Host), s.Dim), unsafe.Slice((*float32)(unsafe.Pointer(&part[0])), slots*s.Dim))
	case core.Int32:
		fold(acc, unsafe.Slice((*int32)(s.Host), s.Dim), unsafe.Slice((*int32)(unsafe.Pointer(&part[0])), slots*s.Dim))
	case core.Int64:
		fold(acc, unsafe.Slice((*int64)(s.Host), s.Dim), unsafe.Slice((*int64)(unsafe.Pointer(&part[0])), slots*s.Dim))
	case core.Uint32:
		fold(acc, unsafe.Slice((*uint32)(s.Host), s.Dim), unsafe.Slice((*uint32)(unsafe.Pointer(&part[0])), slots*s.Dim))
	}
}

func fold[T int32 | int64 | uint32 | float32 | float64](acc core.Access, dst, part []T) {
	dim := len(dst)
	for g := 0; g < len(part)/dim; g++ {
		for k := 0; k < dim; k++ {
			v := part[g*dim+k]
			switch acc {
			case core.Inc:
				dst[k] += v
			case core.Min:
				dst[k] = min(dst[k], v)
			case core.Max:
				dst[k] = max(dst[k], v)
			}
		}
	}
}

// devicePlan is an execution plan with its arrays on the device.
type devicePlan struct {
	p                         *plan.Plan
	ctx                       *cl.Context
	indMap, indOffs, indSizes []*cl.Buffer
	locMap                    []*cl.Buffer // by argument
	blkMap, offset, nelems    *cl.Buffer
	nthrcol, thrcol           *cl.Buffer
}

// Release frees the plan's device arrays (queued launches that use them
// still complete: OpenCL frees a buffer once nothing needs it).
func (dp *devicePlan) Release() {
	ctx := dp.ctx
	for _, bufs := range [][]*cl.Buffer{dp.indMap, dp.indOffs, dp.indSizes, dp.locMap,
		{dp.blkMap, dp.offset, dp.nelems, dp.nthrcol, dp.thrcol}} {
		for _, buf := range bufs {
			ctx.Free(buf)
		}
	}
}

func (b *backend) upload(s []int32) (*cl.Buffer, error) {
	buf, err := b.ctx.Alloc(4 * len(s))
	if err != nil {
		return nil, err
	}
	if len(s) > 0 {
		if err := b.ctx.Write(buf, unsafe.Pointer(&s[0]), 4*len(s)); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// tooLarge explains that one block's staged data cannot fit local memory.
func (b *backend) tooLarge(lay *device.Layout) func(l *core.Loop, nshared int) error {
	return func(l *core.Loop, nshared int) error {
		var staged []string
		for d := 0; d < lay.NInd; d++ {
			if !lay.DSGlobal[d] {
				a := &l.Args[lay.DSArg[d]]
				staged = append(staged, fmt.Sprintf("%s through map %q", a.Data.Describe(), a.Map.Name))
			}
		}
		return fmt.Errorf("one element's indirect data (%d bytes: %s) does not fit the %d bytes of local memory of OpenCL device %q; use fewer or smaller indirect arguments, or a host backend",
			nshared, strings.Join(staged, ", "), b.ctx.Device.LocalMem, b.ctx.Device.Name)
	}
}

// uploadPlan copies the plan's arrays to the device.
func (b *backend) uploadPlan(l *core.Loop, lay *device.Layout, xp *exec.Plan) (*devicePlan, error) {
	pl := xp.Plan
	dp := &devicePlan{p: pl, ctx: b.ctx, locMap: make([]*cl.Buffer, len(l.Args))}
	var err error
	up := func(s []int32) *cl.Buffer {
		if err != nil {
			return nil
		}
		var buf *cl.Buffer
		buf, err = b.upload(s)
		return buf
	}
	for d := 0; d < lay.NInd; d++ {
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
