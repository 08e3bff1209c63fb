package host

import (
	"github.com/goop2/op2/internal/core"
)

// PrepareLanes is exec.BackgroundBuilder.PrepareBuild for a host backend
// whose Build is BuildLanes(s, l, build), build compiling gen(lanes) with
// the extra flags flags(lanes) through NewProgram: nil when that program
// is compiled already (jit.Compiler.Ready), else the job that compiles it
// into the disk cache (jit.Compiler.Precompile) as BuildLanes would, lanes
// first and, if they fail to compile, the scalar code. Lanes that fail
// where the scalar code compiles make s build no more lanes for loops of
// the kernel's language, as BuildLanes does (laneBuilds). The sources are generated
// here; the job reads nothing of l.
func PrepareLanes(s SIMD, ccs *Compilers, l *core.Loop, gen func(lanes int) (string, error), flags func(lanes int) []string) (func() error, error) {
	return prepare(ccs, l, s.For(l), s.builds, gen, flags)
}

// PrepareWithLaneVariant is PrepareLanes for a build by WithLaneVariant
// (exec.BackgroundBuilder.PrepareTiles of the host backends): lanes that
// fail to compile change nothing for other loops.
func PrepareWithLaneVariant(variant string, ccs *Compilers, l *core.Loop, gen func(lanes int) (string, error), flags func(lanes int) []string) (func() error, error) {
	lanes, err := ParseLaneVariant(variant)
	if err != nil {
		return nil, err
	}
	return prepare(ccs, l, lanes, nil, gen, flags)
}

// prepare is PrepareLanes with the lanes to try first (0: the scalar
// code only) and, when not nil, the record of the lanes that compile and
// fail to (SIMD.builds).
func prepare(ccs *Compilers, l *core.Loop, lanes int, builds *laneBuilds, gen func(lanes int) (string, error), flags func(lanes int) []string) (func() error, error) {
	cc, err := ccs.checked(l)
	if err != nil {
		return nil, err
	}
	laneSrc := ""
	if lanes > 0 {
		if src, err := gen(lanes); err == nil {
			if cc.Ready(src, loopFlags(l, flags(lanes))...) {
				builds.record(lang(l), true)
				return nil, nil
			}
			laneSrc = src
		}
	}
	scalar, err := gen(0)
	if laneSrc == "" {
		if err != nil {
			return nil, err
		}
		if cc.Ready(scalar, loopFlags(l, flags(0))...) {
			return nil, nil
		}
	}
	syms, lang, laneFlags, scalarFlags, scalarErr := symbols(l), lang(l), loopFlags(l, flags(lanes)), loopFlags(l, flags(0)), err
	return func() error {
		if laneSrc != "" {
			err := cc.Precompile(laneSrc, syms, laneFlags...)
			if err == nil {
				builds.record(lang, true)
				return nil
			}
			if scalarErr != nil {
				return scalarErr
			}
			if err = cc.Precompile(scalar, syms, scalarFlags...); err == nil {
				builds.record(lang, false)
			}
			return err
		}
		return cc.Precompile(scalar, syms, scalarFlags...)
	}, nil
}
