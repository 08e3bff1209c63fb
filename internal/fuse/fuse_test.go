package fuse

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/core"
)

// mesh is a small mesh of core objects for building loops by hand.
type mesh struct {
	cells, nodes *core.Set
	pcell        *core.Map
	q, qold, adt *core.Storage // on cells
	x            *core.Storage // on nodes
	rms, g       *core.Storage // Globals
}

func newMesh() *mesh {
	cells := &core.Set{Name: "cells", Core: 2, Owned: 2, Exec: 2, Total: 2, ID: core.NewID()}
	nodes := &core.Set{Name: "nodes", Core: 3, Owned: 3, Exec: 3, Total: 3, ID: core.NewID()}
	dat := func(name string, s *core.Set, dim int) *core.Storage {
		return &core.Storage{Name: name, Type: core.Float64, Dim: dim, Set: s, ID: core.NewID()}
	}
	return &mesh{
		cells: cells, nodes: nodes,
		pcell: &core.Map{Name: "pcell", From: cells, To: nodes, Arity: 2, Table: []int32{0, 1, 1, 2}, ID: core.NewID()},
		q:     dat("q", cells, 4), qold: dat("qold", cells, 4), adt: dat("adt", cells, 1), x: dat("x", nodes, 2),
		rms: dat("rms", nil, 1), g: dat("g", nil, 1),
	}
}

func kernel(t *testing.T, name, src string) *core.Kernel {
	t.Helper()
	info, err := cfront.ParseKernel(src, name)
	if err != nil {
		t.Fatal(err)
	}
	return &core.Kernel{Name: name, Source: info.Source, Info: info, ID: core.NewID(), Sum: core.KernelSum(name, info.Source, false)}
}

func direct(s *core.Storage, acc core.Access) core.Arg {
	return core.Arg{Data: s, Access: acc, Kind: core.ArgDirect}
}

func through(s *core.Storage, m *core.Map, idx int, acc core.Access) core.Arg {
	return core.Arg{Data: s, Map: m, Idx: idx, Access: acc, Kind: core.ArgIndirect}
}

func global(s *core.Storage, acc core.Access) core.Arg {
	return core.Arg{Data: s, Access: acc, Kind: core.ArgGlobal}
}

const (
	updateSrc = `
void update(const double *qold, double *q, double *res, const double *adt, double *rms) {
  double adti = 1.0 / (*adt);
  for (int n = 0; n < 4; n++) { double del = adti * res[n]; q[n] = qold[n] - del; *rms += del * del; }
}`
	adtSrc = `
#define SQ(a) ((a) * (a))
static double len2(const double *a, const double *b) { return sqrt(SQ(a[0] - b[0]) + SQ(a[1] - b[1])); }
void adt_calc(const double *x1, const double *x2, const double *q, double *adt) {
  double ri = 1.0 / q[0];
  *adt = ri * q[1] * len2(x1, x2);
}`
	saveSrc = `void save_soln(const double *q, double *qold) { for (int n = 0; n < 4; n++) qold[n] = q[n]; }`
)

