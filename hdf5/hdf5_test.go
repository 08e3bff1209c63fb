package hdf5

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/regfile/regfiletest"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh"
)

// TestMain runs the tests. Without libhdf5 the tests that need it skip,
// saying so, and the Examples (which cannot skip) are left out when no
// -run pattern was given.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("OP2_HDF5_TEST_HELPER") != "" {
		os.Exit(helper())
	}
	if path := os.Getenv("OP2_HDF5_TEST_SMALL_DISK"); path != "" {
		// Not os.Exit: under -race it runs the C library's exit handlers,
		// and HDF5's, with a file whose close failed, crashes.
		syscall.Exit(writeOnSmallDisk(path))
	}
	if err := h5.Load(); err != nil {
		fmt.Fprintf(os.Stderr, "hdf5: libhdf5 is not installed, tests that need it skip and the Examples do not run: %v\n", err)
		if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
			flag.Set("test.run", "^Test")
		}
	}
	os.Exit(m.Run())
}

// needHDF5 skips a test when libhdf5 is truly absent.
func needHDF5(t *testing.T) {
	t.Helper()
	testreq.Check(t, "hdf5", h5.Load(), h5.ErrNoHDF5)
}

// helper runs in a child process: it opens a file and prints the error.
func helper() int {
	_, err := Open(os.Getenv("OP2_HDF5_TEST_HELPER"))
	fmt.Println(err)
	if errors.Is(err, ErrNoHDF5) {
		return 3
	}
	return 0
}

func tempFile(t *testing.T) string {
	return filepath.Join(t.TempDir(), "test.h5")
}

func mustClose(t *testing.T, f *File) {
	t.Helper()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func roundTripArray[T op2.Scalar](t *testing.T, f *File, name string, dim int, v []T, typ string, size int32) {
	t.Helper()
	got, err := ReadAll[T](f, name, dim)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, v) {
		t.Errorf("%s: read %v, wrote %v", name, got, v)
	}
	info, err := f.Info(name)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Info{Rows: len(v) / dim, Dim: dim, Type: typ}); info != want {
		t.Errorf("%s: Info %+v, want %+v", name, info, want)
	}
	checkAttrs(t, f, name, size, int32(dim), typ)
	part, err := ReadRows[T](f, name, dim, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(part, v[dim:2*dim]) {
		t.Errorf("%s: row 1 %v, want %v", name, part, v[dim:2*dim])
	}
}

func checkAttrs(t *testing.T, f *File, name string, size, dim int32, typ string) {
	t.Helper()
	if size >= 0 {
		if got, found, err := f.h.IntAttr(name, "size"); err != nil || !found || got != size {
			t.Errorf("%s: attribute size = %d (found %v, %v), want %d", name, got, found, err, size)
		}
	}
	if got, found, err := f.h.IntAttr(name, "dim"); err != nil || !found || got != dim {
		t.Errorf("%s: attribute dim = %d (found %v, %v), want %d", name, got, found, err, dim)
	}
	if got, found, err := f.h.StringAttr(name, "type"); err != nil || !found || got != typ {
		t.Errorf("%s: attribute type = %q (found %v, %v), want %q", name, got, found, err, typ)
	}
}

