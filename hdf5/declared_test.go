package hdf5

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/mesh"
)

// opMesh is an Airfoil mesh declared in op2: nodes, edges and cells, the
// maps pcell and pecell, node coordinates x and a cell dat q.
type opMesh struct {
	nodes, edges, cells *op2.Set
	pcell, pecell       *op2.Map
	x                   *op2.Dat[float64]
	q                   *op2.Dat[int32]
}

func declareMesh(t *testing.T, m *mesh.Mesh) *opMesh {
	t.Helper()
	var err error
	o := &opMesh{}
	try := func(e error) {
		if e != nil && err == nil {
			err = e
		}
	}
	var e error
	o.nodes, e = op2.NewSet(m.NNode, "nodes")
	try(e)
	o.edges, e = op2.NewSet(m.NEdge, "edges")
	try(e)
	o.cells, e = op2.NewSet(m.NCell, "cells")
	try(e)
	o.pcell, e = op2.NewMap(o.cells, o.nodes, 4, m.Cell, "pcell")
	try(e)
	o.pecell, e = op2.NewMap(o.edges, o.cells, 2, m.Ecell, "pecell")
	try(e)
	o.x, e = op2.NewDat(o.nodes, 2, m.X, "x")
	try(e)
	q := make([]int32, m.NCell)
	for c := range q {
		q[c] = int32(3*c + 1)
	}
	o.q, e = op2.NewDat(o.cells, 1, q, "q")
	try(e)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// write writes the mesh's sets, maps and dats to a new file, in the
// declared numbering, with a set "probe" and a map "pprobe" from it to
// the nodes.
func (o *opMesh) write(t *testing.T, path string, probe []int32) {
	t.Helper()
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{f.WriteSet(o.nodes), f.WriteSet(o.edges), f.WriteSet(o.cells),
		f.WriteMap(o.pcell), f.WriteMap(o.pecell), WriteDat(f, o.x), WriteDat(f, o.q),
		f.WriteSetSize("probe", len(probe)), f.WriteMapTable("pprobe", 1, probe)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, f)
}

// centres runs a loop over the cells that sums, through pcell, the
// coordinates x of each cell's nodes weighted by their place in the row,
// and adds q, and returns the result in the declared numbering.
func centres(t *testing.T, cells *op2.Set, pcell *op2.Map, x *op2.Dat[float64], q *op2.Dat[int32]) []float64 {
	t.Helper()
	out, err := op2.NewDat[float64](cells, 2, nil, "centre")
	if err != nil {
		t.Fatal(err)
	}
	k := op2.NewKernel(`
void centre(const double **x, const int *q, double *c) {
  c[0] = x[0][0] + 2 * x[1][0] + 4 * x[2][0] + 8 * x[3][0] + *q;
  c[1] = x[0][1] - x[1][1] + 3 * x[2][1] - x[3][1];
}`, "centre")
	if err := op2.ParLoop(k, cells, x.ArgVec(op2.Read, pcell), q.Arg(op2.Read), out.Arg(op2.Write)); err != nil {
		t.Fatal(err)
	}
	v, err := out.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func gather[T op2.Scalar](t *testing.T, d *op2.Dat[T]) []T {
	t.Helper()
	v, err := d.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func gatherMap(t *testing.T, m *op2.Map) []int32 {
	t.Helper()
	v, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDeclareAfterRenumber: dats and maps declared from a file after
// op2.Renumber land on the elements the file's (declared) numbering
// names: their values in the new numbering are those of the renumbered
// mesh, they gather to the file's values, a loop through them computes
// what it computes without renumbering, a map from a set declared after
// Renumber has its entries translated, and what is written after
// renumbering reads back onto the same elements.
func TestDeclareAfterRenumber(t *testing.T) {
	needHDF5(t)
	gen, err := mesh.Generate(8, 6)
	if err != nil {
		t.Fatal(err)
	}
	m := gen.Shuffled(5)
	probe := []int32{0, int32(m.NNode - 1), 7, 3}
	path := tempFile(t)
	plain := declareMesh(t, m)
	plain.write(t, path, probe)
	want := centres(t, plain.cells, plain.pcell, plain.x, plain.q)

	r := declareMesh(t, m)
	if _, err := op2.Renumber(op2.RCMOrdering(r.pecell)); err != nil {
		t.Fatal(err)
	}
	if declared(r.nodes) == nil || declared(r.cells) == nil || declared(r.edges) == nil {
		t.Fatal("Renumber left a set in its declared order: the test shows nothing")
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, err := DeclareDat[float64](f, r.nodes, 2, "x")
	if err != nil {
		t.Fatal(err)
	}
	q, err := DeclareDat[int32](f, r.cells, 1, "q")
	if err != nil {
		t.Fatal(err)
	}
	pcell, err := f.DeclareMap(r.cells, r.nodes, 4, "pcell")
	if err != nil {
		t.Fatal(err)
	}
	pecell, err := f.DeclareMap(r.edges, r.cells, 2, "pecell")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want []int32
	}{
		{"q (new numbering)", q.DataRO(), r.q.DataRO()},
		{"q (gathered)", gather(t, q), gather(t, plain.q)},
		{"pcell (new numbering)", pcell.Values(), r.pcell.Values()},
		{"pcell (gathered)", gatherMap(t, pcell), m.Cell},
		{"pecell (new numbering)", pecell.Values(), r.pecell.Values()},
		{"pecell (gathered)", gatherMap(t, pecell), m.Ecell},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if !slices.Equal(x.DataRO(), r.x.DataRO()) || !slices.Equal(gather(t, x), m.X) {
		t.Errorf("x read after Renumber: %v (gathered %v), want %v (gathered %v)", x.DataRO(), gather(t, x), r.x.DataRO(), m.X)
	}
	if got := centres(t, r.cells, pcell, x, q); !slices.Equal(got, want) {
		t.Errorf("a loop through what was read after Renumber: %v, want %v (without renumbering)", got, want)
	}

	// A set declared after Renumber keeps its order; its map's entries
	// are translated to the nodes' new numbers.
	ps, err := f.DeclareSet("probe")
	if err != nil {
		t.Fatal(err)
	}
	pp, err := f.DeclareMap(ps, r.nodes, 1, "pprobe")
	if err != nil {
		t.Fatal(err)
	}
	inv := inverse(r.nodes.DeclaredNumbers())
	for i, g := range probe {
		if v := pp.Values()[i]; v != inv[g] {
			t.Errorf("pprobe[%d] = %d, want node %d's new number %d", i, v, g, inv[g])
		}
	}
	if got := gatherMap(t, pp); !slices.Equal(got, probe) {
		t.Errorf("pprobe gathered: %v, want %v", got, probe)
	}

	// Written after renumbering, read back onto the same elements.
	path2 := tempFile(t)
	r.write(t, path2, probe)
	f2, err := Open(path2)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	x2, err := DeclareDat[float64](f2, r.nodes, 2, "x")
	if err != nil {
		t.Fatal(err)
	}
	pcell2, err := f2.DeclareMap(r.cells, r.nodes, 4, "pcell")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x2.DataRO(), r.x.DataRO()) {
		t.Errorf("x written and read back after Renumber: %v, want %v", x2.DataRO(), r.x.DataRO())
	}
	if !slices.Equal(pcell2.Values(), r.pcell.Values()) {
		t.Errorf("pcell written and read back after Renumber: %v, want %v", pcell2.Values(), r.pcell.Values())
	}
}

// TestReadPicked: rows picked in any order, across windows, come back in
// the order asked; a row outside the dataset is an error.
func TestReadPicked(t *testing.T) {
	needHDF5(t)
	const n = 3*readWindow + 5
	v := make([]int64, 2*n)
	for i := range v {
		v[i] = int64(i)
	}
	path := tempFile(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteArray(f, "v", 2, v); err != nil {
		t.Fatal(err)
	}
	mustClose(t, f)
	if f, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, rows := range [][]int64{
		{},
		{5},
		{n - 1, 0, 2*readWindow + 3, readWindow, 1, readWindow - 1},
		{7, 7, 3},
	} {
		got, err := readPicked[int64](f, "v", 2, n, rows)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, r := range rows {
			want = append(want, v[2*r], v[2*r+1])
		}
		if !slices.Equal(got, want) {
			t.Errorf("rows %v: %v, want %v", rows, got, want)
		}
	}
	if _, err := readPicked[int64](f, "v", 2, n, []int64{n}); err == nil {
		t.Error("a row past the dataset: no error")
	}
}

// TestDeclareAfterPartition: under MPI, a dat declared from a file after
// op2.Partition gets, on each rank, the rows of its owned elements'
// declared numbers (a loop through it, halo included, computes what the
// dat declared before Partition gives), and a map declared from a file
// after Partition is refused.
func TestDeclareAfterPartition(t *testing.T) {
	needHDF5(t)
	const fileEnv = "OP2_HDF5_TEST_PARTITION_FILE"
	if !mpitest.InRanks() {
		gen, err := mesh.Generate(12, 8)
		if err != nil {
			t.Fatal(err)
		}
		m := gen.Shuffled(9)
		path := tempFile(t)
		f, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		q := make([]int32, m.NCell)
		for c := range q {
			q[c] = int32(5*c - 7)
		}
		if err := WriteMesh(f, m); err != nil {
			t.Fatal(err)
		}
		if err := WriteArray(f, "q", 1, q); err != nil {
			t.Fatal(err)
		}
		mustClose(t, f)
		mpitest.Run(t, 3, 2*time.Minute, fileEnv+"="+path)
		return
	}
	f, err := Open(os.Getenv(fileEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	decl := func(name string) *op2.Set {
		s, err := f.DeclareSet(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	nodes, cells := decl(SetNodes), decl(SetCells)
	pcell, err := f.DeclareMap(cells, nodes, 4, MapPcell)
	if err != nil {
		t.Fatal(err)
	}
	x, err := DeclareDat[float64](f, nodes, 2, DatX)
	if err != nil {
		t.Fatal(err)
	}
	q, err := DeclareDat[int32](f, cells, 1, "q")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op2.Partition(op2.RCBPartitioner(x)); err != nil {
		t.Fatal(err)
	}
	if !op2.Partitioned() {
		t.Fatal("Partitioned is false after Partition on 3 ranks")
	}
	x2, err := DeclareDat[float64](f, nodes, 2, DatX)
	if err != nil {
		t.Fatal(err)
	}
	q2, err := DeclareDat[int32](f, cells, 1, "q")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x2.DataRO()[:2*nodes.Size()], x.DataRO()[:2*nodes.Size()]) || !slices.Equal(q2.DataRO()[:cells.Size()], q.DataRO()[:cells.Size()]) {
		t.Errorf("rank %d: dats declared after Partition differ from those Partition moved", op2.Rank())
	}
	want := centres(t, cells, pcell, x, q)
	got := centres(t, cells, pcell, x2, q2)
	all, err := ReadAll[int32](f, "q", 1)
	if err != nil {
		t.Fatal(err)
	}
	if g := gather(t, q2); op2.Rank() == 0 && !slices.Equal(g, all) {
		t.Errorf("q declared after Partition gathers to %v, want the file's %v", g, all)
	}
	if op2.Rank() == 0 && !slices.Equal(got, want) {
		t.Errorf("a loop through dats declared after Partition: %v, want %v", got, want)
	}
	if _, err := f.DeclareMap(cells, nodes, 4, MapPcell); err == nil || !strings.Contains(err.Error(), "after op2.Partition") {
		t.Errorf("a map declared from the file after Partition: %v, want an error", err)
	}
	if err := op2.Finalize(); err != nil {
		t.Fatal(err)
	}
}