// TestCheck: which loops fuse after which.
func TestCheck(t *testing.T) {
	m := newMesh()
	res := &core.Storage{Name: "res", Type: core.Float64, Dim: 4, Set: m.cells, ID: core.NewID()}
	upd := &core.Loop{Kernel: kernel(t, "update", updateSrc), Set: m.cells, Args: []core.Arg{
		direct(m.qold, core.Read), direct(m.q, core.Write), direct(res, core.RW), direct(m.adt, core.Read), global(m.rms, core.Inc)}}
	adt := &core.Loop{Kernel: kernel(t, "adt_calc", adtSrc), Set: m.cells, Args: []core.Arg{
		through(m.x, m.pcell, 0, core.Read), through(m.x, m.pcell, 1, core.Read), direct(m.q, core.Read), direct(m.adt, core.Write)}}
	save := &core.Loop{Kernel: kernel(t, "save_soln", saveSrc), Set: m.cells, Args: []core.Arg{direct(m.q, core.Read), direct(m.qold, core.Write)}}
	loop := func(k string, set *core.Set, args ...core.Arg) *core.Loop {
		src := "void " + k + "(" + strings.Repeat("double *a, ", len(args)-1) + "double *z) { }"
		src = strings.Replace(src, "double *a, ", "double *a0, ", 1)
		for i := 1; i < len(args)-1; i++ {
			src = strings.Replace(src, "double *a, ", "double *a"+string(rune('0'+i))+", ", 1)
		}
		return &core.Loop{Kernel: kernel(t, k, src), Set: set, Args: args}
	}
	for _, c := range []struct {
		name  string
		group []*core.Loop
		next  *core.Loop
		ok    bool
	}{
		{"update then adt_calc: q and adt directly", []*core.Loop{upd}, adt, true},
		{"update, save_soln then adt_calc", []*core.Loop{upd, save}, adt, true},
		{"save_soln then adt_calc: q read by both", []*core.Loop{save}, adt, true},
		{"another set", []*core.Loop{upd}, loop("k", m.nodes, direct(m.x, core.RW), direct(m.x, core.Read)), false},
		{"reads through a map what the group wrote", []*core.Loop{upd}, loop("k", m.cells, through(m.x, m.pcell, 0, core.Read), direct(m.adt, core.Read)), true},
		{"writes directly what the group read through a map", []*core.Loop{adt}, loop("k", m.nodes, direct(m.x, core.Write), direct(m.g, core.Read)), false},
		{"modifies through a map what the group reads", []*core.Loop{adt}, loop("k", m.cells, through(m.x, m.pcell, 0, core.Inc), direct(m.q, core.Read)), false},
		{"reads a Global the group reduces", []*core.Loop{upd}, loop("k", m.cells, global(m.rms, core.Read), direct(m.q, core.Read)), false},
		{"reduces a Global the group reduces", []*core.Loop{upd}, loop("k", m.cells, global(m.rms, core.Inc), direct(m.q, core.Read)), false},
		{"reads a Global the group reads", []*core.Loop{adt}, loop("k", m.cells, global(m.g, core.Read), direct(m.q, core.Read)), true},
		{"views of two components", []*core.Loop{loop("k", m.cells, core.Arg{Data: m.q, Access: core.RW, Kind: core.ArgDirect, View: true, Comp: 1}, direct(m.adt, core.Read))},
			loop("k2", m.cells, core.Arg{Data: m.q, Access: core.RW, Kind: core.ArgDirect, View: true, Comp: 2}, direct(m.adt, core.Read)), true},
		{"a view and the whole Dat modified", []*core.Loop{loop("k", m.cells, core.Arg{Data: m.q, Access: core.RW, Kind: core.ArgDirect, View: true, Comp: 1}, direct(m.adt, core.Read))},
			loop("k2", m.cells, direct(m.q, core.Read), direct(m.adt, core.Read)), false},
	} {
		err := Check(c.group, c.next)
		if (err == nil) != c.ok || Fusable(c.group, c.next) != c.ok {
			t.Errorf("%s: Check = %v, want fusable %v", c.name, err, c.ok)
		}
	}
	for _, c := range []struct {
		name string
		l    *core.Loop
		ok   bool
	}{
		{"update", upd, true},
		{"check mode", &core.Loop{Kernel: upd.Kernel, Set: m.cells, Args: upd.Args, Check: true}, false},
		{"C++", &core.Loop{Kernel: &core.Kernel{Name: "k", Info: upd.Kernel.Info, CXX: true}, Set: m.cells, Args: upd.Args}, false},
		{"matrix", &core.Loop{Kernel: upd.Kernel, Set: m.cells, Args: []core.Arg{{Data: m.q, Kind: core.ArgMat, Access: core.Inc}}}, false},
	} {
		if err := Eligible(c.l); (err == nil) != c.ok || CanFuse(c.l) != c.ok {
			t.Errorf("%s: Eligible = %v, want %v", c.name, err, c.ok)
		}
	}
}

