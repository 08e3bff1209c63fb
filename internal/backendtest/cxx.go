package backendtest

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// Conformance tests of C++ kernels (op2.Kernel.CXX), written in OP2's
// C++ style as MG-CFD writes them.
func init() {
	conformance = append(conformance, struct {
		name string
		test func(t *testing.T)
	}{"CXXKernels", testCXXKernels})
}

// cxxFlux is an edge-flux kernel with what OP2's C++ applications use: a
// namespace, a template, a struct with a member function and brace
// initialisation, constexpr, functional and static casts, a static inline
// helper taking references, <cmath> under std::, and references as the
// kernel's own parameters for one-value arguments (two Global
// reductions), and a constant.
const cxxFlux = `#include <cmath>
namespace flux {
constexpr double gm1 = 0.4;
template <typename T> inline T sq(const T &x) { return x * x; }
struct vec3 {
  double x, y, z;
  double dot(const vec3 &o) const { return x * o.x + y * o.y + z * o.z; }
};
static inline void edge_flux(const double *va, const double *vb, const vec3 &n, double &mass, double &mom) {
  const double pa = double(gm1) * va[1], pb = gm1 * vb[1];
  mass = 0.5 * (va[0] + vb[0]) * std::sqrt(n.dot(n));
  mom = static_cast<double>(pa - pb) + sq(n.x);
}
}

inline void compute_flux(const double *va, const double *vb, const double *w,
                         double *fa, double *fb, double &count, double &maxw) {
  const flux::vec3 n{w[0], w[1], w[2]};
  double mass, mom;
  flux::edge_flux(va, vb, n, mass, mom);
  fa[0] += mass; fa[1] += mom;
  fb[0] -= mass; fb[1] -= mom;
  count += cxx_unit;
  maxw = std::fmax(maxw, std::fabs(w[0]));
}
`

// cxxUpdate and cxxDegree take references to one-value Dats: read and
// written directly, incremented through a map. cxxUpdate calls a
// file-scope function from a namespace, and a member function named like
// it.
const (
	cxxUpdate = `static inline double inv(double v) { return 1.0 / v; }
namespace upd { inline double scaled(double f, double vol) { return f * inv(vol); } }
struct Cell { double vol; double inv() const { return 1.0 / vol; } };
inline void update(const double &vol, double &u, const double *f) { const Cell c{vol}; u += upd::scaled(double(f[0]), vol) * (c.inv() * vol); }`
	cxxDegree = `static inline void degree(int &a, int &b) { a += 1; b += 1; }`
	// cxxMinMax is OP2-Common's apps/c/min kernel, with <algorithm>'s
	// std::min (and std::max) into int Globals.
	cxxMinMax = `#include <algorithm>
void min_max(const int *d, int *lo, int *hi) {
    *lo = std::min(*d, *lo);
    *hi = std::max(*d, *hi);
}`
)

func testCXXKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const ne, nn = 3000, 700
	edges, nodes, table, pedge := edgeMesh(r, ne, nn)
	vars := make([]float64, 2*nn)
	for i := range vars {
		vars[i] = r.Float64() + 0.5
	}
	weights := make([]float64, 3*ne)
	for i := range weights {
		weights[i] = r.Float64()*2 - 1
	}
	v := must(op2.NewDat(nodes, 2, vars, "vars"))
	w := must(op2.NewDat(edges, 3, weights, "weights"))
	f := must(op2.NewDat[float64](nodes, 2, nil, "fluxes"))
	count := must(op2.NewGlobal(1, []float64{0}, "count"))
	maxw := must(op2.NewGlobal(1, []float64{0}, "maxw"))
	unit := must(op2.NewConst(1, []float64{1}, "cxx_unit"))
	defer unit.Remove()
	flux := op2.NewKernel(cxxFlux, "compute_flux").CXX()
	err := op2.ParLoop(flux, edges, v.ArgMap(op2.Read, pedge, 0), v.ArgMap(op2.Read, pedge, 1), w.Arg(op2.Read),
		f.ArgMap(op2.Inc, pedge, 0), f.ArgMap(op2.Inc, pedge, 1), count.Arg(op2.Inc), maxw.Arg(op2.Max))
	if op2.Backend() == "opencl" {
		// The opencl backend writes OpenCL C; PoCL has no C++ for OpenCL.
		if err == nil || !strings.Contains(err.Error(), `kernel "compute_flux" is C++`) || !strings.Contains(err.Error(), "C++ for OpenCL") {
			t.Fatalf("a C++ kernel on opencl: got %v, want the refusal naming the kernel and C++ for OpenCL", err)
		}
		if count.Value() != 0 || !slicesEqual(f.DataRO(), make([]float64, 2*nn)) {
			t.Fatal("the refused loop changed data")
		}
		return
	}
	check(t, err)

	wantF := make([]float64, 2*nn)
	wantMax := 0.0
	for e := 0; e < ne; e++ {
		a, b := table[2*e], table[2*e+1]
		x, y, z := weights[3*e], weights[3*e+1], weights[3*e+2]
		mass := 0.5 * (vars[2*a] + vars[2*b]) * math.Sqrt(x*x+y*y+z*z)
		mom := (0.4*vars[2*a+1] - 0.4*vars[2*b+1]) + x*x
		wantF[2*a] += mass
		wantF[2*a+1] += mom
		wantF[2*b] -= mass
		wantF[2*b+1] -= mom
		wantMax = math.Max(wantMax, math.Abs(x))
	}
	for i, got := range f.DataRO() {
		if math.Abs(got-wantF[i]) > 1e-12*(1+math.Abs(wantF[i])) {
			t.Fatalf("fluxes[%d] = %v, want %v", i, got, wantF[i])
		}
	}
	if c, m := count.Value(), maxw.Value(); c != ne || m != wantMax {
		t.Fatalf("count %v, max |w0| %v; want %d and %v", c, m, ne, wantMax)
	}

	vols := make([]float64, nn)
	for i := range vols {
		vols[i] = 1 + float64(i%5)
	}
	vol := must(op2.NewDat(nodes, 1, vols, "vol"))
	u := must(op2.NewDat[float64](nodes, 1, nil, "u"))
	visits := must(op2.NewDat[int32](nodes, 1, nil, "visits"))
	check(t, op2.ParLoop(op2.NewKernel(cxxUpdate, "update").CXX(), nodes, vol.Arg(op2.Read), u.Arg(op2.RW), f.Arg(op2.Read)))
	check(t, op2.ParLoop(op2.NewKernel(cxxDegree, "degree").CXX(), edges, visits.ArgMap(op2.Inc, pedge, 0), visits.ArgMap(op2.Inc, pedge, 1)))
	deg := make([]int32, nn)
	for _, n := range table {
		deg[n]++
	}
	fl := f.DataRO()
	for i, got := range u.DataRO() {
		if want := fl[2*i] * (1 / vols[i]) * ((1 / vols[i]) * vols[i]); math.Abs(got-want) > 1e-14*math.Abs(want) {
			t.Fatalf("u[%d] = %v, want %v", i, got, want)
		}
		if visits.DataRO()[i] != deg[i] {
			t.Fatalf("visits[%d] = %d, want %d", i, visits.DataRO()[i], deg[i])
		}
	}

	lo := must(op2.NewGlobal(1, []int32{math.MaxInt32}, "lo"))
	hi := must(op2.NewGlobal(1, []int32{math.MinInt32}, "hi"))
	check(t, op2.ParLoop(op2.NewKernel(cxxMinMax, "min_max").CXX(), nodes, visits.Arg(op2.Read), lo.Arg(op2.Min), hi.Arg(op2.Max)))
	wantLo, wantHi := slices.Min(deg), slices.Max(deg)
	if lo.Value() != wantLo || hi.Value() != wantHi {
		t.Fatalf("degrees from %d to %d by std::min and std::max, want %d to %d", lo.Value(), hi.Value(), wantLo, wantHi)
	}
}
