package op2_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/checkpoint"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpitest"
)

// autoProgram is a time-stepping program for the automatic checkpoints:
// each step saves q in qold (a loop writing qold whole), then updates q
// from qold through the mesh and takes the minimum of q in a Global, whose
// value the step reports, and the program stops early when it falls
// below a bound (a path taken on a reduction). Rank killRank kills itself
// with SIGKILL after step killAt (0: never). With OP2_TEST_AUTO_READ set
// to "step rank", that rank alone reads q on the host after that step.
func autoProgram(t *testing.T, steps, killAt, killRank int) []string {
	t.Helper()
	readAt, readRank := 0, -1
	fmt.Sscan(os.Getenv("OP2_TEST_AUTO_READ"), &readAt, &readRank)
	r := newCkptRun(t)
	qold := must(op2.NewDat[float64](r.q.Set(), 4, nil, "qold"))
	save := op2.NewKernel(`void auto_save(const double *q, double *qold) { for (int i = 0; i < 4; i++) qold[i] = q[i]; }`, "auto_save")
	update := op2.NewKernel(`void auto_update(const double *qold, double *q, int *n, double *low) {
		for (int i = 0; i < 4; i++) q[i] = 0.5 * qold[i] + 0.25 * q[i] + 0.0625 * (*n);
		*n += 1;
		if (q[0] < *low) *low = q[0];
	}`, "auto_update")
	var lines []string
	for step := 1; step <= steps; step++ {
		check(t, op2.ParLoop(save, r.q.Set(), r.q.Arg(op2.Read), qold.Arg(op2.Write)))
		r.low.Data()[0] = 1e300
		check(t, op2.ParLoop(update, r.q.Set(), qold.Arg(op2.Read), r.q.Arg(op2.RW), r.cnt.Arg(op2.RW), r.low.Arg(op2.Min)))
		low := r.low.DataRO()[0]
		lines = append(lines, fmt.Sprintf("step %d low %.17g", step, low))
		if step == readAt && op2.Rank() == readRank {
			_ = r.q.DataRO()
		}
		if step == killAt && op2.Rank() == killRank {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		if low > 1e6 { // never: a branch on a reduction, as a convergence test is
			break
		}
	}
	res := r.result(t)
	sum := 0.0
	for _, v := range res.Q {
		sum += v
	}
	return append(lines, fmt.Sprintf("q sum %.17g, %d values", sum, len(res.Q)))
}

// TestAutoCheckpoint runs autoProgram with automatic checkpoints every 5
// loops on 1 and 2 ranks, kills a rank after step 9, and starts the run
// again: on the same rank count and on another, it prints every line of a
// run never stopped (the steps before the checkpoint are skipped, their
// reductions replayed from the log). The checkpoint lists qold without
// its values: the loops write it whole before reading it.
func TestAutoCheckpoint(t *testing.T) {
	const outEnv, killEnv = "OP2_TEST_AUTO_OUT", "OP2_TEST_AUTO_KILL"
	if mpitest.InRanks() {
		var killAt, killRank int
		fmt.Sscan(os.Getenv(killEnv), &killAt, &killRank)
		lines := autoProgram(t, 15, killAt, killRank)
		if op2.Rank() == 0 {
			check(t, os.WriteFile(os.Getenv(outEnv), []byte(strings.Join(lines, "\n")), 0o644))
		}
		check(t, op2.Finalize())
		return
	}
	needHDF5(t)
	dir := t.TempDir()
	run := func(ranks int, ckpt, kill string) (string, error) {
		out := filepath.Join(dir, fmt.Sprintf("out-%d", time.Now().UnixNano()))
		env := []string{outEnv + "=" + out, killEnv + "=" + kill, "OP2_CHECKPOINT_EVERY=5"}
		if ckpt != "" {
			env = append(env, "OP2_CHECKPOINT="+ckpt)
		}
		b, err := mpitest.Output(t, ranks, 2*time.Minute, env...)
		if err != nil {
			return string(b), err
		}
		if testing.Verbose() {
			t.Logf("%d ranks, OP2_CHECKPOINT=%q:\n%s", ranks, ckpt, b)
		}
		got, err := os.ReadFile(out)
		return string(got), err
	}
	want, err := run(1, "", "")
	if err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, want)
	}
	// A restart of a restart: rank 1 of 2 alone reads q on the host
	// after step 3, so a restart runs the loops to there again and the
	// log starts after them; the restart on 1 rank, which reads nothing,
	// killed after its own checkpoints, must still leave a file a third
	// run restarts from (its checkpoints once said to run no loop again,
	// and the log held none of them).
	ckpt := filepath.Join(dir, "auto-again.ckpt")
	t.Setenv("OP2_TEST_AUTO_READ", "3 1")
	if out, err := run(2, ckpt, "9 1"); err == nil {
		t.Fatalf("2 ranks: the run whose rank was killed succeeded:\n%s", out)
	}
	if out, err := run(1, ckpt, "13 0"); err == nil {
		t.Fatalf("1 rank: the restarted run killed after step 13 succeeded:\n%s", out)
	}
	if got, err := run(1, ckpt, ""); err != nil || got != want {
		t.Errorf("the restart of a restart: %v\n%s\nwant\n%s", err, got, want)
	}
	os.Unsetenv("OP2_TEST_AUTO_READ")
	for _, c := range []struct{ ranks, restart int }{{1, 1}, {2, 2}, {2, 3}} {
		ckpt := filepath.Join(dir, fmt.Sprintf("auto-%d-%d.ckpt", c.ranks, c.restart))
		if out, err := run(c.ranks, ckpt, fmt.Sprintf("9 %d", c.ranks-1)); err == nil {
			t.Fatalf("%d ranks: the run whose rank was killed succeeded:\n%s", c.ranks, out)
		}
		if _, err := os.Stat(ckpt); err != nil {
			t.Fatalf("%d ranks: no checkpoint after the killed run: %v", c.ranks, err)
		}
		omitted := savedAttr(t, ckpt, "qold")
		got, err := run(c.restart, ckpt, "")
		if err != nil {
			t.Fatalf("%d ranks restarting the run of %d: %v\n%s", c.restart, c.ranks, err, got)
		}
		if got != want {
			t.Errorf("%d ranks restarting the run of %d printed\n%s\nwant\n%s", c.restart, c.ranks, got, want)
		}
		if !omitted {
			t.Errorf("%d ranks: the checkpoint saved qold's values, which the loops write whole before reading", c.ranks)
		}
		// The restarted run's later checkpoints go on with the first
		// run's log: a loop sum for every loop whose reductions it holds.
		checkLoggedSums(t, ckpt)
	}
}

