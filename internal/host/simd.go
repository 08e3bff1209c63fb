package host

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/jit"
)

// SIMD is a host backend's SIMD setting (exec.Config.SIMD): the lane
// count loops are built with (0: the scalar code; exec.AutoLanes: each
// loop's own, For), and whether the tuner may try lanes.
type SIMD struct {
	Lanes int  // configured lanes: exec.AutoLanes, 0 (scalar), or one of hostc.LaneWidths
	Off   bool // never lanes, not even tried by the tuner
	Tune  bool // the tuner chooses each loop's variant (exec.Config.Tune)
	// builds records, per language, the lanes that compiled and failed
	// (laneBuilds): once the compiler of a language (0: C, 1: C++; see
	// lang) cannot build lanes (GCC before 12), that language's loops
	// are built with the scalar code, and the tuner's lane variants
	// fail to build.
	builds *laneBuilds
	// clones asks the backend's C compiler whether it calls math
	// functions' SIMD clones (UseCompilers); nil (static generation):
	// it is taken to, as the default compiler, cc, does on Debian.
	clones *compilerClones
}

// UseCompilers has For ask the C compiler of cc whether it calls math
// functions' SIMD clones (hostc.CloneGuard: GCC on x86-64, not Clang),
// once, the first time a kernel's lanes would call them.
func (s *SIMD) UseCompilers(cc *Compilers) { s.clones = &compilerClones{cc: cc.C} }

// compilerClones is whether a C compiler calls SIMD clones, asked once
// it answers (jit.Compiler.Holds, which runs the preprocessor, some 10
// ms).
type compilerClones struct {
	cc        *jit.Compiler
	mu        sync.Mutex
	done, yes bool
}

// calls reports whether the compiler calls SIMD clones (hostc.AutoLanes'
// clones); with no compiler, true; false while it does not answer (the
// preprocessor failed or timed out), asking again the next time.
func (c *compilerClones) calls() bool {
	if c == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		ok, err := c.cc.Holds(hostc.CloneGuard)
		if err != nil {
			return false
		}
		c.yes, c.done = ok, true
	}
	return c.yes
}

// laneBuildFailures is how many loops' lanes must fail to compile where
// their scalar code compiles, with no loop's lanes compiled, before a
// compiler is taken to build none: one kernel whose lanes alone do not
// compile (a variable-length array, refused in lanes) leaves the other
// loops theirs.
const laneBuildFailures = 2

// laneBuilds is what a process saw of a compiler's lanes, per language
// (lang): whether some loop's lanes compiled, and how many loops' lanes
// failed to compile where their scalar code compiled.
type laneBuilds struct {
	built  [2]atomic.Bool
	failed [2]atomic.Int32
}

// cannot reports whether the compiler of language lang builds no lanes:
// none compiled and laneBuildFailures failed.
func (b *laneBuilds) cannot(lang int) bool {
	return b != nil && !b.built[lang].Load() && b.failed[lang].Load() >= laneBuildFailures
}

// record notes that the lanes of a loop of language lang compiled (ok),
// or failed to where its scalar code compiled.
func (b *laneBuilds) record(lang int, ok bool) {
	switch {
	case b == nil:
	case ok:
		b.built[lang].Store(true)
	default:
		b.failed[lang].Add(1)
	}
}

// For returns the lanes loop l is built with: the configured count, or
// under "auto" the loop's own (hostc.AutoLanes for this machine's
// vectors). A loop that cannot have lanes gets the scalar code whatever
// For returns (WithLanes).
func (s SIMD) For(l *core.Loop) int {
	switch {
	case s.Off, s.builds != nil && s.builds.cannot(lang(l)):
		return 0
	case s.Lanes == exec.AutoLanes:
		var clones func() bool
		if !l.Kernel.CXX {
			clones = s.clones.calls
		}
		return hostc.AutoLanes(l, VectorBytes(), clones)
	}
	return s.Lanes
}

// Runs returns the lanes loop l's program runs with as configured: For's
// count when l can have lanes (hostc.SIMDCheck), else 0.
func (s SIMD) Runs(l *core.Loop) int {
	lanes := s.For(l)
	if lanes == 0 || hostc.SIMDCheck(l) != nil {
		return 0
	}
	return lanes
}

