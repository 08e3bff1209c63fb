// Command op2bench measures GoOP2 and prints the figures side by side in one
// run, so that ratios compare runs made on the same machine at the same
// time: memory bandwidth (a STREAM triad), per-loop host overhead, plan
// construction, an indirect increment loop on a random mesh, the openmp
// schemes on Airfoil, Airfoil's locality, renumbering and tuning on
// sequential and openmp (each loop's GB/s against the STREAM bound, and the
// targets met or not), and Airfoil on sequential and openmp with 1 and 2
// threads, with OP2's own times for reference. With -matrix it also
// measures sparse matrices (issue 23): assembling the P1 Poisson matrix
// against a C program assembling it with PETSc's MatSetValues (PETSc
// loaded at run time; without it that line is skipped), and a CG
// iteration against its memory-bandwidth bound. The compute floor (on by
// default, -floor=false skips it) is a roofline of Airfoil's loops from
// measurements: each loop's time per element on the large mesh against
// the larger of its memory floor (its bytes at the STREAM rate) and its
// in-cache floor (the loop alone, repeated on a mesh small enough for its
// data to stay in cache), with the host backends' SIMD lanes and without
// (-floor-simd, default off,8: each loop's speed-up from lanes). With
// -mgcfd it also times MG-CFD's multigrid
// cycle (internal/mgcfd, a 3-D edge-based Euler solver) on a generated
// multigrid box mesh, sequential and openmp, and with -mgcfd-op2 DIR runs
// the original (warwick-hpsc/MG-CFD-app-OP2 built on OP2-Common, its
// binaries in DIR) on the same mesh, interleaved with GoOP2's runs, and
// prints the ratio GoOP2/OP2; -mgcfd-simd off,8 times each configuration
// with the scalar code and with 8 SIMD lanes, otherwise as configured
// (8+fused: with every loop it can fused); -mgcfd-device cuda also runs the cycles on a
// device backend, and -mgcfd-op2-builds cuda runs the original's CUDA
// build (euler3d_cuda, scripts/op2cuda) beside it instead of the
// sequential and OpenMP ones (seq,openmp, the default). -mgcfd-floor-only measures MG-CFD's loops on the
// finest level against their floors as -floor does Airfoil's, the
// in-cache floor from the cycles on two small meshes.
//
// -gmsh FILE.msh times only reading a Gmsh mesh (package mesh/gmsh) and
// deriving its facets and connectivity (package mesh/topology), each phase
// apart, then declaring it in one call (unstructured.Load), -gmsh-rounds
// times each (docs/perf.md compares them with DOLFINx's; scripts/bench-gmsh
// runs both on a 1.1 M-tetrahedron mesh).
//
// -chains (-chains-only) times Airfoil's loops at once, recorded in lazy
// mode, recorded and fused, and recorded and run in sparse tiles, against
// each other and the memory floor: loop time and bytes per iteration.
//
// -gmsh, -gmsh-load, -gmsh-read and the -...-only flags each run alone
// (but -schemes-only and -locality-only, which run one after the other):
// two of them together are refused, as is a flag adding a section to the
// full run (-floor, -matrix, -mgcfd, -chains) given with one of them, and
// a count out of range; every flag is checked before anything runs.
//
// Usage:
//
//	op2bench [-airfoil-iters 1000] [-threads 2] [-scheme-rounds 5] [-scheme-iters 20] [-locality-iters 100] [-locality-rounds 1] [-matrix]
//	op2bench -schemes-only [-threads 2] [-scheme-rounds 5] [-scheme-iters 20]
//	op2bench -locality-only [-threads 2] [-locality-iters 100] [-locality-rounds 1]
//	op2bench -matrix-only [-threads 2] [-matrix-n 708] [-matrix-rounds 5]
//	op2bench -floor-only [-threads 2] [-floor-iters 10] [-floor-rounds 3] [-floor-kib 256] [-floor-simd off,8]
//	op2bench -mgcfd-floor-only [-threads 2] [-mgcfd-n 65] [-mgcfd-levels 4] [-mgcfd-cycles 50] [-mgcfd-rounds 3] [-mgcfd-floor-small 17,25]
//	op2bench -mgcfd-only [-threads 2] [-mgcfd-n 65] [-mgcfd-levels 4] [-mgcfd-cycles 50] [-mgcfd-rounds 3] [-mgcfd-op2 DIR] [-mgcfd-op2-builds seq,openmp,cuda] [-mgcfd-simd off,8,8+fused] [-mgcfd-device cuda]
//	op2bench -chains-only [-threads 2] [-chains-iters 200] [-chains-rounds 3] [-chains-simd off,8] [-chains-tile 16000]
//	op2bench -gmsh FILE.msh [-gmsh-rounds 3]
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/airfoil"
	opexec "github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/mgcfd"
	"github.com/goop2/op2/internal/plan"
	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/mesh"
)

// stdout is standard output, remembering its first failed write: a
// report that could not be written fails the program.
var stdout = &regfile.ErrWriter{W: os.Stdout}

func main() {
	bench()
	if err := stdout.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "op2bench: writing the report to standard output:", err)
		os.Exit(1)
	}
}

