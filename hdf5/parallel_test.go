package hdf5

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh"
)

// TestParallelWrite writes a partitioned mesh's sets, maps, dats,
// constants and a plain array from 1, 2 and 3 ranks, and on 2 ranks with
// the serial library (gathered to rank 0), and checks that every file
// holds what the one-process file holds: h5diff finds no difference (when
// hdf5-tools is installed) and every dataset reads back equal. With a
// parallel HDF5 library installed the ranks must have written through
// MPI-IO.
func TestParallelWrite(t *testing.T) {
	const inEnv, outEnv, wantParEnv = "OP2_HDF5_TEST_PAR_IN", "OP2_HDF5_TEST_PAR_OUT", "OP2_HDF5_TEST_PAR_WANT"
	if mpitest.InRanks() {
		writePartitioned(t, os.Getenv(inEnv), os.Getenv(outEnv), os.Getenv(wantParEnv) == "1")
		return
	}
	needHDF5(t)
	gen, err := mesh.Generate(14, 9)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.h5")
	f, err := Create(in)
	if err != nil {
		t.Fatal(err)
	}
	m := gen.Shuffled(3)
	q := make([]float64, 3*m.NCell)
	for i := range q {
		q[i] = float64(i)*0.25 - 3
	}
	if err := WriteMesh(f, m); err != nil {
		t.Fatal(err)
	}
	if err := WriteArray(f, "q", 3, q); err != nil {
		t.Fatal(err)
	}
	mustClose(t, f)
	ref := filepath.Join(dir, "one.h5")
	writePartitioned(t, in, ref, false)

	_, parErr := exec.LookPath("h5diff")
	parallel := hasParallelHDF5()
	if testreq.Required(t, "hdf5") {
		// scripts/test-all installs both: their absence is an error there.
		if parErr != nil {
			t.Errorf("%s names hdf5, but h5diff is missing (apt-get install hdf5-tools): %v", testreq.Env, parErr)
		}
		if !parallel {
			t.Errorf("%s names hdf5, but the parallel HDF5 library is missing (apt-get install libhdf5-openmpi-103-1)", testreq.Env)
		}
	}
	runs := []struct {
		name  string
		ranks int
		env   []string
		par   bool
	}{
		{"2-ranks", 2, nil, parallel},
		{"3-ranks", 3, nil, parallel},
		{"2-ranks-gathered", 2, []string{LibraryEnv + "=libhdf5_serial.so.103"}, false},
	}
	for _, r := range runs {
		out := filepath.Join(dir, r.name+".h5")
		want := "0"
		if r.par {
			want = "1"
		}
		env := append([]string{inEnv + "=" + in, outEnv + "=" + out, wantParEnv + "=" + want}, r.env...)
		mpitest.Run(t, r.ranks, 2*time.Minute, env...)
		if parErr == nil {
			if b, err := exec.Command("h5diff", ref, out).CombinedOutput(); err != nil {
				t.Errorf("%s: h5diff %s %s: %v\n%s", r.name, ref, out, err, b)
			}
		}
		sameDatasets(t, ref, out)
		sameDatasets(t, ref, out+".whole.h5")
	}
	if !parallel {
		t.Log("no parallel HDF5 library (apt-get install libhdf5-openmpi-103-1): only the gathering path was tested")
	}
}

