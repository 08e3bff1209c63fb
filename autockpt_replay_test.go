package op2_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/mesh"
)

// replayProgram is a time-stepping program on the nodes of a block mesh
// whose steps depend on more than Dats and Globals, for the automatic
// checkpoints' restarts. A set-up loop flags the nodes left of x = 0.4;
// then, by mode:
//
//   - "subset": the host reads the flags (Data) and builds a Subset of
//     the flagged nodes; each step relaxes u and adds 1 over the subset;
//   - "mat-once": a matrix (a mass matrix plus the identity) is assembled
//     once, before the steps; each step sets t = A u (Mult) and relaxes u
//     towards it;
//   - "solve-each": each step assembles a matrix depending on u and the
//     flags and solves A v = u by CG, then sets u from v;
//   - "read-between": each step relaxes u, the host sums w, and a loop
//     sets w = u: the checkpoint comes before the first loop, listing w,
//     which the second writes whole, to be decided later, and the host's
//     read between has it saved.
//
// Every step sums u into a Global, whose value the step reports with
// the step number. Rank killRank kills itself with SIGKILL after step
// killAt (0: never).
func replayProgram(t *testing.T, mode string, steps, killAt, killRank int) []string {
	t.Helper()
	m, err := mesh.GenerateBlock(12, 8, op2.Rank(), op2.Ranks())
	if err != nil {
		t.Fatal(err)
	}
	nodes := must(op2.NewSet(m.NNode, "nodes"))
	cells := must(op2.NewSet(m.NCell, "cells"))
	pcell := must(op2.NewMap(cells, nodes, 4, m.Cell, "pcell"))
	x := must(op2.NewDat(nodes, 2, m.X, "x"))
	u := must(op2.NewDat[float64](nodes, 1, nil, "u"))
	flag := must(op2.NewDat[float64](nodes, 1, nil, "flag"))
	tmp := must(op2.NewDat[float64](nodes, 1, nil, "t"))
	w := must(op2.NewDat[float64](nodes, 1, nil, "w"))
	sum := must(op2.NewGlobal[float64](1, nil, "sum"))
	// The identity map of the nodes (each rank its block of them).
	whole, err := mesh.GenerateBlock(12, 8, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	start, count := mesh.Block(whole.NNode, op2.Rank(), op2.Ranks())
	self := make([]int32, count)
	for i := range self {
		self[i] = int32(start + i)
	}
	ident := must(op2.NewMap(nodes, nodes, 1, self, "ident"))
	if op2.Ranks() > 1 {
		must(op2.Partition(op2.RCBPartitioner(x)))
	}
	setup := op2.NewKernel(`void rp_setup(const double *x, double *flag, double *u) {
		*flag = x[0] < 0.4 ? 1 : 0;
		*u = x[0] + 2 * x[1];
	}`, "rp_setup")
	check(t, op2.ParLoop(setup, nodes, x.Arg(op2.Read), flag.Arg(op2.Write), u.Arg(op2.Write)))

	relax := op2.NewKernel(`void rp_relax(const double *t, double *u, double *s) {
		*u = 0.5 * *u + 0.25 * *t + 0.01;
		*s += *u;
	}`, "rp_relax")
	var sp *op2.Sparsity
	var A *op2.Mat[float64]
	assemble := func() {
		A.Zero()
		k := op2.NewKernel(`void rp_cell(const double *u0, const double *u1, const double *u2, const double *u3, double *A) {
			double c = 0.05 * (1 + 0.1 * (*u0 * *u0 + *u1 * *u1 + *u2 * *u2 + *u3 * *u3));
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					A[i * 4 + j] = i == j ? 2 * c : -c / 3;
		}`, "rp_cell")
		check(t, op2.ParLoop(k, cells, u.ArgMap(op2.Read, pcell, 0), u.ArgMap(op2.Read, pcell, 1), u.ArgMap(op2.Read, pcell, 2),
			u.ArgMap(op2.Read, pcell, 3), A.Arg(op2.Inc, pcell, pcell)))
		diag := op2.NewKernel(`void rp_ident(const double *flag, double *A) { A[0] = 1 + *flag; }`, "rp_ident")
		check(t, op2.ParLoop(diag, nodes, flag.Arg(op2.Read), A.Arg(op2.Inc, ident, ident)))
	}
	var sub *op2.Subset
	switch mode {
	case "read-between":
	case "subset":
		var idx []int32
		for i, f := range flag.DataRO() {
			if f != 0 {
				idx = append(idx, int32(i))
			}
		}
		sub = must(op2.NewSubset(nodes, idx))
	case "mat-once", "solve-each":
		sp = must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}, {Row: ident, Col: ident}}, "rp_sp"))
		A = must(op2.NewMat[float64](sp, "rp_A"))
		if mode == "mat-once" {
			assemble()
		}
	default:
		t.Fatalf("mode %q", mode)
	}
	solver := must(op2.NewSolver(op2.SolverOptions{Method: "cg", RTol: 1e-12}))
	defer solver.Close()
	add := op2.NewKernel(`void rp_add(double *u) { *u += 1; }`, "rp_add")
	copyK := op2.NewKernel(`void rp_copy(const double *v, double *t) { *t = *v; }`, "rp_copy")
	var lines []string
	for step := 1; step <= steps; step++ {
		sum.Data()[0] = 0
		switch mode {
		case "subset":
			check(t, op2.ParLoop(relax, nodes, flag.Arg(op2.Read), u.Arg(op2.RW), sum.Arg(op2.Inc)))
			check(t, op2.ParLoop(add, sub, u.Arg(op2.RW)))
		case "read-between":
			check(t, op2.ParLoop(relax, nodes, flag.Arg(op2.Read), u.Arg(op2.RW), sum.Arg(op2.Inc)))
			ws := 0.0
			for _, v := range w.DataRO() {
				ws += v
			}
			lines = append(lines, fmt.Sprintf("step %d w %.17g", step, ws))
			check(t, op2.ParLoop(copyK, nodes, u.Arg(op2.Read), w.Arg(op2.Write)))
		case "mat-once":
			check(t, A.Mult(u, tmp))
			check(t, op2.ParLoop(relax, nodes, tmp.Arg(op2.Read), u.Arg(op2.RW), sum.Arg(op2.Inc)))
		case "solve-each":
			assemble()
			info, err := solver.Solve(A, tmp, u)
			check(t, err)
			if !info.Converged {
				t.Fatalf("step %d: %+v", step, info)
			}
			check(t, op2.ParLoop(copyK, nodes, tmp.Arg(op2.Read), u.Arg(op2.Write)))
			check(t, op2.ParLoop(relax, nodes, tmp.Arg(op2.Read), u.Arg(op2.RW), sum.Arg(op2.Inc)))
		}
		lines = append(lines, fmt.Sprintf("step %d sum %.17g", step, sum.DataRO()[0]))
		if step == killAt && op2.Rank() == killRank {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	got := must(u.Gather())
	s := 0.0
	for _, v := range got {
		s += v
	}
	return append(lines, fmt.Sprintf("u sum %.17g, %d values", s, len(got)))
}

// The environment of the replay tests' ranks: replayProgram's mode, the
// file rank 0 writes its lines to, and "step rank" to kill.
const replayModeEnv, replayOutEnv, replayKillEnv = "OP2_TEST_REPLAY_MODE", "OP2_TEST_REPLAY_OUT", "OP2_TEST_REPLAY_KILL"

// replayChild is a replay test's ranks: replayProgram, 12 steps, as the
// environment says.
func replayChild(t *testing.T) {
	var killAt, killRank int
	fmt.Sscan(os.Getenv(replayKillEnv), &killAt, &killRank)
	lines := replayProgram(t, os.Getenv(replayModeEnv), 12, killAt, killRank)
	if op2.Rank() == 0 {
		check(t, os.WriteFile(os.Getenv(replayOutEnv), []byte(strings.Join(lines, "\n")), 0o644))
	}
	check(t, op2.Finalize())
}

// replayRun runs replayChild in mode on ranks ranks, with automatic
// checkpoints every 7 loops to ckpt (none when empty) and rank kill's
// "step rank" killing itself, and returns the lines it printed and the
// job's output (OP2_LOG=info).
func replayRun(t *testing.T, dir, mode string, ranks int, ckpt, kill string) (string, string, error) {
	out := filepath.Join(dir, fmt.Sprintf("out-%s-%d", mode, time.Now().UnixNano()))
	env := []string{replayModeEnv + "=" + mode, replayOutEnv + "=" + out, replayKillEnv + "=" + kill, "OP2_CHECKPOINT_EVERY=7", "OP2_LOG=info"}
	if ckpt != "" {
		env = append(env, "OP2_CHECKPOINT="+ckpt)
	}
	b, err := mpitest.Output(t, ranks, 2*time.Minute, env...)
	if err != nil {
		return "", string(b), err
	}
	got, err := os.ReadFile(out)
	return string(got), string(b), err
}

// TestAutoCheckpointReplaysWhatLoopsBuilt restarts replayProgram's
// four forms from automatic checkpoints written every 7 loops, a rank
// killed after step 8 of 12, on 2 ranks: each prints every line of
// a run never stopped. What the set-up loops produced reaches the steps
// through the host (a subset built from flags), a matrix assembled once,
// or a matrix assembled and solved every step: the restart runs the
// loops again as far as the host last read what loops wrote, or a loop
// assembled a matrix, and skips the rest (its log says how many), which
// for the subset and the matrix assembled once is most of them. The
// subset and the solve each step also run on 1 rank (not with -short).
func TestAutoCheckpointReplaysWhatLoopsBuilt(t *testing.T) {
	if mpitest.InRanks() {
		replayChild(t)
		return
	}
	needHDF5(t)
	dir := t.TempDir()
	skippedRE := regexp.MustCompile(`loops_skipped=(\d+)`)
	// The loops each restart must skip at least.
	skips := map[string]int{"subset": 4, "mat-once": 4, "read-between": 1, "solve-each": 0}
	for _, mode := range []string{"subset", "mat-once", "read-between", "solve-each"} {
		run := func(ranks int, ckpt, kill string) (string, string, error) {
			return replayRun(t, dir, mode, ranks, ckpt, kill)
		}
		rankCounts := []int{2}
		if !testing.Short() && (mode == "subset" || mode == "solve-each") {
			rankCounts = []int{1, 2}
		}
		for _, ranks := range rankCounts {
			want, log, err := run(ranks, "", "")
			if err != nil {
				t.Fatalf("%s, %d ranks, uninterrupted: %v\n%s", mode, ranks, err, log)
			}
			ckpt := filepath.Join(dir, fmt.Sprintf("%s-%d.ckpt", mode, ranks))
			if _, log, err := run(ranks, ckpt, fmt.Sprintf("8 %d", ranks-1)); err == nil {
				t.Fatalf("%s, %d ranks: the run whose rank was killed succeeded:\n%s", mode, ranks, log)
			}
			if _, err := os.Stat(ckpt); err != nil {
				t.Fatalf("%s, %d ranks: no checkpoint after the killed run: %v", mode, ranks, err)
			}
			got, log, err := run(ranks, ckpt, "")
			if err != nil {
				t.Fatalf("%s, %d ranks restarting: %v\n%s", mode, ranks, err, log)
			}
			if got != want {
				t.Errorf("%s, %d ranks restarting printed\n%s\nwant\n%s\nlog:\n%s", mode, ranks, got, want, log)
			}
			sm := skippedRE.FindStringSubmatch(log)
			if sm == nil {
				t.Errorf("%s, %d ranks: the restart logged no restore:\n%s", mode, ranks, log)
				continue
			}
			if n, _ := strconv.Atoi(sm[1]); n < skips[mode] {
				t.Errorf("%s, %d ranks: the restart skipped %d loops; the steps before the checkpoint need not run again:\n%s", mode, ranks, n, log)
			}
		}
	}
}

// TestAutoCheckpointRefusesAnotherPath: a restart that reads on the host
// a dat a skipped loop wrote, which the run that wrote the checkpoint
// did not read there, gets an error saying so, rather than the stale
// values.
func TestAutoCheckpointRefusesAnotherPath(t *testing.T) {
	if mpitest.InRanks() {
		r := newCkptRun(t)
		for range 2 {
			check(t, r.step())
		}
		if _, err := r.q.Range(0, 1); err == nil || !strings.Contains(err.Error(), "this run takes another path") {
			t.Errorf("reading q where the first run did not: %v, want an error saying the run takes another path", err)
		}
		op2.Finalize() // says the run ended before the checkpoint's loop
		return
	}
	path := writeAutoCheckpoint(t)
	mpitest.Run(t, 1, 2*time.Minute, "OP2_CHECKPOINT="+path, "OP2_CHECKPOINT_EVERY=3")
}

// TestAutoCheckpointLeftOutDat: after a restart, a loop that reads a dat
// the checkpoint left out (SetNoCheckpoint), which the skipped loops
// wrote, is refused: its values were not restored.
func TestAutoCheckpointLeftOutDat(t *testing.T) {
	run := func() error {
		r := newCkptRun(t)
		defer r.k.Remove()
		o := must(op2.NewDat[float64](r.q.Set(), 1, nil, "left out"))
		o.SetNoCheckpoint(true)
		inc := op2.NewKernel(`void lo_inc(const double *q, double *o) { *o += q[0]; }`, "lo_inc")
		for range 8 {
			if err := r.step(); err != nil {
				return err
			}
			if err := op2.ParLoop(inc, r.q.Set(), r.q.Arg(op2.Read), o.Arg(op2.RW)); err != nil {
				return err
			}
		}
		return nil
	}
	if mpitest.InRanks() {
		if err := run(); err == nil || !strings.Contains(err.Error(), `left out (SetNoCheckpoint) and loop`) {
			t.Errorf("restarted loops reading a dat left out: %v, want an error saying its values were not restored", err)
		}
		op2.Finalize()
		return
	}
	needHDF5(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	path := filepath.Join(t.TempDir(), "auto.ckpt")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache})) }()
	check(t, op2.Configure(op2.Config{CacheDir: cache, Checkpoint: path, CheckpointEvery: "5"}))
	check(t, run())
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no automatic checkpoint: %v", err)
	}
	mpitest.Run(t, 1, 2*time.Minute, "OP2_CHECKPOINT="+path, "OP2_CHECKPOINT_EVERY=5")
}

