package probe_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
)

func h5file(t *testing.T, fill func(f *hdf5.File)) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.h5")
	f, err := hdf5.Create(p)
	check(t, err)
	fill(f)
	check(t, f.Close())
	return p
}

// Malformed contents: every declaration must return an error, never crash or accept nonsense.
func TestHDF5MalformedContents(t *testing.T) {
	p := h5file(t, func(f *hdf5.File) {
		if err := f.WriteSetSize("neg", -5); err == nil {
			t.Errorf("WriteSetSize(-5) accepted")
		}
		check(t, f.WriteSetSize("nodes", 3))
		check(t, f.WriteSetSize("cells", 2))
		check(t, f.WriteMapTable("badmap", 3, []int32{0, 1, 2, 1, 2, 7})) // 7 out of range
		check(t, f.WriteMapTable("negmap", 3, []int32{0, 1, -1, 1, 2, 0}))
		check(t, hdf5.WriteArray(f, "x", 2, []float64{1, 2, 3, 4, 5, 6}))
		check(t, hdf5.WriteArray(f, "xi", 1, []int32{1, 2, 3}))
		check(t, hdf5.WriteConst(f, "c", []float64{1, 2}))
	})
	f, err := hdf5.Open(p)
	check(t, err)
	defer f.Close()
	if s, err := f.DeclareSet("x"); err == nil {
		t.Errorf("a dat dataset declared as a set: %v", s)
	}
	if s, err := f.DeclareSet("missing"); err == nil {
		t.Errorf("missing set: %v", s)
	}
	nodes := must(f.DeclareSet("nodes"))
	cells := must(f.DeclareSet("cells"))
	if m, err := f.DeclareMap(cells, nodes, 3, "badmap"); err == nil {
		t.Errorf("out-of-range map accepted: %v", m.Values())
	}
	if m, err := f.DeclareMap(cells, nodes, 3, "negmap"); err == nil {
		t.Errorf("negative map entry accepted: %v", m.Values())
	}
	if m, err := f.DeclareMap(cells, nodes, 2, "badmap"); err == nil {
		t.Errorf("arity mismatch accepted: %v", m)
	}
	if m, err := f.DeclareMap(nodes, nodes, 3, "badmap"); err == nil {
		t.Errorf("row count mismatch accepted: %v", m)
	}
	if d, err := hdf5.DeclareDat[float64](f, nodes, 3, "x"); err == nil {
		t.Errorf("dim mismatch accepted: %v", d)
	}
	if d, err := hdf5.DeclareDat[float64](f, cells, 2, "x"); err == nil {
		t.Errorf("row mismatch accepted: %v", d)
	}
	if d, err := hdf5.DeclareDat[float64](f, nodes, 1, "xi"); err == nil {
		t.Errorf("int dataset as float64 accepted: %v", d)
	}
	if v, err := hdf5.ReadConst[float64](f, "c", 3); err == nil {
		t.Errorf("const dim mismatch accepted: %v", v)
	}
	if v, err := hdf5.ReadConst[float64](f, "nodes", 1); err == nil {
		t.Logf("a set read as a const: %v", v)
	}
	for _, rc := range [][2]int{{-1, 1}, {0, 4}, {3, 1}, {2, -1}, {math.MaxInt32, math.MaxInt32}, {1, math.MaxInt}} {
		if v, err := hdf5.ReadRows[float64](f, "x", 2, rc[0], rc[1]); err == nil {
			t.Errorf("ReadRows(%d, %d) accepted: %v", rc[0], rc[1], v)
		}
	}
}

// Reading a dat into a narrower type: HDF5 converts; out-of-range values must not be silently clipped.
func TestHDF5NarrowingConversion(t *testing.T) {
	p := h5file(t, func(f *hdf5.File) {
		check(t, f.WriteSetSize("s", 3))
		check(t, hdf5.WriteArray(f, "big", 1, []int64{1 << 40, -(1 << 40), 5}))
		check(t, hdf5.WriteArray(f, "neg", 1, []int32{-1, -2, 3}))
		check(t, hdf5.WriteArray(f, "dbl", 1, []float64{1e300, -1e300, 1.5}))
	})
	f, err := hdf5.Open(p)
	check(t, err)
	defer f.Close()
	s := must(f.DeclareSet("s"))
	if d, err := hdf5.DeclareDat[int32](f, s, 1, "big"); err == nil {
		t.Errorf("int64 values beyond int32 read into an int32 dat without error: %v (file holds [2^40 -2^40 5])", d.DataRO())
	}
	if d, err := hdf5.DeclareDat[uint32](f, s, 1, "neg"); err == nil {
		t.Errorf("negative int values read into a uint32 dat without error: %v (file holds [-1 -2 3])", d.DataRO())
	}
	if d, err := hdf5.DeclareDat[float32](f, s, 1, "dbl"); err == nil {
		t.Errorf("doubles beyond float32 range read into a float32 dat without error: %v (file holds [1e300 -1e300 1.5])", d.DataRO())
	}
}

