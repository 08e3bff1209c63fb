package host

import (
	"errors"
	"runtime"
	"testing"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/jit"
	"github.com/goop2/op2/internal/testreq"
)

// TestTileLanes: a tile form has the lanes of its loop's eager calls: the
// tuner's choice when there is one, else the configured lanes, else the
// widest while tuning; none with SIMD off. Naming them allocates nothing.
func TestTileLanes(t *testing.T) {
	for _, c := range []struct {
		simd  SIMD
		tuned string
		want  int
	}{
		{SIMD{}, "", 0},
		{SIMD{Lanes: 4}, "", 4},
		{SIMD{Lanes: 8}, "", 8},
		{SIMD{Off: true}, "", 0},
		{SIMD{Off: true, Tune: true}, "", 0},
		{SIMD{Tune: true}, "", 8},
		{SIMD{Lanes: 4, Tune: true}, "", 4},
		{SIMD{Tune: true}, "simd4", 4},
		{SIMD{Tune: true}, "scalar", 0},
		{SIMD{Lanes: 8, Tune: true}, "owner+simd4", 4},
		{SIMD{Lanes: 8, Tune: true}, "colour+scalar", 0},
		{SIMD{Lanes: 4, Tune: true}, "owner", 4}, // a loop with no lanes to choose
		{SIMD{Tune: true}, "simd16", 8},          // no such width
	} {
		if got := c.simd.TileLanes(nil, c.tuned); got != c.want {
			t.Errorf("%+v.TileLanes(%q) = %d, want %d", c.simd, c.tuned, got, c.want)
		}
	}
	s := SIMD{Tune: true}
	if a := testing.AllocsPerRun(10, func() { _ = LaneVariant(s.TileLanes(nil, "owner+simd8")) }); a != 0 {
		t.Errorf("naming a tile form's lanes allocates %v times", a)
	}
}

// copyLoop returns a loop over 8 elements of kernel k of src, which
// reads a double from its first argument and writes one to its second.
func copyLoop(t *testing.T, src string) *core.Loop {
	t.Helper()
	info, err := cfront.ParseKernel(src, "k")
	if err != nil {
		t.Fatal(err)
	}
	set := &core.Set{Name: "s", Core: 8, Owned: 8, Exec: 8, Total: 8, ID: core.NewID()}
	dat := func(name string) *core.Storage {
		return &core.Storage{Name: name, Type: core.Float64, Dim: 1, Set: set, Len: 8, ID: core.NewID()}
	}
	l := &core.Loop{Kernel: &core.Kernel{Name: "k", Source: src, Info: info, ID: core.NewID()}, Set: set,
		Args: []core.Arg{{Data: dat("a"), Access: core.Read, Kind: core.ArgDirect}, {Data: dat("b"), Access: core.Write, Kind: core.ArgDirect}}}
	l.Sig = core.Analyse(l)
	return l
}

// TestBuildLanesFailures: when loops' lanes fail to build but their
// scalar code builds (laneBuildFailures of them) and no loop's lanes
// built, the compiler cannot build lanes and later loops of its language
// (C or C++) get none; once some loop's lanes built, failures leave
// lanes on; a kernel that fails both ways (it does not compile) leaves
// lanes on for the loops after it.
func TestBuildLanesFailures(t *testing.T) {
	src := `void k(const double *a, double *b) { b[0] = 2 * a[0]; }`
	l := copyLoop(t, src)
	if err := hostc.SIMDCheck(l); err != nil {
		t.Fatalf("the loop cannot have lanes: %v", err)
	}
	s, err := ParseSIMD("8")
	if err != nil {
		t.Fatal(err)
	}
	broken := func(lanes int) (int, error) { return 0, errors.New("does not compile") }
	if _, err := BuildLanes(s, l, broken); err == nil {
		t.Fatal("a kernel that does not compile built")
	}
	if got := s.For(l); got != 8 {
		t.Fatalf("after a kernel that does not compile, loops get %d lanes, want 8", got)
	}
	noLanes := func(lanes int) (int, error) {
		if lanes > 0 {
			return 0, errors.New("no lanes here")
		}
		return 1, nil
	}
	// The C++ compiler refuses lanes twice (laneBuildFailures) and
	// builds none: C++ loops get none, C loops keep them.
	cxx := *l
	kc := *l.Kernel
	kc.CXX = true
	cxx.Kernel = &kc
	for i := range laneBuildFailures {
		if got := s.For(&cxx); got != 8 {
			t.Fatalf("after the C++ compiler refused lanes %d times, C++ loops get %d lanes, want 8", i, got)
		}
		if v, err := BuildLanes(s, &cxx, noLanes); err != nil || v != 1 {
			t.Fatalf("BuildLanes = %v, %v; want the scalar code", v, err)
		}
	}
	if got, gotC := s.For(&cxx), s.For(l); got != 0 || gotC != 8 {
		t.Fatalf("after the C++ compiler refused lanes, C++ loops get %d lanes and C loops %d, want 0 and 8", got, gotC)
	}
	for range laneBuildFailures {
		if v, err := BuildLanes(s, l, noLanes); err != nil || v != 1 {
			t.Fatalf("BuildLanes = %v, %v; want the scalar code", v, err)
		}
	}
	if got := s.For(l); got != 0 {
		t.Fatalf("after a compiler refused lanes, loops get %d lanes, want 0", got)
	}
	// Once some loop's lanes built, loops whose lanes alone fail (a
	// kernel with a variable-length array) leave the others theirs.
	s, err = ParseSIMD("8")
	if err != nil {
		t.Fatal(err)
	}
	lanesBuild := func(lanes int) (int, error) { return lanes, nil }
	if v, err := BuildLanes(s, l, lanesBuild); err != nil || v != 8 {
		t.Fatalf("BuildLanes = %v, %v; want 8 lanes", v, err)
	}
	for range laneBuildFailures + 1 {
		if v, err := BuildLanes(s, l, noLanes); err != nil || v != 1 {
			t.Fatalf("BuildLanes = %v, %v; want the scalar code", v, err)
		}
	}
	if got := s.For(l); got != 8 {
		t.Fatalf("after lanes built and then failed for other kernels, loops get %d lanes, want 8", got)
	}
}