// TestRoundTrip writes every element type as a dat and a constant, a map
// and a set, and reads them back with their attributes.
func TestRoundTrip(t *testing.T) {
	needHDF5(t)
	path := tempFile(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f64 := []float64{1.5, math.Inf(-1), math.Copysign(0, -1), math.MaxFloat64, 1e-300, math.Pi}
	f32 := []float32{1.5, -2, float32(math.Inf(1)), 3e38, 1e-40, 7}
	i32 := []int32{math.MinInt32, -1, 0, 1, math.MaxInt32, 42}
	i64 := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64, 1 << 40}
	u32 := []uint32{0, 1, math.MaxUint32, 1 << 31, 5, 6}
	for _, err := range []error{
		f.WriteSetSize("nodes", 6),
		f.WriteSetSize("empty", 0),
		f.WriteMapTable("pedge", 2, []int32{0, 1, 1, 2, 2, 3}),
		WriteArray(f, "d64", 2, f64),
		WriteArray(f, "d64small", 2, []float64{1.5, -2, 0.25, math.Pi}),
		WriteArray(f, "d32", 3, f32),
		WriteArray(f, "group/sub/di32", 1, i32),
		WriteArray(f, "di64", 2, i64),
		WriteArray(f, "du32", 2, u32),
		WriteConst(f, "c64", []float64{0.25, 2}),
		WriteConst(f, "c32", []float32{3}),
		WriteConst(f, "ci32", []int32{-7, 8, 9}),
		WriteConst(f, "ci64", []int64{1 << 50}),
		WriteConst(f, "cu32", []uint32{math.MaxUint32}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, f)
	if ok, err := IsHDF5(path); !ok || err != nil {
		t.Errorf("IsHDF5 = %v, %v", ok, err)
	}

	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, want := range map[string]int{"nodes": 6, "empty": 0} {
		if n, err := f.SetSize(name); err != nil || n != want {
			t.Errorf("SetSize(%s) = %d, %v; want %d", name, n, err, want)
		}
	}
	roundTripArray(t, f, "pedge", 2, []int32{0, 1, 1, 2, 2, 3}, "int", 3)
	roundTripArray(t, f, "d64", 2, f64, "double", 16)
	roundTripArray(t, f, "d32", 3, f32, "float", 12)
	roundTripArray(t, f, "group/sub/di32", 1, i32, "int", 4)
	roundTripArray(t, f, "di64", 2, i64, "long long", 16)
	roundTripArray(t, f, "du32", 2, u32, "unsigned int", 8)

	checkConst(t, f, "c64", []float64{0.25, 2}, "double")
	checkConst(t, f, "c32", []float32{3}, "float")
	checkConst(t, f, "ci32", []int32{-7, 8, 9}, "int")
	checkConst(t, f, "ci64", []int64{1 << 50}, "long long")
	checkConst(t, f, "cu32", []uint32{math.MaxUint32}, "unsigned int")

	// Values convert between widths of one kind when they fit; d64 holds
	// the largest double, which float32 cannot hold.
	roundTripArray(t, f, "d64small", 2, []float64{1.5, -2, 0.25, math.Pi}, "double", 16)
	if v, err := ReadAll[float32](f, "d64small", 2); err != nil || v[0] != 1.5 || v[3] != float32(math.Pi) {
		t.Errorf("double read as float: %v, %v", v, err)
	}
	if _, err := ReadAll[float32](f, "d64", 2); err == nil || !strings.Contains(err.Error(), "does not fit float") {
		t.Errorf("the largest double read as float: %v", err)
	}
	if v, err := ReadAll[int64](f, "pedge", 2); err != nil || !slices.Equal(v, []int64{0, 1, 1, 2, 2, 3}) {
		t.Errorf("int read as long long: %v, %v", v, err)
	}
}

func checkConst[T op2.Scalar](t *testing.T, f *File, name string, want []T, typ string) {
	t.Helper()
	got, err := ReadConst[T](f, name, len(want))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: read %v, wrote %v", name, got, want)
	}
	checkAttrs(t, f, name, -1, int32(len(want)), typ)
}

