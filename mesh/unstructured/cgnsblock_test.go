package unstructured

import (
	"bufio"
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
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// cgnsFixtures is the folder of the CGNS tests' Gmsh meshes.
const cgnsFixtures = "../cgns/testdata"

// needConverter skips t unless libcgns loads and libcgns's converter
// tool runs.
func needConverter(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		testreq.Check(t, "cgns", fmt.Errorf("no %s (Debian: apt-get install cgns-convert): %w", tool, err), exec.ErrNotFound)
	}
	testreq.Check(t, "cgns", cgns.Load(), cgns.ErrUnavailable)
}

// toUGRID writes g's cells and boundary faces as an ASCII AFLR3 .ugrid
// file (each face's surface ID its physical group's tag) and converts it
// with aflr3_to_cgns, which writes a section per kind and a boundary
// condition per surface ID.
func toUGRID(t *testing.T, g *gmsh.Mesh, dir, name string) string {
	t.Helper()
	needConverter(t, "aflr3_to_cgns")
	surf := map[string]int32{}
	for _, pg := range g.Physical {
		if pg.Dim == 2 {
			for _, b := range g.GroupTag(2, pg.Tag) {
				nn := b.Type.NumNodes()
				for i := range b.Len() {
					surf[faceKey(b.Nodes[nn*i:nn*i+nn])] = pg.Tag
				}
			}
		}
	}
	blocks := map[gmsh.Type]gmsh.Block{}
	for _, b := range g.Blocks {
		blocks[b.Type] = b
	}
	ugrid := filepath.Join(dir, name+".ugrid")
	f, err := os.Create(ugrid)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	count := func(typ gmsh.Type) int { return len(blocks[typ].Tags) }
	fmt.Fprintln(w, g.NumNodes(), count(gmsh.Triangle), count(gmsh.Quadrangle), count(gmsh.Tetrahedron),
		count(gmsh.Pyramid), count(gmsh.Prism), count(gmsh.Hexahedron))
	for i := range g.NumNodes() {
		fmt.Fprintf(w, "%.17g %.17g %.17g\n", g.X[3*i], g.X[3*i+1], g.X[3*i+2])
	}
	conn := func(typ gmsh.Type, order []int) {
		b := blocks[typ]
		nn := typ.NumNodes()
		for i := range b.Len() {
			for j, k := range order {
				fmt.Fprint(w, map[bool]string{true: "", false: " "}[j == 0], b.Nodes[nn*i+k]+1)
			}
			fmt.Fprintln(w)
		}
	}
	conn(gmsh.Triangle, []int{0, 1, 2})
	conn(gmsh.Quadrangle, []int{0, 1, 2, 3})
	for _, typ := range []gmsh.Type{gmsh.Triangle, gmsh.Quadrangle} {
		b := blocks[typ]
		nn := typ.NumNodes()
		for i := range b.Len() {
			fmt.Fprintln(w, surf[faceKey(b.Nodes[nn*i:nn*i+nn])])
		}
	}
	conn(gmsh.Tetrahedron, []int{0, 1, 2, 3})
	conn(gmsh.Pyramid, []int{0, 3, 4, 1, 2}) // aflr3_to_cgns turns AFLR3's order into CGNS's
	conn(gmsh.Prism, []int{0, 1, 2, 3, 4, 5})
	conn(gmsh.Hexahedron, []int{0, 1, 2, 3, 4, 5, 6, 7})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".cgns")
	if out, err := exec.Command("aflr3_to_cgns", "-f", ugrid, path).CombinedOutput(); err != nil {
		t.Fatalf("aflr3_to_cgns: %v\n%s", err, out)
	}
	return path
}