// bench reads the flags and runs what they ask for; it exits with status
// 2 on a bad flag and 1 on an error.
func bench() {
	iters := flag.Int("airfoil-iters", 1000, "Airfoil iterations per run (0 skips Airfoil)")
	threads := flag.Int("threads", 2, "OpenMP threads for the parallel runs")
	rounds := flag.Int("scheme-rounds", 5, "rounds of the openmp scheme comparison on Airfoil (0 skips it)")
	schemeIters := flag.Int("scheme-iters", 20, "Airfoil iterations per round of the scheme comparison")
	only := flag.Bool("schemes-only", false, "run only the openmp scheme comparison")
	locIters := flag.Int("locality-iters", 100, "Airfoil iterations per run of the locality and tuning comparison (0 skips it)")
	locRounds := flag.Int("locality-rounds", 1, "rounds of the locality and tuning comparison, the runs interleaved; medians are printed")
	locOnly := flag.Bool("locality-only", false, "run only the STREAM triad and the locality and tuning comparison")
	matrix := flag.Bool("matrix", false, "also measure matrix assembly (against PETSc) and CG iterations")
	matOnly := flag.Bool("matrix-only", false, "run only the STREAM triad and the matrix section")
	matN := flag.Int("matrix-n", 708, "the matrix section's mesh has n×n squares, 2n² triangles")
	matRounds := flag.Int("matrix-rounds", 5, "rounds of the matrix section, the runs interleaved; medians are printed")
	floor := flag.Bool("floor", true, "measure the compute floor: each Airfoil loop against max(memory floor, in-cache floor)")
	flOnly := flag.Bool("floor-only", false, "run only the STREAM triad and the compute floor")
	flIters := flag.Int("floor-iters", 10, "Airfoil iterations per round of the compute floor on the large mesh")
	flRounds := flag.Int("floor-rounds", 3, "rounds of the compute floor, the runs interleaved; the best is printed")
	flKiB := flag.Int("floor-kib", 256, "the compute floor's in-cache meshes: each loop's bytes per call, KiB")
	flSIMD := flag.String("floor-simd", "off,8", "the compute floor's SIMD settings, comma separated (Config.SIMD: off for the scalar code, 4 or 8 lanes)")
	mg := flag.Bool("mgcfd", false, "also time MG-CFD's multigrid cycle (against the original with -mgcfd-op2)")
	mgOnly := flag.Bool("mgcfd-only", false, "run only the MG-CFD section")
	mgN := flag.Int("mgcfd-n", 65, "MG-CFD's box mesh has n×n×n nodes on the finest level")
	mgLevels := flag.Int("mgcfd-levels", 4, "MG-CFD's multigrid levels, each coarser by 2 per direction (n−1 must be a multiple of 2^(levels−1))")
	mgCycles := flag.Int("mgcfd-cycles", 50, "MG-CFD multigrid cycles per run")
	mgRounds := flag.Int("mgcfd-rounds", 3, "rounds of the MG-CFD section, the runs interleaved; medians and bests are printed")
	mgSIMD := flag.String("mgcfd-simd", "", "MG-CFD's SIMD settings, comma separated (Config.SIMD: off for the scalar code, 4 or 8 lanes; empty: as configured), each run otherwise as configured (by default lazy, loops fused where that pays); a setting followed by +fused records the loops and fuses them all it can (Config.Fusion on), e.g. 8+fused")
	mgDevice := flag.String("mgcfd-device", "", "a device backend (cuda or opencl) on which MG-CFD's cycles also run")
	mgDeviceOnly := flag.Bool("mgcfd-device-only", false, "with -mgcfd-device, leave MG-CFD's host runs out")
	mgFloor := flag.Bool("mgcfd-floor-only", false, "run only the STREAM triad and MG-CFD's loops against their compute floor (-mgcfd-n, -mgcfd-levels, -mgcfd-cycles, -mgcfd-rounds)")
	mgFloorSmall := flag.String("mgcfd-floor-small", "17,25", "nodes per side of the two small meshes of MG-CFD's in-cache floor")
	mgOP2 := flag.String("mgcfd-op2", "", "folder of the original MG-CFD's binaries built on OP2-Common (euler3d_genseq or euler3d_seq, euler3d_openmp, euler3d_cuda), run on the same mesh")
	mgOP2Builds := flag.String("mgcfd-op2-builds", "seq,openmp", "the original's builds run from -mgcfd-op2, comma separated: seq and openmp beside GoOP2's sequential and openmp runs, cuda (euler3d_cuda) beside the -mgcfd-device run")
	ch := flag.Bool("chains", false, "also time Airfoil's loops recorded in chains (lazy mode), fused, against eager execution")
	chOnly := flag.Bool("chains-only", false, "run only the STREAM triad and the loop-chain section")
	chIters := flag.Int("chains-iters", 200, "Airfoil iterations per run of the loop-chain section")
	chRounds := flag.Int("chains-rounds", 3, "rounds of the loop-chain section, the runs interleaved; medians are printed")
	chSIMD := flag.String("chains-simd", "off,8", "the loop-chain section's SIMD settings, comma separated (Config.SIMD)")
	chModes := flag.String("chains-modes", "", "the loop-chain section's modes to run besides eager, comma separated (default, auto-tiles, chain, chain+fusion, chain+tiling, chain+fus+tile; empty: all)")
	chMore := flag.String("chains-more-tiles", "", "more tile sizes in cells, comma separated: the loop-chain section runs each fused and tiled (mode fus+tile/N)")
	chTile := flag.Int("chains-tile", 16000, "the loop-chain section's tile size in cells for its tiled modes (Config.Tile; 0: no tiled modes)")
	gmshPath := flag.String("gmsh", "", "time only reading this Gmsh mesh (.msh), deriving its facets and connectivity, each phase apart, and declaring it (unstructured.Load)")
	gmshRounds := flag.Int("gmsh-rounds", 3, "rounds of -gmsh; medians are printed")
	gmshLoad := flag.String("gmsh-load", "", "only load this Gmsh mesh (.msh) with unstructured.Load, on one process or each rank under mpirun, and print each rank's seconds and peak memory")
	gmshRead := flag.String("gmsh-read", "", "only measure the memory that reading a rank's part of this Gmsh mesh (.msh, or a CGNS file) takes, whole and streamed, for 2 and 4 ranks, in one process")
	cpuProfile := flag.String("cpuprofile", "", "write a Go CPU profile of the run to this file (go tool pprof; MG-CFD's timed runs carry the label run=NAME, for -tagfocus)")
	flag.Parse()
	if err := regfile.EmptyOutput(flag.CommandLine, "cpuprofile"); err != nil {
		fmt.Fprintln(os.Stderr, "op2bench:", err)
		os.Exit(2)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "op2bench: unexpected arguments %q (flags only; -h lists them)\n", flag.Args())
		os.Exit(2)
	}
	for _, f := range []struct {
		name, value string
		fused       bool
	}{{"floor-simd", *flSIMD, false}, {"chains-simd", *chSIMD, false}, {"mgcfd-simd", *mgSIMD, true}} {
		if err := checkSIMDList(f.name, f.value, f.fused); err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(2)
		}
	}
	if err := checkFlags(flag.CommandLine); err != nil {
		fmt.Fprintln(os.Stderr, "op2bench:", err)
		os.Exit(2)
	}
	if err := regfile.CheckOutputs([]regfile.Named{{Flag: "-gmsh", Path: *gmshPath}, {Flag: "-gmsh-load", Path: *gmshLoad}, {Flag: "-gmsh-read", Path: *gmshRead}},
		[]regfile.Named{{Flag: "-cpuprofile", Path: *cpuProfile}}); err != nil {
		fmt.Fprintln(os.Stderr, "op2bench:", err)
		os.Exit(2)
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(1)
		}
		defer stop()
	}
	if *gmshRead != "" {
		fmt.Fprintf(stdout, "op2bench: %d CPUs (%s)\n", numCPU(), cpuModel())
		if err := gmshReadSection(stdout, *gmshRead); err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(1)
		}
		return
	}
	if *gmshLoad != "" {
		if op2.Rank() == 0 {
			fmt.Fprintf(stdout, "op2bench: %d CPUs (%s)\n", numCPU(), cpuModel())
		}
		err := gmshLoadSection(stdout, *gmshLoad)
		if err == nil {
			err = op2.Finalize()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(1)
		}
		return
	}
	if *gmshPath != "" {
		fmt.Fprintf(stdout, "op2bench: %d CPUs (%s)\n\n", numCPU(), cpuModel())
		if err := gmshSection(stdout, *gmshPath, *gmshRounds); err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(1)
		}
		return
	}
	chOpts := chainOpts{iters: *chIters, rounds: *chRounds, threads: *threads, simd: strings.Split(*chSIMD, ","), tile: *chTile}
	if *chModes != "" {
		chOpts.modes = strings.Split(*chModes, ",")
	}
	if *chMore != "" {
		for _, v := range strings.Split(*chMore, ",") {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "op2bench: -chains-more-tiles %q: want positive tile sizes, comma separated\n", *chMore)
				os.Exit(2)
			}
			chOpts.moreTiles = append(chOpts.moreTiles, n)
		}
	}
	if *ch || *chOnly {
		if _, err := chainModes(chOpts.tile, chOpts.moreTiles, chOpts.modes); err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(2)
		}
	}
	if *chOnly {
		onlySection(*threads, func(m *mesh.Mesh, triad1, triadN float64) error {
			return chainSection(stdout, m, chOpts, triad1, triadN)
		})
		return
	}
	if *ch {
		chainSettings = &chOpts
	}
	mgOpts := mgcfdOpts{n: *mgN, levels: *mgLevels, cycles: *mgCycles, rounds: *mgRounds, threads: *threads, op2Dir: *mgOP2, device: *mgDevice, deviceOnly: *mgDeviceOnly}
	if *mgSIMD != "" {
		mgOpts.simd = strings.Split(*mgSIMD, ",")
	}
	if *mgOP2Builds != "" {
		mgOpts.op2Builds = strings.Split(*mgOP2Builds, ",")
	}
	if *mg || *mgOnly || *mgFloor {
		if err := mgOpts.check(); err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(2)
		}
	}
	if *mg || *mgOnly {
		// A device that is not available stops the run before anything
		// is measured, not after the sections before MG-CFD's.
		if err := mgOpts.checkDevice(); err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(1)
		}
	}
	if *mgFloor {
		small, err := mgcfdSmall(*mgFloorSmall, *mgN, *mgLevels)
		if err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(2)
		}
		fmt.Fprintf(stdout, "op2bench: %d CPUs (%s), openmp runs with %d threads (OP2_OPENMP_SCHEME %s)\n\n", numCPU(), cpuModel(), *threads, schemeName())
		triad1, triadN, err := stream(stdout, *threads)
		if err == nil {
			err = mgcfdFloorSection(stdout, mgOpts, small, triad1, triadN)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(1)
		}
		return
	}
	if *mgOnly {
		fmt.Fprintf(stdout, "op2bench: %d CPUs (%s), openmp runs with %d threads (OP2_OPENMP_SCHEME %s)\n\n", numCPU(), cpuModel(), *threads, schemeName())
		if err := mgcfdSection(stdout, mgOpts); err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(1)
		}
		return
	}
	if *mg {
		mgcfdSettings = &mgOpts
	}
	if *flOnly {
		onlySection(*threads, func(m *mesh.Mesh, triad1, triadN float64) error {
			return floorSection(stdout, m, *threads, *flIters, *flRounds, *flKiB<<10, triad1, triadN, strings.Split(*flSIMD, ","))
		})
		return
	}
	if *floor {
		floorIters, floorRounds, floorBudget, floorSIMD = *flIters, *flRounds, *flKiB<<10, strings.Split(*flSIMD, ",")
	}
	if *matOnly {
		err := func() error {
			fmt.Fprintf(stdout, "op2bench: %d CPUs (%s), openmp runs with %d threads (OP2_OPENMP_SCHEME %s)\n\n", numCPU(), cpuModel(), *threads, schemeName())
			triad1, triadN, err := stream(stdout, *threads)
			if err != nil {
				return err
			}
			return matrixSection(stdout, *matN, *matRounds, *threads, triad1, triadN)
		}()
		if err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(1)
		}
		return
	}
	if *matrix {
		matrixN, matrixRounds = *matN, *matRounds
	}
	if *only || *locOnly {
		m, err := mesh.Generate(400, 600)
		if err == nil && *only {
			err = schemes(stdout, m, *threads, *rounds, *schemeIters)
		}
		if err == nil && *locOnly {
			err = localityOnly(stdout, m, *threads, *locIters, *locRounds)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "op2bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := runAll(stdout, *iters, *threads, *rounds, *schemeIters, *locIters, *locRounds); err != nil {
		fmt.Fprintln(os.Stderr, "op2bench:", err)
		os.Exit(1)
	}
}