// Not-HDF5 and truncated files: errors, not crashes.
func TestHDF5BrokenFiles(t *testing.T) {
	dir := t.TempDir()
	good := h5file(t, func(f *hdf5.File) {
		check(t, f.WriteSetSize("nodes", 1000))
		check(t, hdf5.WriteArray(f, "x", 2, make([]float64, 2000)))
	})
	b, _ := os.ReadFile(good)
	cases := map[string][]byte{
		"empty":     {},
		"text":      []byte("hello, not hdf5\n"),
		"signature": append([]byte("\x89HDF\r\n\x1a\n"), make([]byte, 100)...),
		"truncated": b[:len(b)/2],
		"header":    b[:600],
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".h5")
			check(t, os.WriteFile(p, data, 0o600))
			ok, err := hdf5.IsHDF5(p)
			t.Logf("IsHDF5: %v %v", ok, err)
			f, err := hdf5.Open(p)
			if err != nil {
				t.Logf("Open: %v", err)
				return
			}
			defer f.Close()
			s, err := f.DeclareSet("nodes")
			if err != nil {
				t.Logf("DeclareSet: %v", err)
				return
			}
			d, err := hdf5.DeclareDat[float64](f, s, 2, "x")
			t.Logf("DeclareDat: %v %v", d, err)
		})
	}
}

// HDF5 round trip of a dat written on the device and of every element type.
func TestHDF5RoundTripDevice(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		s := must(op2.NewSet(3, "s"))
		x := must(op2.NewDat(s, 1, []float64{1, 2, 3}, "grp/x"))
		check(t, op2.ParLoop(kScale, s, x.Arg(op2.RW)))
		u := must(op2.NewDat(s, 1, []uint32{0, math.MaxUint32, 7}, "u"))
		l := must(op2.NewDat(s, 1, []int64{math.MinInt64, math.MaxInt64, 0}, "l"))
		p := h5file(t, func(f *hdf5.File) {
			check(t, f.WriteSet(s))
			check(t, hdf5.WriteDat(f, x))
			check(t, hdf5.WriteDat(f, u))
			check(t, hdf5.WriteDat(f, l))
		})
		f, err := hdf5.Open(p)
		check(t, err)
		defer f.Close()
		s2 := must(f.DeclareSet("s"))
		x2 := must(hdf5.DeclareDat[float64](f, s2, 1, "grp/x"))
		u2 := must(hdf5.DeclareDat[uint32](f, s2, 1, "u"))
		l2 := must(hdf5.DeclareDat[int64](f, s2, 1, "l"))
		if !slices.Equal(x2.DataRO(), []float64{3, 5, 7}) || !slices.Equal(u2.DataRO(), u.DataRO()) || !slices.Equal(l2.DataRO(), l.DataRO()) {
			t.Errorf("round trip: %v %v %v", x2.DataRO(), u2.DataRO(), l2.DataRO())
		}
	})
}

// op2mesh and airfoil -mesh with small generated meshes and broken inputs.
func TestOp2MeshTiny(t *testing.T) {
	bin := buildTool(t, "cmd/op2mesh")
	dir := t.TempDir()
	for _, ij := range [][2]string{{"1", "1"}, {"2", "2"}, {"0", "5"}, {"-3", "2"}} {
		out := filepath.Join(dir, "m"+ij[0]+ij[1]+".h5")
		res, err := exec.Command(bin, "-I", ij[0], "-J", ij[1], "-o", out).CombinedOutput()
		t.Logf("-I %s -J %s: %v %s", ij[0], ij[1], err, res)
		if strings.Contains(string(res), "panic") || strings.Contains(string(res), "goroutine ") {
			t.Errorf("op2mesh crashed for -I %s -J %s:\n%s", ij[0], ij[1], res)
		}
	}
	bad := filepath.Join(dir, "bad.h5")
	os.WriteFile(bad, []byte("\x89HDF\r\n\x1a\ngarbage"), 0o600)
	res, err := exec.Command(bin, "-in", bad, "-o", filepath.Join(dir, "o.dat")).CombinedOutput()
	t.Logf("bad input: %v %s", err, res)
	if err == nil || strings.Contains(string(res), "panic") {
		t.Errorf("op2mesh on a broken HDF5 file: %v\n%s", err, res)
	}
}