// TestAutoCheckpointRefusesOtherLoops: a restart whose loops are not
// those of the run that wrote the checkpoint is refused, rather than
// restored at another place in the program: at the checkpoint's index
// (another kernel there), or earlier, at the first loop the writer
// logged reductions of (another loop before it), before its Globals get
// another loop's values. Every later loop and Finalize return the same
// error; on 2 ranks, on both.
func TestAutoCheckpointRefusesOtherLoops(t *testing.T) {
	const caseEnv = "OP2_TEST_OTHER_LOOPS"
	if mpitest.InRanks() {
		r := newCkptRun(t)
		other := op2.NewKernel(`void ckpt_other(double *q) { q[0] += 1.0; }`, "ckpt_other")
		otherLoop := func() error { return op2.ParLoop(other, r.q.Set(), r.q.Arg(op2.RW)) }
		// The checkpoint was written before the fifth loop; every loop
		// of the writer reduced into low.
		loops := []func() error{r.step, r.step, r.step, r.step, r.step, r.step}
		var at int
		var want string
		switch os.Getenv(caseEnv) {
		case "kernel": // another kernel's loop at the checkpoint's index
			loops[4], at = otherLoop, 4
			want = `up to loop 4 are not those of the run that wrote it (it was written before loop "ckpt_step" over set "cells", this run issues loop "ckpt_other" over set "cells" there)`
		case "before": // another kernel's loop before it
			loops[1], at = otherLoop, 1
			want = `up to loop 1 are not those of the run that wrote it (there loop 1 reduced into Globals after other loops, or was another: here it is loop "ckpt_other" over set "cells")`
		}
		for i, loop := range loops {
			err := loop()
			switch {
			case i < at && err != nil:
				t.Fatalf("loop %d, before the one refused: %v", i, err)
			case i >= at && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("loop %d of a restart issuing other loops: %v, want an error saying %q", i, err, want)
			}
		}
		if err := op2.Finalize(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Finalize after a refused restart: %v, want an error saying %q", err, want)
		}
		return
	}
	path := writeAutoCheckpoint(t)
	for _, c := range []struct {
		what  string
		ranks int
	}{{"kernel", 1}, {"before", 1}, {"kernel", 2}, {"before", 2}} {
		t.Run(fmt.Sprintf("%s-%d", c.what, c.ranks), func(t *testing.T) {
			mpitest.Run(t, c.ranks, 2*time.Minute, "OP2_CHECKPOINT="+path, "OP2_CHECKPOINT_EVERY=3", caseEnv+"="+c.what)
		})
	}
}