// checkLoggedSums checks that the automatic checkpoint at path holds a
// loop sum (op2.sums: index, sum) for each loop of its log of reductions
// (op2.reductions: index, length, values), in order.
func checkLoggedSums(t *testing.T, path string) {
	t.Helper()
	state, err := checkpoint.State(path)
	if err != nil {
		t.Fatal(err)
	}
	var logged, summed []uint64
	for b := state["op2.reductions"]; len(b) >= 12; {
		logged = append(logged, binary.LittleEndian.Uint64(b))
		b = b[12+binary.LittleEndian.Uint32(b[8:]):]
	}
	for b := state["op2.sums"]; len(b) >= 16; b = b[16:] {
		summed = append(summed, binary.LittleEndian.Uint64(b))
	}
	if len(logged) == 0 || !slices.Equal(logged, summed) {
		t.Errorf("%s: the loops logged %v, the loops summed %v", path, logged, summed)
	}
}

// datNames returns the names of the dats the checkpoint at path lists,
// in its order.
func datNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := h5.Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	for k := 0; ; k++ {
		ds := fmt.Sprintf("dats/%d", k)
		if ok, _ := f.Exists(ds); !ok {
			return names
		}
		n, _, _ := f.StringAttr(ds, "name")
		names = append(names, n)
	}
}

// savedAttr reports whether the checkpoint lists the dat named name
// without its values.
func savedAttr(t *testing.T, path, name string) bool {
	t.Helper()
	f, err := h5.Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for k := 0; ; k++ {
		ds := fmt.Sprintf("dats/%d", k)
		if ok, _ := f.Exists(ds); !ok {
			t.Fatalf("%s lists no dat %q", path, name)
		}
		if n, _, _ := f.StringAttr(ds, "name"); n != name {
			continue
		}
		v, found, err := f.IntAttr(ds, "saved")
		return err == nil && found && v == 0
	}
}

