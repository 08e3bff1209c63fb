package op2_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
)

// TestHDF5ReopensWhileCompilingInBackground: a file written and closed
// while lazy mode's fused loop compiles in the background opens again at
// once, through hdf5 and through Checkpoint and Restore. The compiler
// (sh, timeout, cc, cc1) inherited libhdf5's descriptor, and with it the
// file's lock, until it exited.
func TestHDF5ReopensWhileCompilingInBackground(t *testing.T) {
	needHDF5(t)
	for _, c := range []struct {
		name   string
		reopen func(t *testing.T, dir string, y *op2.Dat[float64]) error
	}{
		{"hdf5", func(t *testing.T, dir string, y *op2.Dat[float64]) error {
			path := filepath.Join(dir, "out.h5")
			f := must(hdf5.Create(path))
			check(t, hdf5.WriteDat(f, y))     // forces the loops: their fused loop compiles in the background
			time.Sleep(30 * time.Millisecond) // the compiler starts while the file is open
			check(t, f.Close())
			g, err := hdf5.Open(path)
			if err == nil {
				g.Close()
			}
			return err
		}},
		{"checkpoint", func(_ *testing.T, dir string, _ *op2.Dat[float64]) error {
			path := filepath.Join(dir, "run.ckpt")
			if err := op2.Checkpoint(path, nil); err != nil {
				return err
			}
			_, err := op2.Restore(path)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Cleanup(op2.WaitBuilds)
			defer op2.SetBuilds(op2.BuildInBackground)()
			r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: "sequential", CacheDir: dir}))) // lazy by default
			tag := time.Now().UnixNano() % 1000                                                        // a kernel no cache holds: its fused loop must compile
			p := "hb_" + c.name
			ka := op2.NewKernel(fmt.Sprintf("void %s_a(double *x, const double *w) { x[0] = x[0] * 1.0001 + w[0] / 3.0 + %d.0; }", p, tag), p+"_a")
			kb := op2.NewKernel(fmt.Sprintf("void %s_b(const double *x, double *y) { y[0] = x[0] * x[0] - 0.5; }", p), p+"_b")
			kc := op2.NewKernel(fmt.Sprintf("void %s_c(double *x, const double *y) { x[0] += y[0] / 7.0; }", p), p+"_c")
			set := must(op2.NewSet(1000, p+"_cells"))
			x := must(op2.NewDat(set, 1, iota32[float64](1000), p+"_x"))
			w := must(op2.NewDat(set, 1, iota32[float64](1000), p+"_w"))
			y := must(op2.NewDat[float64](set, 1, nil, p+"_y"))
			check(t, r.ParLoop(ka, set, x.Arg(op2.RW), w.Arg(op2.Read)))
			check(t, r.ParLoop(kb, set, x.Arg(op2.Read), y.Arg(op2.Write)))
			check(t, r.ParLoop(kc, set, x.Arg(op2.RW), y.Arg(op2.Read)))
			if err := c.reopen(t, dir, y); err != nil {
				t.Fatalf("opening the file just written (background builds pending: %d): %v", op2.PendingBuilds(), err)
			}
		})
	}
}
