package unstructured_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/gmshtest"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/ptscotch"
	"github.com/goop2/op2/internal/testcache"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
	"github.com/goop2/op2/mesh/unstructured"
)

func TestMain(m *testing.M) { os.Exit(testcache.Run(m, "goop2-unstructured-cache-")) }

const fixtures = "../gmsh/testdata"

// summary is what a declared mesh holds, over all ranks.
type summary struct {
	Nodes, Cells       int
	Interior, Boundary []int
	Volume             float64 // the cells' volumes added
	BoundaryFlux       float64 // Σ over boundary facets of centre · normal: Dim × Volume
	NormalSum          []float64
	Groups             map[string][]int // cells, then each facet set's subset size
}

// loopSum adds per element of set what kernel src (named name, with a
// last argument double *s) computes from args, into a Global of dim values.
func loopSum(t *testing.T, set op2.IterationSet, dim int, src, name string, args ...op2.Arg) []float64 {
	t.Helper()
	g, err := op2.NewGlobal[float64](dim, nil, name+"_sum")
	if err != nil {
		t.Fatal(err)
	}
	if err := op2.ParLoop(op2.NewKernel(src, name), set, append(args, g.Arg(op2.Inc))...); err != nil {
		t.Fatal(err)
	}
	return g.Data()
}

func count(t *testing.T, set op2.IterationSet) int {
	return int(loopSum(t, set, 1, "void one(double *s) { *s += 1; }", "one")[0])
}

func summarize(t *testing.T, m *unstructured.Mesh) summary {
	t.Helper()
	geo, err := m.Geometry()
	if err != nil {
		t.Fatal(err)
	}
	s := summary{Nodes: m.Nodes.GlobalSize(), Cells: m.Cells.GlobalSize(), NormalSum: make([]float64, m.Dim), Groups: map[string][]int{}}
	s.Volume = loopSum(t, m.Cells, 1, "void vol(const double *v, double *s) { *s += *v; }", "vol", geo.CellVolume.Arg(op2.Read))[0]
	flux := fmt.Sprintf(`void flux(const double *c, const double *a, double *s) {
  for (int k = 0; k < %d; k++) { s[0] += c[k] * a[k]; s[1 + k] += a[k]; }
}`, m.Dim)
	for i, f := range m.Interior {
		s.Interior = append(s.Interior, f.Set.GlobalSize())
		// Interior normals add up over a cell's facets; here: each points
		// from its first cell's centre towards the second's.
		ok := loopSum(t, f.Set, 1, fmt.Sprintf(`void away(const double *c0, const double *c1, const double *a, double *s) {
  double d = 0;
  for (int k = 0; k < %d; k++) d += (c1[k] - c0[k]) * a[k];
  if (d <= 0) *s += 1;
}`, m.Dim), "away", geo.CellCentre.ArgMap(op2.Read, f.Cells, 0), geo.CellCentre.ArgMap(op2.Read, f.Cells, 1), geo.Interior[i].Normal.Arg(op2.Read))
		if ok[0] != 0 {
			t.Errorf("%s: %g facets' normals do not point from the first cell to the second", f.Set.Name(), ok[0])
		}
	}
	for i, f := range m.Boundary {
		s.Boundary = append(s.Boundary, f.Set.GlobalSize())
		r := loopSum(t, f.Set, 1+m.Dim, flux, "flux", geo.Boundary[i].Centre.Arg(op2.Read), geo.Boundary[i].Normal.Arg(op2.Read))
		s.BoundaryFlux += r[0]
		for k := range m.Dim {
			s.NormalSum[k] += r[1+k]
		}
	}
	for _, g := range m.Groups {
		var sizes []int
		if g.Cells != nil {
			sizes = append(sizes, count(t, g.Cells))
		}
		for _, sub := range append(slices.Clone(g.Interior), g.Boundary...) {
			sizes = append(sizes, count(t, sub))
		}
		s.Groups[g.Name] = sizes
	}
	return s
}

