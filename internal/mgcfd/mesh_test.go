package mgcfd

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/testcache"
	"github.com/goop2/op2/internal/testreq"
)

func TestMain(m *testing.M) { os.Exit(testcache.Run(m, "goop2-mgcfd-pkg-cache-")) }

// TestGenerate checks the generated levels: their sizes, every edge once,
// the maps in range, each node's dual cell closed (its edge and boundary
// weights sum to zero), the boundary normals summing to zero, and each
// fine node mapped to the coarse node at its coordinates halved.
func TestGenerate(t *testing.T) {
	for _, tc := range []struct {
		n, levels int
		sides     []int
	}{
		{2, 1, []int{2}},
		{5, 3, []int{5, 3, 2}},
		{9, 4, []int{9, 5, 3, 2}},
		{17, 2, []int{17, 9}},
	} {
		m, err := Generate(tc.n, tc.levels)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
		if len(m.Levels) != tc.levels {
			t.Fatalf("Generate(%d, %d): %d levels", tc.n, tc.levels, len(m.Levels))
		}
		for l, side := range tc.sides {
			lv := &m.Levels[l]
			if lv.NNodes != side*side*side || lv.NEdges != 3*side*side*(side-1) || lv.NBnd != 6*side*side {
				t.Fatalf("n=%d level %d: %d nodes, %d edges, %d boundary nodes; want side %d", tc.n, l, lv.NNodes, lv.NEdges, lv.NBnd, side)
			}
			seen := map[[2]int32]bool{}
			for e := 0; e < lv.NEdges; e++ {
				a, b := lv.EdgeNodes[2*e], lv.EdgeNodes[2*e+1]
				key := [2]int32{min(a, b), max(a, b)}
				if seen[key] {
					t.Fatalf("n=%d level %d: edge %d-%d twice", tc.n, l, a, b)
				}
				seen[key] = true
				// Neighbours: one coordinate differs, by the spacing.
				h := 1 / float64(side-1)
				d := 0.0
				for k := 0; k < 3; k++ {
					d += math.Abs(lv.Coords[3*int(b)+k] - lv.Coords[3*int(a)+k])
				}
				if math.Abs(d-h) > 1e-12 {
					t.Fatalf("n=%d level %d: edge %d joins nodes %g apart, want %g", tc.n, l, e, d, h)
				}
			}
			closure := make([]float64, 3*lv.NNodes)
			for e := 0; e < lv.NEdges; e++ {
				for k := 0; k < 3; k++ {
					closure[3*int(lv.EdgeNodes[2*e])+k] += lv.EdgeWeights[3*e+k]
					closure[3*int(lv.EdgeNodes[2*e+1])+k] -= lv.EdgeWeights[3*e+k]
				}
			}
			var total [3]float64
			for b := 0; b < lv.NBnd; b++ {
				for k := 0; k < 3; k++ {
					closure[3*int(lv.BndNodes[b])+k] += lv.BndWeights[3*b+k]
					total[k] += lv.BndWeights[3*b+k]
				}
				if g := lv.BndGroups[b]; g != GroupWall && g != GroupFarField {
					t.Fatalf("boundary node %d: group %d", b, g)
				}
			}
			for i, c := range closure {
				if math.Abs(c) > 1e-14 {
					t.Fatalf("n=%d level %d: node %d's dual cell is open: component %d sums to %g", tc.n, l, i/3, i%3, c)
				}
			}
			for k, s := range total {
				if math.Abs(s) > 1e-12 {
					t.Fatalf("n=%d level %d: boundary normals sum to %g along %d", tc.n, l, s, k)
				}
			}
			if l+1 == tc.levels {
				continue
			}
			coarse := &m.Levels[l+1]
			hit := make([]bool, coarse.NNodes)
			for i, c := range lv.MGNodes {
				hit[c] = true
				for k := 0; k < 3; k++ {
					x := lv.Coords[3*i+k]
					cx := coarse.Coords[3*int(c)+k]
					if !(cx <= x+1e-12 && x-cx < 1/float64(side-1)+1e-12) {
						t.Fatalf("n=%d level %d: node %d at %g maps to coarse node %d at %g", tc.n, l, i, x, c, cx)
					}
				}
			}
			for c, h := range hit {
				if !h {
					t.Fatalf("n=%d level %d: no fine node maps to coarse node %d", tc.n, l, c)
				}
			}
		}
	}
}

