package opencl

import (
	"crypto/md5"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/testreq"
)

// openBackend opens the opencl backend with cfg's device settings, or
// skips where no OpenCL device can be opened (fails instead where
// OP2_REQUIRE names opencl).
func openBackend(t *testing.T, cfg exec.Config) *backend {
	t.Helper()
	cfg.CacheDir = t.TempDir()
	b, err := open(&cfg)
	testreq.Check(t, "opencl", err, core.ErrBackendUnavailable)
	return b.(*backend)
}

// meshLoops are an indirect increment loop and a direct loop with a sum
// reduction over n edges and n/2 nodes, with pinned host data.
type meshLoops struct {
	inc, sum *core.Loop
	acc      []float64 // the increment loop's target, on the nodes
	total    []float64 // the sum's Global
	// wantAcc and wantTotal are the results of one run of each loop.
	wantAcc   []float64
	wantTotal float64
	pin       runtime.Pinner
}

func newMeshLoops(t *testing.T, n int) *meshLoops {
	ml := &meshLoops{}
	t.Cleanup(ml.pin.Unpin)
	edges := &core.Set{Name: "edges", Core: n, Owned: n, Exec: n, Total: n, ID: core.NewID()}
	nodes := &core.Set{Name: "nodes", Core: n / 2, Owned: n / 2, Exec: n / 2, Total: n / 2, ID: core.NewID()}
	tab := make([]int32, 2*n)
	for i := range tab {
		tab[i] = int32((i*37 + i%3) % (n / 2))
	}
	ml.pin.Pin(&tab[0])
	m := &core.Map{Name: "pedge", From: edges, To: nodes, Arity: 2, Table: tab, ID: core.NewID()}
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(i % 7)
	}
	ml.acc = make([]float64, n/2)
	ml.total = []float64{0}
	dat := func(name string, set *core.Set, v []float64) *core.Storage {
		ml.pin.Pin(&v[0])
		return &core.Storage{Name: name, Type: core.Float64, Dim: 1, Set: set, Len: len(v), ID: core.NewID(), Host: unsafe.Pointer(&v[0])}
	}
	ws, as, gs := dat("w", edges, w), dat("acc", nodes, ml.acc), dat("total", nil, ml.total)
	loop := func(src, name string, args ...core.Arg) *core.Loop {
		info, err := cfront.ParseKernel(src, name)
		if err != nil {
			t.Fatal(err)
		}
		l := &core.Loop{Kernel: &core.Kernel{Name: name, Source: src, Info: info, ID: core.NewID(), Sum: md5.Sum([]byte(src))}, Set: edges, Args: args}
		l.Sig = core.Analyse(l)
		return l
	}
	ml.inc = loop("void spread(const double *w, double *a, double *b) { *a += *w; *b += 2 * *w; }", "spread",
		core.Arg{Data: ws, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: as, Map: m, Idx: 0, Access: core.Inc, Kind: core.ArgIndirect},
		core.Arg{Data: as, Map: m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect})
	ml.sum = loop("void add(const double *w, double *g) { *g += *w; }", "add",
		core.Arg{Data: ws, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: gs, Access: core.Inc, Kind: core.ArgGlobal})
	// The results: sums of small integers, exact in any order.
	want := make([]float64, n/2)
	total := 0.0
	for e := 0; e < n; e++ {
		want[tab[2*e]] += w[e]
		want[tab[2*e+1]] += 2 * w[e]
		total += w[e]
	}
	ml.wantAcc, ml.wantTotal = want, total
	return ml
}

