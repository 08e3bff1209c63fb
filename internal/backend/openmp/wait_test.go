package openmp_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/backend/openmp"
)

// ringLoop declares a ring of n edges over n nodes and returns a loop
// that computes a flux per edge from its two nodes and increments both:
// an indirect loop of the kind that took milliseconds on a busy machine.
func ringLoop(tb testing.TB, n int) func() error {
	nodes, err := op2.NewSet(n, "ring_nodes")
	if err != nil {
		tb.Fatal(err)
	}
	edges, _ := op2.NewSet(n, "ring_edges")
	table := make([]int32, 2*n)
	q := make([]float64, 2*n)
	for e := range n {
		table[2*e], table[2*e+1] = int32(e), int32((e+1)%n)
		q[2*e], q[2*e+1] = 1+float64(e%7), 0.5
	}
	m, err := op2.NewMap(edges, nodes, 2, table, "ring")
	if err != nil {
		tb.Fatal(err)
	}
	qd, _ := op2.NewDat(nodes, 2, q, "ring_q")
	res, _ := op2.NewDat[float64](nodes, 2, nil, "ring_res")
	k := op2.NewKernel(`void ring_flux(const double *a, const double *b, double *ra, double *rb) {
  double f = 0.5 * (a[0] - b[0]) + sqrt(fabs(a[1] * b[1]));
  ra[0] += f; rb[0] -= f; ra[1] += 0.1 * f; rb[1] -= 0.1 * f;
}`, "ring_flux")
	return func() error {
		return op2.ParLoop(k, edges, qd.ArgMap(op2.Read, m, 0), qd.ArgMap(op2.Read, m, 1), res.ArgMap(op2.Inc, m, 0), res.ArgMap(op2.Inc, m, 1))
	}
}