// TestAutoCheckpointMatrixOnOtherRankCount: a program that multiplies by
// a matrix (Mult, and a solve each step) restarts from an automatic
// checkpoint written on 2 ranks on 1, though on several ranks each
// product first runs a loop that brings x's halo up to date: GoOP2's own
// loop, which the checkpoints do not count. Its lines are those of a run
// never stopped, to rounding (the skipped steps' sums are the 2 ranks').
func TestAutoCheckpointMatrixOnOtherRankCount(t *testing.T) {
	if mpitest.InRanks() {
		replayChild(t)
		return
	}
	needHDF5(t)
	dir := t.TempDir()
	for _, mode := range []string{"mat-once", "solve-each"} {
		run := func(ranks int, ckpt, kill string) ([]string, string, error) {
			got, log, err := replayRun(t, dir, mode, ranks, ckpt, kill)
			return strings.Split(got, "\n"), log, err
		}
		want, log, err := run(1, "", "")
		if err != nil {
			t.Fatalf("%s, uninterrupted: %v\n%s", mode, err, log)
		}
		ckpt := filepath.Join(dir, mode+".ckpt")
		if _, log, err := run(2, ckpt, "8 1"); err == nil {
			t.Fatalf("%s: the run whose rank was killed succeeded:\n%s", mode, log)
		}
		got, log, err := run(1, ckpt, "")
		if err != nil {
			t.Fatalf("%s: 1 rank restarting the run of 2: %v\n%s", mode, err, log)
		}
		if !strings.Contains(log, "restored the automatic checkpoint") {
			t.Errorf("%s: the restart logged no restore:\n%s", mode, log)
		}
		if !linesClose(got, want, 1e-12) {
			t.Errorf("%s: 1 rank restarting the run of 2 printed\n%s\nwant, to rounding,\n%s", mode, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// linesClose reports whether lines a and b have the same words, numbers
// within a relative tolerance tol.
func linesClose(a, b []string, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		wa, wb := strings.Fields(strings.ReplaceAll(a[i], ",", " ")), strings.Fields(strings.ReplaceAll(b[i], ",", " "))
		if len(wa) != len(wb) {
			return false
		}
		for k := range wa {
			x, errX := strconv.ParseFloat(wa[k], 64)
			y, errY := strconv.ParseFloat(wb[k], 64)
			switch {
			case errX != nil || errY != nil:
				if wa[k] != wb[k] {
					return false
				}
			case math.Abs(x-y) > tol*math.Max(math.Abs(x), math.Abs(y)):
				return false
			}
		}
	}
	return true
}