// TestOP2Objects writes sets, maps, dats and reads them back as OP2
// declarations (op_decl_*_hdf5).
func TestOP2Objects(t *testing.T) {
	needHDF5(t)
	nodes, _ := op2.NewSet(4, "hnodes")
	edges, _ := op2.NewSet(3, "hedges")
	pedge, err := op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "hpedge")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := op2.NewDat(nodes, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7}, "hx")
	k, _ := op2.NewDat(edges, 1, []int64{-1, 1 << 40, 3}, "hk")
	path := tempFile(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{f.WriteSet(nodes), f.WriteSet(edges), f.WriteMap(pedge), WriteDat(f, x), WriteDat(f, k), WriteConst(f, "hc", []float64{2.5, 3})} {
		if err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, f)

	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nodes2, err := f.DeclareSet("hnodes")
	if err != nil {
		t.Fatal(err)
	}
	edges2, err := f.DeclareSet("hedges")
	if err != nil {
		t.Fatal(err)
	}
	if nodes2.Size() != 4 || edges2.Size() != 3 || nodes2.Name() != "hnodes" {
		t.Errorf("sets %v %v", nodes2, edges2)
	}
	m, err := f.DeclareMap(edges2, nodes2, 2, "hpedge")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Values(), []int32{0, 1, 1, 2, 2, 3}) || m.Arity() != 2 {
		t.Errorf("map %v", m.Values())
	}
	x2, err := DeclareDat[float64](f, nodes2, 2, "hx")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x2.DataRO(), x.DataRO()) {
		t.Errorf("dat %v, want %v", x2.DataRO(), x.DataRO())
	}
	k2, err := DeclareDat[int64](f, edges2, 1, "hk")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(k2.DataRO(), k.DataRO()) {
		t.Errorf("dat %v, want %v", k2.DataRO(), k.DataRO())
	}
	c, err := DeclareConst[float64](f, 2, "hc")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove()
	if !slices.Equal(c.Value(), []float64{2.5, 3}) {
		t.Errorf("const %v", c.Value())
	}

	// Declarations that do not match the file.
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"map arity", second(f.DeclareMap(edges2, nodes2, 3, "hpedge")), []string{`"hpedge"`, "dim 2", "not 3"}},
		{"map from wrong set", second(f.DeclareMap(nodes2, nodes2, 2, "hpedge")), []string{`"hpedge"`, "3 rows", `set "hnodes" has 4`}},
		{"map index", second(f.DeclareMap(edges2, edges2, 2, "hpedge")), []string{`"hpedge"`, "outside the target set"}},
		{"dat type", second(DeclareDat[int32](f, nodes2, 2, "hx")), []string{`"hx"`, "double values, not int"}},
		{"dat dim", second(DeclareDat[float64](f, nodes2, 4, "hx")), []string{`"hx"`, "dim 2"}},
		{"const dim", second(ReadConst[float64](f, "hc", 3)), []string{`"hc"`, "holds 2 values, not 3"}},
		{"set is a dat", second(f.DeclareSet("hx")), []string{`"hx"`, "not a set size"}},
		{"missing", second(f.DeclareSet("nothing")), []string{`"nothing"`, "not found"}},
	} {
		checkErr(t, tc.name, tc.err, append(tc.want, path))
	}
}

func second[T any](_ T, err error) error { return err }

func checkErr(t *testing.T, what string, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", what, err, w)
		}
	}
}

