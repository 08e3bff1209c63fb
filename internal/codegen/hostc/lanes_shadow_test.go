package hostc

import (
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestLaneShadowedHelpers: a function that both calls a function the
// source defines and names it otherwise (a parameter, a local, a lambda
// or its capture, a binding, a using-declaration, a declarator after a
// comma, one a macro makes) keeps its loop on the scalar code, as the
// name may hide the function there; kernels that only name a helper's
// name elsewhere (another function's parameter or local, a struct
// member, a value passed on, a global ::f call) keep their lane forms.
func TestLaneShadowedHelpers(t *testing.T) {
	m := newLaneMesh()
	x := m.dat("x", m.edges, core.Float64, 2)
	y := m.dat("y", m.edges, core.Float64, 2)
	args := []core.Arg{{Data: x, Access: core.Read, Kind: core.ArgDirect}, {Data: y, Access: core.RW, Kind: core.ArgDirect}}
	for _, c := range []struct {
		name, src  string
		cxx, lanes bool
	}{
		{"helperParamOwnName", `static inline void normal(const double *x, double *normal) { normal[0] = -x[1]; normal[1] = x[0]; }
void k(const double *x, double *y) { double n[2]; normal(x, n); y[0] = n[0]; y[1] = n[1]; }`, false, true},
		{"localNamedAsOtherHelper", `static inline double sq(double v) { return v*v; }
static inline double mag(const double *v) { return sqrt(sq(v[0]) + sq(v[1])); }
void k(const double *x, double *y) { double mag = x[0] + x[1]; y[0] = sq(mag); y[1] = 0; }`, false, true},
		{"helperLocalNamedKernel", `static inline double f(double v) { double k = v*2; return k; }
void k(const double *x, double *y) { y[0] = f(x[0]); y[1] = x[1]; }`, false, true},
		{"addrOfHelper", `static double first(double v) { return v + 1; }
static double apply(double (*f)(double), double v) { return f(v); }
void k(const double *x, double *y) { y[0] = apply(&first, x[0]); y[1] = x[1] / 7; }`, false, true},
		{"structMember", `static inline double area(const double *x) { return x[0]*x[1]; }
struct cell { double area; };
void k(const double *x, double *y) { struct cell c; c.area = area(x); y[0] = c.area; y[1] = 0; }`, false, true},
		{"commaDecl", `typedef double (*fn)(const double *);
static double pick(const double *p) { return 1e6; }
static double first(const double *p) { return p[0]; }
void k(const double *x, double *y) { fn a = first, pick = first; (void)a; y[0] = pick(x); y[1] = 0; }`, false, false},
		{"initCapture", `static inline double pick(double v) { return 1e6; }
static inline double first(double v) { return v; }
void k(const double *x, double *y) { auto g = [pick = first](double v) { return pick(v); }; y[0] = g(x[0]); y[1] = 0; }`, true, false},
		{"typedefComma", `typedef double (*fn)(double);
static double pick(double v) { return 1e6; }
static double first(double v) { return v; }
void k(const double *x, double *y) { fn a = first, pick = first; (void)a; y[0] = pick(x[0]); y[1] = 0; }`, false, false},
		{"usingDecl", `static inline double pick(const double *p) { return 1e6; }
namespace ns { inline double pick(const double *p) { return p[0]; } }
void k(const double *x, double *y) { using ns::pick; y[0] = pick(x); y[1] = 0; }`, true, false},
		{"macroDecl", `static double pick(const double *p) { return 1e6; }
static double first(const double *p) { return p[0]; }
#define FPTR(n) double (*n)(const double *) = first
void k(const double *x, double *y) { FPTR(pick); y[0] = pick(x); y[1] = 0; }`, false, false},
		{"macroName", `static double pick(const double *p) { return 1e6; }
static double first(const double *p) { return p[0]; }
#define PICK pick
void k(const double *x, double *y) { double (*PICK)(const double *) = first; y[0] = pick(x); y[1] = 0; }`, false, false},
		{"nsQual", `namespace phys { inline double first(const double *p) { return p[0]*2; } }
void k(const double *x, double *y) { y[0] = phys::first(x); y[1] = 0; }`, true, false},
		{"valueCase", `static double first(double v) { return v + 1; }
static double apply(double (*f)(double), double v) { return f(v); }
void k(const double *x, double *y) { y[0] = apply(first, x[0]) / x[1] / 3.0; y[1] = x[1] / 7; }`, false, true},
		{"cfdPressure", `static inline double pressure(const double *q) { return 0.4 * (q[1] - 0.5 * q[0] * q[0]); }
static inline double enthalpy(const double *q, double pressure) { return (q[1] + pressure) / (q[0] + 2.0); }
void k(const double *x, double *y) { double p = pressure(x); y[0] = enthalpy(x, p); y[1] = p; }`, false, true},
		{"globalQual", `static inline double pick(const double *p) { return p[0]*2; }
void k(const double *x, double *y) { y[0] = ::pick(x); y[1] = 0; }`, true, true},
		{"templateParam", `static inline double pick(const double *p) { return 1e6; }
static inline double first(const double *p) { return p[0]; }
template <class F> static inline double apply(F pick, const double *p) { return pick(p); }
void k(const double *x, double *y) { y[0] = apply(first, x); y[1] = 0; }`, true, false},
		{"structuredBinding", `#include <utility>
static inline double pick(const double *p) { return 1e6; }
static inline double first(const double *p) { return p[0]; }
void k(const double *x, double *y) { auto [pick, b] = std::pair<double(*)(const double*), int>(first, 1); y[0] = pick(x) + b; y[1] = 0; }`, true, false},
		{"forInitComma", `static double pick(const double *p) { return 1e6; }
static double first(const double *p) { return p[0]; }
void k(const double *x, double *y) { double (*a)(const double*) = first, (*pick)(const double*) = first; y[0] = pick(x) + a(x); y[1] = 0; }`, false, false},
		{"lambdaParamComma", `static inline double pick(const double *p) { return 1e6; }
static inline double first(const double *p) { return p[0]; }
void k(const double *x, double *y) { auto g = [](const double *p, double (*pick)(const double*)) { return pick(p); }; y[0] = g(x, first); y[1] = 0; }`, true, false},
		{"functionTypeParam", `static double pick(const double *p) { return 1e6; }
static double first(const double *p) { return p[0]; }
static double apply(double pick(const double *), const double *p) { return pick(p); }
void k(const double *x, double *y) { y[0] = apply(first, x) / x[1] / 3.0; y[1] = x[1] / 7; }`, false, false},
		{"directInit", `static inline double pick(const double *p) { return 1e6; }
static inline double first(const double *p) { return p[0]; }
void k(const double *x, double *y) { auto pick(first); y[0] = pick(x) / x[1] / 3.0; y[1] = x[1] / 7; }`, true, false},
		{"returnGlobalQual", `static inline double pick(const double *p) { return p[0] * 2; }
static inline double wrap(const double *p) { return ::pick(p); }
void k(const double *x, double *y) { y[0] = wrap(x) / x[1]; y[1] = x[1]; }`, true, true},
		{"localStructMember", `static inline double area(const double *x) { return x[0]*x[1]; }
void k(const double *x, double *y) { struct { double area; } c; c.area = area(x); y[0] = c.area; y[1] = 0; }`, false, true},
		{"calledAndValue", `static double first(double v) { return v + 1; }
static double apply(double (*f)(double), double v) { return f(v); }
void k(const double *x, double *y) { y[0] = apply(first, x[0]) + first(x[1]); y[1] = x[1] / 7; }`, false, true},
		{"indexByCall", `static inline int slot(const double *x) { return x[0] > 0; }
void k(const double *x, double *y) { double t[2] = {1, 2}; y[0] = t[slot(x)]; y[1] = x[1]; }`, false, true},
	} {
		l := laneLoop(t, m, c.src, "k", args...)
		l.Kernel.CXX = c.cxx
		err := SIMDCheck(l)
		if (err == nil) != c.lanes {
			t.Errorf("%s: SIMDCheck: %v, want lane forms %v", c.name, err, c.lanes)
		}
	}
}
