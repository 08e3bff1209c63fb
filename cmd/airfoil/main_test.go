package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/airfoil"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testcache"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh"
	"github.com/goop2/op2/vtk"
)

// reference is OP2's exact output for 1000 iterations on the reference mesh.
var reference = []string{
	" 100  5.02186e-04",
	" 200  3.41746e-04",
	" 300  2.63430e-04",
	" 400  2.16288e-04",
	" 500  1.84659e-04",
	" 600  1.60866e-04",
	" 700  1.42253e-04",
	" 800  1.27627e-04",
	" 900  1.15810e-04",
	" 1000  1.06011e-04",
}

func TestMain(m *testing.M) {
	if os.Getenv("GOOP2_AIRFOIL_MAIN") == "1" {
		main() // as the command, for tests of its exit status
		os.Exit(0)
	}
	os.Exit(testcache.Run(m, "goop2-airfoil-cache-"))
}

func TestReferenceOutputOpenMP(t *testing.T) {
	if testing.Short() {
		t.Skip("1000 iterations on the 720 000-cell mesh: skipped in -short mode")
	}
	_, out, err := openMPReference()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(reference, "\n") + "\nThis test is considered PASSED\n"
	if out != want {
		t.Errorf("output differs from OP2's reference:\n got:\n%s\nwant:\n%s", out, want)
	}
}

// openMPReference runs Airfoil's 1000 iterations on the reference mesh on
// openmp once for the tests that need it (TestReferenceOutputOpenMP, and
// TestAirfoilOnRanks's one-rank run to compare the ranks with): its
// result, what it printed and its error.
func openMPReference() (*result, string, error) {
	r := openMPReferenceRun()
	return r.res, r.out, r.err
}

var openMPReferenceRun = sync.OnceValue(func() (r struct {
	res *result
	out string
	err error
}) {
	var out bytes.Buffer
	r.res, r.err = run(options{backend: "openmp", iters: 1000, ni: 400, nj: 600}, &out)
	r.out = out.String()
	return r
})

