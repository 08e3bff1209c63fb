package op2_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/nvrtc"
	"github.com/goop2/op2/internal/testreq"
)

// The kernels of these tests are written as MG-CFD writes its own: they
// declare a struct type named double3 (as a typedef, and as a struct tag
// used as struct double3), which OpenCL C and CUDA have built in, and
// helpers named like OpenCL C's built-in functions (dot, sign, clamp).
// The same kernels must run unchanged on every backend.

// builtinFluxSrc adds, through the edge map, the dot product of an edge's
// weight with the difference of its nodes' coordinates (and its sign, and
// each node's squared length).
const builtinFluxSrc = `typedef struct { double x, y, z; } double3;
static double3 load(const double *v) { double3 r = {v[0], v[1], v[2]}; return r; }
static double dot(double3 a, double3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static double sign(double v) { return v < 0 ? -1.0 : 1.0; }
/* double3 is ours here, as in MG-CFD's structures.h */
void builtin_flux(const double *xa, const double *xb, const double *w, double *fa, double *fb) {
  double3 a = load(xa), b = load(xb), s = load(w);
  double3 d = {b.x - a.x, b.y - a.y, b.z - a.z};
  double f = dot(d, s);
  fa[0] += f;
  fa[1] += sign(f);
  fa[2] += dot(a, a);
  fb[0] -= f;
  fb[1] -= sign(f);
  fb[2] += dot(b, b);
}`

// builtinMoveSrc moves a node by a quarter of its flux, each coordinate
// clamped to [-4, 4].
const builtinMoveSrc = `struct double3 { double x, y, z; };
static void clamp(struct double3 *v, double lo, double hi) {
  v->x = v->x < lo ? lo : v->x > hi ? hi : v->x;
  v->y = v->y < lo ? lo : v->y > hi ? hi : v->y;
  v->z = v->z < lo ? lo : v->z > hi ? hi : v->z;
}
void builtin_move(double *x, const double *f) {
  struct double3 v = {x[0] + 0.25 * f[0], x[1] + 0.25 * f[1], x[2] + 0.25 * f[2]};
  clamp(&v, -4.0, 4.0);
  x[0] = v.x;
  x[1] = v.y;
  x[2] = v.z;
}`

const (
	builtinNodes  = 40
	builtinEdges  = 90
	builtinCycles = 2
)

// builtinMesh is the mesh of the tests: edge e joins nodes 7e and 13e+5
// (mod the number of nodes); coordinates and weights are small dyadic
// numbers, so every sum is exact in any order.
func builtinMesh() (tab []int32, x, w []float64) {
	for e := 0; e < builtinEdges; e++ {
		tab = append(tab, int32(7*e%builtinNodes), int32((13*e+5)%builtinNodes))
		w = append(w, float64(e%3-1), 0.5*float64(e%4), float64(e%5-2))
	}
	for i := 0; i < builtinNodes; i++ {
		x = append(x, float64(i%5-2), 0.5*float64(i%3), float64(i%7-3))
	}
	return tab, x, w
}