// TestGenerateFigure checks the sizes of the mesh: 65³ nodes and
// 811 200 edges on the finest of 4 levels.
func TestGenerateFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("the 274 625-node mesh in the full run only")
	}
	m, err := Generate(65, 4)
	if err != nil {
		t.Fatal(err)
	}
	if lv := m.Levels[0]; lv.NNodes != 274625 || lv.NEdges != 811200 {
		t.Fatalf("finest level: %d nodes, %d edges; want 274625, 811200", lv.NNodes, lv.NEdges)
	}
	if lv := m.Levels[3]; lv.NNodes != 9*9*9 {
		t.Fatalf("coarsest level: %d nodes, want 729", lv.NNodes)
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, tc := range []struct {
		n, levels int
		want      string
	}{
		{9, 0, "1 to 20 levels"},
		{1, 1, "2 to 1291"},
		{10, 2, "multiple of 2^(levels−1) = 2"},
		{9, 5, "multiple of 2^(levels−1) = 16"},
	} {
		if _, err := Generate(tc.n, tc.levels); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Generate(%d, %d): %v, want an error saying %q", tc.n, tc.levels, err, tc.want)
		}
	}
}

// TestCheck breaks a generated mesh in each way Check finds.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(m *Mesh)
		want   string
	}{
		{"no levels", func(m *Mesh) { m.Levels = nil }, "no levels"},
		{"short coordinates", func(m *Mesh) { m.Levels[1].Coords = m.Levels[1].Coords[:5] }, "level 1: node coordinates has 5 values"},
		{"edge out of range", func(m *Mesh) { m.Levels[0].EdgeNodes[7] = 1000 }, "level 0: edge-->node entry 7 is 1000"},
		{"self edge", func(m *Mesh) { m.Levels[0].EdgeNodes[1] = m.Levels[0].EdgeNodes[0] }, "edge 0 joins node 0 to itself"},
		{"boundary out of range", func(m *Mesh) { m.Levels[1].BndNodes[3] = -1 }, "level 1: bnd_node-->node entry 3 is -1"},
		{"NaN weight", func(m *Mesh) { m.Levels[0].EdgeWeights[4] = math.NaN() }, "edge weights value 4 is NaN"},
		{"mg map out of range", func(m *Mesh) { m.Levels[0].MGNodes[2] = 27 }, "node-->mg_node entry 2 is 27, outside [0,27)"},
		{"mg map missing", func(m *Mesh) { m.Levels[0].MGNodes = nil }, "node-->mg_node has 0 entries"},
		{"mg map on the coarsest", func(m *Mesh) { m.Levels[1].MGNodes = []int32{0} }, "is the coarsest but has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Generate(5, 2)
			if err != nil {
				t.Fatal(err)
			}
			tc.mutate(m)
			if err := m.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v, want an error saying %q", err, tc.want)
			}
			if _, err := New(m); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestHDF5RoundTrip writes a mesh in MG-CFD's layout and reads it back,
// and checks input.dat and the errors of a broken one.
func TestHDF5RoundTrip(t *testing.T) {
	m, err := Generate(9, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, err := WriteHDF5(dir, m)
	testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
	got, err := ReadHDF5(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatal("the mesh read back differs from the one written")
	}
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"num_levels=3\n", "base_array_index=0\n", "[levels]\n0=mesh_L0.h5\n1=mesh_L1.h5\n2=mesh_L2.h5\n"} {
		if !strings.Contains(string(in), want) {
			t.Errorf("input.dat lacks %q:\n%s", want, in)
		}
	}
	// A 1-based file: the maps come back 0-based.
	based := strings.Replace(string(in), "base_array_index=0", "base_array_index=1", 1)
	if err := os.WriteFile(filepath.Join(dir, "based.dat"), []byte(based), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadHDF5(filepath.Join(dir, "based.dat")); err == nil || !strings.Contains(err.Error(), `dataset "edge-->node" row 0 column 0 is 0, outside [1,730) (base_array_index=1)`) {
		t.Errorf("0-based tables read as 1-based: %v, want an entry 0 out of range", err)
	}
	for _, tc := range []struct {
		name, text, want string
	}{
		{"no levels", "size=1\n", "no num_levels"},
		{"levels first", "[levels]\n0=a.h5\nnum_levels=1\n", "[levels] before a positive num_levels"},
		{"bad level", "num_levels=1\n[levels]\n1=a.h5\n", `level "1" is not in [0,1)`},
		{"missing level", "num_levels=2\n[levels]\n0=mesh_L0.h5\n", "no file for level 1"},
		{"not key=value", "num_levels=1\nbogus\n", `"bogus" is not key=value`},
		{"missing file", "num_levels=1\n[levels]\n0=nothere.h5\n", "nothere.h5"},
		{"mg map missing", "num_levels=2\n[levels]\n0=mesh_L2.h5\n1=mesh_L2.h5\n", "node-->mg_node"},
	} {
		p := filepath.Join(dir, "bad.dat")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadHDF5(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// TestReadHDF5Errors breaks a level's file in each way Check finds in a
// mesh read: the error names the level's file and the dataset as the file
// names it, with its rows and columns and map entries as the file holds
// them, not input.dat.
func TestReadHDF5Errors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		level  int
		mutate func(lv *Level)
		want   string
	}{
		{"short edge weights", 0, func(lv *Level) { lv.EdgeWeights = lv.EdgeWeights[:len(lv.EdgeWeights)-3] },
			`mesh_L0.h5 (level 0): dataset "edge_weights" has 299 rows, want 300, one per edge (the rows of dataset "edge-->node")`},
		{"short boundary groups", 1, func(lv *Level) { lv.BndGroups = lv.BndGroups[1:] },
			`mesh_L1.h5 (level 1): dataset "bnd_node-->group" has 53 rows, want 54, one per boundary node (the rows of dataset "bnd_node-->node")`},
		{"long boundary weights", 0, func(lv *Level) { lv.BndWeights = append(lv.BndWeights, 1, 2, 3) },
			`mesh_L0.h5 (level 0): dataset "bnd_node_weights" has 151 rows, want 150`},
		{"short mg map", 0, func(lv *Level) { lv.MGNodes = lv.MGNodes[1:] },
			`mesh_L0.h5 (level 0): dataset "node-->mg_node" has 124 rows, want 125, one per node (the rows of dataset "node_coordinates")`},
		{"NaN weight", 0, func(lv *Level) { lv.EdgeWeights[4] = math.NaN() },
			`mesh_L0.h5 (level 0): dataset "edge_weights" row 1 column 1 is NaN`},
		{"infinite coordinate", 1, func(lv *Level) { lv.Coords[6] = math.Inf(-1) },
			`mesh_L1.h5 (level 1): dataset "node_coordinates" row 2 column 0 is -Inf`},
		{"edge out of range", 0, func(lv *Level) { lv.EdgeNodes[7] = 1000 },
			`mesh_L0.h5 (level 0): dataset "edge-->node" row 3 column 1 is 1000, outside [0,125) (base_array_index=0)`},
		{"self edge", 1, func(lv *Level) { lv.EdgeNodes[5] = lv.EdgeNodes[4] },
			`mesh_L1.h5 (level 1): dataset "edge-->node" row 2 joins node`},
		{"boundary out of range", 1, func(lv *Level) { lv.BndNodes[3] = -1 },
			`mesh_L1.h5 (level 1): dataset "bnd_node-->node" row 3 is -1, outside [0,27)`},
		{"mg map out of range", 0, func(lv *Level) { lv.MGNodes[2] = 27 },
			`mesh_L0.h5 (level 0): dataset "node-->mg_node" row 2 is 27, outside [0,27) (base_array_index=0), the nodes of `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Generate(5, 2)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			in, err := WriteHDF5(dir, m)
			testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
			lv := m.Levels[tc.level]
			tc.mutate(&lv)
			file := filepath.Join(dir, fmt.Sprintf("mesh_L%d.h5", tc.level))
			if err := hdf5.WriteFile(file, func(f *hdf5.File) error { return writeLevelTo(f, &lv) }); err != nil {
				t.Fatal(err)
			}
			_, err = ReadHDF5(in)
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), InputFile) {
				t.Errorf("%v\nwant an error naming %s, saying %q, and not naming %s", err, file, tc.want, InputFile)
			}
		})
	}
}

