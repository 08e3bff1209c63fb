package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mgcfd"
)

// mgcfdOpts are the MG-CFD section's settings: the box mesh (n nodes per
// side on the finest of levels levels), the cycles per run, the rounds
// (the runs interleaved), the openmp threads, and the folder of the
// original's binaries built on OP2-Common ("" runs GoOP2 alone).
type mgcfdOpts struct {
	n, levels, cycles, rounds, threads int
	op2Dir                             string
	// simd are the SIMD settings each configuration runs with
	// (Config.SIMD: "off" for the scalar code, "4" or "8" lanes); nil
	// runs the configured one.
	simd []string
	// device is a device backend (cuda or opencl) that also runs the
	// cycles, once ("" runs none); the original's cuda build runs beside
	// it when op2Builds names it.
	device string
	// deviceOnly leaves the host backends' runs out: only device runs.
	deviceOnly bool
	// op2Builds are the original's builds run from op2Dir, each beside
	// GoOP2's run of its kind: seq (op2SeqBinaries) beside sequential,
	// openmp beside openmp, cuda (op2CUDABinaries) beside device. nil
	// runs seq and openmp.
	op2Builds []string
}

// mgcfdRun is one configuration of the MG-CFD section and what its rounds
// measured: GoOP2's cycle times, the timing report of a run with per-loop
// timing after the rounds, and its rms after the last cycle; the original's binary for it (""
// when there is none) and its times and validation verdicts.
type mgcfdRun struct {
	name    string
	backend string
	threads int
	simd    string // Config.SIMD ("" as configured)
	// setting is the -mgcfd-simd entry it runs ("" when none was given).
	setting string
	// fused records the cycles' loops (Config.Lazy) and fuses them
	// (Config.Fusion "on"): a SIMD setting written "8+fused".
	fused  bool
	ours   []float64
	loops  []op2.LoopTiming
	rms    float64
	op2Bin string
	op2    []float64
	valid  []string
	// rmsDiff is the largest relative difference between the rms the
	// original printed for a cycle and GoOP2's (-1: it printed none).
	rmsDiff float64
}

// The original's binaries, as OP2-Common's makefiles name them, the first
// found in the folder used: sequential (the generated sequential code,
// else the plain one), OpenMP and CUDA (scripts/op2cuda builds it).
var (
	op2SeqBinaries  = []string{"euler3d_genseq", "euler3d_seq"}
	op2OMPBinaries  = []string{"euler3d_openmp"}
	op2CUDABinaries = []string{"euler3d_cuda"}
)

// op2Runtime matches the original's line giving the time of its cycles,
// op2RMS a cycle's line with its rms, as a build of the original that
// prints it writes ("Performing MG cycle 3 / 50  rms 4.35e-07"; the
// original itself prints no figure per cycle).
var (
	op2Runtime = regexp.MustCompile(`Max total runtime = ([0-9.eE+-]+)`)
	op2RMS     = regexp.MustCompile(`Performing MG cycle ([0-9]+) / [0-9]+\s+rms ([0-9.eE+-]+)`)
)

// check refuses settings the section cannot run with, before anything
// runs (main calls it as it reads the flags).
func (o *mgcfdOpts) check() error {
	if o.cycles < 1 || o.rounds < 1 || o.threads < 1 {
		return fmt.Errorf("mgcfd: %d cycles, %d rounds, %d threads: each must be at least 1", o.cycles, o.rounds, o.threads)
	}
	if err := checkMGCFDDevice(o.device); err != nil {
		return fmt.Errorf("mgcfd: %w", err)
	}
	if o.deviceOnly && o.device == "" {
		return fmt.Errorf("mgcfd: -mgcfd-device-only wants a device (-mgcfd-device)")
	}
	for _, b := range o.op2Builds {
		switch b {
		case "seq", "openmp":
		case "cuda":
			if o.device == "" {
				return fmt.Errorf("mgcfd: the original's cuda build runs beside GoOP2's device run: -mgcfd-op2-builds cuda wants -mgcfd-device")
			}
		default:
			return fmt.Errorf("mgcfd: -mgcfd-op2-builds: unknown build %q (seq, openmp or cuda)", b)
		}
	}
	return nil
}

// checkMGCFDDevice refuses a -mgcfd-device, name, other than the device
// backends ("" names none).
func checkMGCFDDevice(name string) error {
	switch name {
	case "", "cuda", "opencl":
		return nil
	}
	return fmt.Errorf("-mgcfd-device %q: want cuda or opencl", name)
}