// libhdf5 here is thread-safe, so its error-printing switch (H5Eset_auto2, called
// once when the library is loaded) is per OS thread: an Open of a broken file on
// any other thread prints HDF5's whole error stack (HDF5-DIAG ...) on standard
// error, beside the Go error. Go moves goroutines between threads, so in any
// real program the noise appears at random.
func TestHDF5NoDiagnosticNoise(t *testing.T) {
	dir := t.TempDir()
	good := h5file(t, func(f *hdf5.File) {
		check(t, f.WriteSetSize("nodes", 1000))
		check(t, hdf5.WriteArray(f, "x", 2, make([]float64, 2000)))
	})
	b, _ := os.ReadFile(good)
	bad := filepath.Join(dir, "truncated.h5")
	check(t, os.WriteFile(bad, b[:len(b)/2], 0o600))
	// capture fd 2
	capture := filepath.Join(dir, "stderr")
	cf, err := os.Create(capture)
	check(t, err)
	saved, err := syscall.Dup(2)
	check(t, err)
	check(t, syscall.Dup2(int(cf.Fd()), 2))
	var wg sync.WaitGroup
	var opened atomic.Int32
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a fresh thread once this goroutine exits locked
			if f, err := hdf5.Open(bad); err == nil {
				f.Close()
				opened.Add(1)
			}
		}()
		wg.Wait()
	}
	syscall.Dup2(saved, 2)
	syscall.Close(saved)
	cf.Close()
	out, _ := os.ReadFile(capture)
	if opened.Load() != 0 {
		t.Errorf("a truncated file opened")
	}
	if strings.Contains(string(out), "HDF5-DIAG") {
		t.Errorf("hdf5.Open of a truncated file printed HDF5's error stack on standard error (%d lines), e.g.:\n%s", strings.Count(string(out), "\n"), firstLines(string(out), 6))
	}
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// airfoil -mesh on HDF5 files lacking parts of the mesh: an error, never a crash.
func TestAirfoilPartialHDF5Mesh(t *testing.T) {
	bin := buildTool(t, "cmd/airfoil")
	cases := map[string]func(f *hdf5.File){
		"nodes-only": func(f *hdf5.File) { check(t, f.WriteSetSize("nodes", 4)) },
		"no-maps": func(f *hdf5.File) {
			for _, s := range []string{"nodes", "edges", "bedges", "cells"} {
				check(t, f.WriteSetSize(s, 1))
			}
		},
		"empty-sets": func(f *hdf5.File) {
			for _, s := range []string{"nodes", "edges", "bedges", "cells"} {
				check(t, f.WriteSetSize(s, 0))
			}
			for _, m := range [][2]any{{"pedge", 2}, {"pecell", 2}, {"pbedge", 2}, {"pbecell", 1}, {"pcell", 4}} {
				check(t, f.WriteMapTable(m[0].(string), m[1].(int), nil))
			}
			check(t, hdf5.WriteArray(f, "p_x", 2, []float64{}))
			check(t, hdf5.WriteArray(f, "p_q", 4, []float64{}))
			check(t, hdf5.WriteArray(f, "p_qold", 4, []float64{}))
			check(t, hdf5.WriteArray(f, "p_res", 4, []float64{}))
			check(t, hdf5.WriteArray(f, "p_adt", 1, []float64{}))
			check(t, hdf5.WriteArray(f, "p_bound", 1, []int32{}))
		},
	}
	for name, fill := range cases {
		t.Run(name, func(t *testing.T) {
			p := h5file(t, fill)
			cmd := exec.Command(bin, "-mesh", p, "-iters", "2")
			cmd.Env = append(os.Environ(), "OP2_CACHE_DIR="+cacheDir)
			res, err := cmd.CombinedOutput()
			t.Logf("%s: %v\n%s", name, err, res)
			if strings.Contains(string(res), "panic") || strings.Contains(string(res), "goroutine ") || strings.Contains(string(res), "SIGSEGV") {
				t.Errorf("airfoil crashed on %s:\n%s", name, res)
			}
		})
	}
}
