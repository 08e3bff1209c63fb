package mgcfd

import (
	"math"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/nvrtc"
	"github.com/goop2/op2/internal/testreq"
)

// The original MG-CFD's structures.h declares double3 for host compilers
// only and uses the device languages' own double3 on the devices:
const (
	ownDouble3      = "struct double3 { double x, y, z; };\ntypedef struct double3 double3;\n"
	hostOnlyDouble3 = "#if !defined(__OPENCL_VERSION__) && !defined(__CUDACC__)\ntypedef struct { double x, y, z; } double3;\n#endif\n"
)

// double3Kernels are the kernels whose sources declare double3.
var double3Kernels = []string{"mg_flux_edge", "mg_flux_bnd", "mg_calc_dt"}

// withHostOnlyDouble3 makes the solvers declared until the returned
// function is called use the kernels with double3 declared for host
// compilers only.
func withHostOnlyDouble3(t *testing.T) func() {
	t.Helper()
	saved := kernelSources
	kernelSources = map[string]string{}
	for name, src := range saved {
		kernelSources[name] = src
	}
	for _, name := range double3Kernels {
		src := strings.Replace(saved[name], ownDouble3, hostOnlyDouble3, 1)
		if src == saved[name] {
			t.Fatalf("%s's source declares no double3 as %q", name, ownDouble3)
		}
		kernelSources[name] = src
	}
	return func() { kernelSources = saved }
}

// TestHostOnlyDouble3 runs the cycle with the flux and time-step kernels
// declaring double3 as the original's structures.h does, for host
// compilers only: on sequential (gcc compiles the declaration) the
// results are those of the kernels that always declare their own, to
// the bit; on opencl (where the kernels use OpenCL C's double3) they
// agree with sequential as TestBackendsAgree requires.
func TestHostOnlyDouble3(t *testing.T) {
	m := sequentialMesh(t, 5, 2)
	const cycles = 2
	wantRMS, wantVars := solve(t, m, cycles)
	defer withHostOnlyDouble3(t)()
	rms, vars := solve(t, m, cycles)
	if !equalRuns(rms, vars, wantRMS, wantVars, 0) {
		t.Errorf("sequential: rms %.17g, want %.17g (or the variables differ)", rms, wantRMS)
	}
	if err := op2.Configure(op2.Config{Backend: "opencl"}); err != nil {
		testreq.Check(t, "opencl", err, op2.ErrBackendUnavailable)
	}
	defer op2.Configure(op2.Config{Backend: "sequential"})
	rms, vars = solve(t, m, cycles)
	if !equalRuns(rms, vars, wantRMS, wantVars, 1e-10) {
		t.Errorf("opencl: rms %.17g, sequential %.17g (or the variables differ)", rms, wantRMS)
	}
}

// equalRuns compares two runs' rms (relatively, to tol) and variables
// (to tol/100 of each level's largest value; exactly when tol is 0).
func equalRuns(rms []float64, vars [][]float64, wantRMS []float64, wantVars [][]float64, tol float64) bool {
	if len(rms) != len(wantRMS) || len(vars) != len(wantVars) {
		return false
	}
	for i := range rms {
		if !near(rms[i], wantRMS[i], tol) {
			return false
		}
	}
	for l := range vars {
		if len(vars[l]) != len(wantVars[l]) {
			return false
		}
		scale := 0.0
		for _, v := range wantVars[l] {
			scale = math.Max(scale, math.Abs(v))
		}
		for i := range vars[l] {
			if math.Abs(vars[l][i]-wantVars[l][i]) > tol/100*scale {
				return false
			}
		}
	}
	return true
}

// TestDouble3NVRTC compiles the CUDA of the kernels that declare double3,
// in both forms (always, and for host compilers only), with NVRTC (no
// GPU needed), without a warning.
func TestDouble3NVRTC(t *testing.T) {
	nv, err := nvrtc.Load()
	testreq.Check(t, "nvrtc", err, nvrtc.ErrUnavailable)
	m := sequentialMesh(t, 5, 1)
	for _, form := range []string{"own", "host only"} {
		t.Run(form, func(t *testing.T) {
			if form == "host only" {
				defer withHostOnlyDouble3(t)()
			}
			s, err := New(m)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			lv := &s.levels[0]
			for _, c := range []struct {
				name string
				set  *op2.Set
				args []op2.Arg
			}{
				{"mg_flux_edge", lv.edges, []op2.Arg{lv.vars.ArgMap(op2.Read, lv.edgeNodes, 0), lv.vars.ArgMap(op2.Read, lv.edgeNodes, 1),
					lv.ewt.Arg(op2.Read), lv.fluxes.ArgMap(op2.Inc, lv.edgeNodes, 0), lv.fluxes.ArgMap(op2.Inc, lv.edgeNodes, 1)}},
				{"mg_flux_bnd", lv.bnd, []op2.Arg{lv.groups.Arg(op2.Read), lv.bwt.Arg(op2.Read),
					lv.vars.ArgMap(op2.Read, lv.bndMap, 0), lv.fluxes.ArgMap(op2.Inc, lv.bndMap, 0)}},
				{"mg_calc_dt", lv.nodes, []op2.Arg{lv.vars.Arg(op2.Read), lv.vol.Arg(op2.Read), lv.sf.Arg(op2.Write)}},
			} {
				src, err := op2.Generate("cuda", s.k[c.name], c.set, c.args...)
				if err != nil {
					t.Fatal(err)
				}
				if _, log, err := nv.Compile(src, c.name+".cu", 90); err != nil || strings.TrimSpace(log) != "" {
					t.Errorf("%s: %v\n%s\nsource:\n%s", c.name, err, log, src)
				}
			}
		})
	}
}
