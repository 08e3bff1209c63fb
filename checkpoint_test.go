package op2_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/checkpoint"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh"
)

// ckptRun is a small run to checkpoint: Airfoil's generated mesh (this
// rank's block of it under MPI, partitioned), a cell dat updated from its
// nodes through a map (in any order and on any ranks bit for bit the
// same), a count dat, a Global minimum and a constant.
type ckptRun struct {
	q    *op2.Dat[float64]
	cnt  *op2.Dat[int32]
	low  *op2.Global[float64]
	k    *op2.Const[float64]
	step func() error
}

func newCkptRun(t *testing.T) *ckptRun {
	t.Helper()
	m, err := mesh.GenerateBlock(10, 6, op2.Rank(), op2.Ranks())
	if err != nil {
		t.Fatal(err)
	}
	nodes := must(op2.NewSet(m.NNode, "nodes"))
	cells := must(op2.NewSet(m.NCell, "cells"))
	pcell := must(op2.NewMap(cells, nodes, 4, m.Cell, "pcell"))
	x := must(op2.NewDat(nodes, 2, m.X, "x"))
	r := &ckptRun{
		q:   must(op2.NewDat[float64](cells, 4, nil, "q")),
		cnt: must(op2.NewDat[int32](cells, 1, nil, "cnt")),
		low: must(op2.NewGlobal[float64](1, nil, "low")),
	}
	if op2.Ranks() > 1 {
		if _, err := op2.Partition(op2.RCBPartitioner(x)); err != nil {
			t.Fatal(err)
		}
	}
	name := "ckpt_k"
	if c, err := op2.NewConst(1, []float64{0.75}, name); err == nil {
		r.k = c
	} else {
		t.Fatal(err)
	}
	k := op2.NewKernel(`void ckpt_step(const double *a, const double *b, const double *c, const double *d, double *q, int *n, double *low) {
		for (int i = 0; i < 4; i++) q[i] = ckpt_k * q[i] + a[i % 2] * b[1] - c[0] * d[(i + 1) % 2] + 0.125 * (*n);
		*n += 1;
		if (q[0] < *low) *low = q[0];
	}`, "ckpt_step")
	r.step = func() error {
		r.low.Data()[0] = 1e300
		return op2.ParLoop(k, cells, x.ArgMap(op2.Read, pcell, 0), x.ArgMap(op2.Read, pcell, 1), x.ArgMap(op2.Read, pcell, 2),
			x.ArgMap(op2.Read, pcell, 3), r.q.Arg(op2.RW), r.cnt.Arg(op2.RW), r.low.Arg(op2.Min))
	}
	return r
}

func (r *ckptRun) steps(t *testing.T, n int) {
	t.Helper()
	for range n {
		if err := r.step(); err != nil {
			t.Fatal(err)
		}
	}
}

// result is what the run computed, gathered on rank 0.
type ckptResult struct {
	Q   []float64
	Cnt []int32
	Low float64
	K   float64
}

func (r *ckptRun) result(t *testing.T) ckptResult {
	t.Helper()
	return ckptResult{Q: must(r.q.Gather()), Cnt: must(r.cnt.Gather()), Low: r.low.DataRO()[0], K: r.k.Value()[0]}
}

func (a ckptResult) equal(b ckptResult) bool {
	return slices.Equal(a.Q, b.Q) && slices.Equal(a.Cnt, b.Cnt) && a.Low == b.Low && a.K == b.K
}

// TestCheckpointRestore: a run restored from a checkpoint after its values
// were spoiled continues bit for bit as it went on from the checkpoint;
// the program's state comes back; the file replaces the previous one
// whole; a checkpoint that does not match the program is refused and
// changes nothing.
// On every backend: values on a device are brought back to be saved,
// and restored values reach the device.
func TestCheckpointRestore(t *testing.T) {
	needHDF5(t)
	onEachBackend(t, checkpointRestore)
}