// TestAutoCheckpointBadPath: a checkpoint path that cannot be written
// fails the loop at which the checkpoint is due, naming the path; and a
// file that is not an automatic checkpoint is refused at the first loop.
func TestAutoCheckpointBadPath(t *testing.T) {
	needHDF5(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	gone := filepath.Join(t.TempDir(), "gone")
	check(t, os.Mkdir(gone, 0o755))
	for _, c := range []struct {
		name, path, want string
		later            bool // the loops after the failing one run
	}{
		// A folder that does not exist, or that is removed after
		// Configure (it is not checked there: under MPI ranks that do
		// not write the file need not see it): the loop the checkpoint
		// is due before fails, naming the file; the next checkpoint
		// comes an interval later, and the loops in between run.
		{"no-folder", filepath.Join(t.TempDir(), "no", "such", "dir", "c.ckpt"), "no/such/dir", true},
		{"folder-removed", filepath.Join(gone, "c.ckpt"), "gone/c.ckpt", true},
		{"not-automatic", writeManualCheckpoint(t), "not written by an automatic checkpoint", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			check(t, op2.Configure(op2.Config{CacheDir: cache, Checkpoint: c.path, CheckpointEvery: "4"}))
			defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache})) }()
			if c.name == "folder-removed" {
				check(t, os.Remove(gone))
			}
			r := newCkptRun(t)
			defer r.k.Remove()
			var err error
			for i := 0; i < 6 && err == nil; i++ {
				err = r.step()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("loops with OP2_CHECKPOINT=%s: %v, want an error saying %q", c.path, err, c.want)
			}
			if c.later {
				if err := r.step(); err != nil {
					t.Errorf("the loop after the failed checkpoint: %v, want it to run", err)
				}
			}
		})
	}
}

// writeManualCheckpoint writes a checkpoint with op2.Checkpoint.
func writeManualCheckpoint(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "manual.ckpt")
	check(t, op2.Checkpoint(path, nil))
	return path
}

// TestAutoCheckpointEndsEarly: a run that restarts from an automatic
// checkpoint but ends before the loop it was written at (its loops all
// skipped) is told so by Finalize.
func TestAutoCheckpointEndsEarly(t *testing.T) {
	if mpitest.InRanks() {
		r := newCkptRun(t)
		for range 2 {
			check(t, r.step())
		}
		if err := op2.Finalize(); err == nil || !strings.Contains(err.Error(), "the run ended after 2 loops, before loop") {
			t.Errorf("Finalize: %v, want an error saying the run ended before the checkpoint's loop", err)
		}
		return
	}
	path := writeAutoCheckpoint(t)
	mpitest.Run(t, 1, 2*time.Minute, "OP2_CHECKPOINT="+path, "OP2_CHECKPOINT_EVERY=3")
}

// writeAutoCheckpoint runs 8 steps of newCkptRun in this process with
// automatic checkpoints every 3 loops and returns the file they wrote.
func writeAutoCheckpoint(t *testing.T) string {
	t.Helper()
	needHDF5(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	path := filepath.Join(t.TempDir(), "auto.ckpt")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache})) }()
	r := newCkptRun(t)
	defer r.k.Remove()
	check(t, op2.Configure(op2.Config{CacheDir: cache, Checkpoint: path, CheckpointEvery: "3"}))
	for range 8 {
		check(t, r.step())
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no automatic checkpoint after 8 loops every 3: %v", err)
	}
	return path
}

// TestAutoCheckpointLogBounded: a program that reads its data on the
// host after every loop runs every loop again on a restart, so the log of
// reductions keeps only the loops after the last read: a long run's log
// (and every checkpoint's copy of it) no longer grows with every loop.
func TestAutoCheckpointLogBounded(t *testing.T) {
	needHDF5(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	path := filepath.Join(t.TempDir(), "auto.ckpt")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache})) }()
	r := newCkptRun(t)
	defer r.k.Remove()
	check(t, op2.Configure(op2.Config{CacheDir: cache, Checkpoint: path, CheckpointEvery: "3"}))
	for range 60 {
		check(t, r.step())
		_ = r.q.DataRO()
	}
	state, err := checkpoint.State(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for b := state["op2.reductions"]; len(b) >= 12; b = b[12+binary.LittleEndian.Uint32(b[8:]):] {
		n++
	}
	if n > 4 || len(state["op2.sums"]) != 16*n {
		t.Errorf("after 60 loops, each followed by a read, the checkpoint logs %d loops' reductions and %d bytes of sums, want at most 4 and 16 each", n, len(state["op2.sums"]))
	}
}

// TestAutoCheckpointLoopAllocations: with automatic checkpoints on, a
// loop between checkpoints allocates no more than its log entry needs.
func TestAutoCheckpointLoopAllocations(t *testing.T) {
	needHDF5(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	check(t, op2.Configure(op2.Config{CacheDir: cache, Checkpoint: filepath.Join(t.TempDir(), "a.ckpt"), CheckpointEvery: "1h"}))
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache})) }()
	r := newCkptRun(t)
	defer r.k.Remove()
	check(t, r.step())
	if n := testing.AllocsPerRun(100, func() { check(t, r.step()) }); n > 1 {
		t.Errorf("a loop with automatic checkpoints allocates %v times", n)
	}
}