func TestReferenceFirstLinesSequential(t *testing.T) {
	if testing.Short() {
		t.Skip("100 iterations on the 720 000-cell mesh: skipped in -short mode")
	}
	var out bytes.Buffer
	if _, err := run(options{backend: "sequential", iters: 100, ni: 400, nj: 600}, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != reference[0]+"\n" {
		t.Errorf("output %q, want %q", got, reference[0]+"\n")
	}
}

// TestSmallMeshEveryBackend runs a small generated mesh on every backend
// and thread count and compares the rms history and the final solution
// with the sequential run.
func TestSmallMeshEveryBackend(t *testing.T) {
	base := options{iters: 300, ni: 40, nj: 60}
	seq := base
	seq.backend = "sequential"
	var sink bytes.Buffer
	want, err := run(seq, &sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.rms) != 3 || !(want.rms[0] > 0) {
		t.Fatalf("sequential rms history %v", want.rms)
	}
	type variant struct {
		backend string
		threads int
	}
	variants := []variant{{"openmp", 1}, {"openmp", 2}, {"openmp", 3}, {"opencl", 0}}
	for _, v := range variants {
		o := base
		o.backend, o.threads = v.backend, v.threads
		got, err := run(o, &sink)
		if err != nil && v.backend == "opencl" && strings.Contains(err.Error(), "install") {
			t.Logf("opencl backend unavailable, not compared: %v", err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		threads := fmt.Sprintf("%s %d", v.backend, v.threads)
		for i := range want.rms {
			if math.Abs(got.rms[i]-want.rms[i]) > 1e-10*want.rms[i] {
				t.Errorf("%s: rms[%d] = %.17g, sequential %.17g", threads, i, got.rms[i], want.rms[i])
			}
		}
		for i := range want.q {
			if !close(got.q[i], want.q[i], 1e-9) {
				t.Fatalf("%s: q[%d] = %.17g, sequential %.17g", threads, i, got.q[i], want.q[i])
			}
		}
	}
}

// TestReferenceOutputLazy: Airfoil with its loops recorded and run when
// their results are read (-lazy, op2.Config.Lazy) prints OP2's reference
// lines for 200 iterations on the reference mesh.
func TestReferenceOutputLazy(t *testing.T) {
	if testing.Short() {
		t.Skip("200 iterations on the 720 000-cell mesh: skipped in -short mode")
	}
	defer op2.Configure(op2.Config{})
	var out bytes.Buffer
	if _, err := run(options{backend: "openmp", iters: 200, ni: 400, nj: 600, lazy: true}, &out); err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(reference[:2], "\n") + "\n"; out.String() != want {
		t.Errorf("output differs from OP2's reference:\n got:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestReferenceOutputTiled: Airfoil with its recorded loops run in sparse
// tiles (-lazy -tile, op2.Config.Tile) prints OP2's reference lines on the
// reference mesh: 200 iterations on openmp (2 threads), 100 sequential.
func TestReferenceOutputTiled(t *testing.T) {
	if testing.Short() {
		t.Skip("100-200 iterations on the 720 000-cell mesh: skipped in -short mode")
	}
	defer op2.Configure(op2.Config{})
	for _, o := range []options{
		{backend: "openmp", threads: 2, iters: 200, tile: 4000},
		{backend: "sequential", iters: 100, tile: 4000},
	} {
		o.ni, o.nj, o.lazy = 400, 600, true
		var out bytes.Buffer
		if _, err := run(o, &out); err != nil {
			t.Fatal(err)
		}
		if want := strings.Join(reference[:o.iters/100], "\n") + "\n"; out.String() != want {
			t.Errorf("%s: output differs from OP2's reference:\n got:\n%s\nwant:\n%s", o.backend, out.String(), want)
		}
	}
}

// TestSmallMeshTiled: on a small mesh, running the recorded loops in
// sparse tiles (-tile) of several sizes gives the rms history and solution
// of running each loop at once: bit for bit in one thread (a sequential
// schedule keeps each loop's increments, and its rms sum, in element
// order), within rounding on more (increments reach a cell in another
// order), on the host backends and 1 to 3 threads.
func TestSmallMeshTiled(t *testing.T) {
	defer op2.Configure(op2.Config{})
	base := options{backend: "sequential", iters: 100, ni: 40, nj: 60}
	var sink bytes.Buffer
	eager := base
	eager.eager = true
	want, err := run(eager, &sink)
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		backend string
		threads int
		tile    int
	}
	variants := []variant{{"sequential", 0, 1}, {"sequential", 0, 150}, {"sequential", 0, 100000},
		{"openmp", 1, 150}, {"openmp", 2, 16}, {"openmp", 2, 150}, {"openmp", 3, 400}, {"openmp", 2, 100000}}
	for _, v := range variants {
		o := base
		o.backend, o.threads, o.tile, o.lazy = v.backend, v.threads, v.tile, true
		got, err := run(o, &sink)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("%s %d threads, tile %d", v.backend, v.threads, v.tile)
		if v.threads <= 1 {
			if !slices.Equal(got.rms, want.rms) || !slices.Equal(got.q, want.q) {
				t.Errorf("%s: the rms history or the solution differs from running each loop at once", what)
			}
			continue
		}
		for i := range want.rms {
			if math.Abs(got.rms[i]-want.rms[i]) > 1e-10*want.rms[i] {
				t.Errorf("%s: rms[%d] = %.17g, at once %.17g", what, i, got.rms[i], want.rms[i])
			}
		}
		for i := range want.q {
			if !close(got.q[i], want.q[i], 1e-9) {
				t.Fatalf("%s: q[%d] = %.17g, at once %.17g", what, i, got.q[i], want.q[i])
			}
		}
	}
}

// TestSmallMeshLazy: on a small mesh, -lazy gives the same rms history
// and solution, bit for bit, as running each loop at once, on the host
// backends and opencl.
func TestSmallMeshLazy(t *testing.T) {
	defer op2.Configure(op2.Config{})
	for _, backend := range []string{"sequential", "openmp", "opencl"} {
		o := options{backend: backend, threads: 2, iters: 100, ni: 40, nj: 60, eager: true}
		var sink bytes.Buffer
		want, err := run(o, &sink)
		if err != nil && backend == "opencl" && strings.Contains(err.Error(), "install") {
			t.Logf("opencl backend unavailable, not compared: %v", err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		o.lazy, o.eager = true, false
		got, err := run(o, &sink)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.rms, want.rms) || !slices.Equal(got.q, want.q) {
			t.Errorf("%s: -lazy differs from running each loop at once: rms %v, want %v", backend, got.rms, want.rms)
		}
	}
}

// TestShuffleRenumber: the shuffled mesh (-shuffle) gives the ordered
// mesh's rms history, and renumbering it (-renumber rcm, rcb, rcb-nodes,
// and auto, which finds its maps' poor locality and takes rcm) gives the
// shuffled run's q in its declared numbering, within rounding (sums run in
// another order), on the host backends; auto leaves the ordered mesh as
// it is.
func TestShuffleRenumber(t *testing.T) {
	defer op2.EnableTiming(false) // -timing below: leave no timings to other tests
	defer op2.ResetTimings()
	for _, backend := range []string{"sequential", "openmp"} {
		base := options{backend: backend, iters: 100, ni: 40, nj: 60}
		ordered, err := run(base, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		sh := base
		sh.shuffle = 7
		shuffled, err := run(sh, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for _, ord := range []string{"", "none", "rcm", "rcb", "rcb-nodes", "auto"} {
			o := sh
			o.renumber = ord
			got := shuffled
			if ord != "" && ord != "none" {
				var out bytes.Buffer
				o.timing = true
				if got, err = run(o, &out); err != nil {
					t.Fatal(err)
				}
				want := strings.TrimSuffix(ord, "-nodes")
				if ord == "auto" {
					want = "rcm"
					if !strings.Contains(out.String(), "maps with poor locality: pedge (median gap") {
						t.Errorf("%s -shuffle -renumber auto -timing does not name the maps with poor locality:\n%s", backend, out.String())
					}
				}
				if !strings.Contains(out.String(), "renumbered by "+want+" ([") {
					t.Errorf("%s -renumber %s -timing does not report the renumbering:\n%s", backend, ord, out.String())
				}
				for i := range shuffled.q {
					if !close(got.q[i], shuffled.q[i], 1e-9) {
						t.Fatalf("%s -renumber %s: q[%d] = %.17g, shuffled %.17g", backend, ord, i, got.q[i], shuffled.q[i])
					}
				}
			}
			if math.Abs(got.rms[0]-ordered.rms[0]) > 1e-10*ordered.rms[0] {
				t.Errorf("%s -shuffle -renumber %q: rms %.17g, ordered mesh %.17g", backend, ord, got.rms[0], ordered.rms[0])
			}
		}
	}
	// The ordered mesh: auto keeps its numbering.
	var out bytes.Buffer
	if _, err := run(options{iters: 1, ni: 40, nj: 60, renumber: "auto", timing: true}, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "renumbered") || strings.Contains(out.String(), "poor locality") {
		t.Errorf("-renumber auto renumbered the ordered mesh:\n%s", out.String())
	}
	o := options{iters: 1, ni: 4, nj: 6, renumber: "metis"}
	if _, err := run(o, io.Discard); err == nil || !strings.Contains(err.Error(), `-renumber "metis": want rcm, rcb, rcb-nodes, none or auto`) {
		t.Errorf("-renumber metis: %v", err)
	}
}

// close compares with a tolerance relative to the larger magnitude, or to
// 1 for values near zero (q's components are of order 1).
func close(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestMeshFileRoundTrip writes the built-in mesh with -write-mesh (and
// -iters 0, which does nothing else), reads it back with -mesh, and checks
// the results match the built-in mesh exactly; -dump-q writes OP2's format.
func TestMeshFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	meshFile := filepath.Join(dir, "grid.dat.gz")
	var out bytes.Buffer
	if _, err := run(options{iters: 0, ni: 20, nj: 30, writeMesh: meshFile}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("-iters 0 printed %q", out.String())
	}
	builtin, err := run(options{backend: "sequential", iters: 100, ni: 20, nj: 30}, &out)
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(dir, "q.dat")
	fromFile, err := run(options{backend: "sequential", iters: 100, meshPath: meshFile, dumpQ: dump}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if builtin.rms[0] != fromFile.rms[0] {
		t.Errorf("rms from the file %.17g, built-in %.17g", fromFile.rms[0], builtin.rms[0])
	}
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	ncell := 3 * 20 * 30
	if len(b) != 8+ncell*4*8 || binary.LittleEndian.Uint32(b) != uint32(ncell) || binary.LittleEndian.Uint32(b[4:]) != 4 {
		t.Fatalf("dump: %d bytes, header %d %d", len(b), binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]))
	}
	for i, want := range fromFile.q {
		if got := math.Float64frombits(binary.LittleEndian.Uint64(b[8+8*i:])); got != want {
			t.Fatalf("dump value %d = %v, want %v", i, got, want)
		}
	}
}

// writeHDF5Mesh writes the generated mesh in OP2's HDF5 layout with
// -write-mesh, skipping the test when libhdf5 is not installed.
func writeHDF5Mesh(t *testing.T, dir string, ni, nj int) string {
	t.Helper()
	path := filepath.Join(dir, "new_grid.h5")
	_, err := run(options{iters: 0, ni: ni, nj: nj, writeMesh: path}, io.Discard)
	testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
	return path
}

// TestHDF5Mesh: a mesh written in OP2's HDF5 layout and read back with
// -mesh FILE.h5 gives the same printed output and the same -dump-q, bit
// for bit, as the generated mesh and as its ASCII file.
func TestHDF5Mesh(t *testing.T) {
	dir := t.TempDir()
	h5File := writeHDF5Mesh(t, dir, 20, 30)
	datFile := filepath.Join(dir, "new_grid.dat")
	if _, err := run(options{iters: 0, ni: 20, nj: 30, writeMesh: datFile}, io.Discard); err != nil {
		t.Fatal(err)
	}
	runs := map[string]options{
		"generated": {ni: 20, nj: 30},
		"ascii":     {meshPath: datFile},
		"hdf5":      {meshPath: h5File},
	}
	outs, dumps := map[string]string{}, map[string][]byte{}
	for name, o := range runs {
		o.backend, o.iters, o.dumpQ = "sequential", 200, filepath.Join(dir, name+".q")
		var out bytes.Buffer
		if _, err := run(o, &out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := os.ReadFile(o.dumpQ)
		if err != nil {
			t.Fatal(err)
		}
		outs[name], dumps[name] = out.String(), b
	}
	if strings.Count(outs["hdf5"], "\n") != 2 {
		t.Errorf("output %q, want two rms lines", outs["hdf5"])
	}
	for _, name := range []string{"generated", "ascii"} {
		if outs["hdf5"] != outs[name] {
			t.Errorf("output with the HDF5 mesh:\n%s\nwith the %s mesh:\n%s", outs["hdf5"], name, outs[name])
		}
		if !bytes.Equal(dumps["hdf5"], dumps[name]) {
			t.Errorf("-dump-q with the HDF5 mesh differs from the %s mesh's", name)
		}
	}

	// A file that is HDF5 by its content, whatever its name, is read as HDF5.
	renamed := filepath.Join(dir, "grid.bin")
	if err := os.Rename(h5File, renamed); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := run(options{backend: "sequential", iters: 200, meshPath: renamed}, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != outs["generated"] {
		t.Errorf("output with the renamed HDF5 mesh:\n%s", out.String())
	}
}

// TestBadHDF5Mesh: an HDF5 file without the Airfoil mesh is refused with
// an error naming the file and the dataset.
func TestBadHDF5Mesh(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "other.h5")
	f, err := hdf5.Create(path)
	if err != nil {
		testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
	}
	if err := f.WriteSetSize("nodes", 3); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = run(options{iters: 1, meshPath: path}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `dataset "edges": not found`) {
		t.Errorf("error %v, want one naming the file and dataset \"edges\"", err)
	}
}

func TestBadMeshFile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.dat")
	if err := os.WriteFile(bad, []byte(" 4 1 0 0 \n 0.0 0.0 \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := run(options{iters: 1, meshPath: bad}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error %v, want one naming line 3", err)
	}
}

func TestReferenceOutputOpenCL(t *testing.T) {
	if testing.Short() {
		t.Skip("200 iterations on the 720 000-cell mesh: skipped in -short mode")
	}
	var out bytes.Buffer
	_, err := run(options{backend: "opencl", iters: 200, ni: 400, nj: 600}, &out)
	testreq.Check(t, "opencl", err, op2.ErrBackendUnavailable)
	want := strings.Join(reference[:2], "\n") + "\n"
	if out.String() != want {
		t.Errorf("output differs from OP2's reference:\n got:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestAirfoilOnRanks runs Airfoil on 2 to 4 MPI ranks with each
// partitioner, the mesh generated or read (ASCII or HDF5) by every rank
// block by block, and compares the printed rms lines (exactly) and the
// solution gathered by -dump-q (to 1e-12 relative) with a one-rank run.
// With -startup every rank prints its start-up line; with -chain the
// loops are recorded in chains (grouped halo exchanges), with the same
// rms lines, also when the chains run in sparse tiles (-tile, 2 ranks;
// the solution then within the same 1e-12). Every rank refuses
// -write-mesh and -shuffle.
func TestAirfoilOnRanks(t *testing.T) {
	if mpitest.InRanks() {
		var out bytes.Buffer
		o := options{backend: os.Getenv("AIRFOIL_BACKEND"), partition: os.Getenv("AIRFOIL_PARTITION"), dumpQ: os.Getenv("AIRFOIL_DUMP"), vtkPath: os.Getenv("AIRFOIL_VTK")}
		fmt.Sscan(os.Getenv("AIRFOIL_MESH"), &o.ni, &o.nj, &o.iters)
		o.meshPath = os.Getenv("AIRFOIL_MESHFILE")
		o.startup = os.Getenv("AIRFOIL_STARTUP") == "1"
		o.chain = os.Getenv("AIRFOIL_CHAIN") == "true"
		fmt.Sscan(os.Getenv("AIRFOIL_TILE"), &o.tile)
		// Refused before anything collective: no rank holds the whole mesh.
		refused := []struct {
			o    options
			want string
		}{
			{options{ni: 4, nj: 6, writeMesh: filepath.Join(t.TempDir(), "m.dat")}, "-write-mesh under MPI"},
			{options{ni: 4, nj: 6, iters: 1, shuffle: 7}, "-shuffle under MPI"},
		}
		for _, r := range refused {
			if _, err := run(r.o, io.Discard); err == nil || !strings.Contains(err.Error(), r.want) || !strings.Contains(err.Error(), "one process") {
				t.Errorf("rank %d: error %v, want one saying %q and to use one process", op2.Rank(), err, r.want)
			}
		}
		if _, err := run(o, &out); err != nil {
			t.Fatal(err)
		}
		// With -tile, the ranks time their loops (OP2_TIMING): some ran
		// in tiles.
		if o.tile > 0 && !slices.ContainsFunc(op2.Timings(), func(lt op2.LoopTiming) bool { return lt.Tuned == "tiled" }) {
			t.Errorf("rank %d: -chain -tile %d ran no loop in tiles", op2.Rank(), o.tile)
		}
		path := os.Getenv("AIRFOIL_OUT")
		if op2.Rank() > 0 {
			path += fmt.Sprintf(".rank%d", op2.Rank())
		}
		if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	type job struct {
		ranks           int
		partition, back string
		ni, nj, iters   int
		file            string // "hdf5" or "ascii": each rank reads its block of the mesh from such a file; "": generates it
		startup         bool   // -startup
		chain           bool   // -chain
		tile            int    // -tile (with -chain)
	}
	jobs := []job{{3, "metis", "openmp", 40, 60, 200, "", true, false, 0}, {2, "rcb", "sequential", 40, 60, 200, "hdf5", false, false, 0},
		{3, "rcb", "sequential", 40, 60, 200, "ascii", true, false, 0}, {2, "rcb", "sequential", 40, 60, 200, "", false, true, 0},
		{2, "rcb", "sequential", 40, 60, 200, "", false, true, 64}}
	if !testing.Short() {
		jobs = append(jobs, job{2, "rcb", "sequential", 40, 60, 200, "", false, false, 0}, job{4, "block", "sequential", 40, 60, 200, "ascii", false, false, 0}, job{2, "rcb", "openmp", 400, 600, 200, "", false, false, 0}, job{3, "metis", "sequential", 400, 600, 200, "", false, false, 0},
			job{2, "metis", "sequential", 400, 600, 1000, "", false, false, 0}, job{3, "metis", "openmp", 40, 60, 200, "ascii", false, true, 0})
	}
	serial := map[[3]int]*result{}
	serialOut := map[[3]int]string{}
	for _, j := range jobs {
		name := fmt.Sprintf("%d-ranks-%s-%s-%dx%d-%d-iters", j.ranks, j.partition, j.back, j.ni, j.nj, j.iters)
		if j.file != "" {
			name += "-" + j.file
		}
		if j.startup {
			name += "-startup"
		}
		if j.chain {
			name += "-chain"
		}
		if j.tile > 0 {
			name += fmt.Sprintf("-tile%d", j.tile)
		}
		t.Run(name, func(t *testing.T) {
			key := [3]int{j.ni, j.nj, j.iters}
			if serial[key] == nil {
				// One rank: sequential, or for 1000 iterations on the
				// reference mesh openmp (all cores, faster, and shared
				// with TestReferenceOutputOpenMP; its values differ from
				// sequential's by rounding only, like the ranks').
				var res *result
				var out string
				var err error
				if j.iters == 1000 && j.ni == 400 && j.nj == 600 {
					res, out, err = openMPReference()
				} else {
					var b bytes.Buffer
					res, err = run(options{backend: "sequential", iters: j.iters, ni: j.ni, nj: j.nj}, &b)
					out = b.String()
				}
				if err != nil {
					t.Fatal(err)
				}
				serial[key], serialOut[key] = res, out
			}
			dir := t.TempDir()
			dump, outPath, vtu := filepath.Join(dir, "q.dat"), filepath.Join(dir, "out.txt"), filepath.Join(dir, "a.vtu")
			meshFile := ""
			switch j.file {
			case "hdf5":
				meshFile = writeHDF5Mesh(t, dir, j.ni, j.nj)
			case "ascii":
				meshFile = filepath.Join(dir, "grid.dat.gz")
				if _, err := run(options{iters: 0, ni: j.ni, nj: j.nj, writeMesh: meshFile}, io.Discard); err != nil {
					t.Fatal(err)
				}
			}
			startup := "0"
			if j.startup {
				startup = "1"
			}
			mpitest.Run(t, j.ranks, 4*time.Minute, "AIRFOIL_BACKEND="+j.back, "AIRFOIL_PARTITION="+j.partition,
				"AIRFOIL_DUMP="+dump, "AIRFOIL_OUT="+outPath, "AIRFOIL_VTK="+vtu, fmt.Sprintf("AIRFOIL_MESH=%d %d %d", j.ni, j.nj, j.iters),
				"AIRFOIL_MESHFILE="+meshFile, "AIRFOIL_STARTUP="+startup, fmt.Sprintf("AIRFOIL_CHAIN=%v", j.chain),
				fmt.Sprintf("AIRFOIL_TILE=%d", j.tile), fmt.Sprintf("OP2_TIMING=%v", j.tile > 0))
			checkVTK(t, strings.TrimSuffix(vtu, ".vtu")+".pvtu", j.ni, j.nj, serial[key].q)
			var out []byte
			for rank := range j.ranks {
				path := outPath
				if rank > 0 {
					path += fmt.Sprintf(".rank%d", rank)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				rest := checkStartupLine(t, string(b), rank, j.ranks, j.startup)
				if rank == 0 {
					out = []byte(rest)
				} else if rest != "" {
					t.Errorf("rank %d printed %q", rank, rest)
				}
			}
			if string(out) != serialOut[key] {
				t.Errorf("rms lines on %d ranks:\n%s\none rank:\n%s", j.ranks, out, serialOut[key])
			}
			wantOut := strings.Join(reference[:j.iters/100], "\n") + "\n"
			if j.iters == 1000 {
				wantOut += "This test is considered PASSED\n"
			}
			if j.ni == 400 && j.nj == 600 && string(out) != wantOut {
				t.Errorf("rms lines differ from OP2's reference:\n%s", out)
			}
			q := readDat(t, dump)
			want := serial[key].q
			if len(q) != len(want) {
				t.Fatalf("dumped %d values, want %d", len(q), len(want))
			}
			// Increments reach a cell in another order on several ranks
			// (core, owned and exec-halo edges), so values differ by
			// rounding: each within 1e-12 of its component's largest
			// magnitude (after 1000 iterations, components near zero
			// differ by more than 1e-12 of themselves).
			scale := make([]float64, 4)
			for i, v := range want {
				scale[i%4] = max(scale[i%4], math.Abs(v))
			}
			for i := range q {
				if math.Abs(q[i]-want[i]) > 1e-12*scale[i%4] {
					t.Fatalf("q[%d] = %.17g on %d ranks, %.17g on one (component scale %g)", i, q[i], j.ranks, want[i], scale[i%4])
				}
			}
		})
	}
}

// startupLine is the line -startup prints: the read step, any steps of
// op2.Partition, and the total.
var startupLine = regexp.MustCompile(`^startup rank (\d+)/(\d+): read \d+\.\d{3} s \(peak \d+\.\d MB\)((, [a-z]+ \d+\.\d{3} s \(peak \d+\.\d MB\))*); total \d+\.\d{3} s, peak \d+\.\d MB$`)

// checkStartupLine checks that out starts with rank's -startup line (when
// want) or has none, and returns the rest of out.
func checkStartupLine(t *testing.T, out string, rank, ranks int, want bool) string {
	t.Helper()
	first, rest, _ := strings.Cut(out, "\n")
	m := startupLine.FindStringSubmatch(first)
	if !want {
		if strings.Contains(out, "startup") {
			t.Errorf("rank %d printed a start-up line without -startup:\n%s", rank, out)
		}
		return out
	}
	if m == nil || m[1] != fmt.Sprint(rank) || m[2] != fmt.Sprint(ranks) {
		t.Errorf("rank %d of %d: output does not start with its start-up line:\n%s", rank, ranks, out)
		return out
	}
	t.Logf("%s", first)
	if ranks == 1 && m[3] != "" {
		t.Errorf("one process: start-up line %q has partition steps", first)
	}
	return rest
}

func readDat(t *testing.T, path string) []float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, dim := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	v := make([]float64, int(n)*int(dim))
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8+8*i:]))
	}
	return v
}

// checkVTK reads the .vtu that -vtk wrote (or, for a .pvtu, its pieces,
// one after another) and compares it with the generated mesh and the
// solution q of a one-rank run, cell by cell through each cell's declared
// number: its nodes' coordinates, q and the derived fields.
func checkVTK(t *testing.T, path string, ni, nj int, q []float64) {
	t.Helper()
	var g *vtk.Grid
	var err error
	if strings.HasSuffix(path, ".pvtu") {
		var pieces []*vtk.Grid
		if pieces, err = vtk.ReadPVTUFile(path); err == nil {
			g, err = vtk.Merge(pieces)
		}
	} else {
		g, err = vtk.ReadFile(path)
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := mesh.Generate(ni, nj)
	if err != nil {
		t.Fatal(err)
	}
	if g.Type != vtk.Quad || g.NumCells() != m.NCell {
		t.Fatalf("-vtk: %d cells of type %d; want the mesh's %d quads", g.NumCells(), g.Type, m.NCell)
	}
	if !strings.HasSuffix(path, ".pvtu") && (!slices.Equal(g.Cells, m.Cell) || g.NumPoints() != m.NNode) {
		t.Fatalf("-vtk: %d points, cells differ from the mesh's; want the mesh's %d nodes and cells", g.NumPoints(), m.NNode)
	}
	gq, p, mach, num := g.CellArray("q"), g.CellArray("pressure"), g.CellArray("mach"), g.CellArray(vtk.DeclaredNumberArray)
	if gq == nil || p == nil || mach == nil || num == nil || gq.Components != 4 {
		t.Fatalf("-vtk: cell arrays %v; want q (4 components), pressure, mach, %s", g.CellData, vtk.DeclaredNumberArray)
	}
	qv, pv, mv, nv := gq.Float64s(), p.Float64s(), mach.Float64s(), num.Float64s()
	seen := make([]bool, m.NCell)
	for c := 0; c < m.NCell; c++ {
		d := int(nv[c])
		if d < 0 || d >= m.NCell || seen[d] {
			t.Fatalf("-vtk: cell %d has declared number %d: outside the mesh or seen before", c, d)
		}
		seen[d] = true
		for k := 0; k < 4; k++ {
			pt, n := g.Cells[4*c+k], m.Cell[4*d+k]
			if g.Points[3*pt] != m.X[2*n] || g.Points[3*pt+1] != m.X[2*n+1] || g.Points[3*pt+2] != 0 {
				t.Fatalf("-vtk: cell %d, node %d is at %v, want %v", d, k, g.Points[3*pt:3*pt+3], m.X[2*n:2*n+2])
			}
			if !close(qv[4*c+k], q[4*d+k], 1e-12) {
				t.Fatalf("-vtk: q[%d] = %.17g, want %.17g", 4*d+k, qv[4*c+k], q[4*d+k])
			}
		}
		wp, wm := airfoil.Derived(q[4*d : 4*d+4])
		if !close(pv[c], wp, 1e-12) || !close(mv[c], wm, 1e-12) {
			t.Fatalf("-vtk: cell %d: pressure %g, Mach %g; want %g, %g", d, pv[c], mv[c], wp, wm)
		}
	}
}

// TestVTKOutput runs a small mesh with -vtk and checks the file.
func TestVTKOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.vtu")
	res, err := run(options{backend: "sequential", iters: 20, ni: 8, nj: 12, vtkPath: path}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	checkVTK(t, path, 8, 12, res.q)
	// Far from the aerofoil the flow is the free stream: Mach 0.4.
	g, _ := vtk.ReadFile(path)
	if m := g.CellArray("mach").Float64s(); math.Abs(m[len(m)-1]-0.4) > 0.05 {
		t.Errorf("Mach number in the far field %g, want about 0.4", m[len(m)-1])
	}
}

// TestItersZeroWritesInitialState: with -iters 0, -dump-q and -vtk write
// the initial state (the free stream everywhere), and nothing else is
// printed.
func TestItersZeroWritesInitialState(t *testing.T) {
	dir := t.TempDir()
	vtu, dump := filepath.Join(dir, "a.vtu"), filepath.Join(dir, "q.bin")
	var out bytes.Buffer
	res, err := run(options{backend: "sequential", iters: 0, ni: 8, nj: 12, vtkPath: vtu, dumpQ: dump}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q, want nothing", out.String())
	}
	checkVTK(t, vtu, 8, 12, res.q)
	for i := 4; i < len(res.q); i++ {
		if res.q[i] != res.q[i%4] {
			t.Fatalf("q[%d] = %g, q[%d] = %g: the initial state is the same in every cell", i, res.q[i], i%4, res.q[i%4])
		}
	}
	if fi, err := os.Stat(dump); err != nil || fi.Size() == 0 {
		t.Errorf("-dump-q: %v", err)
	}
}

// TestTimingTable: -timing prints op2's timing table with the five loops,
// each called as often as Airfoil calls it.
func TestTimingTable(t *testing.T) {
	defer op2.EnableTiming(false)
	defer op2.ResetTimings()
	for _, eager := range []bool{true, false} {
		op2.ResetTimings()
		var out bytes.Buffer
		if _, err := run(options{backend: "sequential", iters: 10, ni: 8, nj: 12, timing: true, eager: eager}, &out); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		if !strings.Contains(text, "GB/s") || !strings.Contains(text, "all loops") {
			t.Fatalf("no timing table:\n%s", text)
		}
		// Each loop at once: the five loops' rows. By default (lazy mode,
		// fused where it pays) update, save_soln and adt_calc may run in
		// fused loops, each a row of its own; res_calc and bres_calc,
		// which increment through maps, never fuse.
		calls := map[string]int{"save_soln": 10, "adt_calc": 20, "res_calc": 20, "bres_calc": 20, "update": 20}
		for _, lt := range op2.Timings() {
			if !strings.Contains(text, lt.Kernel) {
				t.Errorf("the table lacks %s:\n%s", lt.Kernel, text)
			}
			if !eager && (strings.HasPrefix(lt.Kernel, "fused_") || lt.Kernel == "save_soln" || lt.Kernel == "adt_calc" || lt.Kernel == "update") {
				delete(calls, lt.Kernel)
				continue
			}
			if want, ok := calls[lt.Kernel]; !ok || lt.Calls != want {
				t.Errorf("eager %v: %s: %d calls, want %d", eager, lt.Kernel, lt.Calls, want)
			}
			delete(calls, lt.Kernel)
		}
		if !eager {
			delete(calls, "save_soln")
			delete(calls, "adt_calc")
			delete(calls, "update")
		}
		if len(calls) != 0 {
			t.Errorf("eager %v: loops not timed: %v", eager, calls)
		}
	}
}

// TestStartupReport: -startup prints one line for rank 0 of 1 with the
// read step and the total, before the rms lines, for the generated mesh
// and an ASCII file, also with -iters 0; without it nothing is printed.
func TestStartupReport(t *testing.T) {
	meshFile := filepath.Join(t.TempDir(), "grid.dat")
	if _, err := run(options{iters: 0, ni: 8, nj: 12, writeMesh: meshFile}, io.Discard); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		o       options
		startup bool
		rms     int // rms lines after the start-up line
	}{
		{"generated", options{ni: 8, nj: 12, iters: 100}, true, 1},
		{"ascii", options{meshPath: meshFile, iters: 100}, true, 1},
		{"iters 0", options{ni: 8, nj: 12, iters: 0}, true, 0},
		{"without -startup", options{ni: 8, nj: 12, iters: 100}, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.backend, o.startup = "sequential", tc.startup
			var out bytes.Buffer
			if _, err := run(o, &out); err != nil {
				t.Fatal(err)
			}
			rest := checkStartupLine(t, out.String(), 0, 1, tc.startup)
			if n := strings.Count(rest, "\n"); n != tc.rms {
				t.Errorf("%d lines after the start-up line, want %d:\n%s", n, tc.rms, out.String())
			}
		})
	}
}

// TestNoCellsOnRanks: a mesh without cells is refused on every rank (each
// reads its block of the file; the check is on the global count, after
// Partition), so that no rank waits for another.
func TestNoCellsOnRanks(t *testing.T) {
	if mpitest.InRanks() {
		o := options{backend: "sequential", iters: 1, partition: "block", meshPath: os.Getenv("AIRFOIL_MESHFILE")}
		if _, err := run(o, io.Discard); err == nil || !strings.Contains(err.Error(), "the mesh has no cells") {
			t.Errorf("rank %d: error %v, want one saying the mesh has no cells", op2.Rank(), err)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "nocells.dat")
	if err := os.WriteFile(path, []byte(" 4 0 0 0 \n 0 0 \n 1 0 \n 1 1 \n 0 1 \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(options{iters: 1, meshPath: path}, io.Discard); err == nil || !strings.Contains(err.Error(), "the mesh has no cells") {
		t.Errorf("one process: error %v, want one saying the mesh has no cells", err)
	}
	mpitest.Run(t, 2, 2*time.Minute, "AIRFOIL_MESHFILE="+path)
}

// TestAirfoilGroupsHaloMessages runs Airfoil's iteration on 2 MPI ranks
// (40×60 mesh, rcb) loop by loop and then chained (-chain), 20 iterations
// each after a first one, and checks with op2.ReadHaloStats that both
// send q and adt grouped before each res_calc (one message per
// neighbour: 2 per iteration on 2 ranks), the same bytes, and that the
// chained iterations agree fewer times.
func TestAirfoilGroupsHaloMessages(t *testing.T) {
	if !mpitest.InRanks() {
		mpitest.Run(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	m, err := loadMesh(options{ni: 40, nj: 60}, op2.Rank(), op2.Ranks())
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := airfoil.NewDistributed(m, "rcb")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The first iteration finds q's halo current (Partition filled it);
	// every later one exchanges q and adt before each res_calc.
	if _, _, err := s.Iterate(1, io.Discard); err != nil {
		t.Fatal(err)
	}
	const iters = 20
	var stats [2]op2.HaloStats
	for k, chained := range []bool{false, true} {
		s.Chained = chained
		before := op2.ReadHaloStats()
		if _, _, err := s.Iterate(iters, io.Discard); err != nil {
			t.Fatal(err)
		}
		after := op2.ReadHaloStats()
		stats[k] = op2.HaloStats{Messages: after.Messages - before.Messages, Bytes: after.Bytes - before.Bytes, Agreements: after.Agreements - before.Agreements}
	}
	eager, chained := stats[0], stats[1]
	t.Logf("rank %d, per iteration: at once %d messages (%d bytes), %d agreements; chained %d messages (%d bytes), %d agreements", op2.Rank(),
		eager.Messages/iters, eager.Bytes/iters, eager.Agreements/iters, chained.Messages/iters, chained.Bytes/iters, chained.Agreements/iters)
	if eager.Messages != 2*iters || chained.Messages != eager.Messages || chained.Bytes != eager.Bytes {
		t.Errorf("rank %d: %d halo messages (%d bytes) at once, %d (%d bytes) chained: want q and adt in one message before each res_calc (%d), the same chained, with the same bytes", op2.Rank(), eager.Messages, eager.Bytes, chained.Messages, chained.Bytes, 2*iters)
	}
	if chained.Agreements >= eager.Agreements {
		t.Errorf("rank %d: %d agreements at once, %d chained: want fewer", op2.Rank(), eager.Agreements, chained.Agreements)
	}
	if err := op2.Finalize(); err != nil {
		t.Fatal(err)
	}
}

// TestElapsed: -elapsed prints the time of the iterations without the
// per-loop table (which -timing prints) and records no timings.
func TestElapsed(t *testing.T) {
	defer op2.ResetTimings()
	var out bytes.Buffer
	if _, err := run(options{iters: 2, ni: 4, nj: 6, elapsed: true}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !regexp.MustCompile(`\nbackend sequential, 2 iterations, [0-9.]+ s\n`).MatchString(s) {
		t.Errorf("-elapsed does not print the iterations' time:\n%s", s)
	}
	if strings.Contains(s, "all loops") || len(op2.Timings()) != 0 {
		t.Errorf("-elapsed printed or recorded per-loop timings:\n%s", s)
	}
}