// onlySection runs one section alone (a -...-only flag): the machine's
// line, the STREAM triad, then f on Airfoil's built-in mesh with the
// triad rates; it exits with status 1 on error.
func onlySection(threads int, f func(m *mesh.Mesh, triad1, triadN float64) error) {
	err := func() error {
		fmt.Fprintf(stdout, "op2bench: %d CPUs (%s), openmp runs with %d threads (OP2_OPENMP_SCHEME %s)\n\n", numCPU(), cpuModel(), threads, schemeName())
		triad1, triadN, err := stream(stdout, threads)
		if err != nil {
			return err
		}
		m, err := mesh.Generate(400, 600)
		if err != nil {
			return err
		}
		return f(m, triad1, triadN)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "op2bench:", err)
		os.Exit(1)
	}
}

// localityOnly measures the STREAM triad and runs the locality and tuning
// comparison: rounds rounds of iters iterations per configuration.
func localityOnly(out io.Writer, m *mesh.Mesh, threads, iters, rounds int) error {
	fmt.Fprintf(out, "op2bench: %d CPUs, openmp runs with %d threads (OP2_OPENMP_SCHEME %s)\n\n", numCPU(), threads, schemeName())
	triad1, triadN, err := stream(out, threads)
	if err != nil {
		return err
	}
	return localityAndTuning(out, m, iters, threads, rounds, triad1, triadN)
}

// schemeName is the openmp scheme the environment chooses.
func schemeName() string {
	if s := os.Getenv("OP2_OPENMP_SCHEME"); s != "" {
		return s
	}
	return "default"
}

func run(out io.Writer, airfoilIters, threads, schemeRounds, schemeIters int) error {
	return runAll(out, airfoilIters, threads, schemeRounds, schemeIters, 0, 0)
}

// matrixN and matrixRounds are the matrix section's mesh size and rounds
// in a full run (-matrix); 0 rounds skip it.
var matrixN, matrixRounds int

// mgcfdSettings are the MG-CFD section's settings in a full run (-mgcfd);
// nil skips it.
var mgcfdSettings *mgcfdOpts

// floorIters, floorRounds and floorBudget are the compute floor's
// iterations and rounds on the large mesh and its in-cache bytes per call
// in a full run (-floor); 0 rounds skip it.
var floorIters, floorRounds, floorBudget int

// chainSettings are the loop-chain section's settings in a full run
// (-chains); nil skips it.
var chainSettings *chainOpts

// checkSIMDList refuses a -NAME flag's comma-separated SIMD settings
// unless each is a Config.SIMD value (followed by "+fused" where fused
// allows it), so that a typo stops the run before its STREAM triad
// rather than after. An empty list is allowed: it means "as configured".
func checkSIMDList(name, list string, fused bool) error {
	if list == "" {
		return nil
	}
	for _, v := range strings.Split(list, ",") {
		s := v
		if fused {
			s, _ = strings.CutSuffix(s, "+fused")
		}
		if s == "" {
			return fmt.Errorf("-%s %q: an empty setting (want SIMD settings, comma separated, e.g. off,8)", name, list)
		}
		if _, _, err := opexec.ParseSIMD(s); err != nil {
			return fmt.Errorf("-%s %q: %v", name, list, err)
		}
	}
	return nil
}

