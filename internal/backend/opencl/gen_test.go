package opencl

import (
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/core"
)

// These tests check the generated OpenCL source without a device.

// testLoop builds a loop over 8 edges with a map of arity 2 onto 4 nodes.
type testLoop struct {
	edges, nodes *core.Set
	m            *core.Map
}

func newTestLoop() *testLoop {
	edges := &core.Set{Name: "edges", Core: 8, Owned: 8, Exec: 8, Total: 8, ID: core.NewID()}
	nodes := &core.Set{Name: "nodes", Core: 4, Owned: 4, Exec: 4, Total: 4, ID: core.NewID()}
	tab := make([]int32, 16)
	for i := range tab {
		tab[i] = int32(i % 4)
	}
	return &testLoop{edges, nodes, &core.Map{Name: "m", From: edges, To: nodes, Arity: 2, Table: tab, ID: core.NewID()}}
}

func (tl *testLoop) dat(name string, dim int, on *core.Set) *core.Storage {
	return &core.Storage{Name: name, Type: core.Float64, Dim: dim, Set: on, Len: dim * on.Total, ID: core.NewID()}
}

func global(name string, dim int) *core.Storage {
	return &core.Storage{Name: name, Type: core.Float64, Dim: dim, Len: dim, ID: core.NewID()}
}

func newConst(name string, vals ...float64) *core.Const {
	c := &core.Const{Name: name, Type: core.Float64, Dim: len(vals), Host: unsafe.Pointer(&vals[0]), ID: core.NewID()}
	c.Version.Store(1)
	return c
}

func loop(t *testing.T, src, name string, set *core.Set, consts []*core.Const, args ...core.Arg) *core.Loop {
	t.Helper()
	info, err := core.ParseKernel(src, name)
	if err != nil {
		t.Fatal(err)
	}
	return &core.Loop{Kernel: &core.Kernel{Name: name, Source: src, Info: info, ID: core.NewID()}, Set: set, Args: args, Consts: consts}
}

// gen generates the loop's source for a device with localMem bytes of
// local memory.
func gen(t *testing.T, l *core.Loop, localMem int) (string, *layout) {
	t.Helper()
	lay, err := analyse(l, localMem)
	if err != nil {
		t.Fatal(err)
	}
	src, err := generate(l, lay)
	if err != nil {
		t.Fatal(err)
	}
	return src, lay
}

// stub returns the generated code after the user's source and the #undefs.
func stub(src string) string {
	return src[strings.Index(src, "__kernel"):]
}

func TestDumpForReading(t *testing.T) {
	tl := newTestLoop()
	x := tl.dat("x", 2, tl.nodes)
	res := tl.dat("res", 2, tl.nodes)
	q := tl.dat("q", 3, tl.edges)
	g := global("g", 1)
	src := `#include <math.h>
#define k 3
static void add(double *a, const double *b) { a[0] += b[0] * eps; }
void kern(const double *x, double *res, double *q, double *g) {
  add(res, x); add(q, x); add(g, x); MIN(1, 2);
}`
	l := loop(t, src, "kern", tl.edges, []*core.Const{newConst("eps", 0.5)},
		core.Arg{Data: x, Map: tl.m, Idx: 0, Access: core.Read, Kind: core.ArgIndirect},
		core.Arg{Data: res, Map: tl.m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect},
		core.Arg{Data: q, Access: core.RW, Kind: core.ArgDirect},
		core.Arg{Data: g, Access: core.Inc, Kind: core.ArgGlobal})
	s, _ := gen(t, l, 48*1024)
	t.Log(s)
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