// TestFuse: the fused loop's arguments, accesses, constants and kernel.
func TestFuse(t *testing.T) {
	m := newMesh()
	res := &core.Storage{Name: "res", Type: core.Float64, Dim: 4, Set: m.cells, ID: core.NewID()}
	cfl := &core.Const{Name: "cfl"}
	eps := &core.Const{Name: "eps"}
	upd := &core.Loop{Kernel: kernel(t, "update", updateSrc), Set: m.cells, Consts: []*core.Const{eps}, Args: []core.Arg{
		direct(m.qold, core.Read), direct(m.q, core.Write), direct(res, core.RW), direct(m.adt, core.Read), global(m.rms, core.Inc)}}
	save := &core.Loop{Kernel: kernel(t, "save_soln", saveSrc), Set: m.cells, Args: []core.Arg{direct(m.q, core.Read), direct(m.qold, core.Write)}}
	adt := &core.Loop{Kernel: kernel(t, "adt_calc", adtSrc), Set: m.cells, Consts: []*core.Const{cfl, eps}, Args: []core.Arg{
		through(m.x, m.pcell, 0, core.Read), through(m.x, m.pcell, 1, core.Read), direct(m.q, core.Read), direct(m.adt, core.Write)}}
	var f Fuser
	var dst core.Loop
	if err := f.Fuse(&dst, []*core.Loop{upd, save, adt}); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		data *core.Storage
		acc  core.Access
	}{{m.qold, core.RW}, {m.q, core.Write}, {res, core.RW}, {m.adt, core.RW}, {m.rms, core.Inc}, {m.x, core.Read}, {m.x, core.Read}}
	if len(dst.Args) != len(want) {
		t.Fatalf("%d fused arguments, want %d", len(dst.Args), len(want))
	}
	for i, w := range want {
		if a := dst.Args[i]; a.Data != w.data || a.Access != w.acc {
			t.Errorf("argument %d: %s %s, want %s %s", i, a.Data.Name, a.Access, w.data.Name, w.acc)
		}
	}
	if len(dst.Consts) != 2 || dst.Consts[0] != cfl || dst.Consts[1] != eps {
		t.Errorf("constants %v, want cfl and eps", dst.Consts)
	}
	k := dst.Kernel
	if k.Name != "fused_update_save_soln_adt_calc" || len(k.Info.Params) != len(want) {
		t.Fatalf("kernel %s with %d parameters", k.Name, len(k.Info.Params))
	}
	src := k.Source
	for _, s := range []string{"static double len2", "#undef SQ", "1.0 / q_2[0]", "qold_2[n] = q_2[n]"} {
		if !strings.Contains(src, s) {
			t.Errorf("fused source lacks %q:\n%s", s, src)
		}
	}
	if strings.Count(src, "void update(") != 0 || strings.Count(src, "void adt_calc(") != 0 {
		t.Errorf("fused source keeps a fused kernel's definition:\n%s", src)
	}
	// The same loops again: the same kernel, nothing allocated.
	if err := f.Fuse(&dst, []*core.Loop{upd, save, adt}); err != nil || dst.Kernel != k {
		t.Fatalf("fusing again: %v, kernel %p (was %p)", err, dst.Kernel, k)
	}
	group := []*core.Loop{upd, save, adt}
	if n := testing.AllocsPerRun(100, func() {
		if !Fusable(group[:2], adt) || f.Fuse(&dst, group) != nil {
			t.Fatal("no longer fuses")
		}
	}); n != 0 {
		t.Errorf("fusing loops fused before allocates %v times", n)
	}
}

// TestFuseRefuses: kernels the fused kernel cannot combine.
func TestFuseRefuses(t *testing.T) {
	m := newMesh()
	second := &core.Loop{Kernel: kernel(t, "second", "void second(double *q) { q[0] += 1; }"), Set: m.cells, Args: []core.Arg{direct(m.q, core.RW)}}
	for _, c := range []struct{ name, src, want string }{
		{"early return", "void k(double *q) { if (q[0] > 0) return; q[0] = 1; }", "returns before the end"},
		{"goto", "void k(double *q) { goto end; end: q[0] = 1; }", "goto"},
		{"redeclared", "void k(double *q) { { double q = 1; (void)q; } }", "declares q"},
		{"redeclared pointer", "void k(double *q) { { double *q = 0; (void)q; } }", "declares q"},
		{"directive", "void k(double *q) {\n#if 1\n q[0] = 1;\n#endif\n}", "preprocessor directive"},
		{"uncertain macro", "#ifdef __FAST_MATH__\n#define SCALE 2\n#endif\nvoid k(double *q) { q[0] = SCALE; }", "cannot evaluate"},
	} {
		first := &core.Loop{Kernel: kernel(t, "k", c.src), Set: m.cells, Args: []core.Arg{direct(m.q, core.RW)}}
		var f Fuser
		var dst core.Loop
		err := f.Fuse(&dst, []*core.Loop{first, second})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Fuse = %v, want an error saying %q", c.name, err, c.want)
		}
	}
	// A return in the last kernel is its own end.
	last := &core.Loop{Kernel: kernel(t, "k", "void k(double *q) { if (q[0] > 0) return; q[0] = 1; }"), Set: m.cells, Args: []core.Arg{direct(m.q, core.RW)}}
	var f Fuser
	var dst core.Loop
	if err := f.Fuse(&dst, []*core.Loop{second, last}); err != nil {
		t.Errorf("a return in the last kernel: %v", err)
	}
}

// TestFuserKeepsBoundedKernels: a program fusing kernel after kernel (new
// sources each time) leaves the Fuser holding at most maxKernels.
func TestFuserKeepsBoundedKernels(t *testing.T) {
	m := newMesh()
	save := &core.Loop{Kernel: kernel(t, "save_soln", saveSrc), Set: m.cells, Args: []core.Arg{direct(m.q, core.Read), direct(m.qold, core.Write)}}
	var f Fuser
	var dst core.Loop
	for i := range maxKernels + 10 {
		src := "void scale(double *q) { for (int n = 0; n < 4; n++) q[n] *= " + strconv.Itoa(i+2) + ".0; }"
		scale := &core.Loop{Kernel: kernel(t, "scale", src), Set: m.cells, Args: []core.Arg{direct(m.q, core.RW)}}
		if err := f.Fuse(&dst, []*core.Loop{scale, save}); err != nil {
			t.Fatal(err)
		}
		if len(f.kernels) > maxKernels {
			t.Fatalf("after %d fusions of new kernels the Fuser keeps %d, more than %d", i+1, len(f.kernels), maxKernels)
		}
	}
}