// same compares two summaries, the sums to round-off.
func same(a, b summary) string {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-11*(1+math.Abs(x)) }
	switch {
	case a.Nodes != b.Nodes || a.Cells != b.Cells || !slices.Equal(a.Interior, b.Interior) || !slices.Equal(a.Boundary, b.Boundary):
		return fmt.Sprintf("counts %d %d %v %v, want %d %d %v %v", a.Nodes, a.Cells, a.Interior, a.Boundary, b.Nodes, b.Cells, b.Interior, b.Boundary)
	case !near(a.Volume, b.Volume) || !near(a.BoundaryFlux, b.BoundaryFlux):
		return fmt.Sprintf("volume %.17g flux %.17g, want %.17g %.17g", a.Volume, a.BoundaryFlux, b.Volume, b.BoundaryFlux)
	case len(a.Groups) != len(b.Groups):
		return fmt.Sprintf("groups %v, want %v", a.Groups, b.Groups)
	}
	for name, sizes := range b.Groups {
		if !slices.Equal(a.Groups[name], sizes) {
			return fmt.Sprintf("group %q: sizes %v, want %v", name, a.Groups[name], sizes)
		}
	}
	return ""
}

// expected is what mesh/gmsh and mesh/topology say of the file: counts and
// the groups' sizes (every facet of these fixtures' groups is a boundary
// facet).
func expected(t *testing.T, path string) summary {
	t.Helper()
	g, err := gmsh.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cells := g.Cells()[0]
	k, _ := unstructured.KindOf(cells.Type)
	top, err := topology.Derive(k, cells.Nodes, g.NumNodes())
	if err != nil {
		t.Fatal(err)
	}
	f := top.Facets[0]
	s := summary{Nodes: g.NumNodes(), Cells: cells.Len(), Interior: []int{f.Len() - len(f.Boundary)}, Boundary: []int{len(f.Boundary)}, Volume: 1, BoundaryFlux: float64(k.Dim()), Groups: map[string][]int{}}
	for _, p := range g.Physical {
		b, err := g.Group(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Dim == k.Dim() {
			s.Groups[p.Name] = []int{b[0].Len()}
		} else {
			s.Groups[p.Name] = []int{0, b[0].Len()}
		}
	}
	return s
}

// TestLoad declares the Gmsh fixtures (unit square and box, every
// encoding) with and without renumbering, and from the HDF5 file
// WriteHDF5 makes of them: the counts and groups are those of mesh/gmsh
// and mesh/topology, the volumes add up to 1, the boundary normals to
// zero, Σ centre·normal over the boundary is Dim × the volume (the
// divergence theorem), every interior normal points from its first cell to
// its second, and the coordinates gather in the file's order.
func TestLoad(t *testing.T) {
	for _, name := range []string{"square", "box"} {
		for _, enc := range []string{"22-ascii", "22-binary", "41-ascii", "41-binary"} {
			path := filepath.Join(fixtures, name+"-"+enc+".msh")
			t.Run(name+"-"+enc, func(t *testing.T) {
				want := expected(t, path)
				g, err := gmsh.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				h5 := filepath.Join(t.TempDir(), "mesh.h5")
				if err := unstructured.WriteHDF5(h5, g); err != nil {
					t.Fatal(err)
				}
				// The same mesh with every other cell turned the other way
				// round: Declare orients them back.
				flipped, err := gmsh.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				for i := range flipped.Blocks {
					b := &flipped.Blocks[i]
					if b.Type.Dim() == flipped.Dim {
						nn := b.Type.NumNodes()
						for c := 0; c < b.Len(); c += 2 {
							b.Nodes[c*nn+1], b.Nodes[c*nn+2] = b.Nodes[c*nn+2], b.Nodes[c*nn+1]
						}
					}
				}
				for _, c := range []struct {
					path string
					opts unstructured.Options
				}{{path, unstructured.Options{}}, {path, unstructured.Options{Renumber: "none"}}, {h5, unstructured.Options{}}, {"flipped", unstructured.Options{}}} {
					var m *unstructured.Mesh
					if c.path == "flipped" {
						m, err = unstructured.Declare(flipped, c.opts)
					} else {
						m, err = unstructured.Load(c.path, c.opts)
					}
					if err != nil {
						t.Fatal(err)
					}
					if (m.Renumbered != nil) != (c.opts.Renumber == "") {
						t.Errorf("%s %+v: renumbered %v", c.path, c.opts, m.Renumbered != nil)
					}
					got := summarize(t, m)
					if d := same(got, want); d != "" {
						t.Errorf("%s %+v: %s", c.path, c.opts, d)
					}
					for k, v := range got.NormalSum {
						if math.Abs(v) > 1e-12 {
							t.Errorf("%s: boundary normals add up to %g in component %d", c.path, v, k)
						}
					}
					x, err := m.X.Gather()
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(x, g.Coords(m.Dim)) {
						t.Errorf("%s %+v: the coordinates do not gather in the file's order", c.path, c.opts)
					}
				}
			})
		}
	}
}

// TestLoadErrors: files the package refuses, with what is wrong.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(dir, "lines.msh")
	if err := os.WriteFile(lines, []byte("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2 1 2\n1 1 0 2\n1\n2\n0 0 0\n1 0 0\n$EndNodes\n$Elements\n1 1 1 1\n1 1 1 1\n1 1 2\n$EndElements\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		opts unstructured.Options
		want string
	}{
		{lines, unstructured.Options{}, "no cells of dimension 2 or 3"},
		{filepath.Join(dir, "absent.msh"), unstructured.Options{}, "absent.msh"},
		{filepath.Join(fixtures, "square-41-ascii.msh"), unstructured.Options{Renumber: "metis"}, `Renumber is "metis"`},
	} {
		_, err := unstructured.Load(c.path, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.path, err, c.want)
		}
	}
}