// KeepsOrder reports whether fused, a fused loop, sums the terms of loop
// l's floating-point Global reductions in l's order (exec.OrderKeeper of
// the host backends): lanes sum each lane's terms first, so the fused
// loop must have l's lanes; and a chunk in which two elements reach one
// target of a Dat changed through a map with RW or WRITE runs with the
// scalar code (hostc.ClashTested), so in lanes the fused loop must
// test no target l does not. Changes through maps go element by element
// with lanes or without.
func (s SIMD) KeepsOrder(fused, l *core.Loop) bool {
	if !slices.ContainsFunc(l.Args, func(a core.Arg) bool { return a.IsReduction() && a.OrderSensitive() }) {
		return true
	}
	lanes := s.Runs(l)
	if s.Runs(fused) != lanes {
		return false
	}
	if lanes == 0 {
		return true
	}
	for i := range fused.Args {
		a := &fused.Args[i]
		if hostc.ClashTested(a) && !slices.ContainsFunc(l.Args, func(b core.Arg) bool {
			return hostc.ClashTested(&b) && b.Data == a.Data && b.Map == a.Map && b.Facts().Role() == a.Facts().Role() && b.Idx == a.Idx
		}) {
			return false
		}
	}
	return true
}

// lang is the index in laneBuilds of loop l's language: 1 for a C++
// kernel, built by the C++ compiler, else 0.
func lang(l *core.Loop) int {
	if l.Kernel.CXX {
		return 1
	}
	return 0
}

// DefaultSIMD is the setting of the default configuration ("auto"), for
// static generation.
var DefaultSIMD = SIMD{Lanes: exec.AutoLanes}

// VectorBytes gives the widths of the vectors loops in lanes are built
// for under "auto", in bytes: this machine's widest vector registers, but
// 256 bits for loops without a matrix argument on an Intel core with
// AVX-512 (see LaneBytes). Read once from /proc/cpuinfo (16 where it
// cannot be read).
var VectorBytes = sync.OnceValue(func() hostc.Vectors {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return hostc.Vectors{Loops: 16, Matrix: 16}
	}
	return LaneBytes(string(b))
})

// LaneBytes returns the vector widths, in bytes, that loops in lanes
// are built for on the machine /proc/cpuinfo's text describes (its first
// processor's vendor_id and flags): 64 with AVX-512, 32 with AVX, else 16
// (SSE2, which every x86-64 has; Arm's NEON). On Intel's cores
// (GenuineIntel) with AVX-512 a loop without a matrix argument gets 32,
// as GCC's and LLVM's tunings for them prefer 256-bit vectors
// (-mprefer-vector-width=256): there Airfoil's and MG-CFD's indirect
// loops ran far slower in 8 lanes of 512 bits than in 4 of 256 (an Intel
// Xeon VM, AVX-512, sequential: res_calc 6.67 against 4.69 ns an edge,
// Airfoil 100 iterations 3.42-3.48 against 2.57-2.78 s, MG-CFD's 50
// cycles 3.77 against 2.86 s; so did BenchmarkExtrudedPrisms, 7.3-7.5 against
// 5.9-5.95 ns a prism, and BenchmarkRWThroughMap, 4.36 against 3.48 ns
// an element), while internal/poisson's matrix assembly ran faster
// in 8 (ns an element, 3 interleaved runs: 3-D stiffness 18.8-19.4
// against 22.1-23.7, 2-D 9.9-11.2 against 10.6-11.5, P1 mass 6.3-7.2
// against 7.2-8.7). AMD's cores with AVX-512 (Zen 4 and 5) get 64 for
// every loop.
func LaneBytes(cpuinfo string) hostc.Vectors {
	var vendor string
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "vendor_id":
			if vendor == "" {
				vendor = strings.TrimSpace(v)
			}
		case "flags":
			flags := strings.Fields(v)
			switch {
			case slices.Contains(flags, "avx512f") && vendor == "GenuineIntel":
				return hostc.Vectors{Loops: 32, Matrix: 64}
			case slices.Contains(flags, "avx512f"):
				return hostc.Vectors{Loops: 64, Matrix: 64}
			case slices.Contains(flags, "avx"):
				return hostc.Vectors{Loops: 32, Matrix: 32}
			}
			return hostc.Vectors{Loops: 16, Matrix: 16}
		}
	}
	return hostc.Vectors{Loops: 16, Matrix: 16}
}

// TileLanes returns the lane count of a loop's tile form (sparse tiling
// of loop chains): the lanes its eager calls run with, so that tiling
// keeps the vector arithmetic. That is: with SIMD off, none; with tuned,
// the tuner's variant for the loop's eager calls ("" when none is at
// hand), its lanes; else the configured lanes; else, while tuning with
// no choice at hand, the widest of hostc.LaneWidths (the tuner measures
// eager calls only). Package op2 tiles no chain while tuning, so there
// only the configured lanes apply. A loop that cannot have lanes
// (hostc.SIMDCheck: every width or none) is built with the scalar code
// whatever TileLanes returns (WithLanes), so TileLanes does not run the
// check, which rewrites the kernel, on every tiled run.
func (s SIMD) TileLanes(l *core.Loop, tuned string) int {
	if s.Off {
		return 0
	}
	for rest := tuned; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "+")
		if part == VariantScalar {
			return 0
		}
		if n, ok := strings.CutPrefix(part, variantSIMD); ok {
			if lanes, err := strconv.Atoi(n); err == nil && slices.Contains(hostc.LaneWidths, lanes) {
				return lanes
			}
		}
	}
	lanes := s.For(l)
	if lanes == 0 && s.Tune {
		return slices.Max(hostc.LaneWidths)
	}
	return lanes
}

