package devrt

import (
	"crypto/md5"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// mockBuf is device memory of the mock driver: Go memory.
type mockBuf struct{ data []byte }

// launch is one recorded kernel launch.
type launch struct {
	args          []Arg
	groups, local int
}

// mockDriver keeps device memory in Go and records launches; run, if set,
// plays the kernel (for example by writing partial results).
type mockDriver struct {
	localMem int
	allocs   int
	frees    atomic.Int64 // Free runs in the runtime's cleanup goroutines too
	writes   map[*mockBuf]int
	launches []launch
	failRead bool
	reads    int // Read and ReadAt calls
	run      func(args []Arg, groups int)
}

func newMock(localMem int) *mockDriver {
	return &mockDriver{localMem: localMem, writes: map[*mockBuf]int{}}
}

func (d *mockDriver) Backend() string  { return "mock" }
func (d *mockDriver) Describe() string { return `mock device "tiny"` }
func (d *mockDriver) LocalMem() int    { return d.localMem }
func (d *mockDriver) Alloc(n int) (Buffer, error) {
	d.allocs++
	return &mockBuf{data: make([]byte, n)}, nil
}
func (d *mockDriver) Free(Buffer) { d.frees.Add(1) }
func (d *mockDriver) Write(b Buffer, src unsafe.Pointer, n int) error {
	mb := b.(*mockBuf)
	d.writes[mb]++
	copy(mb.data, unsafe.Slice((*byte)(src), n))
	return nil
}
func (d *mockDriver) Read(b Buffer, dst unsafe.Pointer, n int) error {
	d.reads++
	if d.failRead {
		return errors.New("read failed")
	}
	copy(unsafe.Slice((*byte)(dst), n), b.(*mockBuf).data)
	return nil
}
func (d *mockDriver) Zero(b Buffer, n int) error { clear(b.(*mockBuf).data[:n]); return nil }
func (d *mockDriver) ReadAt(b Buffer, off int, dst unsafe.Pointer, n int) error {
	d.reads++
	if d.failRead {
		return errors.New("read failed")
	}
	copy(unsafe.Slice((*byte)(dst), n), b.(*mockBuf).data[off:])
	return nil
}
func (d *mockDriver) WriteAt(b Buffer, off int, src unsafe.Pointer, n int) error {
	mb := b.(*mockBuf)
	d.writes[mb]++
	copy(mb.data[off:off+n], unsafe.Slice((*byte)(src), n))
	return nil
}
func (d *mockDriver) Copy(dst, src Buffer, n int) error {
	copy(dst.(*mockBuf).data[:n], src.(*mockBuf).data)
	return nil
}
func (d *mockDriver) Launch(_ Kernel, args []Arg, groups, local int) error {
	d.launches = append(d.launches, launch{args: append([]Arg(nil), args...), groups: groups, local: local})
	if d.run != nil {
		d.run(args, groups)
	}
	return nil
}

// fixture is a small mesh of core objects with pinned host data.
type fixture struct {
	edges, nodes *core.Set
	m            *core.Map
	pin          runtime.Pinner
}

func newFixture(t *testing.T, nEdges, nNodes int) *fixture {
	f := &fixture{}
	f.edges = &core.Set{Name: "edges", Core: nEdges, Owned: nEdges, Exec: nEdges, Total: nEdges, ID: core.NewID()}
	f.nodes = &core.Set{Name: "nodes", Core: nNodes, Owned: nNodes, Exec: nNodes, Total: nNodes, ID: core.NewID()}
	tab := make([]int32, 2*nEdges)
	for e := 0; e < nEdges; e++ {
		tab[2*e], tab[2*e+1] = int32(e%nNodes), int32((e+1)%nNodes)
	}
	f.pin.Pin(&tab[0])
	f.m = &core.Map{Name: "pedge", From: f.edges, To: f.nodes, Arity: 2, Table: tab, ID: core.NewID()}
	t.Cleanup(f.pin.Unpin)
	return f
}

func (f *fixture) dat(name string, set *core.Set, dim int, vals []float64) *core.Storage {
	if len(vals) > 0 {
		f.pin.Pin(&vals[0])
	}
	s := &core.Storage{Name: name, Type: core.Float64, Dim: dim, Set: set, Len: len(vals), ID: core.NewID()}
	if len(vals) > 0 {
		s.Host = unsafe.Pointer(&vals[0])
	}
	return s
}

func loopOf(t *testing.T, src, name string, set *core.Set, consts []*core.Const, args ...core.Arg) *core.Loop {
	t.Helper()
	info, err := cfront.ParseKernel(src, name)
	if err != nil {
		t.Fatal(err)
	}
	l := &core.Loop{Kernel: &core.Kernel{Name: name, Source: src, Info: info, ID: core.NewID(), Sum: md5.Sum([]byte(src))},
		Set: set, Args: args, Consts: consts}
	l.Sig = core.Analyse(l)
	return l
}

func program(t *testing.T, d *mockDriver, l *core.Loop) *Program {
	t.Helper()
	return programWith(t, d, l, device.Options{})
}

// programWith is program with the generator's options.
func programWith(t *testing.T, d *mockDriver, l *core.Loop, opts device.Options) *Program {
	t.Helper()
	return programIn(t, d, l, device.OpenCL, opts)
}

// programIn is programWith in dialect dia.
func programIn(t *testing.T, d *mockDriver, l *core.Loop, dia *device.Dialect, opts device.Options) *Program {
	t.Helper()
	lay, err := device.AnalyseWith(dia, l, d.localMem, opts)
	if err != nil {
		t.Fatal(err)
	}
	src, err := device.Generate(l, lay)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProgram(d, d, l, lay, src, "kernel", nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDirectLoopOnMockDevice: a direct loop with a reduction uploads its
// data (not the Global it only increments), passes the range, the data and the reduction buffers in the
// generator's order, and folds the partial results of every work group
// into the Global, also over two launches (core, then the rest): the
// last launch's when the Global is read.
func TestDirectLoopOnMockDevice(t *testing.T) {
	const n = 1000
	f := newFixture(t, n, 2)
	x := f.dat("x", f.edges, 1, make([]float64, n))
	g := f.dat("g", nil, 1, []float64{5})
	l := loopOf(t, "void k(double *x, double *g) { *x += 1; *g += *x; }", "k", f.edges, nil,
		core.Arg{Data: x, Access: core.RW, Kind: core.ArgDirect}, core.Arg{Data: g, Access: core.Inc, Kind: core.ArgGlobal})
	d := newMock(32 << 10)
	// Each work group contributes 1 to the Global.
	d.run = func(args []Arg, groups int) {
		red := args[4].Buf.(*mockBuf).data[8*args[5].Int:] // the call's slots
		for gi := 0; gi < groups; gi++ {
			*(*float64)(unsafe.Pointer(&red[8*gi])) = 1
		}
	}
	p := program(t, d, l)
	if p.PlanNeeds() != nil {
		t.Fatal("a direct loop asks for a plan")
	}
	if err := p.Bind(l, nil); err != nil {
		t.Fatal(err)
	}
	// The Global is only incremented: its device copy is allocated for
	// the kernel's argument, not filled (the partial results start from
	// zero), so the host keeps the current value.
	if x.State != core.StateDevice || g.State != core.StateHost || g.Dev == nil {
		t.Errorf("after Bind x is %v and g %v (device copy %v), want DEVICE and HOST with a device copy", x.State, g.State, g.Dev != nil)
	}
	for _, r := range []exec.Range{{First: 0, Last: 600}, {First: 600, Last: n}} {
		if err := p.Launch(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Finish(l); err != nil {
		t.Fatal(err)
	}
	if len(d.launches) != 2 {
		t.Fatalf("%d launches, want 2", len(d.launches))
	}
	for i, want := range [][2]int{{0, 600}, {600, n}} {
		a := d.launches[i].args
		if a[0].Int != want[0] || a[1].Int != want[1] || a[2].Kind != ArgBuffer || a[3].Kind != ArgBuffer || a[4].Kind != ArgBuffer || a[5].Kind != ArgInt || a[6].Kind != ArgLocal {
			t.Errorf("launch %d: arguments %+v", i, a)
		}
	}
	// The first launch's partial results were folded before the second
	// overwrote them; the second's wait on the device until g is read.
	first := d.launches[0].groups
	if got := *(*float64)(g.Host); got != 5+float64(first) {
		t.Errorf("after Finish g = %v, want 5 + %d (the first launch's partial results)", got, first)
	}
	if err := g.HostAccess(false); err != nil {
		t.Fatal(err)
	}
	groups := first + d.launches[1].groups
	if got := *(*float64)(g.Host); got != 5+float64(groups) {
		t.Errorf("g = %v, want 5 + %d partial results", got, groups)
	}
	d.failRead = true
	if err := p.Bind(l, nil); err != nil {
		t.Fatal(err)
	}
	_ = p.Launch(exec.Range{First: 0, Last: n})
	if err := p.Finish(l); err != nil {
		t.Fatal(err)
	}
	if err := g.HostAccess(false); err == nil || !strings.Contains(err.Error(), "partial results") || !strings.Contains(err.Error(), `"k"`) {
		t.Errorf("a failed read of partial results gave %v", err)
	}
}

// TestIndirectLoopOnMockDevice: an indirect loop's plan is uploaded once
// and reused, each colour is one launch with that colour's block offset and
// block count, and constants are written only when they change.
func TestIndirectLoopOnMockDevice(t *testing.T) {
	f := newFixture(t, 3000, 500)
	w := f.dat("w", f.edges, 1, make([]float64, 3000))
	r := f.dat("r", f.nodes, 1, make([]float64, 500))
	gain := &core.Const{Name: "gain", Type: core.Float64, Dim: 1, ID: core.NewID()}
	gv := []float64{2}
	f.pin.Pin(&gv[0])
	gain.Host = unsafe.Pointer(&gv[0])
	gain.Version.Store(1)
	l := loopOf(t, "void k(const double *w, double *a, double *b) { *a += gain * *w; *b += *w; }", "k", f.edges, []*core.Const{gain},
		core.Arg{Data: w, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: r, Map: f.m, Idx: 0, Access: core.Inc, Kind: core.ArgIndirect},
		core.Arg{Data: r, Map: f.m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect})
	d := newMock(32 << 10)
	p := program(t, d, l)
	needs := p.PlanNeeds()
	if needs == nil {
		t.Fatal("an indirect loop asks for no plan")
	}
	built, err := exec.ChoosePlan(l, needs, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	pl := &exec.Plan{Plan: built}
	for run := 0; run < 2; run++ {
		allocs := d.allocs
		if err := p.Bind(l, pl); err != nil {
			t.Fatal(err)
		}
		if run == 1 && d.allocs != allocs {
			t.Errorf("the second loop allocated %d buffers: the plan must be uploaded once", d.allocs-allocs)
		}
		before := len(d.launches)
		if err := p.Launch(exec.Range{First: 0, Last: built.NColors, Colours: true}); err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(l); err != nil {
			t.Fatal(err)
		}
		got := d.launches[before:]
		if len(got) != built.NColors {
			t.Fatalf("%d launches for %d colours", len(got), built.NColors)
		}
		for c, ln := range got {
			if ln.groups != int(built.NColBlk[c]) || ln.args[p.blockOffsetArg].Int != int(built.ColOffset[c]) {
				t.Errorf("colour %d: %d groups at block offset %d, want %d at %d", c, ln.groups, ln.args[p.blockOffsetArg].Int, built.NColBlk[c], built.ColOffset[c])
			}
		}
	}
	if n := d.writes[p.consts.(*mockBuf)]; n != 1 {
		t.Errorf("an unchanged constant was written %d times", n)
	}
	gain.Version.Add(1)
	if err := p.Bind(l, pl); err != nil {
		t.Fatal(err)
	}
	_ = p.Finish(l)
	if n := d.writes[p.consts.(*mockBuf)]; n != 2 {
		t.Errorf("a changed constant: %d writes in all, want 2", n)
	}
	frees := d.frees.Load()
	pl.Device.Release()
	if d.frees.Load() == frees {
		t.Error("releasing the plan freed no device memory")
	}
}

// TestWrittenConstantBufferRestored: where a kernel could write the
// constant buffer (a constant too large for a private copy, in CUDA's one
// address space), each launch starts from the declared values, copied on
// the device from a pristine buffer; in OpenCL C (where such a write does
// not build) the buffer is written once.
func TestWrittenConstantBufferRestored(t *testing.T) {
	for _, c := range []struct {
		d        *device.Dialect
		restores bool
	}{{device.CUDA, true}, {device.OpenCL, false}} {
		t.Run(c.d.Name, func(t *testing.T) {
			f := newFixture(t, 100, 2)
			y := f.dat("y", f.edges, 1, make([]float64, 100))
			tab := &core.Const{Name: "tab", Type: core.Int32, Dim: 300, ID: core.NewID()}
			vals := make([]int32, 300)
			for i := range vals {
				vals[i] = int32(i)
			}
			f.pin.Pin(&vals[0])
			tab.Host = unsafe.Pointer(&vals[0])
			tab.Version.Store(1)
			l := loopOf(t, "void k(double *y) { *y = tab[7]; }", "k", f.edges, []*core.Const{tab},
				core.Arg{Data: y, Access: core.Write, Kind: core.ArgDirect})
			d := newMock(32 << 10)
			p := programIn(t, d, l, c.d, device.Options{})
			if p.lay.ConstsWritable() != c.restores {
				t.Fatalf("ConstsWritable() = %v, want %v", p.lay.ConstsWritable(), c.restores)
			}
			var seen []int32 // tab[7] as each launch found it
			d.run = func(args []Arg, groups int) {
				buf := args[3].Buf.(*mockBuf).data
				at := (*int32)(unsafe.Pointer(&buf[4*7]))
				seen = append(seen, *at)
				*at = -1000 // the kernel writes through a cast
			}
			for range 3 {
				if err := p.Bind(l, nil); err != nil {
					t.Fatal(err)
				}
				if err := p.Launch(exec.Range{First: 0, Last: 100}); err != nil {
					t.Fatal(err)
				}
				if err := p.Finish(l); err != nil {
					t.Fatal(err)
				}
			}
			want := []int32{7, 7, 7}
			if !c.restores {
				want = []int32{7, -1000, -1000} // the mock lets the write through
			}
			if !slices.Equal(seen, want) {
				t.Errorf("tab[7] at each launch: %v, want %v", seen, want)
			}
			if n := d.writes[p.consts.(*mockBuf)]; n != 1 {
				t.Errorf("the unchanged constants were written %d times, want once", n)
			}
		})
	}
}

// TestPlanThatCannotFitIsRefused: when one element's staged data exceeds
// the device's local memory, the loop is refused with an error naming the
// dats, the limit and the device.
func TestPlanThatCannotFitIsRefused(t *testing.T) {
	f := newFixture(t, 2, 200)
	tab := make([]int32, 200)
	for i := range tab {
		tab[i] = int32(i)
	}
	f.pin.Pin(&tab[0])
	wide := &core.Map{Name: "wide", From: f.edges, To: f.nodes, Arity: 100, Table: tab, ID: core.NewID()}
	x := f.dat("x", f.nodes, 4, make([]float64, 800))
	l := loopOf(t, "void k(double **x) { }", "k", f.edges, nil, core.Arg{Data: x, Map: wide, Idx: -1, Access: core.Read, Kind: core.ArgVector})
	d := newMock(4096)
	p := program(t, d, l)
	_, err := exec.ChoosePlan(l, p.PlanNeeds(), 0, true)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"does not fit", `dat "x" (float64, dim 4)`, "4096 bytes", `"tiny"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

// TestWorkGroupSizeOnMockDevice: a program generated for a work-group
// size launches with it, sizes its direct launches and reduction scratch
// by it and leaves the rest of local memory to staging; a plan chosen for
// a smaller work group whose staged data does not fit a larger one's
// budget is refused.
func TestWorkGroupSizeOnMockDevice(t *testing.T) {
	const n, localMem = 1000, 12 << 10
	for _, c := range []struct{ opt, want int }{{0, device.DefaultWorkGroupSize}, {32, 32}, {256, 256}, {1024, 1024}} {
		f := newFixture(t, n, 300)
		x := f.dat("x", f.edges, 1, make([]float64, n))
		r := f.dat("r", f.nodes, 4, make([]float64, 4*300))
		g := f.dat("g", nil, 1, []float64{0})
		d := newMock(localMem)
		opts := device.Options{WorkGroupSize: c.opt}

		direct := loopOf(t, "void k(double *x, double *g) { *g += *x; }", "k", f.edges, nil,
			core.Arg{Data: x, Access: core.Read, Kind: core.ArgDirect}, core.Arg{Data: g, Access: core.Inc, Kind: core.ArgGlobal})
		p := programWith(t, d, direct, opts)
		if err := p.Bind(direct, nil); err != nil {
			t.Fatal(err)
		}
		if err := p.Launch(exec.Range{First: 0, Last: n}); err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(direct); err != nil {
			t.Fatal(err)
		}
		ln := d.launches[len(d.launches)-1]
		if ln.local != c.want || ln.groups != (n+c.want-1)/c.want {
			t.Errorf("size %d: direct launch of %d groups of %d, want %d of %d", c.opt, ln.groups, ln.local, (n+c.want-1)/c.want, c.want)
		}
		if scratch := ln.args[len(ln.args)-1]; scratch.Kind != ArgLocal || scratch.Int != 8*c.want {
			t.Errorf("size %d: reduction scratch %+v, want %d bytes", c.opt, scratch, 8*c.want)
		}

		indirect := loopOf(t, "void k(double *a, double *b, double *g) { a[0] += 1; b[3] += 1; *g += 1; }", "k", f.edges, nil,
			core.Arg{Data: r, Map: f.m, Idx: 0, Access: core.Inc, Kind: core.ArgIndirect},
			core.Arg{Data: r, Map: f.m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect},
			core.Arg{Data: g, Access: core.Inc, Kind: core.ArgGlobal})
		p = programWith(t, d, indirect, opts)
		if want := localMem - 8*c.want - 1024; p.PlanNeeds().SharedBudget != want {
			t.Errorf("size %d: staging budget %d, want %d", c.opt, p.PlanNeeds().SharedBudget, want)
		}
		// A plan chosen for a work group of 32, whose blocks stage more
		// than this program's budget.
		small := programWith(t, d, indirect, device.Options{WorkGroupSize: 32})
		built, err := exec.ChoosePlan(indirect, small.PlanNeeds(), 0, true)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Bind(indirect, &exec.Plan{Plan: built})
		if fits := built.NShared <= p.PlanNeeds().SharedBudget; fits != (err == nil) {
			t.Fatalf("size %d: a plan staging %d bytes against a budget of %d: %v", c.opt, built.NShared, p.PlanNeeds().SharedBudget, err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "another program") {
				t.Errorf("size %d: %v", c.opt, err)
			}
			continue
		}
		if c.want == 1024 {
			t.Fatalf("size 1024: a plan staging %d bytes fit the budget of %d; the test needs one that does not", built.NShared, p.PlanNeeds().SharedBudget)
		}
		if err := p.Launch(exec.Range{First: 0, Last: built.NColors, Colours: true}); err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(indirect); err != nil {
			t.Fatal(err)
		}
		if ln := d.launches[len(d.launches)-1]; ln.local != c.want {
			t.Errorf("size %d: indirect launch with work groups of %d", c.opt, ln.local)
		}
	}
}
