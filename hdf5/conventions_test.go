package hdf5

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/mesh"
)

// conventionsFile writes a file in OP2's conventions that GoOP2's own
// writer does not use: no set sizes, a 1-based cell-to-node map, a cell
// dat under a group path. It returns the mesh and the dat's values.
func conventionsFile(t *testing.T, path string) (*mesh.Mesh, []float64) {
	t.Helper()
	m, q := conventionsMesh(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	one := make([]int32, len(m.Cell))
	for i, v := range m.Cell {
		one[i] = v + 1
	}
	if err := f.WriteMapTable("pcell1", 4, one); err != nil {
		t.Fatal(err)
	}
	if err := WriteArray(f, "coords", 2, m.X); err != nil {
		t.Fatal(err)
	}
	if err := WriteArray(f, "/restart/step3/q", 1, q); err != nil {
		t.Fatal(err)
	}
	mustClose(t, f)
	return m, q
}

// conventionsRun declares the file's mesh with sets inferred from
// datasets, the 1-based map and the dat from its group path, checks them
// (gathered, in the declared numbering) against m and q, reads the dat
// again into a second one with ReadDat after a loop changed the first,
// and writes the map (1-based) and the dat under other names to out.
// Collective under MPI (the ranks partition the mesh in blocks first).
func conventionsRun(t *testing.T, path, out string, m *mesh.Mesh, q []float64) {
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(f.SetMapBase(1))
	cells, err := f.DeclareSetInferSize("cells", "pcell1")
	check(err)
	nodes, err := f.DeclareSetInferSize("nodes", "coords")
	check(err)
	pcell, err := f.DeclareMap(cells, nodes, 4, "pcell1")
	check(err)
	qd, err := DeclareDatAs[float64](f, cells, 1, "/restart/step3/q", "q")
	check(err)
	if op2.Ranks() > 1 {
		_, err := op2.Partition(op2.BlockPartitioner())
		check(err)
	}
	if cells.GlobalSize() != m.NCell || nodes.GlobalSize() != m.NNode || qd.Name() != "q" {
		t.Fatalf("rank %d: %d cells, %d nodes, dat %q; want %d, %d, \"q\"", op2.Rank(), cells.GlobalSize(), nodes.GlobalSize(), qd.Name(), m.NCell, m.NNode)
	}
	// A loop, so that the halo and the device state are in play, then a
	// fresh dat read from the file again.
	k := op2.NewKernel("void twice(double *q) { *q *= 2; }", "twice")
	check(op2.ParLoop(k, cells, qd.Arg(op2.RW)))
	again, err := op2.NewDat[float64](cells, 1, nil, "again")
	check(err)
	check(ReadDat(f, again, "/restart/step3/q"))
	table, err := pcell.Gather()
	check(err)
	gq, err := qd.Gather()
	check(err)
	ga, err := again.Gather()
	check(err)
	if op2.Rank() == 0 {
		if !slices.Equal(table, m.Cell) {
			t.Errorf("the 1-based map read as %v..., want %v...", table[:8], m.Cell[:8])
		}
		for c := range q {
			if gq[c] != 2*q[c] || ga[c] != q[c] {
				t.Fatalf("cell %d: q %v (after doubling) and again %v; want %v and %v", c, gq[c], ga[c], 2*q[c], q[c])
			}
		}
	}
	w, err := Create(out)
	check(err)
	check(w.SetMapBase(1))
	check(w.WriteMap(pcell))
	check(WriteDatAs(w, again, "/results/final/q"))
	check(w.Close())
}

// checkConventionsOut reads what conventionsRun wrote: the map 1-based,
// the dat under its group path.
func checkConventionsOut(t *testing.T, out string, m *mesh.Mesh, q []float64) {
	f, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table, err := ReadAll[int32](f, "pcell1", 4) // the map's name, from its dataset
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range table {
		if v != m.Cell[i]+1 {
			t.Fatalf("written map entry %d = %d, want %d (1-based)", i, v, m.Cell[i]+1)
		}
	}
	got, err := ReadAll[float64](f, "/results/final/q", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, q) {
		t.Fatalf("written dat %v..., want %v...", got[:4], q[:4])
	}
}

// TestOP2Conventions: sets whose size is inferred from a dataset, maps
// stored 1-based, dats read from and written to other dataset names and
// group paths, in one process and on 2 MPI ranks; a 0 in a 1-based table
// and a bad base are refused.
func TestOP2Conventions(t *testing.T) {
	needHDF5(t)
	const fileEnv, outEnv = "OP2_HDF5_TEST_CONV_FILE", "OP2_HDF5_TEST_CONV_OUT"
	if mpitest.InRanks() {
		path := os.Getenv(fileEnv)
		m, q := conventionsMesh(t)
		conventionsRun(t, path, os.Getenv(outEnv), m, q)
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "conv.h5")
	m, q := conventionsFile(t, path)
	out := filepath.Join(dir, "out1.h5")
	conventionsRun(t, path, out, m, q)
	checkConventionsOut(t, out, m, q)
	out2 := filepath.Join(dir, "out2.h5")
	mpitest.Run(t, 2, 2*time.Minute, fileEnv+"="+path, outEnv+"="+out2)
	checkConventionsOut(t, out2, m, q)

	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.SetMapBase(2); err == nil || !strings.Contains(err.Error(), "map base 2") {
		t.Errorf("SetMapBase(2): %v", err)
	}
	cells, _ := f.DeclareSetInferSize("cells", "pcell1")
	nodes, _ := f.DeclareSetInferSize("nodes", "coords")
	// Read as 0-based the table is fine; a 0-based table read as
	// 1-based is refused where a 0 appears.
	w, err := Create(filepath.Join(dir, "zero.h5"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteMapTable("pcell0", 4, m.Cell); err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	z, err := Open(filepath.Join(dir, "zero.h5"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if err := z.SetMapBase(1); err != nil {
		t.Fatal(err)
	}
	if _, err := z.DeclareMap(cells, nodes, 4, "pcell0"); err == nil || !strings.Contains(err.Error(), "1-based") {
		t.Errorf("a 0-based table read as 1-based: %v", err)
	}
}

// conventionsMesh is conventionsFile's mesh and dat without the file (for
// the ranks, which compare with them).
func conventionsMesh(t *testing.T) (*mesh.Mesh, []float64) {
	m, err := mesh.Generate(10, 6)
	if err != nil {
		t.Fatal(err)
	}
	m = m.Shuffled(3)
	q := make([]float64, m.NCell)
	for c := range q {
		q[c] = float64(7*c) + 0.5
	}
	return m, q
}
