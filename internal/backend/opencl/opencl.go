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
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/cache"
	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/devrt"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/jit"
	"github.com/goop2/op2/internal/mpi"
	cl "github.com/goop2/op2/internal/opencl"
)

// Name is the name the backend is registered under.
const Name = "opencl"

func init() {
	exec.Register(Name, open)
	exec.RegisterDevice(Name)
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
	opts     device.Options
	ctx      *cl.Context
	drv      *driver
	cache    *cache.Dir
	programs map[string]*sharedProgram // by source hash, within this context
	products devrt.Products            // matrix-vector product kernels
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
	return 0, fmt.Errorf("opencl: %w", exec.CheckOpenCLDevice(name))
}

func open(cfg *exec.Config) (exec.Backend, error) {
	dir, err := cache.Open(cfg.CacheDir)
	if err != nil {
		return nil, err
	}
	scheme, err := device.ParseScheme(cfg.DeviceScheme)
	if err != nil {
		return nil, err
	}
	if err := device.CheckLayout(cfg.DeviceLayout); err != nil {
		return nil, err
	}
	dev, err := chooseDevice(cfg)
	if err != nil {
		return nil, core.Unavailable(err)
	}
	soa, err := device.ParseLayout(cfg.DeviceLayout, dev.Type&cl.TypeGPU != 0)
	if err != nil {
		return nil, err
	}
	if err := checkWorkGroupSize(cfg.DeviceWorkGroupSize, dev); err != nil {
		return nil, err
	}
	ctx, err := cl.NewContext(*dev)
	if err != nil {
		return nil, core.Unavailable(err)
	}
	opts := device.Options{Scheme: scheme, SoA: soa, WorkGroupSize: cfg.DeviceWorkGroupSize, ConstMem: constMem(dev)}
	b := &backend{opts: opts, ctx: ctx, drv: newDriver(ctx), cache: dir, programs: map[string]*sharedProgram{}}
	b.drv.rows = devrt.NewRows(b.drv, b.buildRows)
	return b, nil
}

// constMem is the constant memory the constants of a kernel may take on
// dev (device.Options.ConstMem): its largest __constant buffer
// (CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE; 0 when the driver does not say,
// for device.NominalConstMem), or none (-1) when it takes no __constant
// argument (CL_DEVICE_MAX_CONSTANT_ARGS), since the constants are one.
// Constants that do not fit are read from device memory.
func constMem(dev *cl.Device) int {
	if dev.ConstArgs < 1 {
		return -1
	}
	return dev.ConstMem
}

// checkWorkGroupSize returns an error unless n (0: the default) is a valid
// work-group size within dev's limit (CL_DEVICE_MAX_WORK_GROUP_SIZE).
func checkWorkGroupSize(n int, dev *cl.Device) error {
	if err := device.CheckWorkGroupSize(n); err != nil {
		return err
	}
	return device.CheckWorkGroupLimit(n, dev.MaxWorkGroup, fmt.Sprintf("OpenCL device %q", dev.Name))
}

// chooseDevice loads the OpenCL library and finds the device the
// configuration selects.
func chooseDevice(cfg *exec.Config) (*cl.Device, error) {
	typ, err := deviceType(cfg.OpenCLDevice)
	if err != nil {
		return nil, err
	}
	if err := cl.Load(launchedRank()); err != nil {
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
			return nil, fmt.Errorf("opencl: no OpenCL device of type %q (Config.OpenCLDevice, OP2_OPENCL_DEVICE) found; %s", cfg.OpenCLDevice, cl.InstallHint)
		}
		return nil, fmt.Errorf("opencl: no device on a platform matching %q (Config.OpenCLPlatform, OP2_OPENCL_PLATFORM); found %s", cfg.OpenCLPlatform, strings.Join(seen, ", "))
	}
	return chosen, nil
}

// launchedRank is this process's rank for the driver's Load: the rank
// the MPI launcher gave it in a job of more than one process, else
// cl.NoRank.
func launchedRank() int {
	rank, ok := mpi.LaunchedRank()
	if !ok || mpi.Launched() < 2 {
		return cl.NoRank
	}
	return rank
}

func (b *backend) Name() string { return Name }

// Describe names the platform and the device (exec.Describer).
func (b *backend) Describe() []slog.Attr {
	d := b.ctx.Device
	return []slog.Attr{slog.String("platform", d.Platform), slog.String("device", d.Name),
		slog.String("version", d.Version), slog.String("driver", d.Driver)}
}

// Wait blocks until the device has finished every queued loop.
func (b *backend) Wait() error { return b.ctx.Finish() }