// summaryOf loads path in one process and returns its summary, as the
// ranks of a test get it (loadAsOneProcess).
func summaryOf(t *testing.T, path string) string {
	t.Helper()
	m, err := unstructured.Load(path, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(summarize(t, m))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// loadAsOneProcess loads path on this rank with opts and fails t unless
// the summary is want (summaryOf's, from one process).
func loadAsOneProcess(t *testing.T, path, want string, opts unstructured.Options) *unstructured.Mesh {
	t.Helper()
	var w summary
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	m, err := unstructured.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d := same(summarize(t, m), w); d != "" {
		t.Errorf("rank %d of %d: %s", op2.Rank(), op2.Ranks(), d)
	}
	return m
}

// flipEveryOther swaps two nodes of every other tetrahedron, turning it
// the other way round.
func flipEveryOther(kind topology.Kind, dim int, cells []int32, x []float64) {
	for c := 0; c+4 <= len(cells); c += 8 {
		cells[c+1], cells[c+2] = cells[c+2], cells[c+1]
	}
}

// TestLoadChangedHDF5: an HDF5 mesh changed since WriteHDF5 wrote it gets
// the checks a Gmsh file gets: cells turned the other way round are
// oriented again (the mesh is the file's before the change), a cell
// whose node is repeated or a coordinate that is not a finite number is
// an error naming the file and the cell.
func TestLoadChangedHDF5(t *testing.T) {
	path := filepath.Join(fixtures, "box-41-binary.msh")
	g, err := gmsh.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := summaryOf(t, path)
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		change func(kind topology.Kind, dim int, cells []int32, x []float64)
		want   string // the error; "": the summary is the file's
	}{
		{"flipped", flipEveryOther, ""},
		{"repeated node", func(_ topology.Kind, _ int, cells []int32, _ []float64) { cells[4+3] = cells[4+1] }, "tetrahedron 1 has a node twice (its nodes 1 and 3)"},
		{"NaN coordinate", func(_ topology.Kind, dim int, cells []int32, x []float64) { x[int(cells[0])*dim+1] = math.NaN() },
			"tetrahedron 0 has volume NaN: a coordinate of its nodes is not a finite number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".h5")
			err := unstructured.WriteHDF5Changed(file, g, c.change)
			testreq.Check(t, "hdf5", err, h5.ErrNoHDF5)
			m, err := unstructured.Load(file, unstructured.Options{})
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want == "":
				b, err := json.Marshal(summarize(t, m))
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != want {
					t.Errorf("summary %s, want the file's %s", b, want)
				}
			case err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), file):
				t.Errorf("%v; want an error naming %s and saying %q", err, file, c.want)
			}
		})
	}
}