// TestAutoCheckpointOfARuntime: the automatic checkpoints follow the
// configuration of the runtime a loop runs on: a runtime made with
// Config.Checkpoint writes them though the default runtime names no file,
// and a second runtime naming another file is refused at its first loop.
func TestAutoCheckpointOfARuntime(t *testing.T) {
	const pathEnv = "OP2_TEST_AUTO_RUNTIME"
	if mpitest.InRanks() {
		path := os.Getenv(pathEnv)
		cells := must(op2.NewSet(50, "cells"))
		q := must(op2.NewDat(cells, 1, make([]float64, 50), "q"))
		qold := must(op2.NewDat[float64](cells, 1, nil, "qold"))
		save := op2.NewKernel(`void rt_save(const double *q, double *qold) { *qold = *q; }`, "rt_save")
		update := op2.NewKernel(`void rt_update(const double *qold, double *q) { *q = 0.5 * *qold + 1.0; }`, "rt_update")
		r := must(op2.NewRuntime(op2.Config{Checkpoint: path, CheckpointEvery: "4"}))
		for range 10 {
			check(t, r.ParLoop(save, cells, q.Arg(op2.Read), qold.Arg(op2.Write)))
			check(t, r.ParLoop(update, cells, qold.Arg(op2.Read), q.Arg(op2.RW)))
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("no automatic checkpoint from the runtime whose configuration names %s: %v", path, err)
		}
		other := must(op2.NewRuntime(op2.Config{Checkpoint: path + ".other"}))
		err := other.ParLoop(save, cells, q.Arg(op2.Read), qold.Arg(op2.Write))
		if err == nil || !strings.Contains(err.Error(), "a process has one automatic checkpoint file") {
			t.Errorf("a loop of a runtime naming a second checkpoint file: %v, want an error naming both files", err)
		}
		check(t, op2.Finalize())
		return
	}
	needHDF5(t)
	mpitest.Run(t, 1, 2*time.Minute, pathEnv+"="+filepath.Join(t.TempDir(), "runtime.ckpt"))
}

// TestRestoreRefusesAutomaticFile: op2.Restore refuses a file automatic
// checkpoints wrote (at a loop inside the program's steps, with dats the
// loops after it write left without values), naming OP2_CHECKPOINT, and
// changes nothing.
func TestRestoreRefusesAutomaticFile(t *testing.T) {
	path := writeAutoCheckpoint(t)
	r := newCkptRun(t)
	defer r.k.Remove()
	check(t, r.step())
	before := r.result(t)
	if _, err := op2.Restore(path); err == nil || !strings.Contains(err.Error(), "written by automatic checkpoints (OP2_CHECKPOINT)") {
		t.Errorf("op2.Restore of an automatic checkpoint: %v, want an error naming OP2_CHECKPOINT", err)
	}
	if !r.result(t).equal(before) {
		t.Error("a refused restore changed values")
	}
}

// ckptLog records the loop each automatic checkpoint a run logs was
// written before.
type ckptLog struct {
	mu    sync.Mutex
	loops []int64
}

func (h *ckptLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *ckptLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *ckptLog) WithGroup(string) slog.Handler            { return h }
func (h *ckptLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "op2: automatic checkpoint" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "loop":
			h.loops = append(h.loops, a.Value.Int64())
		}
		return true
	})
	return nil
}

// abcLoops declares the dats and kernels of the period tests' loops: A
// (a += c + 1) reads c, B (b = a) writes b whole, C (c = b) writes c
// whole.
func abcLoops() (set *op2.Set, a, b, c *op2.Dat[float64], ka, kb, kc *op2.Kernel) {
	set = must(op2.NewSet(10, "cells"))
	a = must(op2.NewDat[float64](set, 1, nil, "a"))
	b = must(op2.NewDat[float64](set, 1, nil, "b"))
	c = must(op2.NewDat[float64](set, 1, nil, "c"))
	ka = op2.NewKernel("void ka(const double *c, double *a) { *a += *c + 1; }", "ka")
	kb = op2.NewKernel("void kb(const double *a, double *b) { *b = *a; }", "kb")
	kc = op2.NewKernel("void kc(const double *b, double *c) { *c = *b; }", "kc")
	return
}