// TestCreateFailsOnRootOnly: with the serial library (rank 0 writes the
// file alone), Create and OpenWrite of a path rank 0 cannot create fail
// on every rank at once, rather than leaving the others waiting for rank
// 0 in the first collective write until OP2_MPI_TIMEOUT.
func TestCreateFailsOnRootOnly(t *testing.T) {
	if mpitest.InRanks() {
		path := os.Getenv("OP2_HDF5_TEST_ROOT_ONLY")
		if path == "" {
			return
		}
		for _, c := range []struct {
			what string
			open func(string) (*File, error)
		}{{"Create", Create}, {"OpenWrite", OpenWrite}} {
			f, err := c.open(path)
			if err == nil || !strings.Contains(err.Error(), "rank 0: ") || !strings.Contains(err.Error(), "cannot be created") ||
				strings.Contains(err.Error(), "different collective operations") {
				t.Errorf("rank %d: %s: %v, want rank 0's error", op2.Rank(), c.what, err)
				f.Close()
			}
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	needHDF5(t)
	path := filepath.Join(t.TempDir(), "missing", "out.h5") // one path for every rank
	mpitest.Run(t, 2, 2*time.Minute, "OP2_HDF5_TEST_ROOT_ONLY="+path, LibraryEnv+"=libhdf5_serial.so.103", "OP2_MPI_TIMEOUT=60s")
}

// hasParallelHDF5 reports whether Debian's parallel HDF5 for Open MPI is
// installed.
func hasParallelHDF5() bool {
	b, _ := exec.Command("ldconfig", "-p").Output()
	return strings.Contains(string(b), "libhdf5_openmpi.so.103")
}

// writePartitioned declares the mesh of in (on every rank: its block),
// partitions it and writes its sets, maps and dats, a constant and a
// plain array to out.
func writePartitioned(t *testing.T, in, out string, wantParallel bool) {
	f, err := Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sets := map[string]*op2.Set{}
	for _, name := range meshSetNames {
		if sets[name], err = f.DeclareSet(name); err != nil {
			t.Fatal(err)
		}
	}
	var maps []*op2.Map
	for _, mp := range []struct {
		name, from, to string
		arity          int
	}{{MapPedge, SetEdges, SetNodes, 2}, {MapPecell, SetEdges, SetCells, 2}, {MapPbedge, SetBedges, SetNodes, 2}, {MapPbecell, SetBedges, SetCells, 1}, {MapPcell, SetCells, SetNodes, 4}} {
		m, err := f.DeclareMap(sets[mp.from], sets[mp.to], mp.arity, mp.name)
		if err != nil {
			t.Fatal(err)
		}
		maps = append(maps, m)
	}
	x, err := DeclareDat[float64](f, sets[SetNodes], 2, DatX)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := DeclareDat[int32](f, sets[SetBedges], 1, DatBound)
	if err != nil {
		t.Fatal(err)
	}
	q, err := DeclareDat[float64](f, sets[SetCells], 3, "q")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op2.Partition(op2.RCBPartitioner(x)); err != nil {
		t.Fatal(err)
	}
	writeAll := func(o *File) error {
		if o.Parallel() != wantParallel {
			t.Errorf("rank %d: Parallel() = %v, want %v", op2.Rank(), o.Parallel(), wantParallel)
		}
		for _, name := range meshSetNames {
			if err := o.WriteSet(sets[name]); err != nil {
				return err
			}
		}
		for _, m := range maps {
			if err := o.WriteMap(m); err != nil {
				return err
			}
		}
		if err := WriteDat(o, x); err != nil {
			return err
		}
		if err := WriteDat(o, bound); err != nil {
			return err
		}
		if err := WriteDatAs(o, q, "/results/step1/q"); err != nil {
			return err
		}
		if err := WriteConst(o, "gam", []float64{1.4}); err != nil {
			return err
		}
		var plain []int32 // rank 0's values are written
		if op2.Rank() == 0 {
			plain = []int32{4, 5, 6, 7, 8, 9}
		}
		return WriteArray(o, "plain", 2, plain)
	}
	o, err := Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeAll(o); err != nil {
		t.Fatal(err)
	}
	mustClose(t, o)
	// The same through WriteFile, whole or not at all; then a write that
	// fails on the last rank only leaves that file as it was, and every
	// rank gets the error.
	whole := out + ".whole.h5"
	if err := WriteFile(whole, writeAll); err != nil {
		t.Fatal(err)
	}
	err = WriteFile(whole, func(o *File) error {
		if err := writeAll(o); err != nil {
			return err
		}
		if err := WriteArray(o, "failed_write", 1, []int32{1}); err != nil || op2.Rank() < op2.Ranks()-1 {
			return err
		}
		return errors.New("the last rank's write failed")
	})
	if err == nil || !strings.Contains(err.Error(), "the last rank's write failed") || !strings.Contains(err.Error(), whole) {
		t.Errorf("rank %d: WriteFile failing on the last rank: %v", op2.Rank(), err)
	}
	if op2.Rank() == 0 {
		f, err := Open(whole)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Info("failed_write"); err == nil {
			t.Errorf("the failed WriteFile replaced %s", whole)
		}
		mustClose(t, f)
	}
	if op2.Rank() == 0 {
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(whole), ".*.tmp")); len(left) != 0 {
			t.Errorf("WriteFile left temporary files: %v", left)
		}
	}
	if mpitest.InRanks() {
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
	}
}

// sameDatasets compares every dataset writePartitioned writes in two
// files.
func sameDatasets(t *testing.T, a, b string) {
	t.Helper()
	fa, err := Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	for _, name := range meshSetNames {
		na, err1 := fa.SetSize(name)
		nb, err2 := fb.SetSize(name)
		if err1 != nil || err2 != nil || na != nb {
			t.Errorf("%s: set %s: %d (%v) and %d (%v)", b, name, na, err1, nb, err2)
		}
	}
	ints := map[string]int{MapPedge: 2, MapPecell: 2, MapPbedge: 2, MapPbecell: 1, MapPcell: 4, DatBound: 1, "plain": 2}
	for name, dim := range ints {
		va, err1 := ReadAll[int32](fa, name, dim)
		vb, err2 := ReadAll[int32](fb, name, dim)
		if err1 != nil || err2 != nil || !slices.Equal(va, vb) {
			t.Errorf("%s: %s differs (%v, %v)", b, name, err1, err2)
		}
	}
	for name, dim := range map[string]int{DatX: 2, "/results/step1/q": 3, "gam": 1} {
		va, err1 := ReadAll[float64](fa, name, dim)
		vb, err2 := ReadAll[float64](fb, name, dim)
		if err1 != nil || err2 != nil || !slices.Equal(va, vb) {
			t.Errorf("%s: %s differs (%v, %v)", b, name, err1, err2)
		}
	}
}

// TestCloseAfterFinalize: op2.Finalize closes a file every rank writes
// through MPI-IO that the program left open (MPI-IO cannot close it once
// MPI has ended: the job aborted, also at exit under -race), so the file
// is complete, and Close after it has nothing to do; a file only rank 0
// writes (no parallel HDF5) closes after Finalize as before.
func TestCloseAfterFinalize(t *testing.T) {
	const outEnv = "OP2_HDF5_TEST_CLOSE_OUT"
	if mpitest.InRanks() {
		o, err := Create(os.Getenv(outEnv))
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteArray(o, "a", 2, []float64{1, 2, 3, 4}); err != nil {
			t.Fatal(err)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := o.Close(); err != nil {
				t.Errorf("rank %d: Close after Finalize: %v", op2.Rank(), err)
			}
		}
		return
	}
	needHDF5(t)
	path := filepath.Join(t.TempDir(), "close.h5")
	out, err := mpitest.Output(t, 2, 2*time.Minute, outEnv+"="+path)
	if err != nil {
		t.Fatalf("job failed: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "HDF5-DIAG") {
		t.Errorf("HDF5 printed diagnostics:\n%s", out)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, f)
	if a, err := ReadAll[float64](f, "a", 2); err != nil || !slices.Equal(a, []float64{1, 2, 3, 4}) {
		t.Errorf("the file closed by Finalize holds %v, %v; want [1 2 3 4]", a, err)
	}
}