// TestFileErrors: files that are missing or not HDF5, datasets missing or
// of the wrong shape.
func TestFileErrors(t *testing.T) {
	needHDF5(t)
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "missing.h5"))
	checkErr(t, "missing file", err, []string{"missing.h5", "no such file"})
	text := filepath.Join(dir, "text.h5")
	os.WriteFile(text, []byte("not hdf5\n"), 0o644)
	_, err = Open(text)
	checkErr(t, "not HDF5", err, []string{"text.h5", "not an HDF5 file"})
	if ok, err := IsHDF5(text); ok || err != nil {
		t.Errorf("IsHDF5(text) = %v, %v", ok, err)
	}
	_, err = Create(filepath.Join(dir, "no-dir", "x.h5"))
	checkErr(t, "create in a missing folder", err, []string{"no-dir/x.h5", "cannot be created: its folder " + filepath.Join(dir, "no-dir") + " does not exist"})
	_, err = Create(filepath.Join(text, "x.h5"))
	checkErr(t, "create in a file", err, []string{"cannot be created: " + text + " is not a folder"})

	path := tempFile(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteArray(f, "a", 2, []float64{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	checkErr(t, "dataset twice", WriteArray(f, "a", 2, []float64{1, 2}), []string{`"a"`, path, "exist"})
	checkErr(t, "ragged", WriteArray(f, "b", 3, []float64{1, 2}), []string{`"b"`, "dim 3"})
	checkErr(t, "map ragged", f.WriteMapTable("m", 2, []int32{1}), []string{`"m"`, "arity 2"})
	checkErr(t, "empty const", WriteConst[float64](f, "c", nil), []string{`"c"`, "at least one"})
	mustClose(t, f)
	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkErr(t, "rows past the end", second(ReadRows[float64](f, "a", 2, 1, 2)), []string{`"a"`, path, "rows [1,3)", "has 2"})
	checkErr(t, "missing group", second(ReadAll[float64](f, "g/a", 2)), []string{`"g/a"`, "not found"})
	_, err = ReadMesh(f)
	checkErr(t, "mesh in a file without one", err, []string{`"nodes"`, path, "not found"})
}

// TestMissingLibrary: with OP2_HDF5_LIBRARY pointing nowhere, Open says
// what to install and which variable to set (in a child process, since the
// library is loaded once per process). It needs no libhdf5.
func TestMissingLibrary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.h5")
	os.WriteFile(path, nil, 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OP2_HDF5_TEST_HELPER="+path, LibraryEnv+"=/nonexistent/libhdf5.so")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, want := range []string{"HDF5 is not available", "/nonexistent/libhdf5.so", "apt-get install libhdf5-103-1", "libhdf5-dev", LibraryEnv, path} {
		if !strings.Contains(string(out), want) {
			t.Errorf("message %q does not say %q", out, want)
		}
	}
}

// TestWriteOnFullDisk: a dataset that does not fit (here: the process
// may write at most 16 KiB to a file) is an error of its write, though
// HDF5 writes a small dataset only as it closes it (on a full tmpfs the
// file's Close then succeeded, and the values were lost silently). In a
// child process, as the limit is the process's.
func TestWriteOnFullDisk(t *testing.T) {
	needHDF5(t)
	path := filepath.Join(t.TempDir(), "full.h5")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OP2_HDF5_TEST_SMALL_DISK="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `dataset "m`) || !strings.Contains(string(out), "cannot be written") {
		t.Errorf("writing 40 KB where 16 KiB fit gave\n%s\nwant an error naming the dataset that cannot be written", out)
	}
}

// writeOnSmallDisk runs in TestWriteOnFullDisk's child: it writes twenty
// datasets of 500 values to path where the process may write 16 KiB to a file, reads them back, and
// prints the first error (exit status 0: the child ran).
func writeOnSmallDisk(path string) int {
	signal.Ignore(syscall.SIGXFSZ) // writes past the limit fail with EFBIG
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		fmt.Println("getrlimit:", err)
		return 1
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 16 << 10, Max: old.Max}); err != nil {
		fmt.Println("setrlimit:", err)
		return 1
	}
	defer syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	f, err := Create(path)
	if err != nil {
		fmt.Println(err)
		return 0
	}
	const n = 20
	values := make([]int32, 500)
	for k := range values {
		values[k] = int32(k + 1)
	}
	for i := range n {
		if err := f.WriteMapTable(fmt.Sprintf("m%d", i), 1, values); err != nil {
			fmt.Println(err)
			f.Close()
			return 0
		}
	}
	if err := f.Close(); err != nil {
		fmt.Println(err)
		return 0
	}
	if f, err = Open(path); err != nil {
		fmt.Println("reopening:", err)
		return 0
	}
	defer f.Close()
	for i := range n {
		got, err := ReadAll[int32](f, fmt.Sprintf("m%d", i), 1)
		if err != nil || !slices.Equal(got, values) {
			fmt.Printf("written, but m%d reads back wrong: %v\n", i, err)
			return 0
		}
	}
	fmt.Println("written")
	return 0
}

// TestMesh writes a generated Airfoil mesh and reads it back whole and by
// rank blocks.
func TestMesh(t *testing.T) {
	needHDF5(t)
	m, err := mesh.Generate(8, 6)
	if err != nil {
		t.Fatal(err)
	}
	path := tempFile(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteMesh(f, m); err != nil {
		t.Fatal(err)
	}
	mustClose(t, f)
	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadMesh(f)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(m) {
		t.Fatal("the mesh read differs from the one written")
	}
	for _, name := range []string{MapPedge, MapPecell, MapPbedge, MapPbecell, MapPcell} {
		checkAttrs(t, f, name, -1, map[string]int32{MapPedge: 2, MapPecell: 2, MapPbedge: 2, MapPbecell: 1, MapPcell: 4}[name], "int")
	}
	checkAttrs(t, f, DatX, 16, 2, "double")
	checkAttrs(t, f, DatBound, 4, 1, "int")

	// Three ranks' blocks, concatenated, are the mesh.
	const ranks = 3
	all := &mesh.Mesh{}
	for r := range ranks {
		b, err := ReadMeshBlock(f, r, ranks)
		if err != nil {
			t.Fatal(err)
		}
		if _, n := Block(m.NCell, r, ranks); b.NCell != n {
			t.Errorf("rank %d: %d cells, want %d", r, b.NCell, n)
		}
		all.NNode += b.NNode
		all.NCell += b.NCell
		all.NEdge += b.NEdge
		all.NBedge += b.NBedge
		all.X = append(all.X, b.X...)
		all.Cell = append(all.Cell, b.Cell...)
		all.Edge = append(all.Edge, b.Edge...)
		all.Ecell = append(all.Ecell, b.Ecell...)
		all.Bedge = append(all.Bedge, b.Bedge...)
		all.Becell = append(all.Becell, b.Becell...)
		all.Bound = append(all.Bound, b.Bound...)
	}
	if !all.Equal(m) {
		t.Error("the blocks do not add up to the mesh")
	}

	// An index outside its set: every rank's block names the file and the
	// element by its global number (Partition saw only a rank's own).
	m.Ecell[2*30+1] = -3
	bad := tempFile(t)
	bf, err := Create(bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{ // as WriteMesh, which refuses the mesh
		bf.WriteSetSize(SetNodes, m.NNode), bf.WriteSetSize(SetEdges, m.NEdge), bf.WriteSetSize(SetBedges, m.NBedge), bf.WriteSetSize(SetCells, m.NCell),
		bf.WriteMapTable(MapPedge, 2, m.Edge), bf.WriteMapTable(MapPecell, 2, m.Ecell), bf.WriteMapTable(MapPbedge, 2, m.Bedge),
		bf.WriteMapTable(MapPbecell, 1, m.Becell), bf.WriteMapTable(MapPcell, 4, m.Cell), WriteArray(bf, DatBound, 1, m.Bound), WriteArray(bf, DatX, 2, m.X),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, bf)
	if bf, err = Open(bad); err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	want := fmt.Sprintf("hdf5: %s: mesh: edge 30: cell index -3 out of range [0,%d)", bad, m.NCell)
	if _, err := ReadMesh(bf); err == nil || err.Error() != want {
		t.Errorf("ReadMesh: %v, want %q", err, want)
	}
	// mesh/unstructured's layout, which has nodes and cells too.
	other := tempFile(t)
	of, err := Create(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(WriteArray(of, "unstructured", 1, []int32{1, 2, 2}), of.WriteSetSize(SetNodes, 4), of.WriteSetSize(SetCells, 2)); err != nil {
		t.Fatal(err)
	}
	mustClose(t, of)
	if of, err = Open(other); err != nil {
		t.Fatal(err)
	}
	defer of.Close()
	if _, err := ReadMesh(of); err == nil || !strings.Contains(err.Error(), "a mesh written by unstructured.WriteHDF5 (op2mesh convert), not an Airfoil mesh in OP2's layout") {
		t.Errorf("ReadMesh of mesh/unstructured's layout: %v", err)
	}
	for r := range ranks {
		start, n := Block(m.NEdge, r, ranks)
		_, err := ReadMeshBlock(bf, r, ranks)
		if holds := start <= 30 && 30 < start+n; holds && (err == nil || err.Error() != want) || !holds && err != nil {
			t.Errorf("rank %d of %d (edges %d to %d): %v, want %q only where edge 30 is", r, ranks, start, start+n-1, err, want)
		}
	}
}

func TestBlock(t *testing.T) {
	for _, tc := range []struct{ n, ranks int }{{10, 3}, {2, 4}, {0, 2}, {7, 1}, {721801, 7}} {
		next := 0
		for r := range tc.ranks {
			start, count := Block(tc.n, r, tc.ranks)
			if start != next || count < tc.n/tc.ranks || count > tc.n/tc.ranks+1 {
				t.Errorf("Block(%d, %d, %d) = %d, %d", tc.n, r, tc.ranks, start, count)
			}
			next += count
		}
		if next != tc.n {
			t.Errorf("Block(%d, *, %d) covers %d", tc.n, tc.ranks, next)
		}
	}
}

// TestDatasetClaimsMoreThanTheFile: a file of a few kilobytes whose
// datasets declare 2^33 rows (their values never written, so HDF5 would
// make up zeros) is refused with an error naming the file, the dataset and
// the sizes, before anything is allocated; it used to kill the process
// for want of memory.
func TestDatasetClaimsMoreThanTheFile(t *testing.T) {
	needHDF5(t)
	path := tempFile(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name        string
		typ         h5.Type
		ndims, cols int
	}{{"huge", h5.Float64, 2, 1}, {"hugemap", h5.Int32, 2, 4}, {"hugeconst", h5.Float64, 1, 1}, {"cells", h5.Int32, 1, 1}} {
		if err := f.h.Write(d.name, d.typ, d.ndims, 1<<33, d.cols, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.WriteSetSize("nodes", 4); err != nil {
		t.Fatal(err)
	}
	mustClose(t, f)
	if fi, err := os.Stat(path); err != nil || fi.Size() > 16<<10 {
		t.Fatalf("the file should be a few kilobytes: %v, %v", fi.Size(), err)
	}
	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, f)
	nodes, err := f.DeclareSet("nodes")
	if err != nil {
		t.Fatal(err)
	}
	claim := func(name string, cols, size int) []string {
		return []string{path, fmt.Sprintf("dataset %q", name), fmt.Sprintf("claims 8589934592 × %d values of %d bytes (%d bytes), but the file stores 0 bytes of them (contiguous layout) and is ", cols, size, (1<<33)*cols*size)}
	}
	checkErr(t, "ReadAll", second(ReadAll[float64](f, "huge", 1)), claim("huge", 1, 8))
	checkErr(t, "ReadRows", second(ReadRows[float64](f, "huge", 1, 0, 1)), claim("huge", 1, 8))
	checkErr(t, "Info", second(f.Info("hugemap")), claim("hugemap", 4, 4))
	checkErr(t, "ReadAll map", second(ReadAll[int32](f, "hugemap", 4)), claim("hugemap", 4, 4))
	checkErr(t, "DeclareMap", second(f.DeclareMap(nodes, nodes, 4, "hugemap")), claim("hugemap", 4, 4))
	checkErr(t, "DeclareDat", second(DeclareDat[float64](f, nodes, 1, "huge")), claim("huge", 1, 8))
	checkErr(t, "ReadConst", second(ReadConst[float64](f, "hugeconst", 1<<33)), claim("hugeconst", 1, 8))
	checkErr(t, "SetSize", second(f.SetSize("cells")), claim("cells", 1, 4))
}

// TestReadRowsBounds: a start and count whose sum overflows, negative ones,
// and rows past the end are refused naming the dataset; none panics.
func TestReadRowsBounds(t *testing.T) {
	needHDF5(t)
	path := tempFile(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteArray(f, "a", 2, []float64{1, 2, 3, 4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	mustClose(t, f)
	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, f)
	for _, tc := range []struct {
		start, count int
		want         string
	}{
		{math.MaxInt, 1, "rows [9223372036854775807,9223372036854775808) requested, it has 3"},
		{1, math.MaxInt, "rows [1,9223372036854775808) requested, it has 3"},
		{math.MaxInt - 1, math.MaxInt, "rows [9223372036854775806,18446744073709551613) requested, it has 3"},
		{2, 2, "rows [2,4) requested, it has 3"},
		{4, 0, "rows [4,4) requested, it has 3"},
		{-1, 2, "2 rows from row -1 requested: neither may be negative"},
		{0, math.MinInt, "-9223372036854775808 rows from row 0 requested"},
	} {
		v, err := ReadRows[float64](f, "a", 2, tc.start, tc.count)
		checkErr(t, fmt.Sprintf("ReadRows(%d, %d) = %v", tc.start, tc.count, v), err, []string{path, `dataset "a"`, tc.want})
	}
	if v, err := ReadRows[float64](f, "a", 2, 3, 0); err != nil || len(v) != 0 {
		t.Errorf("ReadRows of no rows at the end = %v, %v", v, err)
	}
	if v, err := ReadRows[float32](f, "a", 2, 1, 2); err != nil || !slices.Equal(v, []float32{3, 4, 5, 6}) {
		t.Errorf("ReadRows(1, 2) = %v, %v", v, err)
	}
}

// TestReadNeedsMoreMemoryThanTheMachine: values that would take more than
// the machine's memory (compressed values, whose stored size says nothing
// of their size) are refused before anything is allocated.
func TestReadNeedsMoreMemoryThanTheMachine(t *testing.T) {
	needHDF5(t)
	path := tempFile(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteArray(f, "a", 1, make([]float64, 200)); err != nil {
		t.Fatal(err)
	}
	mustClose(t, f)
	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, f)
	defer func(m func() uint64) { memoryBytes = m }(memoryBytes)
	memoryBytes = func() uint64 { return 1000 }
	checkErr(t, "float64", second(ReadAll[float64](f, "a", 1)), []string{path, `dataset "a"`, "200 × 1 values of 8 bytes (1600 bytes) need more memory than this machine has (1000 bytes)"})
	// float32 from doubles: the values are read wide first, 12 bytes each.
	checkErr(t, "float32", second(ReadRows[float32](f, "a", 1, 0, 100)), []string{"100 × 1 values of 12 bytes (1200 bytes) need more memory"})
	if v, err := ReadRows[float64](f, "a", 1, 0, 100); err != nil || len(v) != 100 {
		t.Errorf("800 bytes: %d values, %v", len(v), err)
	}
}

// TestSpecialFilesRefused: a FIFO, a link to /dev/zero or a directory given
// to Open, OpenWrite or IsHDF5 is refused at once, naming the path and
// what it is (a FIFO used to block each of them for ever).
func TestSpecialFilesRefused(t *testing.T) {
	needHDF5(t)
	for _, s := range regfiletest.Make(t, "x.h5") {
		t.Run(s.Name, func(t *testing.T) {
			regfiletest.Refused(t, s, func() error { _, err := Open(s.Path); return err })
			regfiletest.Refused(t, s, func() error { _, err := OpenWrite(s.Path); return err })
			regfiletest.Refused(t, s, func() error { _, err := IsHDF5(s.Path); return err })
		})
	}
}

// TestChainForcedByReadAndWrite: inside an op2.Chain, WriteDat writes the
// values of the loops recorded before it, and ReadDat's values replace
// those of a loop recorded before it, as when each loop runs at once.
func TestChainForcedByReadAndWrite(t *testing.T) {
	needHDF5(t)
	if err := op2.Configure(op2.Config{CacheDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	defer op2.Configure(op2.Config{})
	cells, _ := op2.NewSet(3, "ccells")
	q, _ := op2.NewDat[float64](cells, 1, nil, "cq")
	r, _ := op2.NewDat[float64](cells, 1, nil, "cr")
	set := op2.NewKernel("void ch5_set(double *q) { *q = 7; }", "ch5_set")
	path := tempFile(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	err = op2.Chain(func() error {
		if err := op2.ParLoop(set, cells, q.Arg(op2.Write)); err != nil {
			return err
		}
		return WriteDat(f, q)
	})
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, f)
	if f, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = op2.Chain(func() error {
		if err := op2.ParLoop(op2.NewKernel("void ch5_one(double *r) { *r = 1; }", "ch5_one"), cells, r.Arg(op2.Write)); err != nil {
			return err
		}
		if err := op2.ParLoop(op2.NewKernel("void ch5_half(double *q) { *q /= 2; }", "ch5_half"), cells, q.Arg(op2.RW)); err != nil {
			return err
		}
		return ReadDat(f, r, "cq")
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.DataRO(); !slices.Equal(got, []float64{7, 7, 7}) {
		t.Errorf("r = %v, want the file's [7 7 7]", got)
	}
	if got := q.DataRO(); !slices.Equal(got, []float64{3.5, 3.5, 3.5}) {
		t.Errorf("q = %v, want [3.5 3.5 3.5]", got)
	}
}