// Variant names of the lane counts.
const (
	VariantScalar = "scalar"
	variantSIMD   = "simd"
)

// ParseSIMD reads a Config.SIMD value (exec.ParseSIMD): "" or "auto"
// (scalar code, the tuner tries lanes), "off" (scalar code only), or a
// lane count of hostc.LaneWidths ("4", "8"; also "simd4", "simd8").
func ParseSIMD(s string) (SIMD, error) {
	lanes, off, err := exec.ParseSIMD(s)
	if err != nil {
		return SIMD{}, err
	}
	return SIMD{Lanes: lanes, Off: off, builds: new(laneBuilds)}, nil
}

// LaneVariant names the variant of lanes lanes: "scalar" for 0, else
// "simd<lanes>". Naming one of hostc.LaneWidths allocates nothing.
func LaneVariant(lanes int) string {
	if v, ok := laneVariants[lanes]; ok {
		return v
	}
	return variantSIMD + strconv.Itoa(lanes)
}

// laneVariants are the LaneVariant names of 0 and hostc.LaneWidths.
var laneVariants = func() map[int]string {
	m := map[int]string{0: VariantScalar}
	for _, n := range hostc.LaneWidths {
		m[n] = variantSIMD + strconv.Itoa(n)
	}
	return m
}()

// ParseLaneVariant returns the lane count a LaneVariant name gives.
func ParseLaneVariant(v string) (int, error) {
	if v == VariantScalar || v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, variantSIMD))
	if err != nil || !strings.HasPrefix(v, variantSIMD) || !slices.Contains(hostc.LaneWidths, n) {
		return 0, fmt.Errorf("unknown SIMD variant %q", v)
	}
	return n, nil
}

// Variants returns the lane variants the tuner may try for l, the
// configured one first, or nil when l has only the scalar code (SIMD off,
// or l cannot have lanes).
func (s SIMD) Variants(l *core.Loop) []string {
	if s.Off || hostc.SIMDCheck(l) != nil {
		return nil
	}
	lanes := s.For(l)
	out := []string{LaneVariant(lanes)}
	for _, n := range append([]int{0}, hostc.LaneWidths...) {
		if n != lanes {
			out = append(out, LaneVariant(n))
		}
	}
	return out
}

// LaneFlags are the compiler flags a program of lanes lanes needs beyond
// the backend's own: -fopenmp-simd for the simd pragma (the openmp
// backend's -fopenmp includes it).
func LaneFlags(lanes int) []string {
	if lanes == 0 {
		return nil
	}
	return []string{"-fopenmp-simd"}
}

// BuildLanes returns build(s.For(l)), or build(0) (the scalar code) when
// that is 0 or fails. When the lanes of loops that can have them
// (hostc.SIMDCheck) fail to build where their scalar code builds, and no
// loop's lanes built, the compiler cannot build lanes (laneBuilds): s
// then builds no more for loops of that language (C, or C++: the
// compilers differ). (A kernel that does not compile fails both, and
// says nothing about lanes.)
func BuildLanes[T any](s SIMD, l *core.Loop, build func(lanes int) (T, error)) (T, error) {
	if lanes := s.For(l); lanes > 0 {
		v, err := build(lanes)
		if err == nil {
			s.builds.record(lang(l), true)
			return v, nil
		}
		v, err = build(0)
		if err == nil && hostc.SIMDCheck(l) == nil {
			s.builds.record(lang(l), false)
		}
		return v, err
	}
	return build(0)
}

// WithLanes returns build(lanes), or build(0) (the scalar code) when
// lanes is 0 or build(lanes) fails: the loop cannot have lanes
// (hostc.SIMDCheck), or the compiler cannot build them.
func WithLanes[T any](lanes int, build func(lanes int) (T, error)) (T, error) {
	if lanes > 0 {
		if v, err := build(lanes); err == nil {
			return v, nil
		}
	}
	return build(0)
}

// TileVariant names the lanes of a loop's tile form: LaneVariant of
// TileLanes(l, tuned) (exec.TileBuilder.TileVariant of the host backends).
func (s SIMD) TileVariant(l *core.Loop, tuned string) string {
	return LaneVariant(s.TileLanes(l, tuned))
}

// WithLaneVariant is WithLanes with the lanes a LaneVariant name gives
// (exec.TileBuilder.BuildTiles of the host backends).
func WithLaneVariant[T any](variant string, build func(lanes int) (T, error)) (T, error) {
	lanes, err := ParseLaneVariant(variant)
	if err != nil {
		var zero T
		return zero, err
	}
	return WithLanes(lanes, build)
}