// checkFlags refuses, before anything runs, flags that conflict (two
// that each run alone, or a section added to the full run with one that
// leaves the full run out) and flag values that the sections they reach
// cannot run with, naming the flags and their values.
func checkFlags(fs *flag.FlagSet) error {
	get := func(name string) any { return fs.Lookup(name).Value.(flag.Getter).Get() }
	intFlag := func(name string) int { return get(name).(int) }
	boolFlag := func(name string) bool { return get(name).(bool) }
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// The modes: each runs alone, leaving out the full run's sections;
	// -schemes-only and -locality-only run one after the other.
	var modes []string
	for _, name := range []string{"gmsh", "gmsh-load", "gmsh-read"} {
		if get(name).(string) != "" {
			modes = append(modes, name)
		}
	}
	for _, name := range []string{"schemes-only", "locality-only", "floor-only", "matrix-only", "mgcfd-only", "mgcfd-floor-only", "chains-only"} {
		if boolFlag(name) {
			modes = append(modes, name)
		}
	}
	if len(modes) > 1 && !slices.Equal(modes, []string{"schemes-only", "locality-only"}) {
		return fmt.Errorf("-%s and -%s: each runs alone, give one of them", modes[0], modes[1])
	}
	full := len(modes) == 0
	for _, s := range []struct{ add, only string }{{"floor", "floor-only"}, {"matrix", "matrix-only"}, {"mgcfd", "mgcfd-only"}, {"chains", "chains-only"}} {
		if !full && set[s.add] && boolFlag(s.add) && modes[0] != s.only {
			return fmt.Errorf("-%s adds its section to the full run, which -%s leaves out: give one of them", s.add, modes[0])
		}
	}
	runs := func(add, only string) bool { return boolFlag(only) || full && boolFlag(add) }
	// atLeast refuses flag name's value below min; why says what the
	// value means or when the flag matters.
	atLeast := func(name string, min int, why string) error {
		if v := intFlag(name); v < min {
			return fmt.Errorf("-%s %d: want at least %d%s", name, v, min, why)
		}
		return nil
	}
	errs := []error{atLeast("threads", 1, ""), atLeast("airfoil-iters", 0, " (0 skips Airfoil)")}
	if boolFlag("schemes-only") {
		errs = append(errs, atLeast("scheme-rounds", 1, " with -schemes-only"))
	} else {
		errs = append(errs, atLeast("scheme-rounds", 0, " (0 skips the scheme comparison)"))
	}
	if boolFlag("schemes-only") || full && intFlag("scheme-rounds") > 0 {
		errs = append(errs, atLeast("scheme-iters", 1, ""))
	}
	if boolFlag("locality-only") {
		errs = append(errs, atLeast("locality-iters", 1, " with -locality-only"))
	} else {
		errs = append(errs, atLeast("locality-iters", 0, " (0 skips the locality comparison)"))
	}
	if boolFlag("locality-only") || full && intFlag("locality-iters") > 0 {
		errs = append(errs, atLeast("locality-rounds", 1, ""))
	}
	if runs("floor", "floor-only") {
		why := ""
		if full {
			why = " (-floor=false leaves the compute floor out)"
		}
		errs = append(errs, atLeast("floor-iters", 1, why), atLeast("floor-rounds", 1, why), atLeast("floor-kib", 1, why))
	}
	if runs("matrix", "matrix-only") {
		errs = append(errs, atLeast("matrix-n", 1, ""), atLeast("matrix-rounds", 1, ""))
	}
	if runs("mgcfd", "mgcfd-only") || boolFlag("mgcfd-floor-only") {
		errs = append(errs, atLeast("mgcfd-cycles", 1, ""), atLeast("mgcfd-rounds", 1, ""), checkMGCFDMesh("mgcfd-n", strconv.Itoa(intFlag("mgcfd-n")), intFlag("mgcfd-n"), intFlag("mgcfd-levels")),
			checkMGCFDDevice(get("mgcfd-device").(string)))
	}
	if boolFlag("mgcfd-floor-only") {
		_, err := mgcfdSmall(get("mgcfd-floor-small").(string), intFlag("mgcfd-n"), intFlag("mgcfd-levels"))
		errs = append(errs, err)
	}
	if runs("chains", "chains-only") {
		errs = append(errs, atLeast("chains-iters", 1, ""), atLeast("chains-rounds", 1, ""), atLeast("chains-tile", 0, " (0: no tiled modes)"))
	}
	if get("gmsh").(string) != "" {
		errs = append(errs, atLeast("gmsh-rounds", 1, ""))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkMGCFDMesh refuses, as mgcfd.Generate does (mgcfd.CheckSize), a
// box mesh of n nodes per side in levels levels, naming flag (-mgcfd-n
// or -mgcfd-floor-small) and its value, so that -mgcfd-floor-only stops
// before its STREAM triad rather than after.
func checkMGCFDMesh(flag, value string, n, levels int) error {
	err := mgcfd.CheckSize(n, levels)
	switch {
	case err == nil:
		return nil
	case err.Fault == mgcfd.FaultLevels:
		return fmt.Errorf("-mgcfd-levels %d: want %s", levels, err.Want)
	case err.Fault == mgcfd.FaultN:
		return fmt.Errorf("-%s %s: want %s nodes per side", flag, value, err.Want)
	}
	return fmt.Errorf("-%s %s with -mgcfd-levels %d: %s", flag, value, levels, err.Want)
}

// mgcfdSmall reads -mgcfd-floor-small, list: the two small meshes of
// MG-CFD's in-cache floor, nodes per side, increasing and smaller than
// the large mesh's n, each in levels levels.
func mgcfdSmall(list string, n, levels int) ([2]int, error) {
	var small [2]int
	parts := strings.Split(list, ",")
	if len(parts) != 2 {
		return small, fmt.Errorf("-mgcfd-floor-small %q: want two sizes, e.g. 17,25", list)
	}
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return small, fmt.Errorf("-mgcfd-floor-small %q: want two sizes, e.g. 17,25", list)
		}
		small[i] = v
	}
	if small[0] >= small[1] || small[1] >= n {
		return small, fmt.Errorf("-mgcfd-floor-small %q: want two increasing sizes smaller than -mgcfd-n %d", list, n)
	}
	for _, v := range small {
		if err := checkMGCFDMesh("mgcfd-floor-small", fmt.Sprintf("%q", list), v, levels); err != nil {
			return small, err
		}
	}
	return small, nil
}

// floorSIMD are the compute floor's SIMD settings (-floor-simd).
var floorSIMD = []string{"off"}

func runAll(out io.Writer, airfoilIters, threads, schemeRounds, schemeIters, localityIters, localityRounds int) error {
	fmt.Fprintf(out, "op2bench: %d CPUs (%s), openmp runs with %d threads (OP2_OPENMP_SCHEME %s)\n\n", numCPU(), cpuModel(), threads, schemeName())
	triad1, triadN, err := stream(out, threads)
	if err != nil {
		return err
	}
	if err := overhead(out); err != nil {
		return err
	}
	m, err := mesh.Generate(400, 600)
	if err != nil {
		return err
	}
	if err := planBuild(out, m); err != nil {
		return err
	}
	if err := randomInc(out, threads); err != nil {
		return err
	}
	if schemeRounds > 0 {
		if err := schemes(out, m, threads, schemeRounds, schemeIters); err != nil {
			return err
		}
	}
	if localityIters > 0 {
		if err := localityAndTuning(out, m, localityIters, threads, localityRounds, triad1, triadN); err != nil {
			return err
		}
	}
	if floorRounds > 0 {
		if err := floorSection(out, m, threads, floorIters, floorRounds, floorBudget, triad1, triadN, floorSIMD); err != nil {
			return err
		}
	}
	if matrixRounds > 0 {
		if err := matrixSection(out, matrixN, matrixRounds, threads, triad1, triadN); err != nil {
			return err
		}
	}
	if mgcfdSettings != nil {
		if err := mgcfdSection(out, *mgcfdSettings); err != nil {
			return err
		}
	}
	if chainSettings != nil {
		if err := chainSection(out, m, *chainSettings, triad1, triadN); err != nil {
			return err
		}
	}
	if airfoilIters > 0 {
		return airfoilRuns(out, m, airfoilIters, threads, triad1, triadN)
	}
	return nil
}

// locRun is one configuration of the locality and tuning comparison:
// Airfoil on a backend and thread count, on a mesh numbering, with or
// without the auto-tuner, and what its rounds measured.
type locRun struct {
	backend  string
	threads  int
	variant  string // "ordered", "shuffled", "shuffled+rcm", "shuffled+rcb", "ordered tuned"
	col      string // the column heading in the per-loop tables
	m        *mesh.Mesh
	renumber string // "", "rcm" or "rcb"
	tune     bool
	// short runs fewer iterations: as many as the loop time of the ordered
	// run on the same backend and thread count allows (see shortIters).
	short bool
	triad float64   // the STREAM triad rate for its thread count, GB/s
	meas  []locMeas // one per round
}

