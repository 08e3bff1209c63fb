package unstructured

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/cgnstest"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// cgnsFixtures is the folder of the CGNS tests' Gmsh meshes.
const cgnsFixtures = "../cgns/testdata"

// withFamilies copies the converted box to dir and adds to it families
// (of two boundary conditions and of the zone), boundary conditions at
// Vertex (a list of points and a range of all of them) and a list of
// elements (every third boundary triangle).
func withFamilies(t *testing.T, dir string) string {
	t.Helper()
	cgnstest.Need(t, "aflr3_to_cgns")
	path := filepath.Join(dir, "families.cgns")
	src, err := os.Open(filepath.Join(cgnsFixtures, "box.cgns"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := cgns.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var some []int64 // every third boundary triangle, by element number
	for _, b := range m.Blocks {
		if b.Type == gmsh.Triangle {
			for i := 0; i < b.Len(); i += 3 {
				some = append(some, b.Tags[i])
			}
		}
	}
	f, err := cg.Open(path, cg.Modify)
	if err != nil {
		t.Fatal(err)
	}
	_, size, err := f.ZoneRead(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var low []int64 // the vertices below z = 0.5 (about half)
	x, err := f.Coord(1, 1, "CoordinateZ", size[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, z := range x {
		if z < 0.5 {
			low = append(low, int64(i)+1)
		}
	}
	const userDefined, elementList = 1, 7
	for _, step := range []func() error{
		func() error { return f.FamilyWrite(1, "walls") },
		func() error { return f.FamilyWrite(1, "fluid") },
		func() error { return f.FamNameWrite(1, 1, cg.OfBoco, 1, "walls") },
		func() error { return f.FamNameWrite(1, 1, cg.OfBoco, 2, "walls") },
		func() error { return f.FamNameWrite(1, 1, cg.OfZone, 0, "fluid") },
		func() error { _, err := f.BocoWrite(1, 1, "low points", userDefined, cg.PointList, low); return err },
		func() error { _, err := f.BocoWrite(1, 1, "some faces", userDefined, elementList, some); return err },
		func() error {
			_, err := f.BocoWrite(1, 1, "all points", userDefined, cg.PointRange, []int64{1, size[0]})
			return err
		},
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// toADF writes the CGNS file at path in the ADF format with libcgns's
// cgnsconvert -a, beside it, and returns the new file's path.
func toADF(t *testing.T, path string) string {
	t.Helper()
	cgnstest.Need(t, "cgnsconvert")
	out := strings.TrimSuffix(path, ".cgns") + "-adf.cgns"
	if b, err := exec.Command("cgnsconvert", "-a", path, out).CombinedOutput(); err != nil {
		t.Fatalf("cgnsconvert: %v\n%s", err, b)
	}
	return out
}

// withCellList copies the CGNS file at path, adds to the copy a boundary
// condition listing every fifth cell by element number (of a MIXED
// section in patran_to_cgns's files), and returns the copy's path.
func withCellList(t *testing.T, path string) string {
	t.Helper()
	m, err := cgns.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var cells []int64
	for _, b := range m.Cells() {
		for i := 0; i < b.Len(); i += 5 {
			cells = append(cells, b.Tags[i])
		}
	}
	out := strings.TrimSuffix(path, ".cgns") + "-list.cgns"
	cgnstest.WithElementList(t, path, out, "some cells", cells)
	return out
}

// TestCGNSBlocks: on 2 and 3 MPI ranks, each rank's blocks of a CGNS
// file read by blocks (readBlock through cgns.Layout.ReadPart) are the
// blocks fromGmsh takes of the file read whole — nodes, cells oriented,
// cell groups, tagged facets, the groups — for tetrahedra with boundary
// conditions (aflr3_to_cgns), a boundary layer of prisms under
// tetrahedra, hexahedra, pyramids and tetrahedra, the boundary layer as
// one MIXED section with its boundary patches as sections (MIXED among
// them; patran_to_cgns), that file in the ADF format (cgnsconvert -a)
// and with a list of some of its cells, and families with boundary
// conditions at Vertex and a list of facets.
func TestCGNSBlocks(t *testing.T) {
	const filesEnv = "CGNS_BLOCK_FILES"
	if mpitest.InRanks() {
		for _, path := range strings.Split(os.Getenv(filesEnv), string(os.PathListSeparator)) {
			got, err := readBlock(comm(), path, &cgnsFile{path: path})
			if err != nil {
				t.Fatal(err)
			}
			g, err := cgns.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fromGmsh(g, op2.Rank(), op2.Ranks())
			if err != nil {
				t.Fatal(err)
			}
			if d := sourceDiff(got, want); d != "" {
				t.Errorf("%s: rank %d of %d: %s", filepath.Base(path), op2.Rank(), op2.Ranks(), d)
			}
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	read := func(name string) *gmsh.Mesh {
		g, err := gmsh.ReadFile(filepath.Join(cgnsFixtures, name+".msh"))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	mixed := cgnstest.Patran(t, read("layer"), dir, "mixed")
	files := []string{
		cgnstest.UGRID(t, read("box"), dir, "box"),
		cgnstest.UGRID(t, read("layer"), dir, "layer"),
		cgnstest.UGRID(t, read("hybrid"), dir, "hybrid"),
		mixed,
		toADF(t, mixed),
		withCellList(t, mixed),
		withFamilies(t, dir),
	}
	for _, ranks := range []int{2, 3} {
		t.Run(fmt.Sprint(ranks), func(t *testing.T) {
			mpitest.Run(t, ranks, 2*time.Minute, filesEnv+"="+strings.Join(files, string(os.PathListSeparator)))
		})
	}
}

// sourceDiff says how a differs from b, or "".
func sourceDiff(a, b *source) string {
	var diffs []string
	check := func(ok bool, what string, x, y any) {
		if !ok {
			s := fmt.Sprintf("%s: %v, want %v", what, x, y)
			if len(s) > 300 {
				s = s[:300] + "..."
			}
			diffs = append(diffs, s)
		}
	}
	check(a.dim == b.dim && a.kind == b.kind && a.nodes == b.nodes && a.cells == b.cells, "sizes",
		[]int{a.dim, int(a.kind), a.nodes, a.cells}, []int{b.dim, int(b.kind), b.nodes, b.cells})
	check(slices.Equal(a.kinds, b.kinds), "kinds", a.kinds, b.kinds)
	check(a.firstNode == b.firstNode && a.firstCell == b.firstCell, "first node, cell", []int{a.firstNode, a.firstCell}, []int{b.firstNode, b.firstCell})
	check(slices.Equal(a.x, b.x), "x", a.x, b.x)
	check(slices.Equal(a.cellNodes, b.cellNodes), "cellNodes", a.cellNodes, b.cellNodes)
	check(a.cellTagDim == b.cellTagDim && slices.Equal(a.cellTags, b.cellTags), "cellTags", a.cellTags, b.cellTags)
	check(slices.Equal(a.groups, b.groups), "groups", a.groups, b.groups)
	check(len(a.tagged) == len(b.tagged), "facet kinds", len(a.tagged), len(b.tagged))
	for k := range min(len(a.tagged), len(b.tagged)) {
		ta, tb := a.tagged[k], b.tagged[k]
		check(ta.Kind == tb.Kind && slices.Equal(ta.Nodes, tb.Nodes) && slices.Equal(ta.Tags, tb.Tags), fmt.Sprintf("tagged %v", ta.Kind), ta, tb)
	}
	return strings.Join(diffs, "; ")
}

// TestCGNSBlockErrors: on 3 MPI ranks, malformed CGNS files give every
// rank the same error, naming the file and the node: a node number out of
// range in the last tetrahedron (which only the last rank reads), a
// boundary condition listing an element no section holds, a structured
// zone (plot3d_to_cgns), and a truncated file; and a condition at Vertex
// whose point list holds no face element loads, as a group of dimension
// 0 that Group names so, alike on every rank.
func TestCGNSBlockErrors(t *testing.T) {
	const casesEnv, outEnv = "CGNS_BLOCK_ERRORS", "CGNS_BLOCK_OUT"
	if mpitest.InRanks() {
		for i, path := range strings.Split(os.Getenv(casesEnv), string(os.PathListSeparator)) {
			m, err := Load(path, Options{})
			msg := "no error"
			if err != nil {
				msg = err.Error()
			} else if _, gerr := m.Group("lonely"); gerr != nil {
				msg = "loaded " + path + "; " + gerr.Error()
			}
			out := filepath.Join(os.Getenv(outEnv), fmt.Sprintf("%d-%d.txt", i, op2.Rank()))
			if err := os.WriteFile(out, []byte(msg), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	cgnstest.Need(t, "plot3d_to_cgns")
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(cgnsFixtures, "box.cgns"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := cgns.Read(filepath.Join(cgnsFixtures, "box.cgns"))
	if err != nil {
		t.Fatal(err)
	}
	tets := m.Cells()[0]
	last := tets.Nodes[len(tets.Nodes)-4:]
	int32s := func(v ...int32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
		return b
	}
	old := int32s(last[0]+1, last[1]+1, last[2]+1, last[3]+1)
	if bytes.Count(good, old) != 1 {
		t.Fatal("the last tetrahedron's nodes are not stored once as 32-bit values")
	}
	nv := int32(m.NumNodes())
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badNode := write("node.cgns", bytes.Replace(good, old, int32s(last[0]+1, last[1]+1, nv+5, last[3]+1), 1))
	noSection := write("nosection.cgns", good)
	f, err := cg.Open(noSection, cg.Modify)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.ZoneRead(1, 1); err != nil {
		t.Fatal(err)
	}
	const elementList, userDefined = 7, 1
	if _, err := f.BocoWrite(1, 1, "nowhere", userDefined, elementList, []int64{1, 999999}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// A boundary condition at Vertex whose points hold no face element
	// (one vertex).
	vertexBC := func(name string, set int, pts []int64) string {
		p := write(name, good)
		f, err := cg.Open(p, cg.Modify)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.ZoneRead(1, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := f.BocoWrite(1, 1, "lonely", userDefined, set, pts); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	vertexList := vertexBC("vertexlist.cgns", cg.PointList, []int64{1})
	plot3d := write("structured.in", []byte("2 2 2\n0 1 0 1 0 1 0 1\n0 0 1 1 0 0 1 1\n0 0 0 0 1 1 1 1\n"))
	structured := filepath.Join(dir, "structured.cgns")
	if out, err := exec.Command("plot3d_to_cgns", "-s", "-f", plot3d, structured).CombinedOutput(); err != nil {
		t.Fatalf("plot3d_to_cgns: %v\n%s", err, out)
	}
	cut := write("cut.cgns", good[:len(good)-100])
	cases := []struct {
		path string
		want []string
	}{
		{badNode, []string{"/Base/Zone/TetElements", fmt.Sprintf("element %d (tetrahedron): node 2 is %d, outside [1, %d]", tets.Tags[tets.Len()-1], nv+5, nv)}},
		{noSection, []string{"/Base/Zone/ZoneBC/nowhere", "element 999999: no section holds it"}},
		{structured, []string{"/Base/Zone 1", "structured zone", "not supported"}},
		{cut, nil},
		// Last: after a mesh is loaded no other is declared.
		{vertexList, []string{`loaded`, `physical group "lonely" is of dimension 0`}},
	}
	var paths []string
	for _, c := range cases {
		paths = append(paths, c.path)
	}
	out := t.TempDir()
	mpitest.Run(t, 3, 2*time.Minute, casesEnv+"="+strings.Join(paths, string(os.PathListSeparator)), outEnv+"="+out)
	for i, c := range cases {
		var msgs []string
		for r := range 3 {
			b, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d-%d.txt", i, r)))
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, string(b))
		}
		t.Logf("%s: %s", filepath.Base(c.path), msgs[0])
		if msgs[1] != msgs[0] || msgs[2] != msgs[0] {
			t.Errorf("%s: the ranks' errors differ:\n%s", filepath.Base(c.path), strings.Join(msgs, "\n"))
		}
		for _, w := range append(c.want, c.path) {
			if !strings.Contains(msgs[0], w) {
				t.Errorf("%s: error %q does not say %q", filepath.Base(c.path), msgs[0], w)
			}
		}
	}
}