// TestReadHDF5LongLines: input.dat's lines are read whole however long
// (a bufio.Scanner stopped at one over 64 KiB, leaving the settings after
// it unread), and a setting on a long line is read and checked.
func TestReadHDF5LongLines(t *testing.T) {
	m, err := Generate(5, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = WriteHDF5(dir, m)
	testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
	long := strings.Repeat("x", 100<<10)
	for _, tc := range []struct {
		name, text, want string // want "": the mesh reads back
	}{
		{"long comment", "# " + long + "\nnum_levels=2\nbase_array_index=0\n[levels]\n0=mesh_L0.h5\n1=mesh_L1.h5\n", ""},
		{"long value", "mesh_name=" + long + "\r\nnum_levels=2\r\nbase_array_index=0\r\n[levels]\r\n0=mesh_L0.h5\r\n1=mesh_L1.h5\r\n", ""},
		{"long setting refused", "num_levels=2\nbase_array_index=" + long + "\n[levels]\n0=mesh_L0.h5\n1=mesh_L1.h5\n", ":2: base_array_index \"" + long[:60] + "…\" is not 0 to 9"},
		{"long line not key=value", "num_levels=2\n" + long + "\n", ":2: \"" + long[:60] + "…\" is not key=value"},
		{"long file name", "num_levels=2\nbase_array_index=0\n[levels]\n0=mesh_L0.h5\n1=" + long + ".h5\n", long + ".h5"},
	} {
		p := filepath.Join(dir, "long.dat")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadHDF5(p)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && !reflect.DeepEqual(got, m):
			t.Errorf("%s: the mesh read back differs from the one written", tc.name)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %.300v, want an error saying %.300q", tc.name, err, tc.want)
		}
	}
}