// TestAutoLanesAskTheCompiler: under "auto", a C kernel whose lanes
// would call cbrt through SIMD clones gets lanes where the backend's C
// compiler calls clones (GCC on x86-64) and the scalar code where it
// does not (one that defines __clang__, as Clang does, whose lanes would
// call cbrt lane by lane and vectorise nothing).
func TestAutoLanesAskTheCompiler(t *testing.T) {
	src := "#include <math.h>\nvoid k(const double *a, double *b) { b[0] = cbrt(a[0]) / (1 + a[0]) / 3; }"
	l := copyLoop(t, src)
	testreq.Command(t, "cc", "gcc")
	gcc := hostc.AutoLanes(l, VectorBytes(), func() bool { return true })
	if runtime.GOARCH == "amd64" && gcc == 0 {
		t.Fatal("AutoLanes gives a kernel calling cbrt no lanes with clones")
	}
	for _, c := range []struct {
		cc   string
		want int
	}{{"gcc", gcc}, {"gcc -D__clang__", 0}} {
		s, err := ParseSIMD("auto")
		if err != nil {
			t.Fatal(err)
		}
		s.UseCompilers(&Compilers{C: &jit.Compiler{CC: c.cc}})
		if got := s.For(l); got != c.want {
			t.Errorf("CC=%q: %d lanes, want %d", c.cc, got, c.want)
		}
	}
}

// TestLaneBytes: the vector widths lanes are built for under "auto" are
// the widest the flags name, but 256 bits for loops without a matrix
// argument on Intel's cores with AVX-512; the first processor's vendor
// and flags count.
func TestLaneBytes(t *testing.T) {
	for _, c := range []struct {
		name, cpuinfo string
		want          hostc.Vectors
	}{
		{"AMD with AVX-512", "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx avx2 avx512f avx512vl\n", hostc.Vectors{Loops: 64, Matrix: 64}},
		{"Intel with AVX-512", "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx avx2 avx512f avx512vl\n", hostc.Vectors{Loops: 32, Matrix: 64}},
		{"Intel with AVX2", "vendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx avx2\n", hostc.Vectors{Loops: 32, Matrix: 32}},
		{"AMD with AVX2", "vendor_id\t: AuthenticAMD\nflags\t\t: sse2 avx avx2\n", hostc.Vectors{Loops: 32, Matrix: 32}},
		{"SSE2 only", "vendor_id\t: GenuineIntel\nflags\t\t: fpu sse2\n", hostc.Vectors{Loops: 16, Matrix: 16}},
		{"no vendor (Arm)", "processor\t: 0\nFeatures\t: fp asimd\n", hostc.Vectors{Loops: 16, Matrix: 16}},
		{"another vendor with AVX-512", "vendor_id\t: HygonGenuine\nflags\t\t: avx avx512f\n", hostc.Vectors{Loops: 64, Matrix: 64}},
		{"second processor ignored", "vendor_id\t: AuthenticAMD\nflags\t\t: avx\nvendor_id\t: AuthenticAMD\nflags\t\t: avx avx512f\n", hostc.Vectors{Loops: 32, Matrix: 32}},
		{"empty", "", hostc.Vectors{Loops: 16, Matrix: 16}},
	} {
		if got := LaneBytes(c.cpuinfo); got != c.want {
			t.Errorf("%s: LaneBytes = %+v, want %+v", c.name, got, c.want)
		}
	}
}
