package host

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// SIMD is a host backend's SIMD setting (exec.Config.SIMD): the lane
// count loops are built with (0: the scalar code), and whether the tuner
// may try lanes.
type SIMD struct {
	Lanes int  // configured lanes: 0 (scalar), or one of hostc.LaneWidths
	Off   bool // never lanes, not even tried by the tuner
	Tune  bool // the tuner chooses each loop's variant (exec.Config.Tune)
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
func (s SIMD) TileLanes(tuned string) int {
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
	if s.Lanes == 0 && s.Tune {
		return slices.Max(hostc.LaneWidths)
	}
	return s.Lanes
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
	return SIMD{Lanes: lanes, Off: off}, nil
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
	out := []string{LaneVariant(s.Lanes)}
	for _, n := range append([]int{0}, hostc.LaneWidths...) {
		if n != s.Lanes {
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
// TileLanes(tuned) (exec.TileBuilder.TileVariant of the host backends).
func (s SIMD) TileVariant(tuned string) string { return LaneVariant(s.TileLanes(tuned)) }

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