// TestLoadOnRanks declares the box fixture from the .msh file and from
// its HDF5 conversion on 2 and 3 MPI ranks, and from an HDF5 file whose
// every other cell was turned the other way round since: the summary
// equals one process's.
func TestLoadOnRanks(t *testing.T) {
	const pathEnv, wantEnv = "UNSTRUCTURED_MESH", "UNSTRUCTURED_WANT"
	if mpitest.InRanks() {
		loadAsOneProcess(t, os.Getenv(pathEnv), os.Getenv(wantEnv), unstructured.Options{})
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	path := filepath.Join(fixtures, "box-41-binary.msh")
	g, err := gmsh.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h5 := filepath.Join(t.TempDir(), "box.h5")
	if err := unstructured.WriteHDF5(h5, g); err != nil {
		t.Fatal(err)
	}
	flipped := filepath.Join(t.TempDir(), "flipped.h5")
	if err := unstructured.WriteHDF5Changed(flipped, g, flipEveryOther); err != nil {
		t.Fatal(err)
	}
	want := summaryOf(t, path)
	for _, file := range []string{path, h5, flipped} {
		for _, ranks := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(file), ranks), func(t *testing.T) {
				mpitest.Run(t, ranks, 2*time.Minute, pathEnv+"="+file, wantEnv+"="+want)
			})
		}
	}
}

// gmshExtruded writes the extruded cube of kind "prism" or "hex" with Gmsh
// (testdata/extrude.py) into dir and returns its path; it skips the test without Gmsh's Python
// module.
func gmshExtruded(t *testing.T, kind, version, dir string) string {
	t.Helper()
	py := gmshtest.Need(t)
	path := filepath.Join(dir, kind+"-"+version+".msh")
	if out, err := exec.Command(py, "testdata/extrude.py", kind, path, version).CombinedOutput(); err != nil {
		t.Fatalf("gmsh: %v\n%s", err, out)
	}
	return path
}