// checkDevice opens o.device's backend, when there is one, and then
// configures the defaults again: a device that is not available (no GPU,
// no driver) stops the section before it prints or measures anything.
func (o *mgcfdOpts) checkDevice() error {
	if o.device == "" {
		return nil
	}
	if err := op2.Configure(op2.Config{Backend: o.device}); err != nil {
		return fmt.Errorf("mgcfd: -mgcfd-device %s: %w", o.device, err)
	}
	return op2.Configure(op2.Config{})
}

// mgcfdSection times MG-CFD's multigrid cycle (internal/mgcfd) on a
// generated box mesh, on sequential and openmp with 1 and o.threads
// threads: o.rounds rounds of o.cycles cycles per configuration (after a
// warm-up cycle that compiles the loops), interleaved. With o.op2Dir it
// also writes the mesh in the original's HDF5 layout to a temporary
// folder and runs the original's binaries from o.op2Dir on it (the builds
// o.op2Builds names), each after GoOP2's run of the same configuration, with -v against GoOP2's
// variables after the cycles (the sequential run's, or with
// o.deviceOnly the device run's; the original then says whether they
// agree to its relative 10⁻⁷), and prints the ratio GoOP2/OP2 of the times of
// the cycles. It prints the medians and bests, the final rms of each
// configuration, and the per-loop times (summed over the levels) of one
// more run of each configuration with per-loop timing on. The rounds run
// without it: timing stamps each loop on a device and counts each loop's
// bytes at its first call, which would add to the cycles' time (on cuda,
// half of MG-CFD's 0.19 s on an H100).
func mgcfdSection(out io.Writer, o mgcfdOpts) error {
	if err := o.check(); err != nil {
		return err
	}
	m, err := mgcfd.Generate(o.n, o.levels)
	if err != nil {
		return err
	}
	base := []mgcfdRun{{name: "sequential", backend: "sequential", threads: 1}, {name: "openmp 1", backend: "openmp", threads: 1}}
	if o.threads > 1 {
		base = append(base, mgcfdRun{name: fmt.Sprintf("openmp %d", o.threads), backend: "openmp", threads: o.threads})
	}
	if o.deviceOnly {
		base = nil
	}
	simd := o.simd
	if len(simd) == 0 {
		simd = []string{""}
	}
	var runs []*mgcfdRun
	for _, b := range base {
		for _, v := range simd {
			r := b
			r.setting = v
			r.simd, r.fused = strings.CutSuffix(v, "+fused")
			if r.simd != "" && r.simd != "off" {
				r.name += " simd" + r.simd
			}
			if r.fused {
				r.name += " fused"
			}
			runs = append(runs, &r)
		}
	}
	if o.device != "" {
		runs = append(runs, &mgcfdRun{name: o.device, backend: o.device, threads: 1})
	}
	// sibling is the run of r's configuration with the first SIMD
	// setting: the one the original runs beside (its times serve all).
	sibling := func(r *mgcfdRun) *mgcfdRun {
		for _, s := range runs {
			if s.backend == r.backend && s.threads == r.threads {
				return s
			}
		}
		return r
	}
	for _, r := range runs {
		r.rmsDiff = -1
	}
	// writer is the run whose variables the originals validate against:
	// the sequential one (with the first SIMD setting), else, with
	// -mgcfd-device-only, the device's. It runs first in each round, so
	// that its files are there for every original of round 0.
	writer := runs[0]
	var dir string
	if o.op2Dir != "" {
		builds := o.op2Builds
		if len(builds) == 0 {
			builds = []string{"seq", "openmp"}
		}
		bins := map[string]string{} // build: its binary
		var names []string
		for _, b := range builds {
			var candidates []string
			switch b {
			case "seq":
				candidates = op2SeqBinaries
			case "openmp":
				candidates = op2OMPBinaries
			case "cuda":
				candidates = op2CUDABinaries
			}
			names = append(names, candidates...)
			if bin := findBinary(o.op2Dir, candidates); bin != "" {
				bins[b] = bin
			}
		}
		if len(bins) == 0 {
			return fmt.Errorf("mgcfd: -mgcfd-op2 %s holds none of the original's binaries (%s)", o.op2Dir, strings.Join(names, ", "))
		}
		for _, r := range runs {
			switch {
			case sibling(r) != r:
			case r.backend == o.device:
				r.op2Bin = bins["cuda"]
			case r.backend == "sequential":
				r.op2Bin = bins["seq"]
			case r.backend == "openmp":
				r.op2Bin = bins["openmp"]
			}
		}
		if dir, err = os.MkdirTemp("", "op2bench-mgcfd-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if _, err := mgcfd.WriteHDF5(dir, m); err != nil {
			return err
		}
	}
	if err := o.checkDevice(); err != nil {
		return err
	}
	fine := m.Levels[0]
	fmt.Fprintf(out, "MG-CFD, %s on a %d-level box mesh (%d nodes, %d edges on the finest level); %s\n",
		plural(o.cycles, "multigrid cycle"), o.levels, fine.NNodes, fine.NEdges, cpuModel())
	fmt.Fprintf(out, "  (%s, the runs interleaved; times are of the cycles alone", plural(o.rounds, "round"))
	if dir != "" {
		fmt.Fprintf(out, "; OP2: the original built on OP2-Common, from %s, on the same mesh in its HDF5 layout, validated against GoOP2's %s run", o.op2Dir, writer.name)
	}
	fmt.Fprintln(out, ")")
	defer op2.ResetTimings()
	defer op2.EnableTiming(false)
	for _, r := range runs { // compile every loop first
		if err := op2.Configure(r.config(false)); err != nil {
			return err
		}
		if _, _, err := mgcfdCycles(m, 1, nil); err != nil {
			return err
		}
	}
	for round := 0; round < o.rounds; round++ {
		for _, r := range runs {
			if err := op2.Configure(r.config(false)); err != nil {
				return err
			}
			runtime.GC()
			solution := ""
			if dir != "" && round == 0 && r == writer {
				solution = dir // the originals validate against these variables
			}
			var rms []float64
			var d time.Duration
			// The label names the run in a CPU profile (-cpuprofile).
			pprof.Do(context.Background(), pprof.Labels("run", r.name), func(context.Context) {
				rms, d, err = mgcfdCycles(m, o.cycles, func(s *mgcfd.Solver) error {
					if solution == "" {
						return nil
					}
					return mgcfd.WriteSolution(solution, s, o.cycles)
				})
			})
			if err != nil {
				return err
			}
			r.ours = append(r.ours, d.Seconds())
			r.rms = rms[len(rms)-1]
			if r.op2Bin != "" {
				secs, verdict, theirs, err := runOP2(r.op2Bin, dir, o.cycles, r.threads)
				if err != nil {
					return err
				}
				r.op2 = append(r.op2, secs)
				r.valid = append(r.valid, verdict)
				for c, v := range theirs {
					if c < len(rms) {
						r.rmsDiff = max(r.rmsDiff, math.Abs(v-rms[c])/math.Abs(rms[c]))
					}
				}
			}
		}
	}
	for _, r := range runs { // the per-loop table, from timed runs
		if err := op2.Configure(r.config(true)); err != nil {
			return err
		}
		op2.ResetTimings()
		if _, _, err := mgcfdCycles(m, o.cycles, nil); err != nil {
			return err
		}
		r.loops = op2.Timings()
	}
	fmt.Fprintf(out, "\n  %-12s %22s %22s %12s   %s\n", "run", "GoOP2 s median / best", "OP2 s median / best", "GoOP2/OP2", "final rms")
	for _, r := range runs {
		op2s, ratio := fmt.Sprintf("%22s", "-"), fmt.Sprintf("%12s", "-")
		if o2 := sibling(r).op2; len(o2) > 0 {
			op2s = fmt.Sprintf("%12.3f / %7.3f", median(o2), slices.Min(o2))
			ratio = fmt.Sprintf("%11.2fx", median(r.ours)/median(o2))
		}
		fmt.Fprintf(out, "  %-12s %12.3f / %7.3f %s %s   %.10e\n", r.name, median(r.ours), slices.Min(r.ours), op2s, ratio, r.rms)
	}
	for _, r := range runs {
		if len(r.valid) > 0 {
			agree := ""
			if r.rmsDiff >= 0 {
				agree = fmt.Sprintf("; its rms of every cycle within %.1e (relative) of GoOP2's", r.rmsDiff)
			}
			fmt.Fprintf(out, "  OP2 %s (%s): %s%s\n", r.name, filepath.Base(r.op2Bin), summarise(r.valid), agree)
		}
	}
	// The speed-up of each openmp run on several threads over the
	// sequential run of its -mgcfd-simd setting, like with like.
	for _, r := range runs {
		if r.backend != "openmp" || r.threads < 2 {
			continue
		}
		for _, s := range runs {
			if s.backend == "sequential" && s.setting == r.setting {
				label := ""
				if r.setting != "" {
					label = fmt.Sprintf(", both -mgcfd-simd %s", r.setting)
				}
				fmt.Fprintf(out, "  GoOP2 speed-up openmp %d threads vs sequential%s: %.2fx (medians)\n", r.threads, label, median(s.ours)/median(r.ours))
				break
			}
		}
	}
	fmt.Fprintf(out, "\n  per loop (summed over the levels), seconds in a run with per-loop timing after the rounds\n  %-18s", "loop")
	for _, r := range runs {
		fmt.Fprintf(out, " %12s", r.name)
	}
	fmt.Fprintln(out)
	for _, k := range append(slices.Clone(mgcfd.Loops), "fused_*") {
		fmt.Fprintf(out, "  %-18s", k)
		for _, r := range runs {
			t := 0.0
			for _, lt := range r.loops {
				if lt.Kernel == k || k == "fused_*" && strings.HasPrefix(lt.Kernel, "fused_") {
					t += lt.Time.Seconds()
				}
			}
			fmt.Fprintf(out, " %12.4f", t)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out)
	return nil
}

// config is r's configuration, timed or not.
func (r *mgcfdRun) config(timing bool) op2.Config {
	c := op2.Config{Backend: r.backend, Threads: r.threads, SIMD: r.simd, Timing: timing}
	if r.fused {
		c.Lazy, c.Fusion = true, "on"
	}
	return c
}

// mgcfdCycles declares m, runs cycles cycles and then after (when not
// nil), and returns the rms of each cycle and the time of the cycles.
func mgcfdCycles(m *mgcfd.Mesh, cycles int, after func(*mgcfd.Solver) error) ([]float64, time.Duration, error) {
	s, err := mgcfd.New(m)
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	rms, d, err := s.Run(cycles, nil)
	if err == nil && after != nil {
		err = after(s)
	}
	return rms, d, err
}

// findBinary is the absolute path of the first of names that is an
// executable file in dir, "" if none is (absolute: runOP2 runs it from
// another folder).
func findBinary(dir string, names []string) string {
	for _, n := range names {
		p, err := filepath.Abs(filepath.Join(dir, n))
		if err != nil {
			return ""
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// runOP2 runs the original binary bin on the mesh in dir for cycles
// cycles with threads OpenMP threads and -v (validation against the
// solution files in dir), and returns the time of its cycles (its "Max
// total runtime"), its validation verdict and the rms of each cycle when
// it prints them (nil when not).
func runOP2(bin, dir string, cycles, threads int) (float64, string, []float64, error) {
	cmd := exec.Command(bin, "-i", mgcfd.InputFile, "-d", dir, "-g", strconv.Itoa(cycles), "-v")
	cmd.Dir = dir // it writes a CSV of its file-I/O times beside the mesh
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+strconv.Itoa(threads))
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	text := buf.String()
	if err != nil {
		return 0, "", nil, fmt.Errorf("mgcfd: %s: %v; its output ends:\n%s", bin, err, tail(text, 1500))
	}
	mm := op2Runtime.FindStringSubmatch(text)
	if mm == nil {
		return 0, "", nil, fmt.Errorf("mgcfd: %s printed no \"Max total runtime = \" line; its output ends:\n%s", bin, tail(text, 1500))
	}
	secs, err := strconv.ParseFloat(mm[1], 64)
	if err != nil {
		return 0, "", nil, fmt.Errorf("mgcfd: %s: runtime %q: %v", bin, mm[1], err)
	}
	verdict := "no validation line"
	switch {
	case strings.Contains(text, "Validation passed"):
		verdict = "validation against GoOP2's variables passed"
	case strings.Contains(text, "Validation failed"):
		verdict = "validation against GoOP2's variables FAILED"
	}
	var rms []float64
	for _, mm := range op2RMS.FindAllStringSubmatch(text, -1) {
		c, err1 := strconv.Atoi(mm[1])
		v, err2 := strconv.ParseFloat(mm[2], 64)
		if err1 != nil || err2 != nil || c != len(rms)+1 {
			return 0, "", nil, fmt.Errorf("mgcfd: %s: cycle line %q out of order or unreadable", bin, mm[0])
		}
		rms = append(rms, v)
	}
	return secs, verdict, rms, nil
}

// summarise is the verdicts, each once, with their counts.
func summarise(verdicts []string) string {
	counts := map[string]int{}
	var order []string
	for _, v := range verdicts {
		if counts[v] == 0 {
			order = append(order, v)
		}
		counts[v]++
	}
	parts := make([]string, len(order))
	for i, v := range order {
		parts[i] = fmt.Sprintf("%s (%d of %d runs)", v, counts[v], len(verdicts))
	}
	return strings.Join(parts, "; ")
}

// plural is n and what, with an s unless n is 1.
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