// BenchmarkSmallLoop times an indirect loop over a ring of 518 edges (the
// size that ran 2.7–5.4× slower on openmp than on sequential on a busy
// 2-core machine with libgomp's default waiting), of 2 048 and of 20 000 edges, on
// sequential and on openmp with 2 threads. The waiting is libgomp's
// environment (OMP_WAIT_POLICY, GOMP_SPINCOUNT), read when it is loaded:
// compare settings in separate runs (docs/perf.md).
func BenchmarkSmallLoop(b *testing.B) {
	defer op2.Configure(op2.Config{})
	for _, n := range []int{518, 2048, 20000} {
		for _, backend := range []string{"sequential", "openmp"} {
			b.Run(fmt.Sprintf("edges=%d/%s", n, backend), func(b *testing.B) {
				if err := op2.Configure(op2.Config{Backend: backend, Threads: 2}); err != nil {
					b.Fatal(err)
				}
				loop := ringLoop(b, n)
				if err := loop(); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if err := loop(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestWaitDefaults: with neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT in
// the environment, the first openmp loop sets GOMP_SPINCOUNT to
// SpinCount before it loads the OpenMP runtime, and libgomp (GCC's)
// spins that many times before sleeping, as OMP_DISPLAY_ENV shows; a
// value the environment gives stands. Clang's libomp reads no
// GOMP_SPINCOUNT (its own default waiting measured no slower:
// docs/history/targets-zen4-2026-11-28.txt, part 20),
// so with it only the variable is checked. Each case runs in a child
// process, since the runtime reads its environment once.
func TestWaitDefaults(t *testing.T) {
	if os.Getenv("OP2_WAIT_CHILD") != "" {
		loop := ringLoop(t, 4096)
		if err := op2.Configure(op2.Config{Backend: "openmp", Threads: 2}); err != nil {
			t.Fatal(err)
		}
		if err := loop(); err != nil {
			t.Fatal(err)
		}
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("op2-wait-child GOMP_SPINCOUNT=%q libgomp=%v\n", os.Getenv("GOMP_SPINCOUNT"), strings.Contains(string(maps), "/libgomp"))
		return
	}
	for _, c := range []struct {
		env        []string
		spin, want string
	}{
		{nil, openmp.SpinCount, "GOMP_SPINCOUNT = '" + openmp.SpinCount + "'"},
		{[]string{"GOMP_SPINCOUNT=1234"}, "1234", "GOMP_SPINCOUNT = '1234'"},
		{[]string{"OMP_WAIT_POLICY=active"}, "", "OMP_WAIT_POLICY = 'ACTIVE'"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWaitDefaults$", "-test.count=1")
		for _, e := range os.Environ() {
			if !strings.HasPrefix(e, "OMP_WAIT_POLICY=") && !strings.HasPrefix(e, "GOMP_SPINCOUNT=") && !strings.HasPrefix(e, "OMP_DISPLAY_ENV=") {
				cmd.Env = append(cmd.Env, e)
			}
		}
		cmd.Env = append(cmd.Env, "OP2_WAIT_CHILD=1", "OMP_DISPLAY_ENV=verbose")
		cmd.Env = append(cmd.Env, c.env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.env, err, out)
		}
		if want := fmt.Sprintf("op2-wait-child GOMP_SPINCOUNT=%q", c.spin); !strings.Contains(string(out), want) {
			t.Errorf("%v: the loop's process does not report %s:\n%s", c.env, want, out)
		}
		if strings.Contains(string(out), "libgomp=true") && !strings.Contains(string(out), c.want) {
			t.Errorf("%v: libgomp's settings do not show %s:\n%s", c.env, c.want, out)
		}
	}
}

// TestFewerThreadsThanOwners: a loop too small for all the configured
// threads (MinPerThread each) runs on fewer, through a plan made for all
// of them, in both schemes, and computes what sequential computes: an
// indirect increment and a sum into a Global.
func TestFewerThreadsThanOwners(t *testing.T) {
	defer op2.Configure(op2.Config{})
	const n = 3*openmp.MinPerThread + 100 // 3 of 8 threads
	run := func(cfg op2.Config) ([]float64, float64) {
		t.Helper()
		if err := op2.Configure(cfg); err != nil {
			t.Fatal(err)
		}
		nodes := must(op2.NewSet(n, "fo_nodes"))
		edges := must(op2.NewSet(n, "fo_edges"))
		table := make([]int32, 2*n)
		x := make([]float64, n)
		for e := range n {
			table[2*e], table[2*e+1] = int32(e), int32((e+7)%n)
			x[e] = float64(e%13) - 6
		}
		m := must(op2.NewMap(edges, nodes, 2, table, "fo_map"))
		xd := must(op2.NewDat(nodes, 1, x, "fo_x"))
		res := must(op2.NewDat[float64](nodes, 1, nil, "fo_res"))
		sum := must(op2.NewGlobal[float64](1, nil, "fo_sum"))
		k := op2.NewKernel(`void fo_flux(const double *a, const double *b, double *ra, double *rb, double *s) {
  double f = *a - *b; *ra += f; *rb -= f; *s += f * f;
}`, "fo_flux")
		if err := op2.ParLoop(k, edges, xd.ArgMap(op2.Read, m, 0), xd.ArgMap(op2.Read, m, 1), res.ArgMap(op2.Inc, m, 0), res.ArgMap(op2.Inc, m, 1), sum.Arg(op2.Inc)); err != nil {
			t.Fatal(err)
		}
		return res.Data(), sum.Data()[0]
	}
	want, wantSum := run(op2.Config{Backend: "sequential"})
	for _, scheme := range []string{openmp.SchemeOwner, openmp.SchemeColour} {
		got, gotSum := run(op2.Config{Backend: "openmp", Threads: 8, OpenMPScheme: scheme})
		if gotSum != wantSum {
			t.Errorf("%s: sum %v, want %v", scheme, gotSum, wantSum)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: res[%d] = %v, want %v", scheme, i, got[i], want[i])
			}
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