// run runs l's program p once, as the executor does, and brings the
// results to the host.
func run(t *testing.T, b *backend, p exec.Program, l *core.Loop) {
	t.Helper()
	var pl *exec.Plan
	r := exec.Range{First: 0, Last: l.Set.Total}
	if needs := p.PlanNeeds(); needs != nil {
		built, err := exec.ChoosePlan(l, needs, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		pl = &exec.Plan{Plan: built}
		defer func() {
			if pl.Device != nil {
				pl.Device.Release()
			}
		}()
		r = exec.Range{First: 0, Last: built.NColors, Colours: true}
	}
	if err := p.Bind(l, pl); err != nil {
		t.Fatal(err)
	}
	if err := p.Launch(r); err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(l); err != nil {
		t.Fatal(err)
	}
	for i := range l.Args {
		if err := l.Args[i].Data.HostAccess(true); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBuildWith: BuildWith builds a loop's program with a scheme and a
// work-group size in place of the configured ones (Build uses the
// configured ones), each source has its size in the kernel head, and
// every program gives the exact results; a bad size or scheme is refused.
func TestBuildWith(t *testing.T) {
	b := openBackend(t, exec.Config{DeviceWorkGroupSize: 128})
	ml := newMeshLoops(t, 5000)
	for _, c := range []struct {
		scheme string
		wg     int
		want   int    // size in the source
		atomic bool   // atomic additions in the increment loop's source
		build  string // "Build" or "BuildWith"
	}{
		{"", 0, 128, false, "Build"},
		{"", 0, 128, false, "BuildWith"},
		{"", 32, 32, false, "BuildWith"},
		{"staged", 256, 256, false, "BuildWith"},
		{"atomics", 0, 128, true, "BuildWith"},
		{"atomics", 1024, 1024, true, "BuildWith"},
	} {
		name := fmt.Sprintf("%s(%q, %d)", c.build, c.scheme, c.wg)
		for _, l := range []*core.Loop{ml.inc, ml.sum} {
			for _, s := range l.Args {
				if err := s.Data.HostAccess(true); err != nil {
					t.Fatal(err)
				}
			}
		}
		clear(ml.acc)
		ml.total[0] = 0
		for _, l := range []*core.Loop{ml.inc, ml.sum} {
			var p exec.Program
			var err error
			if c.build == "Build" {
				p, err = b.Build(l)
			} else {
				p, err = b.BuildWith(l, c.scheme, c.wg)
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			src := p.Source()
			if head := fmt.Sprintf("reqd_work_group_size(%d, 1, 1)", c.want); !strings.Contains(src, head) {
				t.Errorf("%s, %s: the source lacks %q", name, l.Kernel.Name, head)
			}
			if l == ml.inc && strings.Contains(src, "op2_atomic_add_double(") != c.atomic {
				t.Errorf("%s: atomic additions in the source: %v, want %v", name, !c.atomic, c.atomic)
			}
			run(t, b, p, l)
			p.(exec.Releaser).Release()
		}
		for i := range ml.acc {
			if ml.acc[i] != ml.wantAcc[i] {
				t.Fatalf("%s: node %d = %g, want %g", name, i, ml.acc[i], ml.wantAcc[i])
			}
		}
		if ml.total[0] != ml.wantTotal {
			t.Errorf("%s: sum %g, want %g", name, ml.total[0], ml.wantTotal)
		}
	}
	for _, c := range []struct {
		scheme string
		wg     int
		want   string
	}{
		{"", 48, "work-group size 48 is not allowed"},
		{"", 2048, "work-group size 2048 is not allowed"},
		{"", -32, "work-group size -32 is not allowed"},
		{"colourful", 0, `unknown device scheme "colourful"`},
	} {
		if _, err := b.BuildWith(ml.inc, c.scheme, c.wg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("BuildWith(%q, %d): %v; want %q", c.scheme, c.wg, err, c.want)
		}
	}
}

// TestWorkGroupSizeAboveDeviceLimit: a configured size the device does not
// allow is refused when the backend opens, naming the device's limit.
func TestWorkGroupSizeAboveDeviceLimit(t *testing.T) {
	b := openBackend(t, exec.Config{})
	dev := b.ctx.Device
	dev.MaxWorkGroup = 128 // a device that allows less than asked for
	err := checkWorkGroupSize(256, &dev)
	if err == nil || !strings.Contains(err.Error(), "the 128 work items per group OpenCL device") || !strings.Contains(err.Error(), "use 128 or less") {
		t.Errorf("size 256 on a device of 128: %v", err)
	}
	if err := checkWorkGroupSize(128, &dev); err != nil {
		t.Errorf("size 128 on a device of 128: %v", err)
	}
	if b.ctx.Device.MaxWorkGroup < device.MaxWorkGroupSize {
		if _, err := open(&exec.Config{CacheDir: t.TempDir(), DeviceWorkGroupSize: device.MaxWorkGroupSize}); err == nil {
			t.Errorf("size %d opened on a device of %d", device.MaxWorkGroupSize, b.ctx.Device.MaxWorkGroup)
		}
	}
}