// FlushStdio waits for the queued loops and flushes the C streams their
// kernels' printf wrote to (exec.StdioFlusher).
func (b *backend) FlushStdio() error {
	err := b.ctx.Finish()
	cl.FlushStdio()
	return err
}

var _ exec.DeviceClock = (*backend)(nil)

// Clocked reports whether loops are timed on the device (exec.DeviceClock):
// where the library has OpenCL 1.2's markers.
func (b *backend) Clocked() bool { return b.ctx.CanStamp() }

// Stamp queues a marker after the work queued so far.
func (b *backend) Stamp() (exec.Stamp, error) {
	ev, err := b.ctx.Stamp()
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// Between waits for marker to and returns the device time since marker
// from; it releases both.
func (b *backend) Between(from, to exec.Stamp) (time.Duration, error) {
	return b.ctx.Between(from.(unsafe.Pointer), to.(unsafe.Pointer))
}

func (b *backend) Generate(l *core.Loop) (string, error) {
	lay, err := devrt.Analyse(device.OpenCL, l, b.ctx.Device.LocalMem, b.opts)
	if err != nil {
		return "", err
	}
	return device.Generate(l, lay)
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
	if err := recursive(l); err != nil {
		// Refused before the driver sees it: PoCL's compiler overflows
		// its stack on a recursive call and kills the process.
		return nil, "", fmt.Errorf("%s: %w", l.Name(), err)
	}
	p, err := b.ctx.BuildSource(src, buildOptions)
	if err != nil {
		var be *cl.BuildError
		if errors.As(err, &be) {
			de := &core.DeviceBuildError{API: "OpenCL", Device: d.Name, Log: be.Log, Output: be.Output, Err: err}
			de.Hint, de.Missing = missingFunctionsHint(l, be.Log+"\n"+be.Output)
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

// Build builds the loop's program with the configured scheme, layout and
// work-group size.
func (b *backend) Build(l *core.Loop) (exec.Program, error) { return b.BuildWith(l, "", 0) }

// Variants names the schemes and work-group sizes the auto-tuner tries
// for l, the configured ones first (exec.VariantBuilder; see
// device.Variants).
func (b *backend) Variants(l *core.Loop) []string {
	return device.Variants(device.OpenCL, l, b.ctx.Device.LocalMem, b.ctx.Device.MaxWorkGroup, b.opts)
}

// KeepsOrder reports whether fused keeps l's order of combining its
// order-sensitive results (exec.OrderKeeper; devrt.KeepsOrder).
func (b *backend) KeepsOrder(fused *core.Loop, fp exec.Program, l *core.Loop, lp exec.Program) bool {
	return devrt.KeepsOrder(fused, fp, l, lp)
}

// BuildVariant builds l's program in one of its Variants
// (exec.VariantBuilder).
func (b *backend) BuildVariant(l *core.Loop, variant string) (exec.Program, error) {
	scheme, size, err := device.ParseVariant(variant)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name(), err)
	}
	return b.BuildWith(l, scheme, size)
}

// BuildWith builds the loop's program as Build does, with scheme ("staged"
// or "atomics"; "" for the configured one) and work-group size (a power of
// two from 32 to 1024 within the device's limit; 0 for the configured
// one) in place of the configured ones, so that an auto-tuner can try
// them. The layout stays the configured one: the device copies of the
// data are shared by every program of the backend.
func (b *backend) BuildWith(l *core.Loop, scheme string, workGroupSize int) (exec.Program, error) {
	opts, err := b.opts.With(scheme, workGroupSize, b.ctx.Device.MaxWorkGroup, b.drv.Describe())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name(), err)
	}
	if !b.ctx.Device.HasDouble {
		for i := range l.Args {
			if l.Args[i].Data.Type == core.Float64 {
				return nil, fmt.Errorf("%s: argument %d is float64 but OpenCL device %q has no double precision", l.Name(), i, b.ctx.Device.Name)
			}
		}
	}
	lay, err := devrt.Analyse(device.OpenCL, l, b.ctx.Device.LocalMem, opts)
	if err != nil {
		return nil, err
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
	release := func() {
		k.Release()
		b.releaseProgram(progKey)
	}
	// The kernel may need more resources per work item than the device
	// has for a work group of the size it was generated for (a driver
	// that reports 0 is taken not to know).
	if max, err := b.ctx.WorkGroupSize(k); err != nil || max > 0 && max < lay.WorkGroupSize() {
		release()
		if err == nil {
			err = device.CheckWorkGroupLimit(lay.WorkGroupSize(), max, fmt.Sprintf("the kernel on %s", b.drv.Describe()))
		}
		return nil, fmt.Errorf("%s: %w", l.Name(), err)
	}
	return devrt.NewProgram(b.drv, b, l, lay, src, k, release)
}

// driver adapts an OpenCL context to the shared device layer.
type driver struct {
	devrt.Buffers[*cl.Buffer]
	ctx  *cl.Context
	last []devrt.Arg // the arguments the last launched kernel holds
	k    *cl.Kernel
	rows devrt.Rows
}

// Rows moves halo rows on the device (devrt.RowMover).
func (d *driver) Rows() *devrt.Rows { return &d.rows }

func newDriver(ctx *cl.Context) *driver {
	return &driver{Buffers: devrt.Buffers[*cl.Buffer]{Mem: ctx}, ctx: ctx}
}

func (d *driver) Backend() string  { return Name }
func (d *driver) Describe() string { return fmt.Sprintf("OpenCL device %q", d.ctx.Device.Name) }
func (d *driver) LocalMem() int    { return d.ctx.Device.LocalMem }

// Launch sets the arguments that differ from those the kernel already
// holds (OpenCL kernel arguments are state) and queues the kernel.
func (d *driver) Launch(kh devrt.Kernel, args []devrt.Arg, groups, local int) error {
	k := kh.(*cl.Kernel)
	if k != d.k {
		d.k, d.last = k, d.last[:0]
	}
	for i, a := range args {
		if i < len(d.last) && d.last[i] == a {
			continue
		}
		var err error
		switch a.Kind {
		case devrt.ArgBuffer:
			err = k.SetBuffer(i, a.Buf.(*cl.Buffer))
		case devrt.ArgInt:
			err = k.SetInt(i, a.Int)
		case devrt.ArgLocal:
			err = k.SetLocal(i, a.Int)
		}
		if err != nil {
			d.last = d.last[:0]
			return err
		}
	}
	d.last = append(d.last[:0], args...)
	return d.ctx.Launch(k, groups, local)
}

// recursive refuses a kernel whose functions call themselves, directly or
// through others: OpenCL C has no recursion (OpenCL C 1.2, 6.9).
func recursive(l *core.Loop) error {
	info := l.Kernel.Info
	if info == nil {
		return nil
	}
	m, err := cfront.Model(info)
	if err != nil {
		return nil // the build says what is wrong
	}
	skipped, err := m.Skipped(device.OpenCL.Predefined) // the groups the device compiler skips
	if err != nil {
		return nil // the build says what is wrong
	}
	if c := m.Recursion(skipped); c != nil {
		return fmt.Errorf("the kernel's source is recursive (%s): OpenCL C does not allow recursion; write it as a loop, or run the loop on a host backend (sequential, openmp) or on cuda", strings.Join(c, " calls "))
	}
	return nil
}

// undeclaredRE finds the functions a build log says are not declared.
var undeclaredRE = regexp.MustCompile(`(?:implicit declaration of function|undeclared function|use of undeclared identifier) '([A-Za-z_][A-Za-z0-9_]*)'`)

// missingFunctionsHint explains a build that failed because the kernel
// calls functions OpenCL C does not have (C library functions such as j0
// or drand48; math.h's float forms, nearbyint, lround, labs and their
// kin are mapped onto OpenCL C's built-ins, device.OpenCL.Library), and
// returns them; or it returns "" and none.
func missingFunctionsHint(l *core.Loop, log string) (string, []string) {
	info := l.Kernel.Info
	if info == nil {
		return "", nil
	}
	model, err := cfront.Model(info)
	if err != nil {
		return "", nil
	}
	var names []string
	seen := map[string]bool{}
	for _, m := range undeclaredRE.FindAllStringSubmatch(log, -1) {
		name := m[1]
		if seen[name] || strings.HasPrefix(name, "op2_") || !info.Idents[name] || info.TopLevel[name] || !model.Called[name] {
			continue
		}
		seen[name] = true
		names = append(names, name)
	}
	switch len(names) {
	case 0:
		return "", nil
	case 1:
		return fmt.Sprintf("the kernel calls %s, which is not available in OpenCL C (OpenCL has its own built-in functions instead of the C library); define %s in the kernel source or run the loop on a host backend (sequential, openmp)", names[0], names[0]), names
	}
	return fmt.Sprintf("the kernel calls %s, which are not available in OpenCL C (OpenCL has its own built-in functions instead of the C library); define them in the kernel source or run the loop on a host backend (sequential, openmp)", strings.Join(names, ", ")), names
}