// locMeas is what one round of a locRun measured.
type locMeas struct {
	iters   int              // iterations measured
	loops   []op2.LoopTiming // the timing report of the measured iterations
	perIter float64          // the loops' time per iteration, seconds
	bytes   float64          // bytes moved per iteration (OP2's convention)
}

func (r *locRun) name() string {
	if r.backend == "sequential" {
		return "sequential " + r.variant
	}
	return fmt.Sprintf("openmp %d %s", r.threads, r.variant)
}

// median is the median of f over r's rounds.
func (r *locRun) median(f func(m *locMeas) float64) float64 {
	v := make([]float64, len(r.meas))
	for i := range r.meas {
		v[i] = f(&r.meas[i])
	}
	return median(v)
}

// secs is the median of the rounds' loop times per iteration, times
// iters.
func (r *locRun) secs(iters int) float64 {
	return r.median(func(m *locMeas) float64 { return m.perIter }) * float64(iters)
}

// gbps is the median of the rounds' effective bandwidth of the named
// kernel (0 if it did not run), or of all loops for kernel "".
func (r *locRun) gbps(kernel string) float64 {
	return r.median(func(m *locMeas) float64 {
		if kernel == "" {
			return m.bytes / m.perIter / 1e9
		}
		return m.loop(kernel).GBPerSecond()
	})
}

// mean is the median of the rounds' mean time per call of the named
// kernel, in seconds.
func (r *locRun) mean(kernel string) float64 {
	return r.median(func(m *locMeas) float64 { return m.loop(kernel).Mean().Seconds() })
}

// timeOverBound is the median time over the time the run's bytes take at
// the STREAM triad rate.
func (r *locRun) timeOverBound() float64 {
	return r.median(func(m *locMeas) float64 { return m.perIter / (m.bytes / (r.triad * 1e9)) })
}

// loop returns the timing of the named kernel (zero if it did not run).
func (m *locMeas) loop(kernel string) op2.LoopTiming {
	for _, lt := range m.loops {
		if lt.Kernel == kernel {
			return lt
		}
	}
	return op2.LoopTiming{}
}

// median is the median of v (0 for none).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	sort.Float64s(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// shortIters is how many iterations a short run makes: as many as fit in
// budget seconds at perIter seconds each, at least probe (already run) and
// at most iters.
func shortIters(iters, probe int, budget, perIter float64) int {
	n := iters
	if perIter > 0 && budget > 0 {
		n = int(math.Ceil(budget / perIter))
	}
	return max(min(n, iters), min(probe, iters))
}

// printTarget prints one target line: what, the ratio v against the
// target t (at most t when atMost, else at least) and the verdict.
func printTarget(out io.Writer, what string, v, t float64, atMost bool) {
	op := ">="
	if atMost {
		op = "<="
	}
	fmt.Fprintf(out, "    %-50s %6.2fx  (target %s %.2fx)  %s\n", what, v, op, t, verdict(v, t, atMost))
}

// verdict says whether v meets a target: at most target when atMost,
// else at least target.
func verdict(v, target float64, atMost bool) string {
	if (atMost && v <= target) || (!atMost && v >= target) {
		return "met"
	}
	return "not met"
}