// toPatran writes g's tetrahedra and prisms as a Patran neutral file,
// its 2-D groups as named components of their nodes, and converts it with
// patran_to_cgns, which writes the cells as one MIXED section and each
// component as a section of the boundary faces within it.
func toPatran(t *testing.T, g *gmsh.Mesh, dir, name string) string {
	t.Helper()
	needConverter(t, "patran_to_cgns")
	pat := filepath.Join(dir, name+".pat")
	f, err := os.Create(pat)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range g.NumNodes() {
		fmt.Fprintf(w, " 1%8d%8d%8d\n%16.9E%16.9E%16.9E\n1G       6       0       0  000000\n", i+1, 0, 2, g.X[3*i], g.X[3*i+1], g.X[3*i+2])
	}
	id := 0
	for _, b := range g.Blocks {
		shape := map[gmsh.Type]int{gmsh.Tetrahedron: 5, gmsh.Prism: 7}[b.Type]
		if b.Type.Dim() != 3 || shape == 0 {
			continue
		}
		nn := b.Type.NumNodes()
		for i := range b.Len() {
			id++
			fmt.Fprintf(w, " 2%8d%8d%8d\n%8d%8d%8d%8d\n", id, shape, 2, nn, 0, 1, 0)
			for _, v := range b.Nodes[nn*i : nn*i+nn] {
				fmt.Fprintf(w, "%8d", v+1)
			}
			fmt.Fprintln(w)
		}
	}
	for c, pg := range g.Physical {
		if pg.Dim != 2 {
			continue
		}
		var nodes []int32
		for _, b := range g.GroupTag(2, pg.Tag) {
			nodes = append(nodes, b.Nodes...)
		}
		slices.Sort(nodes)
		nodes = slices.Compact(nodes)
		fmt.Fprintf(w, "21%8d%8d%8d\n%s\n", c+1, 2*len(nodes), (len(nodes)+4)/5, pg.Name)
		for i, v := range nodes {
			fmt.Fprintf(w, "%8d%8d", 5, v+1)
			if i%5 == 4 || i == len(nodes)-1 {
				fmt.Fprintln(w)
			}
		}
	}
	fmt.Fprintf(w, "99%8d%8d%8d\n", 0, 0, 1)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".cgns")
	if out, err := exec.Command("patran_to_cgns", pat, path).CombinedOutput(); err != nil {
		t.Fatalf("patran_to_cgns: %v\n%s", err, out)
	}
	return path
}

// withFamilies copies the converted box to dir and adds to it families
// (of two boundary conditions and of the zone), boundary conditions at
// Vertex (a list of points and a range of all of them) and a list of
// elements (every third boundary triangle).
func withFamilies(t *testing.T, dir string) string {
	t.Helper()
	needConverter(t, "aflr3_to_cgns")
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
	needConverter(t, "cgnsconvert")
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
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSuffix(path, ".cgns") + "-list.cgns"
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := cg.Open(out, cg.Modify)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.ZoneRead(1, 1); err != nil {
		t.Fatal(err)
	}
	const userDefined, elementList = 1, 7
	if _, err := f.BocoWrite(1, 1, "some cells", userDefined, elementList, cells); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func faceKey(nodes []int32) string {
	s := slices.Clone(nodes)
	slices.Sort(s)
	return fmt.Sprint(s)
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
	mixed := toPatran(t, read("layer"), dir, "mixed")
	files := []string{
		toUGRID(t, read("box"), dir, "box"),
		toUGRID(t, read("layer"), dir, "layer"),
		toUGRID(t, read("hybrid"), dir, "hybrid"),
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
// zone (plot3d_to_cgns), and a truncated file.
func TestCGNSBlockErrors(t *testing.T) {
	const casesEnv, outEnv = "CGNS_BLOCK_ERRORS", "CGNS_BLOCK_OUT"
	if mpitest.InRanks() {
		for i, path := range strings.Split(os.Getenv(casesEnv), string(os.PathListSeparator)) {
			_, err := Load(path, Options{})
			msg := "no error"
			if err != nil {
				msg = err.Error()
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
	needConverter(t, "plot3d_to_cgns")
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
