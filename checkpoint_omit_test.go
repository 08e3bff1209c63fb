package op2_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// TestCheckpointOmit: a Dat that SetNoCheckpoint leaves out is not saved
// (a program that saves it cannot restore the file: the error names it),
// and Restore leaves its values as the program has them, whether the
// file lacks it or holds it.
func TestCheckpointOmit(t *testing.T) {
	needHDF5(t)
	set := must(op2.NewSet(3, "omit_cells"))
	x := must(op2.NewDat(set, 1, []float64{1, 2, 3}, "omit_x")) // geometry
	q := must(op2.NewDat(set, 1, []float64{4, 5, 6}, "omit_q")) // state
	out := must(op2.NewDat[float64](set, 1, nil, "omit_out"))   // output only
	dir := t.TempDir()
	without, with := filepath.Join(dir, "without.ckpt"), filepath.Join(dir, "with.ckpt")
	check(t, op2.Checkpoint(with, nil))
	x.SetNoCheckpoint(true)
	out.SetNoCheckpoint(true)
	check(t, op2.Checkpoint(without, nil))

	for _, path := range []string{without, with} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			copy(x.Data(), []float64{-1, -2, -3})
			copy(q.Data(), []float64{0, 0, 0})
			copy(out.Data(), []float64{7, 8, 9})
			_, err := op2.Restore(path)
			check(t, err)
			if !slices.Equal(q.DataRO(), []float64{4, 5, 6}) {
				t.Errorf("q restored as %v, want [4 5 6]", q.DataRO())
			}
			if !slices.Equal(x.DataRO(), []float64{-1, -2, -3}) || !slices.Equal(out.DataRO(), []float64{7, 8, 9}) {
				t.Errorf("dats left out restored: x %v, out %v; want the program's [-1 -2 -3] [7 8 9]", x.DataRO(), out.DataRO())
			}
		})
	}

	// Put back, x is looked for: the file that left it out is refused.
	x.SetNoCheckpoint(false)
	before := x.DataRO()
	_, err := op2.Restore(without)
	wantErr(t, err, `holds no dat "omit_x"`)
	if !slices.Equal(x.DataRO(), before) || !slices.Equal(q.DataRO(), []float64{4, 5, 6}) {
		t.Errorf("a refused restore changed values")
	}
	runtime.KeepAlive(out)
}

// TestCheckpointOmitRanks: on 2 ranks, a Dat left out on every rank is
// neither saved nor restored, and the others are restored; ranks that
// leave out different Dats are refused by both.
func TestCheckpointOmitRanks(t *testing.T) {
	const fileEnv = "OP2_TEST_CKPT_OMIT_FILE"
	if mpitest.InRanks() {
		r := newCkptRun(t)
		r.steps(t, 2)
		want := r.result(t)
		r.q.SetNoCheckpoint(true)
		path := os.Getenv(fileEnv)
		check(t, op2.Checkpoint(path, nil))
		spoilt := slices.Clone(r.q.Data())
		for i := range spoilt {
			spoilt[i] = float64(op2.Rank() + i)
		}
		copy(r.q.Data(), spoilt)
		r.cnt.Data()[0] = 99
		_, err := op2.Restore(path)
		check(t, err)
		if !slices.Equal(r.q.DataRO(), spoilt) {
			t.Errorf("rank %d: q, left out, was restored", op2.Rank())
		}
		if got := r.result(t); op2.Rank() == 0 && !slices.Equal(got.Cnt, want.Cnt) {
			t.Errorf("cnt not restored")
		}
		r.q.SetNoCheckpoint(op2.Rank() == 0)
		wantErr(t, op2.Checkpoint(path, nil), "3 dats", "2 dats")
		runtime.KeepAlive(r) // x, q and cnt: checkpoints save the Dats the program holds
		check(t, op2.Finalize())
		return
	}
	needHDF5(t)
	mpitest.Run(t, 2, 2*time.Minute, fileEnv+"="+filepath.Join(t.TempDir(), "omit.ckpt"))
}

// TestAutoCheckpointOmit: automatic checkpoints leave out the Dats that
// SetNoCheckpoint leaves out too.
func TestAutoCheckpointOmit(t *testing.T) {
	needHDF5(t)
	cache := os.Getenv("OP2_CACHE_DIR")
	path := filepath.Join(t.TempDir(), "auto.ckpt")
	r := newCkptRun(t)
	defer r.k.Remove()
	r.cnt.SetNoCheckpoint(true)
	check(t, op2.Configure(op2.Config{CacheDir: cache, Checkpoint: path, CheckpointEvery: "2"}))
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache})) }()
	r.steps(t, 8)
	if names := datNames(t, path); slices.Contains(names, "cnt") || !slices.Contains(names, "q") {
		t.Errorf("the automatic checkpoint holds dats %q; want q and not cnt", names)
	}
}