// TestAutoCheckpointPeriod: programs whose step issues a loop twice (A A
// B C; A B A C B C, every loop twice) get an automatic checkpoint every
// CheckpointEvery loops, as a step of A B does, leaving out dats that B
// and C write whole. A guess of
// the period that failed was guessed again from the loop that broke it,
// which never settled when that was the second A: the checkpoint waited
// for 1000 loops and then saved every dat.
func TestAutoCheckpointPeriod(t *testing.T) {
	needHDF5(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	for _, step := range []string{"AB", "AABC", "ABACBC"} {
		for _, every := range []int{20, 21, 22, 23, 24} {
			t.Run(fmt.Sprintf("%s/%d", step, every), func(t *testing.T) {
				h := &ckptLog{}
				path := filepath.Join(t.TempDir(), "auto.ckpt")
				check(t, op2.Configure(op2.Config{CacheDir: cache, Checkpoint: path, CheckpointEvery: strconv.Itoa(every), Logger: slog.New(h)}))
				defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache})) }()
				set, a, b, c, ka, kb, kc := abcLoops()
				const loops = 300
				for n := 0; n < loops; {
					for _, ch := range step {
						switch ch {
						case 'A':
							check(t, op2.ParLoop(ka, set, c.Arg(op2.Read), a.Arg(op2.RW)))
						case 'B':
							check(t, op2.ParLoop(kb, set, a.Arg(op2.Read), b.Arg(op2.Write)))
						case 'C':
							check(t, op2.ParLoop(kc, set, b.Arg(op2.Read), c.Arg(op2.Write)))
						}
						n++
					}
				}
				h.mu.Lock()
				defer h.mu.Unlock()
				// Due after every loops, found within 16 (two periods
				// at least) and one more period to reach the place.
				most := int64(every + 16 + len(step))
				last := int64(0)
				for _, at := range h.loops {
					if at-last > most {
						t.Errorf("checkpoints at loops %v: %d loops apart, want at most %d", h.loops, at-last, most)
						break
					}
					last = at
				}
				if loops-last > most {
					t.Errorf("checkpoints at loops %v: none in the last %d of %d loops", h.loops, loops-last, loops)
				}
				// The last checkpoint leaves out a dat that the loops
				// after it write whole (b or c; one written after a
				// watch of 1000 loops holds every dat).
				if len(h.loops) > 0 && !savedAttr(t, path, "b") && !savedAttr(t, path, "c") {
					t.Errorf("the checkpoint at loop %d holds the values of b and c, which the loops after it write whole", h.loops[len(h.loops)-1])
				}
				runtime.KeepAlive([]any{a, b, c})
			})
		}
	}
}

// TestAutoCheckpointPeriodFound: the period of a step A B C is found when
// the checkpoint comes due at a loop issued once (O), which never comes
// again (the first guess), and a step whose third loop runs over a subset
// the program makes again every time repeats too (its set is another
// object each time). Neither got a checkpoint in 400 loops.
func TestAutoCheckpointPeriodFound(t *testing.T) {
	needHDF5(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	for _, c := range []string{"one-off at due", "subset each step"} {
		t.Run(c, func(t *testing.T) {
			h := &ckptLog{}
			path := filepath.Join(t.TempDir(), "auto.ckpt")
			// Due at loop 21 (the one-off loop), or 20 (the subset's).
			every := map[string]string{"one-off at due": "21", "subset each step": "20"}[c]
			check(t, op2.Configure(op2.Config{CacheDir: cache, Checkpoint: path, CheckpointEvery: every, Logger: slog.New(h)}))
			defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache})) }()
			set, a, b, d, ka, kb, kc := abcLoops()
			o := must(op2.NewDat[float64](set, 1, nil, "o"))
			ko := op2.NewKernel("void ko(const double *a, double *o) { *o = *a; }", "ko")
			const loops = 400
			for n := 0; n < loops; n += 3 {
				if c == "one-off at due" && n == 21 {
					check(t, op2.ParLoop(ko, set, a.Arg(op2.Read), o.Arg(op2.Write)))
					n++
				}
				check(t, op2.ParLoop(ka, set, d.Arg(op2.Read), a.Arg(op2.RW)))
				check(t, op2.ParLoop(kb, set, a.Arg(op2.Read), b.Arg(op2.Write)))
				if c == "subset each step" {
					sub := must(op2.NewSubset(set, []int32{0, 3, 7}))
					check(t, op2.ParLoop(ka, sub, d.Arg(op2.Read), a.Arg(op2.RW)))
				} else {
					check(t, op2.ParLoop(kc, set, b.Arg(op2.Read), d.Arg(op2.Write)))
				}
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if most := 21 + 16 + 3; len(h.loops) < loops/most {
				t.Errorf("%d loops, CheckpointEvery 21, step A B C: checkpoints at loops %v", loops, h.loops)
			}
			runtime.KeepAlive([]any{a, b, d, o})
		})
	}
}