func checkpointRestore(t *testing.T) {
	r := newCkptRun(t)
	defer r.k.Remove()
	path := filepath.Join(t.TempDir(), "run.ckpt")
	r.steps(t, 2)
	if err := op2.Checkpoint(path, map[string][]byte{"step": []byte("2")}); err != nil {
		t.Fatal(err)
	}
	r.steps(t, 1)
	if err := op2.Checkpoint(path, map[string][]byte{"step": []byte("3"), "time": []byte("0.3")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".partial"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	r.steps(t, 4)
	want := r.result(t)

	copy(r.q.Data(), make([]float64, len(r.q.Data())))
	r.cnt.Data()[0] = 99
	r.low.Data()[0] = -1
	if err := r.k.Set(2); err != nil {
		t.Fatal(err)
	}
	state, err := op2.Restore(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(state["step"]) != "3" || string(state["time"]) != "0.3" || len(state) != 2 {
		t.Errorf("state %q, want step 3 and time 0.3", state)
	}
	r.steps(t, 4)
	if got := r.result(t); !got.equal(want) {
		t.Errorf("restored run: low %v k %v, want %v %v; q equal %v, cnt equal %v", got.Low, got.K, want.Low, want.K,
			slices.Equal(got.Q, want.Q), slices.Equal(got.Cnt, want.Cnt))
	}

	// A dat declared after the checkpoint: the file is refused, nothing changes.
	extra := must(op2.NewDat[float64](r.q.Set(), 3, nil, "extra"))
	before := r.result(t)
	if _, err := op2.Restore(path); err == nil || !strings.Contains(err.Error(), `no dat "extra"`) {
		t.Errorf("restoring without dat extra: %v, want an error naming it", err)
	}
	if !r.result(t).equal(before) {
		t.Error("a refused restore changed values")
	}
	runtime.KeepAlive(extra) // Restore collects the dats the program no longer holds
	if _, err := op2.Restore(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("restoring a missing file: no error")
	}
}

// TestCheckpointAcrossRanks checkpoints a run on 2 ranks, finishes it, and
// restores the checkpoint on 3 ranks and on one and finishes there: the
// three results are bit for bit equal. Under MPI each rank reads its rows
// from the file; "exchange" restores by blocks exchanged between the
// ranks instead, the way of a mesh numbered at random.
func TestCheckpointAcrossRanks(t *testing.T) {
	const ckptEnv, outEnv, modeEnv = "OP2_TEST_CKPT_FILE", "OP2_TEST_CKPT_OUT", "OP2_TEST_CKPT_MODE"
	if mpitest.InRanks() {
		r := newCkptRun(t)
		if os.Getenv(modeEnv) == "damaged" {
			_, err := op2.Restore(os.Getenv(ckptEnv))
			if err == nil || !strings.Contains(err.Error(), "differ from the fingerprint") {
				t.Fatalf("rank %d restoring a damaged file: %v, want it refused", op2.Rank(), err)
			}
			runtime.KeepAlive(r) // Restore leaves out the dats the program no longer holds
			if err := op2.Finalize(); err != nil {
				t.Fatal(err)
			}
			return
		}
		if os.Getenv(modeEnv) == "write" {
			r.steps(t, 3)
			if err := op2.Checkpoint(os.Getenv(ckptEnv), map[string][]byte{"step": []byte("3")}); err != nil {
				t.Fatal(err)
			}
		} else {
			if os.Getenv(modeEnv) == "exchange" {
				checkpoint.SetDirectReads(false)
			}
			state, err := op2.Restore(os.Getenv(ckptEnv))
			if err != nil {
				t.Fatal(err)
			}
			if string(state["step"]) != "3" {
				t.Errorf("state %q", state)
			}
		}
		r.steps(t, 4)
		res := r.result(t)
		if op2.Rank() == 0 {
			b, _ := json.Marshal(res)
			if err := os.WriteFile(os.Getenv(outEnv), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	needHDF5(t)
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "run.ckpt")
	var results []ckptResult
	for i, job := range []struct {
		ranks int
		mode  string
	}{{2, "write"}, {3, "read"}, {1, "read"}, {2, "read"}, {3, "exchange"}} {
		out := filepath.Join(dir, "out"+strconv.Itoa(i))
		mpitest.Run(t, job.ranks, 2*time.Minute, ckptEnv+"="+ckpt, outEnv+"="+out, modeEnv+"="+job.mode)
		var res ckptResult
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
		if !res.equal(results[0]) {
			t.Errorf("%d ranks restored (%s): the result differs from the uninterrupted 2-rank run", job.ranks, job.mode)
		}
	}
	// One byte of q's values changed in the file: every rank refuses it.
	f, err := h5.Open(ckpt, false)
	if err != nil {
		t.Fatal(err)
	}
	q := make([]float64, 4*60)
	err = f.Read("dats/1", h5.Float64, 2, 0, 60, 4, unsafe.Pointer(&q[0]))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.ckpt")
	b, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	flipByteOf(t, damaged, unsafe.Slice((*byte)(unsafe.Pointer(&q[4*37])), 32))
	mpitest.Run(t, 2, 2*time.Minute, ckptEnv+"="+damaged, modeEnv+"=damaged")
}

// needHDF5 skips a test when libhdf5 is truly absent.
func needHDF5(t *testing.T) {
	t.Helper()
	testreq.Check(t, "hdf5", h5.Load(), h5.ErrNoHDF5)
}

// TestRestoreConstType: a Const is restored only into a Const of its
// type; another type of the same size is refused, naming the const and
// both types, and nothing changes.
func TestRestoreConstType(t *testing.T) {
	needHDF5(t)
	for _, c := range []struct {
		name        string
		save        func() (remove func())
		declare     func() (value func() string, remove func())
		saved, decl string
	}{
		{"int into unsigned int",
			func() func() { return must(op2.NewConst(1, []int32{-5}, "ckpt_type_c")).Remove },
			func() (func() string, func()) {
				k := must(op2.NewConst(1, []uint32{9}, "ckpt_type_c"))
				return func() string { return fmt.Sprint(k.Value()) }, k.Remove
			}, "int", "unsigned int"},
		{"unsigned int into int",
			func() func() { return must(op2.NewConst(2, []uint32{1, 4000000000}, "ckpt_type_c")).Remove },
			func() (func() string, func()) {
				k := must(op2.NewConst(2, []int32{9, 9}, "ckpt_type_c"))
				return func() string { return fmt.Sprint(k.Value()) }, k.Remove
			}, "unsigned int", "int"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "const.ckpt")
			remove := c.save()
			check(t, op2.Checkpoint(path, nil))
			remove()
			value, remove := c.declare()
			defer remove()
			before := value()
			_, err := op2.Restore(path)
			wantErr(t, err, `constant "ckpt_type_c"`, "saved as "+c.saved, "declared "+c.decl)
			if after := value(); after != before {
				t.Errorf("a refused restore changed the constant from %s to %s", before, after)
			}
		})
	}
}

// warnLog configures the default runtime with a logger at warn level
// into the buffer it returns, until the test ends; it needs HDF5.
func warnLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	needHDF5(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	log := new(bytes.Buffer)
	check(t, op2.Configure(op2.Config{CacheDir: cache, Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))}))
	t.Cleanup(func() { check(t, op2.Configure(op2.Config{CacheDir: cache})) })
	return log
}

// TestCheckpointWarnsDroppedData: a checkpoint after the program's last
// use of a Dat and a Global (Go has collected them) cannot save them,
// and says so on the logger at warn level, naming both, once; a Dat left
// out (SetNoCheckpoint), one the program still holds and a solver's own
// are not named.
func TestCheckpointWarnsDroppedData(t *testing.T) {
	log := warnLog(t)
	cells := must(op2.NewSet(10, "wd_cells"))
	held := must(op2.NewDat[float64](cells, 1, nil, "wd_held"))
	func() {
		q := must(op2.NewDat[float64](cells, 2, nil, "wd_q"))
		tmp := must(op2.NewDat[float64](cells, 1, nil, "wd_tmp"))
		tmp.SetNoCheckpoint(true)
		g := must(op2.NewGlobal[int32](1, nil, "wd_g"))
		k := op2.NewKernel(`void wd_inc(double *q, double *t, double *h, int *g) { q[0] += 1; t[0] = q[0]; h[0] = t[0]; *g += 1; }`, "wd_inc")
		check(t, op2.ParLoop(k, cells, q.Arg(op2.RW), tmp.Arg(op2.Write), held.Arg(op2.Write), g.Arg(op2.Inc)))
		if v := g.DataRO(); v[0] != 10 { // the loop runs, in lazy mode too
			t.Errorf("wd_g = %d, want 10", v[0])
		}
		// A solve's own vectors and Globals, dropped with the solver.
		ident := must(op2.NewMap(cells, cells, 1, iota32[int32](10), "wd_ident"))
		A, x, b := diagSystem(cells, ident)
		check(t, op2.ParLoop(op2.NewKernel(`void wd_d(double *A, double *b) { A[0] = 2; b[0] = 1; }`, "wd_d"), cells, A.Arg(op2.Inc, ident, ident), b.Arg(op2.Write)))
		s := must(op2.NewSolver(op2.SolverOptions{}))
		if info, err := s.Solve(A, x, b); err != nil || !info.Converged {
			t.Fatalf("Solve: %+v, %v", info, err)
		}
		check(t, s.Close())
	}()
	path := filepath.Join(t.TempDir(), "final.ckpt")
	check(t, op2.Checkpoint(path, nil))
	out := log.String()
	if !strings.Contains(out, "no longer holds them") || !strings.Contains(out, `dat \"wd_q\" on set \"wd_cells\"`) || !strings.Contains(out, `global \"wd_g\"`) {
		t.Errorf("a checkpoint after the last use of wd_q and wd_g logged\n%s\nwant a warning naming both", out)
	}
	for _, name := range []string{"wd_tmp", "wd_held", "solver"} {
		if strings.Contains(out, name) {
			t.Errorf("the warning names %s:\n%s", name, out)
		}
	}
	log.Reset()
	check(t, op2.Checkpoint(path, nil))
	if strings.Contains(log.String(), "wd_q") {
		t.Errorf("a second checkpoint names wd_q again:\n%s", log.String())
	}
	runtime.KeepAlive(held)
}

// TestCheckpointWarnsDroppedTwin: a Dat collected while another of the
// same name and set lives (and is saved) is not named; once that one is
// collected too, the next checkpoint, which holds neither, names it.
func TestCheckpointWarnsDroppedTwin(t *testing.T) {
	log := warnLog(t)
	cells := must(op2.NewSet(10, "wt_cells"))
	func() { _ = must(op2.NewDat[float64](cells, 1, nil, "wt_q")).DataRO() }()
	q := must(op2.NewDat[float64](cells, 1, nil, "wt_q"))
	path := filepath.Join(t.TempDir(), "twin.ckpt")
	check(t, op2.Checkpoint(path, nil))
	if strings.Contains(log.String(), "wt_q") {
		t.Errorf("the warning names wt_q, though the live wt_q was saved:\n%s", log.String())
	}
	runtime.KeepAlive(q)
	log.Reset()
	check(t, op2.Checkpoint(path, nil))
	if !strings.Contains(log.String(), `dat \"wt_q\"`) {
		t.Errorf("a checkpoint after the last wt_q was collected logged\n%s\nwant a warning naming it", log.String())
	}
}

// TestCheckpointWarnsDroppedOmittedTwin: a live twin that checkpoints
// leave out (SetNoCheckpoint) saves nothing in the collected one's place,
// so the collected one is still named.
func TestCheckpointWarnsDroppedOmittedTwin(t *testing.T) {
	log := warnLog(t)
	cells := must(op2.NewSet(10, "wot_cells"))
	func() { _ = must(op2.NewDat[float64](cells, 1, nil, "wot_q")).DataRO() }()
	q := must(op2.NewDat[float64](cells, 1, nil, "wot_q"))
	q.SetNoCheckpoint(true)
	check(t, op2.Checkpoint(filepath.Join(t.TempDir(), "twin.ckpt"), nil))
	if !strings.Contains(log.String(), `dat \"wot_q\"`) {
		t.Errorf("a checkpoint whose only live wot_q is left out logged\n%s\nwant a warning naming the collected one", log.String())
	}
	runtime.KeepAlive(q)
}

// TestCheckpointWarningLeavesOutOwnData: the product vectors a mixed
// matrix's Mult makes for itself are not named once the matrix goes.
func TestCheckpointWarningLeavesOutOwnData(t *testing.T) {
	log := warnLog(t)
	f := newMixedFixture(t)
	x := must(op2.NewMixedDat(f.ms, []int{2, 1}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3}, "x"))
	y := must(op2.NewMixedDat[float32](f.ms, []int{2, 1}, nil, "y"))
	func() {
		sp := must(op2.NewMixedSparsity(f.ms, []int{2, 1}, f.ms, []int{2, 1}, []op2.MixedMapPair{{Row: f.mm, Col: f.mm}}, "sp"))
		A := must(op2.NewMixedMat[float32](sp, "wo_A"))
		check(t, A.Mult(x, y))
	}()
	check(t, op2.Checkpoint(filepath.Join(t.TempDir(), "own.ckpt"), nil))
	if strings.Contains(log.String(), "wo_A") {
		t.Errorf("the warning names the mixed matrix's own product vectors:\n%s", log.String())
	}
	runtime.KeepAlive(x)
	runtime.KeepAlive(y)
	runtime.KeepAlive(f)
}