// builtinWant computes in Go what the kernels compute: the coordinates,
// then the fluxes.
func builtinWant() []float64 {
	tab, x, w := builtinMesh()
	x = slices.Clone(x)
	f := make([]float64, 3*builtinNodes)
	dot := func(a, b []float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
	sign := func(v float64) float64 {
		if v < 0 {
			return -1
		}
		return 1
	}
	for range builtinCycles {
		for e := 0; e < builtinEdges; e++ {
			a, b := x[3*tab[2*e]:][:3], x[3*tab[2*e+1]:][:3]
			fa, fb := f[3*tab[2*e]:][:3], f[3*tab[2*e+1]:][:3]
			d := []float64{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
			v := dot(d, w[3*e:][:3])
			fa[0] += v
			fa[1] += sign(v)
			fa[2] += dot(a, a)
			fb[0] -= v
			fb[1] -= sign(v)
			fb[2] += dot(b, b)
		}
		for i := range x {
			x[i] = min(max(x[i]+0.25*f[i], -4), 4)
		}
	}
	return append(x, f...)
}

// runBuiltinNames declares the mesh (on rank 0 under MPI), partitions it,
// runs the kernels on each backend and returns, per backend, the
// coordinates and the fluxes gathered (on rank 0).
func runBuiltinNames(t *testing.T, backends []string) map[string][]float64 {
	t.Helper()
	n := func(total int) int {
		if op2.Rank() == 0 {
			return total
		}
		return 0
	}
	tab, x0, w0 := builtinMesh()
	nodes := must(op2.NewSet(n(builtinNodes), "nodes"))
	edges := must(op2.NewSet(n(builtinEdges), "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, tab[:2*n(builtinEdges)], "pedge"))
	x := must(op2.NewDat(nodes, 3, x0[:3*n(builtinNodes)], "x"))
	w := must(op2.NewDat(edges, 3, w0[:3*n(builtinEdges)], "w"))
	must(op2.Partition(op2.BlockPartitioner()))
	flux := op2.NewKernel(builtinFluxSrc, "builtin_flux")
	move := op2.NewKernel(builtinMoveSrc, "builtin_move")
	out := map[string][]float64{}
	defer op2.Use("sequential")
	for _, b := range backends {
		check(t, op2.Use(b))
		xb := must(op2.NewDat(nodes, 3, x.DataRO(), "x_"+b))
		f := must(op2.NewDat[float64](nodes, 3, nil, "f_"+b))
		for range builtinCycles {
			check(t, op2.ParLoop(flux, edges, xb.ArgMap(op2.Read, pedge, 0), xb.ArgMap(op2.Read, pedge, 1), w.Arg(op2.Read),
				f.ArgMap(op2.Inc, pedge, 0), f.ArgMap(op2.Inc, pedge, 1)))
			check(t, op2.ParLoop(move, nodes, xb.Arg(op2.RW), f.Arg(op2.Read)))
		}
		out[b] = append(must(xb.Gather()), must(f.Gather())...)
	}
	return out
}

// checkBuiltinNames compares each backend's results with the Go
// computation, exactly.
func checkBuiltinNames(t *testing.T, got map[string][]float64) {
	t.Helper()
	want := builtinWant()
	for b, g := range got {
		if !slices.Equal(g, want) {
			t.Errorf("%s on %d ranks: coordinates and fluxes\n%v\nwant\n%v", b, op2.Ranks(), g, want)
		}
	}
}

// TestKernelsDeclaringBuiltinNames: kernels that declare their own
// double3 (a typedef, and a struct tag) and helpers named dot, sign and
// clamp run on every backend (opencl too, where those names are built
// in) with the same results.
func TestKernelsDeclaringBuiltinNames(t *testing.T) {
	t.Logf("backends %v", allBackends)
	got := runBuiltinNames(t, allBackends)
	if len(got) != len(allBackends) {
		t.Fatalf("results for %d backends of %d", len(got), len(allBackends))
	}
	checkBuiltinNames(t, got)
}

// TestKernelsDeclaringBuiltinNamesNVRTC: their CUDA source compiles
// with NVRTC (no GPU needed), without a warning.
func TestKernelsDeclaringBuiltinNamesNVRTC(t *testing.T) {
	nv, err := nvrtc.Load()
	testreq.Check(t, "nvrtc", err, nvrtc.ErrUnavailable)
	tab, x0, w0 := builtinMesh()
	nodes := must(op2.NewSet(builtinNodes, "nodes"))
	edges := must(op2.NewSet(builtinEdges, "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
	x := must(op2.NewDat(nodes, 3, x0, "x"))
	w := must(op2.NewDat(edges, 3, w0, "w"))
	f := must(op2.NewDat[float64](nodes, 3, nil, "f"))
	for _, c := range []struct {
		k    *op2.Kernel
		set  *op2.Set
		args []op2.Arg
	}{
		{op2.NewKernel(builtinFluxSrc, "builtin_flux"), edges, []op2.Arg{x.ArgMap(op2.Read, pedge, 0), x.ArgMap(op2.Read, pedge, 1), w.Arg(op2.Read),
			f.ArgMap(op2.Inc, pedge, 0), f.ArgMap(op2.Inc, pedge, 1)}},
		{op2.NewKernel(builtinMoveSrc, "builtin_move"), nodes, []op2.Arg{x.Arg(op2.RW), f.Arg(op2.Read)}},
	} {
		src, err := op2.Generate("cuda", c.k, c.set, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if _, log, err := nv.Compile(src, c.k.Name()+".cu", 90); err != nil || strings.TrimSpace(log) != "" {
			t.Errorf("%s: %v\n%s\nsource:\n%s", c.k.Name(), err, log, src)
		}
	}
}

// TestKernelsDeclaringBuiltinNamesMPI: the same on 2 MPI ranks, each
// running every backend it has.
func TestKernelsDeclaringBuiltinNamesMPI(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute)
		return
	}
	got := runBuiltinNames(t, allBackends)
	if op2.Rank() == 0 {
		checkBuiltinNames(t, got)
	}
	check(t, op2.Finalize())
}