// TestLoadExtruded declares prism and hexahedron meshes Gmsh made (prisms
// have triangular and quadrilateral facets, in two sets each), every
// element in two physical groups: the facet counts are mesh/topology's,
// the geometry adds up, every element of a group is in its subsets, on one
// process and on 2 and 3 ranks; the prisms written as MSH 2.2 (elements
// repeated once per group) give what MSH 4.1 gives.
func TestLoadExtruded(t *testing.T) {
	const pathEnv, wantEnv = "UNSTRUCTURED_MESH", "UNSTRUCTURED_WANT"
	if mpitest.InRanks() {
		TestLoadOnRanks(t)
		return
	}
	dir := t.TempDir()
	summaries := map[string]summary{}
	for _, kind := range []string{"prism", "hex"} {
		t.Run(kind, func(t *testing.T) {
			path := gmshExtruded(t, kind, "4.1", dir)
			g, err := gmsh.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := unstructured.Load(path, unstructured.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(t, m)
			summaries[kind] = got
			h5 := filepath.Join(dir, kind+".h5")
			if err := unstructured.WriteHDF5(h5, g); err != nil {
				t.Fatal(err)
			}
			if mh, err := unstructured.Load(h5, unstructured.Options{}); err != nil {
				t.Error(err)
			} else if d := same(summarize(t, mh), got); d != "" {
				t.Errorf("from HDF5: %s", d)
			}
			if d := m.CellTags.Dim(); d != 2 {
				t.Errorf("CellTags has %d values per cell, want 2 (volume, everything)", d)
			}
			for _, f := range m.Boundary {
				if d := f.Tags.Dim(); d != 2 {
					t.Errorf("%s: Tags has %d values per facet, want 2", f.Set.Name(), d)
				}
			}
			cells := g.Cells()[0]
			k, _ := unstructured.KindOf(cells.Type)
			if m.Kind != k {
				t.Fatalf("kind %v, want %v", m.Kind, k)
			}
			top, err := topology.Derive(k, cells.Nodes, g.NumNodes())
			if err != nil {
				t.Fatal(err)
			}
			var interior, boundary []int
			for _, f := range top.Facets {
				interior = append(interior, f.Len()-len(f.Boundary))
				boundary = append(boundary, len(f.Boundary))
			}
			if !slices.Equal(got.Interior, interior) || !slices.Equal(got.Boundary, boundary) {
				t.Errorf("facets %v and %v, want %v and %v", got.Interior, got.Boundary, interior, boundary)
			}
			if math.Abs(got.Volume-1) > 1e-12 || math.Abs(got.BoundaryFlux-3) > 1e-12 {
				t.Errorf("volume %.17g and boundary flux %.17g, want 1 and 3", got.Volume, got.BoundaryFlux)
			}
			for _, p := range g.Physical {
				blocks, err := g.Group(p.Name)
				if err != nil {
					t.Fatal(err)
				}
				n, in := 0, 0
				for _, b := range blocks {
					n += b.Len()
				}
				for _, v := range got.Groups[p.Name] {
					in += v
				}
				if n == 0 || in != n {
					t.Errorf("group %q: %v in the subsets, %d in the file", p.Name, got.Groups[p.Name], n)
				}
			}
			want, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			for _, ranks := range []int{2, 3} {
				t.Run(strconv.Itoa(ranks), func(t *testing.T) {
					mpitest.Run(t, ranks, 2*time.Minute, pathEnv+"="+path, wantEnv+"="+string(want))
				})
			}
		})
	}
	t.Run("prism-2.2", func(t *testing.T) {
		m, err := unstructured.Load(gmshExtruded(t, "prism", "2.2", dir), unstructured.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := same(summarize(t, m), summaries["prism"]); d != "" {
			t.Errorf("MSH 2.2 against 4.1: %s", d)
		}
	})
}

// BenchmarkDeclare declares Cube(40) (384 000 tetrahedra, 787 200
// interior faces) and computes its geometry: derivation, declaration, RCM
// renumbering and the geometry loops.
func BenchmarkDeclare(b *testing.B) {
	g := unstructured.Cube(40)
	for b.Loop() {
		m, err := unstructured.Declare(g, unstructured.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Geometry(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadReversedGroups: groups that hold entities reversed (Gmsh's
// Physical Curve("left") = {-4}, written as negative physical tags in MSH
// 4.1) hold their elements, in 4.1 files as in 2.2 ones, and the cells'
// and facets' tags are the groups' (positive) tags.
func TestLoadReversedGroups(t *testing.T) {
	for _, enc := range []string{"22-ascii", "41-ascii", "41-binary"} {
		t.Run(enc, func(t *testing.T) {
			m, err := unstructured.Load("../gmsh/testdata/reversed-"+enc+".msh", unstructured.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range []struct {
				name          string
				cells, facets int
			}{{"left", 0, 1}, {"right", 0, 1}, {"s", 4, 0}} {
				grp, err := m.Group(g.name)
				if err != nil {
					t.Fatal(err)
				}
				cells, facets := 0, 0
				if grp.Cells != nil {
					cells = grp.Cells.Size()
				}
				for _, b := range grp.Boundary {
					if b != nil {
						facets += b.Size()
					}
				}
				if cells != g.cells || facets != g.facets {
					t.Errorf("group %q: %d cells and %d boundary facets, want %d and %d", g.name, cells, facets, g.cells, g.facets)
				}
			}
			for _, tag := range m.CellTags.DataRO() {
				if tag != 3 {
					t.Fatalf("cell tags %v, want 3 (group s)", m.CellTags.DataRO())
				}
			}
		})
	}
}

// TestLoadPartitioners loads a mesh of one kind and a mixed one on 3
// ranks with each partitioner Options.Partitioner names, made without a
// map or coordinates (op2.METISPartitioner(nil)...), which Load gives
// the mesh's: the summary is one process's, and the partition is the
// one named. (A partitioner needing the mesh's map or coordinates could
// not be named: they exist only once Load has declared the mesh.)
func TestLoadPartitioners(t *testing.T) {
	const pathEnv, wantEnv, partEnv = "UNSTRUCTURED_MESH", "UNSTRUCTURED_WANT", "UNSTRUCTURED_PARTITIONER"
	if mpitest.InRanks() {
		kind := os.Getenv(partEnv)
		p := map[string]op2.Partitioner{"metis": op2.METISPartitioner(nil), "ptscotch": op2.PTScotchPartitioner(nil),
			"rcb": op2.RCBPartitioner(nil), "block": op2.BlockPartitioner()}[kind]
		m := loadAsOneProcess(t, os.Getenv(pathEnv), os.Getenv(wantEnv), unstructured.Options{Partitioner: &p})
		if m.Partition == nil || m.Partition.Partitioner != kind {
			t.Errorf("partition %+v, want %s's", m.Partition, kind)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, name := range []string{"box-41-binary", "mixed-41-binary"} {
		path := filepath.Join(fixtures, name+".msh")
		want := summaryOf(t, path)
		for _, kind := range []string{"metis", "ptscotch", "rcb", "block"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				switch kind {
				case "metis":
					testreq.Check(t, "metis", dist.LoadMETIS(), op2.ErrMETISUnavailable)
				case "ptscotch":
					testreq.Check(t, "ptscotch", ptscotch.Load(), op2.ErrPTScotchUnavailable)
				}
				mpitest.Run(t, 3, 2*time.Minute, pathEnv+"="+path, wantEnv+"="+want, partEnv+"="+kind)
			})
		}
	}
}

// TestGroupOfAnotherDimension: Group names a group the file has but a
// Mesh does not hold (a point's) by its dimension, not as missing.
func TestGroupOfAnotherDimension(t *testing.T) {
	const msh = `$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
3
0 3 "corner"
1 2 "edge"
2 1 "s"
$EndPhysicalNames
$Nodes
4
1 0 0 0
2 1 0 0
3 1 1 0
4 0 1 0
$EndNodes
$Elements
4
1 15 2 3 1 1
2 1 2 2 1 1 2
3 2 2 1 1 1 2 3
4 2 2 1 1 1 3 4
$EndElements
`
	path := filepath.Join(t.TempDir(), "corner.msh")
	if err := os.WriteFile(path, []byte(msh), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := unstructured.Load(path, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Group("s"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Group("corner"); err == nil || !strings.Contains(err.Error(), `physical group "corner" is of dimension 0`) {
		t.Errorf("Group(corner): %v, want it named as of dimension 0", err)
	}
	if _, err := m.Group("nonesuch"); err == nil || !strings.Contains(err.Error(), `no physical group "nonesuch" (the mesh has "edge", "s", "corner" (dimension 0))`) {
		t.Errorf("Group(nonesuch): %v", err)
	}
}

// TestCheckpointWithoutTheMesh: a program that keeps the coordinates and
// its own Dats but drops the Mesh before op2.Checkpoint (its tags and
// local numbers collected, with a warning) cannot restart holding the
// Mesh, and the refusal says why and what to do (it said "holds no dat
// \"tetrahedra_tags\"" and no more). The tags stay in checkpoints: a
// program may change them.
func TestCheckpointWithoutTheMesh(t *testing.T) {
	testreq.Check(t, "hdf5", h5.Load(), h5.ErrNoHDF5)
	path := filepath.Join(fixtures, "box-41-binary.msh")
	ckpt := filepath.Join(t.TempDir(), "run.ckpt")
	x, u := func() (*op2.Dat[float64], *op2.Dat[float64]) {
		m, err := unstructured.Load(path, unstructured.Options{})
		if err != nil {
			t.Fatal(err)
		}
		u := must(op2.NewDat[float64](m.Nodes, 1, nil, "u"))
		for i := range u.Data() {
			u.Data()[i] = float64(i) + 0.5
		}
		return m.X, u
	}()
	runtime.GC()
	if err := op2.Checkpoint(ckpt, nil); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive([]any{x, u})
	x, u = nil, nil
	runtime.GC()
	m, err := unstructured.Load(path, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u2 := must(op2.NewDat[float64](m.Nodes, 1, nil, "u"))
	_, err = op2.Restore(ckpt)
	if err == nil || !strings.Contains(err.Error(), `holds no dat "tetrahedra_tags"`) || !strings.Contains(err.Error(), "dropped by the program that wrote it") || !strings.Contains(err.Error(), "SetNoCheckpoint") {
		t.Errorf("restoring with the Mesh held: %v, want the refusal explained", err)
	}
	runtime.KeepAlive([]any{m, u2})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