// localityAndTuning runs Airfoil with the mesh ordered (the built-in mesh),
// shuffled at random (locality lost), the shuffled mesh renumbered
// (op2.Renumber, RCM and RCB), and the built-in mesh with the auto-tuner
// (the first round tunes first, in a private cache directory): on
// sequential, and on openmp with threads threads; openmp with 1 thread
// runs the ordered mesh too, for res_calc's speed-up on the same code.
// Each configuration runs once per round, the configurations interleaved,
// and the figures are the rounds' medians. The shuffled mesh without
// renumbering is several times slower: it runs as many iterations as the
// ordered run of its round took time, and its seconds are scaled. It
// prints each run's loop time against the STREAM bound for its thread
// count (triad1 for one thread, triadN for threads threads, GB/s), each
// loop's GB/s side by side, and the comparison's targets, met or not.
func localityAndTuning(out io.Writer, m *mesh.Mesh, iters, threads, rounds int, triad1, triadN float64) error {
	if iters < 1 || threads < 1 || rounds < 1 {
		return fmt.Errorf("locality comparison: %d iterations on %d threads, %d rounds: each must be at least 1", iters, threads, rounds)
	}
	shuffled := m.Shuffled(1)
	tuneDir, err := os.MkdirTemp("", "op2bench-tune-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tuneDir)
	defer op2.ResetTimings()
	defer op2.EnableTiming(false)

	variants := func(backend, abbrev string, threads int, triad float64, tuned bool) []*locRun {
		rs := []*locRun{
			{variant: "ordered", col: abbrev, m: m},
			{variant: "shuffled", col: abbrev + " shuf", m: shuffled, short: true},
			{variant: "shuffled+rcm", col: abbrev + " +rcm", m: shuffled, renumber: "rcm"},
			{variant: "shuffled+rcb", col: abbrev + " +rcb", m: shuffled, renumber: "rcb"},
		}
		if tuned {
			rs = append(rs, &locRun{variant: "ordered tuned", col: abbrev + " tuned", m: m, tune: true})
		}
		for _, r := range rs {
			r.backend, r.threads, r.triad = backend, threads, triad
		}
		return rs
	}
	// The tuner chooses the openmp scheme and plans' block sizes;
	// sequential has one way to run a loop and no plans.
	one := variants("sequential", "seq", 1, triad1, false)
	many := variants("openmp", fmt.Sprintf("omp%d", threads), threads, triadN, true)
	var omp1 *locRun
	groups := [][]*locRun{one, many}
	titles := []string{"1 thread: sequential, and openmp on 1 thread", fmt.Sprintf("%d threads: openmp", threads)}
	if threads > 1 {
		omp1 = &locRun{backend: "openmp", threads: 1, variant: "ordered", col: "omp1", m: m, triad: triad1}
		groups[0] = append(slices.Clip(one), omp1)
	} else {
		titles = []string{"sequential", "openmp, 1 thread"}
	}

	for round := 0; round < rounds; round++ {
		for _, g := range groups {
			for _, r := range g {
				budget := 0.0
				if r.short { // g[0], the ordered run, was measured first
					budget = g[0].meas[round].perIter * float64(iters)
				}
				if err := measureLocRun(r, iters, tuneDir, budget, round == 0); err != nil {
					return fmt.Errorf("%s: %w", r.name(), err)
				}
			}
		}
	}

	if omp1 != nil {
		fmt.Fprintf(out, "Locality and tuning: Airfoil, %d iterations, sequential and openmp (%d threads; the ordered mesh on 1 thread too)", iters, threads)
	} else {
		fmt.Fprintf(out, "Locality and tuning: Airfoil, %d iterations, sequential and openmp (1 thread)", iters)
	}
	if rounds > 1 {
		fmt.Fprintf(out, "; medians of %d rounds, the runs interleaved\n", rounds)
		fmt.Fprintf(out, "  %-28s %6s %9s %15s %11s %11s\n", "run", "iters", "loops s", "(min-max)", "vs ordered", "time/bound")
	} else {
		fmt.Fprintf(out, "\n  %-28s %6s %9s %11s %11s\n", "run", "iters", "loops s", "vs ordered", "time/bound")
	}
	anyShort := false
	for _, g := range groups {
		for _, r := range g {
			ref := r
			if r.backend == g[0].backend && r.threads == g[0].threads {
				ref = g[0]
			}
			n := int(r.median(func(m *locMeas) float64 { return float64(m.iters) }))
			mark := " "
			if n < iters {
				mark, anyShort = "*", true
			}
			fmt.Fprintf(out, "  %-28s %5d%s %9.2f", r.name(), n, mark, r.secs(iters))
			if rounds > 1 {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, m := range r.meas {
					lo, hi = min(lo, m.perIter), max(hi, m.perIter)
				}
				fmt.Fprintf(out, " %15s", fmt.Sprintf("(%.2f-%.2f)", lo*float64(iters), hi*float64(iters)))
			}
			fmt.Fprintf(out, " %10.2fx %10.2fx\n", r.secs(iters)/ref.secs(iters), r.timeOverBound())
		}
	}
	if anyShort {
		fmt.Fprintf(out, "  (*: ran as many iterations as its ordered run's loop time allowed, being several times slower; its seconds are scaled to %d iterations)\n", iters)
	}
	fmt.Fprintf(out, "  (loops s: the loops' own time from op2's timing report, plans, compiles, renumbering and a first warm-up iteration excluded;\n")
	fmt.Fprintf(out, "   vs ordered: against the ordered run on the same backend and threads; time/bound: against the run's bytes, OP2's convention,\n")
	rates := fmt.Sprintf("1 thread %.1f GB/s, %d threads %.1f GB/s", triad1, threads, triadN)
	if threads == 1 {
		rates = fmt.Sprintf("sequential %.1f GB/s, openmp on 1 thread %.1f GB/s", triad1, triadN)
	}
	fmt.Fprintf(out, "   at the STREAM triad rate above for its thread count: %s;\n", rates)
	fmt.Fprintf(out, "   sequential has no tuned run: the tuner chooses the openmp scheme and plans' block sizes, and sequential has neither)\n\n")

	for gi, g := range groups {
		fmt.Fprintf(out, "  per loop, GB/s: %s (STREAM triad %.1f GB/s)\n", titles[gi], g[0].triad)
		fmt.Fprintf(out, "  %-11s", "loop")
		for _, r := range g {
			fmt.Fprintf(out, " %10s", r.col)
		}
		fmt.Fprintln(out)
		for _, lt := range g[0].meas[0].loops {
			fmt.Fprintf(out, "  %-11s", lt.Kernel)
			for _, r := range g {
				fmt.Fprintf(out, " %10.1f", r.gbps(lt.Kernel))
			}
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "  %-11s", "all loops")
		for _, r := range g {
			fmt.Fprintf(out, " %10.1f", r.gbps(""))
		}
		fmt.Fprintf(out, "\n  %-11s", "time/bound")
		for _, r := range g {
			fmt.Fprintf(out, " %9.2fx", r.timeOverBound())
		}
		fmt.Fprintln(out)
		for _, r := range g {
			if r.tune && len(r.meas) > 0 {
				fmt.Fprintf(out, "  %s: the tuner's choices (Config.Tune; LoopTiming.Tuned)\n", r.col)
				for _, lt := range r.meas[len(r.meas)-1].loops {
					fmt.Fprintf(out, "  %-11s %s\n", lt.Kernel, lt.Tuned)
				}
			}
		}
		fmt.Fprintln(out)
	}

	fmt.Fprintln(out, "  targets")
	target := func(what string, v, t float64, atMost bool) { printTarget(out, what, v, t, atMost) }
	for _, r := range many {
		if r.variant == "ordered" || r.variant == "ordered tuned" {
			target(r.name()+": time/bound", r.timeOverBound(), 1.3, true)
		}
	}
	if omp1 != nil {
		if resN := many[0].mean("res_calc"); resN > 0 {
			target(fmt.Sprintf("res_calc speed-up, openmp 1 -> %d threads", threads), omp1.mean("res_calc")/resN, 1.8, false)
			fmt.Fprintf(out, "    %-50s %6.2fx  (for reference)\n", fmt.Sprintf("res_calc speed-up, sequential -> openmp %d threads", threads), one[0].mean("res_calc")/resN)
		}
	} else {
		fmt.Fprintln(out, "    res_calc speed-up from 1 thread: not measured (1 thread only)")
	}
	for _, g := range [][]*locRun{one, many} {
		for _, r := range g {
			if r.renumber != "" {
				target(r.name()+" vs ordered", r.secs(iters)/g[0].secs(iters), 1.1, true)
			}
		}
	}
	fmt.Fprintln(out)
	return nil
}

// measureLocRun runs r's configuration for iters iterations (a short run
// fewer, filling budget seconds of loop time when budget > 0), after one
// warm-up iteration that is not timed, and appends what it measured to
// r.meas. A tuned run runs twice when first is set: the first run tunes
// and saves its choices in tuneDir, the second is measured; later rounds
// start from the saved choices.
func measureLocRun(r *locRun, iters int, tuneDir string, budget float64, first bool) error {
	cfg := op2.Config{Backend: r.backend, Threads: r.threads, Timing: true, Tune: r.tune}
	if r.tune {
		cfg.CacheDir = tuneDir
	}
	if err := op2.Configure(cfg); err != nil {
		return err
	}
	measure := func() (locMeas, error) {
		var m locMeas
		s, err := airfoil.New(r.m)
		if err != nil {
			return m, err
		}
		defer s.Close()
		if r.renumber != "" {
			if _, err := s.Renumber(r.renumber); err != nil {
				return m, err
			}
		}
		// The warm-up iteration touches the data for the first time; a
		// short run would count it over few iterations.
		if _, _, err := s.Iterate(1, io.Discard); err != nil {
			return m, err
		}
		if err := settle(false, func() error { _, _, err := s.Iterate(1, io.Discard); return err }); err != nil {
			return m, err
		}
		// Collect now, so that the collector does not take a core from
		// the loops while they are timed.
		runtime.GC()
		op2.ResetTimings()
		m.iters = iters
		if r.short && budget > 0 {
			probe := min(2, iters)
			if _, _, err := s.Iterate(probe, io.Discard); err != nil {
				return m, err
			}
			m.iters = shortIters(iters, probe, budget, loopSeconds(op2.Timings())/float64(probe))
			if _, _, err := s.Iterate(m.iters-probe, io.Discard); err != nil {
				return m, err
			}
		} else if _, _, err := s.Iterate(iters, io.Discard); err != nil {
			return m, err
		}
		m.loops = op2.Timings()
		m.perIter = loopSeconds(m.loops) / float64(m.iters)
		for _, lt := range m.loops {
			m.bytes += lt.Bytes / float64(m.iters)
		}
		return m, nil
	}
	if r.tune && first {
		if _, err := measure(); err != nil { // tunes and saves the choices
			return err
		}
	}
	m, err := measure()
	if err != nil {
		return err
	}
	r.meas = append(r.meas, m)
	return nil
}

// loopSeconds is the loops' own time in a timing report.
func loopSeconds(ts []op2.LoopTiming) float64 {
	t := 0.0
	for _, lt := range ts {
		t += lt.Time.Seconds()
	}
	return t
}

// best runs f reps times and returns the shortest duration.
func best(reps int, f func() error) (time.Duration, error) {
	min := time.Duration(math.MaxInt64)
	for i := 0; i < reps; i++ {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if d := time.Since(start); d < min {
			min = d
		}
	}
	return min, nil
}

// stream measures a STREAM triad (a = b + s*c over 3 arrays of 20M doubles,
// 24 bytes per element as STREAM counts them) through a GoOP2 direct loop,
// which is a plain C loop compiled with the same flags as every kernel.
func stream(out io.Writer, threads int) (one, many float64, err error) {
	const n = 20_000_000
	set, err := op2.NewSet(n, "stream")
	if err != nil {
		return 0, 0, err
	}
	a, _ := op2.NewDat[float64](set, 1, nil, "a")
	b, _ := op2.NewDat[float64](set, 1, nil, "b")
	c, _ := op2.NewDat[float64](set, 1, nil, "c")
	init := op2.NewKernel("void init(double *b, double *c) { *b = 1.0; *c = 2.0; }", "init")
	triad := op2.NewKernel("void triad(double *a, const double *b, const double *c) { *a = *b + 3.0 * *c; }", "triad")
	fmt.Fprintf(out, "STREAM triad (GoOP2 direct loop, %d doubles per array; best of 10, runs interleaved)\n", n)
	if err := op2.Configure(op2.Config{Threads: threads}); err != nil {
		return 0, 0, err
	}
	if err := op2.ParLoop(init, set, b.Arg(op2.Write), c.Arg(op2.Write)); err != nil {
		return 0, 0, err
	}
	times, err := interleaved([]string{"sequential", "openmp"}, 10, func() error {
		return op2.ParLoop(triad, set, a.Arg(op2.Write), b.Arg(op2.Read), c.Arg(op2.Read))
	})
	if err != nil {
		return 0, 0, err
	}
	one, many = 24*n/times[0].Seconds()/1e9, 24*n/times[1].Seconds()/1e9
	fmt.Fprintf(out, "  %-12s %6.1f GB/s\n", "1 core", one)
	fmt.Fprintf(out, "  %-12s %6.1f GB/s\n", fmt.Sprintf("%d threads", threads), many)
	fmt.Fprintf(out, "  ratio        %6.2fx\n\n", many/one)
	return one, many, nil
}

// overhead measures the host cost of a cached loop on a one-element set.
func overhead(out io.Writer) error {
	fmt.Fprintln(out, "Host overhead of a cached par_loop (1-element set, 2 args incl. a Global INC)")
	set, _ := op2.NewSet(1, "one")
	x, _ := op2.NewDat[float64](set, 1, nil, "x")
	g, _ := op2.NewGlobal[float64](1, nil, "g")
	k := op2.NewKernel("void k(double *x, double *g) { *x += 1; *g += *x; }", "k")
	for _, backend := range []string{"sequential", "openmp"} {
		// Each loop at once (Lazy off): the host's cost of a loop that
		// runs when it is issued.
		if err := op2.Configure(op2.Config{Backend: backend}.Explicit("Lazy")); err != nil {
			return err
		}
		if err := op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)); err != nil {
			return err
		}
		const calls = 200_000
		d, err := best(3, func() error {
			for i := 0; i < calls; i++ {
				if err := op2.ParLoop(k, set, x.Arg(op2.RW), g.Arg(op2.Inc)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-12s %7.0f ns per loop\n", backend, float64(d.Nanoseconds())/calls)
	}
	fmt.Fprintln(out)
	return nil
}

// planBuild times building the plan of Airfoil's res_calc loop: 1 438 600
// edges, two arity-2 maps, increments through one of them.
func planBuild(out io.Writer, m *mesh.Mesh) error {
	in := plan.Input{Core: m.NEdge, Owned: m.NEdge, Exec: m.NEdge, NInds: 4,
		IndSetSize: []int{m.NNode, m.NCell, m.NCell, m.NCell}}
	for idx := 0; idx < 2; idx++ {
		in.Args = append(in.Args, plan.Arg{Ind: 0, Map: m.Edge, Arity: 2, Idx: idx, ElemBytes: 16})
	}
	for idx := 0; idx < 2; idx++ {
		in.Args = append(in.Args, plan.Arg{Ind: 1, Map: m.Ecell, Arity: 2, Idx: idx, ElemBytes: 32})
	}
	for idx := 0; idx < 2; idx++ {
		in.Args = append(in.Args, plan.Arg{Ind: 2, Map: m.Ecell, Arity: 2, Idx: idx, ElemBytes: 8})
	}
	for idx := 0; idx < 2; idx++ {
		in.Args = append(in.Args, plan.Arg{Ind: 3, Map: m.Ecell, Arity: 2, Idx: idx, ElemBytes: 32, Modifies: true})
	}
	fmt.Fprintln(out, "Plan construction, Airfoil res_calc (1 438 600 edges, maps pedge and pecell)")
	for _, bs := range []int{0, 8192} {
		in.BlockSize = bs
		var p *plan.Plan
		d, err := best(5, func() (err error) { p, err = plan.Build(in); return err })
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  block size %-5d %7.1f ms  (%d blocks, %d colours)\n", p.BlockSize, d.Seconds()*1e3, p.NBlocks, p.NColors)
	}
	fmt.Fprintln(out)
	return nil
}

// randomInc times an indirect increment loop on a large random mesh: 4M
// edges scattering into 1M nodes chosen at random, sequential against openmp.
func randomInc(out io.Writer, threads int) error {
	const nEdges, nNodes = 4_000_000, 1_000_000
	r := rand.New(rand.NewPCG(7, 7))
	table := make([]int32, 2*nEdges)
	for i := range table {
		table[i] = int32(r.IntN(nNodes))
	}
	nodes, _ := op2.NewSet(nNodes, "nodes")
	edges, _ := op2.NewSet(nEdges, "edges")
	emap, err := op2.NewMap(edges, nodes, 2, table, "emap")
	if err != nil {
		return err
	}
	w, _ := op2.NewDat(edges, 1, make([]float64, nEdges), "w")
	acc, _ := op2.NewDat[float64](nodes, 2, nil, "acc")
	k := op2.NewKernel(`void scatter(const double *w, double *a, double *b) {
  a[0] += *w; a[1] += 1.0; b[0] -= *w; b[1] += 1.0;
}`, "scatter")
	fmt.Fprintf(out, "Indirect INC on a random mesh (%d edges into %d nodes, dim 2; best of 10, runs interleaved)\n", nEdges, nNodes)
	if err := op2.Configure(op2.Config{Threads: threads}); err != nil {
		return err
	}
	backends := []string{"sequential", "openmp"}
	loop := func() error {
		return op2.ParLoop(k, edges, w.Arg(op2.Read), acc.ArgMap(op2.Inc, emap, 0), acc.ArgMap(op2.Inc, emap, 1))
	}
	times, err := interleaved(backends, 10, loop)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  %-20s %7.1f ms\n", "sequential", times[0].Seconds()*1e3)
	fmt.Fprintf(out, "  %-20s %7.1f ms\n", fmt.Sprintf("openmp %d threads", threads), times[1].Seconds()*1e3)
	fmt.Fprintf(out, "  speed-up             %7.2fx\n\n", times[0].Seconds()/times[1].Seconds())
	return nil
}

// interleaved times f on each backend in turn, rounds times, and returns
// each backend's best time. Interleaving spreads any disturbance from the
// rest of the machine over all backends alike.
func interleaved(backends []string, rounds int, f func() error) ([]time.Duration, error) {
	best := make([]time.Duration, len(backends))
	for i := range best {
		best[i] = time.Duration(math.MaxInt64)
	}
	for _, b := range backends { // compile and plan first
		if err := op2.Use(b); err != nil {
			return nil, err
		}
		if err := f(); err != nil {
			return nil, err
		}
	}
	// Collect now, so that the Go collector does not take a core from the
	// threads while they are timed.
	runtime.GC()
	for r := 0; r < rounds; r++ {
		for i, b := range backends {
			if err := op2.Use(b); err != nil {
				return nil, err
			}
			start := time.Now()
			if err := f(); err != nil {
				return nil, err
			}
			// f's loops may be recorded (lazy mode, the default in one
			// process) or queued on a device: Wait runs them.
			if err := op2.Wait(); err != nil {
				return nil, err
			}
			best[i] = min(best[i], time.Since(start))
		}
	}
	return best, nil
}

// cpuModel is the first CPU's model name in /proc/cpuinfo ("" if none).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range splitLines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func numCPU() int {
	n := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range splitLines(string(b)) {
			if len(line) >= 9 && line[:9] == "processor" {
				n++
			}
		}
	}
	return n
}

func splitLines(s string) []string {
	var lines []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		lines = append(lines, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return lines
}

// OP2's own times on this machine type for 1000 iterations (REFERENCE.md).
var op2Seconds = map[string]string{"sequential": "75-79", "openmp 1": "81-83", "openmp 2": "43"}

// airfoilRuns runs Airfoil on sequential and on openmp with 1 and threads
// threads, then prints the totals against OP2's and the memory bound, and
// the per-loop times side by side.
func airfoilRuns(out io.Writer, m *mesh.Mesh, iters, threads int, triad1, triadN float64) error {
	type runCfg struct {
		name    string
		backend string
		threads int
		triad   float64
	}
	runs := []runCfg{{"sequential", "sequential", 1, triad1}, {"openmp 1", "openmp", 1, triad1}}
	if threads > 1 {
		runs = append(runs, runCfg{fmt.Sprintf("openmp %d", threads), "openmp", threads, triadN})
	}
	fmt.Fprintf(out, "Airfoil, %d iterations on the built-in 720 000-cell mesh\n", iters)
	timers := make([][]op2.LoopTiming, len(runs))
	elapsed := make([]time.Duration, len(runs))
	var bytesPerIter float64
	for i, r := range runs {
		// op2's timing report: each loop waits for its completion, and
		// counts the bytes it must move (op2.LoopTiming.Bytes).
		if err := op2.Configure(op2.Config{Backend: r.backend, Threads: r.threads, Timing: true}); err != nil {
			return err
		}
		op2.ResetTimings()
		s, err := airfoil.New(m)
		if err != nil {
			return err
		}
		rms, d, err := s.Iterate(iters, io.Discard)
		s.Close()
		if err != nil {
			return err
		}
		timers[i], elapsed[i] = op2.Timings(), d
		bytesPerIter = 0
		for _, t := range timers[i] {
			bytesPerIter += t.Bytes / float64(iters)
		}
		last := 0.0
		if len(rms) > 0 {
			last = rms[len(rms)-1]
		}
		fmt.Fprintf(out, "  %-12s %8.2f s   (final rms %.5e)\n", r.name, d.Seconds(), last)
	}
	fmt.Fprintf(out, "\n  %-12s %10s %12s %14s %14s\n", "run", "time s", "OP2 s", "bound s", "time/bound")
	for i, r := range runs {
		bound := bytesPerIter * float64(iters) / (r.triad * 1e9)
		op2s := op2Seconds[r.name]
		if op2s == "" {
			op2s = "-"
		}
		scaled := elapsed[i].Seconds()
		fmt.Fprintf(out, "  %-12s %10.2f %12s %14.2f %13.2fx\n", r.name, scaled, op2s, bound, scaled/bound)
	}
	fmt.Fprintf(out, "  (bound: %.3f GB moved per iteration at the STREAM triad rate measured above)\n", bytesPerIter/1e9)
	fmt.Fprintf(out, "  speed-up openmp %d threads vs sequential: %.2fx\n\n", runs[len(runs)-1].threads, elapsed[0].Seconds()/elapsed[len(runs)-1].Seconds())

	fmt.Fprintf(out, "  per loop, seconds (GB/s)\n  %-10s", "loop")
	for _, r := range runs {
		fmt.Fprintf(out, " %20s", r.name)
	}
	fmt.Fprintln(out)
	for l := range timers[0] {
		fmt.Fprintf(out, "  %-10s", timers[0][l].Kernel)
		for i := range runs {
			t := timers[i][l]
			fmt.Fprintf(out, " %11.2f (%5.1f)", t.Time.Seconds(), t.GBPerSecond())
		}
		fmt.Fprintln(out)
	}
	op2.EnableTiming(false)
	op2.ResetTimings()
	return nil
}

// schemes compares the openmp backend's two schemes for loops that
// increment through maps (owner-compute and block colouring) on Airfoil,
// on 1 and threads threads: rounds rounds of iters iterations per
// configuration, the configurations interleaved so that a disturbance from
// the rest of the machine falls on all of them alike. It prints, per
// configuration, the median and the best round: res_calc's time per call,
// and the time of one whole iteration (all five loops).
func schemes(out io.Writer, m *mesh.Mesh, threads, rounds, iters int) error {
	if threads < 1 || rounds < 1 || iters < 1 {
		return fmt.Errorf("openmp schemes: %d threads, %d rounds, %d iterations: each must be at least 1", threads, rounds, iters)
	}
	type cfg struct {
		scheme  string
		threads int
	}
	var cfgs []cfg
	for _, th := range []int{1, threads} {
		for _, s := range []string{"colour", "owner"} {
			cfgs = append(cfgs, cfg{s, th})
		}
		if threads == 1 {
			break
		}
	}
	res := make([][]float64, len(cfgs)) // res_calc ms per call, per round
	all := make([][]float64, len(cfgs)) // ms per iteration, per round
	for r := 0; r < rounds; r++ {
		for i, c := range cfgs {
			if err := op2.Configure(op2.Config{Backend: "openmp", Threads: c.threads, OpenMPScheme: c.scheme, Timing: true}); err != nil {
				return err
			}
			s, err := airfoil.New(m)
			if err != nil {
				return err
			}
			if _, _, err := s.Iterate(1, io.Discard); err != nil { // plans and programs
				s.Close()
				return err
			}
			if err := settle(false, func() error { _, _, err := s.Iterate(1, io.Discard); return err }); err != nil {
				s.Close()
				return err
			}
			op2.ResetTimings()
			runtime.GC()
			_, _, err = s.Iterate(iters, io.Discard)
			s.Close()
			if err != nil {
				return err
			}
			total := 0.0
			for _, t := range op2.Timings() {
				total += t.Time.Seconds()
				if t.Kernel == "res_calc" {
					res[i] = append(res[i], t.Time.Seconds()*1e3/float64(t.Calls))
				}
			}
			all[i] = append(all[i], total*1e3/float64(iters))
		}
	}
	op2.EnableTiming(false)
	op2.ResetTimings()
	fmt.Fprintf(out, "openmp schemes on Airfoil (%d rounds of %d iterations, interleaved; ms, median / best)\n", rounds, iters)
	fmt.Fprintf(out, "  %-8s %7s %22s %22s\n", "scheme", "threads", "res_calc per call", "iteration")
	for i, c := range cfgs {
		fmt.Fprintf(out, "  %-8s %7d %12.2f / %7.2f %12.2f / %7.2f\n", c.scheme, c.threads,
			median(res[i]), slices.Min(res[i]), median(all[i]), slices.Min(all[i]))
	}
	if threads > 1 {
		for k, s := range []string{"colour", "owner"} {
			fmt.Fprintf(out, "  %-8s res_calc speed-up 1 -> %d threads: %.2fx (medians)\n", s, threads, median(res[k])/median(res[k+2]))
		}
	}
	fmt.Fprintln(out)
	return nil
}

// startCPUProfile starts a Go CPU profile into path and returns what stops
// it and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "op2bench: -cpuprofile:", err)
		}
	}, nil
}
