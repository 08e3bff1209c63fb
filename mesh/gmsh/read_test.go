package gmsh

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/regfile/regfiletest"
)

// encodings are the four forms make.py writes each fixture in.
var encodings = []string{"22-ascii", "22-binary", "41-ascii", "41-binary"}

// fixtures are the meshes of testdata, with what Gmsh made (the counts
// agree with meshio's, TestFixturesAgreeWithMeshio).
var fixtures = []struct {
	name   string
	dim    int
	nodes  int
	blocks map[Type]int
	groups map[string]int
}{
	{"square", 2, 30, map[Type]int{Line: 16, Triangle: 42}, map[string]int{"boundary": 16, "domain": 42}},
	{"box", 3, 45, map[Type]int{Triangle: 84, Tetrahedron: 101}, map[string]int{"walls": 84, "volume": 101}},
	{"mixed", 3, 42, map[Type]int{Triangle: 28, Quadrangle: 8, Hexahedron: 4, Prism: 14},
		map[string]int{"bottom": 18, "top": 18, "prisms": 14, "hexes": 4}},
	// Groups holding entities reversed: MSH 4.1 writes their physical
	// tags negative ("left" was empty in 4.1 files, and "s").
	{"reversed", 2, 5, map[Type]int{Line: 2, Triangle: 4}, map[string]int{"left": 1, "right": 1, "s": 4}},
}

func fixture(name, enc string) string {
	return filepath.Join("testdata", name+"-"+enc+".msh")
}

// check fails t unless m is consistent: slices of matching lengths,
// indices in range, Dim the highest block dimension.
func check(t testing.TB, m *Mesh) {
	t.Helper()
	n := len(m.NodeTags)
	if len(m.X) != 3*n {
		t.Fatalf("%d coordinates for %d nodes", len(m.X), n)
	}
	dim := 0
	for _, b := range m.Blocks {
		k := b.Len()
		if !b.Type.Supported() || len(b.Nodes) != k*b.Type.NumNodes() || len(b.Physical) != k || len(b.Entity) != k {
			t.Fatalf("block %v: %d nodes, %d tags, %d physical, %d entity", b.Type, len(b.Nodes), k, len(b.Physical), len(b.Entity))
		}
		for _, i := range b.Nodes {
			if i < 0 || int(i) >= n {
				t.Fatalf("block %v: node index %d out of range [0,%d)", b.Type, i, n)
			}
		}
		dim = max(dim, b.Type.Dim())
	}
	if m.Dim != dim {
		t.Fatalf("Dim %d, blocks up to dimension %d", m.Dim, dim)
	}
	if err := m.Check(); err != nil {
		t.Fatalf("Check refuses a consistent mesh: %v", err)
	}
}

func TestFixtures(t *testing.T) {
	for _, f := range fixtures {
		for _, enc := range encodings {
			t.Run(f.name+"-"+enc, func(t *testing.T) {
				m, err := ReadFile(fixture(f.name, enc))
				if err != nil {
					t.Fatal(err)
				}
				check(t, m)
				if m.Dim != f.dim || m.NumNodes() != f.nodes {
					t.Errorf("Dim %d, %d nodes; want %d, %d", m.Dim, m.NumNodes(), f.dim, f.nodes)
				}
				got := map[Type]int{}
				for _, b := range m.Blocks {
					got[b.Type] += b.Len()
				}
				if !reflect.DeepEqual(got, f.blocks) {
					t.Errorf("elements %v, want %v", got, f.blocks)
				}
				for name, want := range f.groups {
					g, err := m.Group(name)
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, b := range g {
						n += b.Len()
					}
					if n != want {
						t.Errorf("group %q: %d elements, want %d", name, n, want)
					}
				}
				cells := 0
				for _, b := range m.Cells() {
					if b.Type.Dim() != m.Dim {
						t.Errorf("Cells gave %v", b.Type)
					}
					cells += b.Len()
				}
				if cells == 0 {
					t.Error("no cells")
				}
				if _, err := m.Group("nonesuch"); err == nil || !strings.Contains(err.Error(), `no physical group "nonesuch"`) {
					t.Errorf("Group(nonesuch): %v", err)
				}
			})
		}
	}
}

// TestEncodingsAgree reads the four encodings of each fixture to the
// same Mesh, but for what Gmsh itself writes differently: ASCII
// coordinates have 16 significant digits (binary ones all 17), 2.2 files
// have no entities, and Gmsh numbers the elements of a 2.2 file by type
// and those of a 4.1 file by entity (the mixed mesh's prisms and
// hexahedra have other tags).
func TestEncodingsAgree(t *testing.T) {
	for _, f := range fixtures {
		ms := map[string]*Mesh{}
		for _, enc := range encodings {
			m, err := ReadFile(fixture(f.name, enc))
			if err != nil {
				t.Fatal(err)
			}
			ms[enc] = m
		}
		if len(ms["22-ascii"].Entities) != 0 || len(ms["41-ascii"].Entities) == 0 {
			t.Errorf("%s: %d entities in 2.2, %d in 4.1", f.name, len(ms["22-ascii"].Entities), len(ms["41-ascii"].Entities))
		}
		same := func(a, b string, exactX, sameTags bool) {
			x, y := *ms[a], *ms[b]
			if !exactX {
				for i := range x.X {
					if math.Abs(x.X[i]-y.X[i]) > 1e-15*max(1, math.Abs(x.X[i])) {
						t.Errorf("%s: %s and %s: coordinate %d: %v and %v", f.name, a, b, i, x.X[i], y.X[i])
						break
					}
				}
				y.X = x.X
			}
			if !sameTags {
				x.Blocks, y.Blocks = slices.Clone(x.Blocks), slices.Clone(y.Blocks)
				for k := range x.Blocks {
					x.Blocks[k].Tags, y.Blocks[k].Tags = nil, nil
				}
			}
			x.Entities, y.Entities = nil, nil
			if !reflect.DeepEqual(x, y) {
				t.Errorf("%s: %s and %s differ", f.name, a, b)
			}
		}
		// Gmsh writes the elements of an entity a group holds reversed
		// with their nodes reversed in MSH 2.2, as they are in 4.1.
		if f.name != "reversed" {
			same("22-ascii", "41-ascii", true, f.name != "mixed")
			same("22-binary", "41-binary", true, f.name != "mixed")
		}
		same("22-ascii", "22-binary", false, true)
		same("41-ascii", "41-binary", false, true)
		if !reflect.DeepEqual(ms["41-ascii"].Entities, ms["41-binary"].Entities) {
			t.Errorf("%s: the entities of 41-ascii and 41-binary differ", f.name)
		}
	}
}

func TestCoords(t *testing.T) {
	m, err := ReadFile(fixture("square", "41-ascii"))
	if err != nil {
		t.Fatal(err)
	}
	xy := m.Coords(2)
	for i := range m.NumNodes() {
		if xy[2*i] != m.X[3*i] || xy[2*i+1] != m.X[3*i+1] || m.X[3*i+2] != 0 {
			t.Fatalf("node %d: %v, X %v", i, xy[2*i:2*i+2], m.X[3*i:3*i+3])
		}
	}
}

// small22 has node tags that start at 10 and have gaps.
const small22 = `$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
2
1 3 "edge"
2 7 "domain"
$EndPhysicalNames
$Nodes
4
10 0 0 0
20 1 0 0
30 1 1 0
40 0 1 0
$EndNodes
$Elements
3
1 1 2 3 5 10 20
2 2 2 7 1 10 20 30
3 2 2 7 1 10 30 40
$EndElements
`

const small41 = `$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
2
1 3 "edge"
2 7 "domain"
$EndPhysicalNames
$Entities
0 1 1 0
5 0 0 0 1 0 0 1 3 0
1 0 0 0 1 1 0 1 7 0
$EndEntities
$Nodes
2 4 10 40
1 5 0 2
10
20
0 0 0
1 0 0
2 1 0 2
30
40
1 1 0
0 1 0
$EndNodes
$Elements
2 3 1 3
1 5 1 1
1 10 20
2 1 2 2
2 10 20 30
3 10 30 40
$EndElements
`

func TestSmall(t *testing.T) {
	want := &Mesh{
		Dim:      2,
		X:        []float64{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0},
		NodeTags: []int64{10, 20, 30, 40},
		Blocks: []Block{
			{Type: Line, Nodes: []int32{0, 1}, Tags: []int64{1}, Physical: []int32{3}, Entity: []int32{5}},
			{Type: Triangle, Nodes: []int32{0, 1, 2, 0, 2, 3}, Tags: []int64{2, 3}, Physical: []int32{7, 7}, Entity: []int32{1, 1}},
		},
		Physical: []PhysicalGroup{{1, 3, "edge"}, {2, 7, "domain"}},
	}
	// Element lines wrapped onto the next one, as Gmsh's own reader
	// takes them, read the same.
	wrapped22 := strings.Replace(small22, "2 2 2 7 1 10 20 30", "2 2 2 7 1\n10 20\n  30", 1)
	wrapped41 := strings.Replace(small41, "2 10 20 30", "2 10\n20 30", 1)
	for _, src := range []string{small22, small41, wrapped22, wrapped41} {
		m, err := Read(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		m.Entities = nil
		if !reflect.DeepEqual(m, want) {
			t.Errorf("got %+v\nwant %+v", m, want)
		}
	}
	// Sparse tags: a map, not a slice.
	src := strings.NewReplacer(" 10 ", " 1000000000000 ", "\n10 ", "\n1000000000000 ").Replace(small22)
	m, err := Read(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if m.nodeTag0() != 1000000000000 || !reflect.DeepEqual(m.Blocks[1].Nodes, want.Blocks[1].Nodes) {
		t.Errorf("sparse tags: %v %v", m.NodeTags, m.Blocks[1].Nodes)
	}
}

func (m *Mesh) nodeTag0() int64 { return m.NodeTags[0] }

// bin22 writes small22 as a binary 2.2 file in the given byte order.
func bin22(order binary.ByteOrder) []byte {
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, order, v) }
	b.WriteString("$MeshFormat\n2.2 1 8\n")
	w(int32(1))
	b.WriteString("\n$EndMeshFormat\n$PhysicalNames\n2\n1 3 \"edge\"\n2 7 \"domain\"\n$EndPhysicalNames\n$Nodes\n4\n")
	for i, x := range [][3]float64{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}} {
		w(int32(10 * (i + 1)))
		w(x)
	}
	b.WriteString("\n$EndNodes\n$Elements\n3\n")
	w([]int32{1, 1, 2, 1, 3, 5, 10, 20})
	w([]int32{2, 2, 2, 2, 7, 1, 10, 20, 30, 3, 7, 1, 10, 30, 40})
	b.WriteString("\n$EndElements\n")
	return b.Bytes()
}

func TestByteOrders(t *testing.T) {
	ref, err := Read(strings.NewReader(small22))
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		m, err := Read(bytes.NewReader(bin22(order)))
		if err != nil {
			t.Fatalf("%v: %v", order, err)
		}
		if !reflect.DeepEqual(m, ref) {
			t.Errorf("%v: %+v, want %+v", order, m, ref)
		}
	}
}

// errorCase is a malformed input and what the error says.
type errorCase struct {
	name string
	data []byte
	want string
}

// errorCases are TestErrors' inputs (and TestPartErrorsAreRead's).
func errorCases() []errorCase {
	repl := func(src string, pairs ...string) []byte {
		if !strings.Contains(src, pairs[0]) {
			panic(pairs[0])
		}
		return []byte(strings.NewReplacer(pairs...).Replace(src))
	}
	le := bin22(binary.LittleEndian)
	badNode := bytes.Clone(le)
	// The last int of the second element header's last triangle: node 40.
	i := bytes.LastIndex(badNode, []byte{40, 0, 0, 0})
	badNode[i] = 41
	return []errorCase{
		{"empty", nil, "line 1: empty input: expected $MeshFormat"},
		{"not msh", []byte("hello\n"), `line 1: expected a section ($Name), found "hello"`},
		{"format first", repl(small22, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n", ""), "line 1: the file must start with $MeshFormat"},
		{"version", repl(small22, "2.2 0 8", "4.0 0 8"), `line 2: $MeshFormat: MSH version "4.0" is not supported`},
		{"data size", repl(small22, "2.2 0 8", "2.2 1 4"), "line 2: $MeshFormat: binary data size 4 is not supported"},
		{"node count too small", repl(small22, "$Nodes\n4\n", "$Nodes\n3\n"), `line 14: $Nodes: expected $EndNodes, found "40"`},
		{"node count too large", repl(small22, "$Nodes\n4\n", "$Nodes\n5\n"), `line 15: $Nodes: node 5 of 5: the node tag: invalid integer "$EndNodes"`},
		{"element count", repl(small22, "$Elements\n3\n", "$Elements\n4\n"), `line 21: $Elements: element 4 of 4: the element tag: invalid integer "$EndElements"`},
		{"missing node", repl(small22, "3 2 2 7 1 10 30 40", "3 2 2 7 1 10 30 41"), "line 20: $Elements: element 3 of 3: triangle 3: node tag 41 is not in $Nodes"},
		{"second order", repl(small22, "3 2 2 7 1 10 30 40", "3 9 2 7 1 10 30 40 10 20 30"),
			"line 20: $Elements: element 3 of 3: element type 9 (6-node second-order triangle) is not supported"},
		{"unknown type", repl(small22, "3 2 2 7 1 10 30 40", "3 99 2 7 1 10 30 40"), "element type 99 is not supported"},
		{"missing $EndNodes", repl(small22, "$EndNodes", "$Elements"), `line 15: $Nodes: expected $EndNodes, found "$Elements"`},
		{"duplicate node tag", repl(small22, "30 1 1 0", "20 1 1 0"), "line 9: $Nodes: node tag 20 is given twice (nodes 2 and 3 of the section)"},
		{"elements first", repl(small22, "$Nodes", "$Foo", "$EndNodes", "$EndFoo"), "line 16: $Elements: $Elements before $Nodes"},
		{"unclosed section", []byte(small22 + "$NodeData\n1\n"), "line 22: $NodeData: no $EndNodeData"},
		{"bad coordinate", repl(small22, "20 1 0 0", "20 1 x 0"), `line 12: $Nodes: node 2 of 4: a coordinate: invalid number "x"`},
		{"NaN coordinate", repl(small22, "20 1 0 0", "20 1 nan 0"), `line 12: $Nodes: node 2 of 4: a coordinate is NaN, not a finite number`},
		{"infinite coordinate", repl(small22, "20 1 0 0", "20 1 0 -Inf"), `line 12: $Nodes: node 2 of 4: a coordinate is -Inf, not a finite number`},
		{"unquoted name", repl(small22, `"edge"`, "edge"), "line 6: $PhysicalNames: name 1 of 2: expected a quoted name"},
		{"huge node count", []byte("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2147483647\n1 0 0 0\n"),
			"line 5: $Nodes: 2147483647 nodes claimed, but the 9 bytes left in the input hold at most 1"},
		{"too many nodes", []byte("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2147483648\n"), "line 5: $Nodes: the number of nodes 2147483648 out of range"},
		{"huge element count", []byte("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n0\n$EndNodes\n$Elements\n9000000000000000000\n"),
			"line 8: $Elements: 9000000000000000000 elements claimed"},
		{"41 block sum", repl(small41, "2 4 10 40", "2 5 10 40"), "line 15: $Nodes: the blocks hold 4 nodes, the section's header 5"},
		{"41 block overflow", repl(small41, "2 1 0 2\n30", "2 1 0 3\n30"), "line 21: $Nodes: node block 2 of 2: the blocks hold more than the 4 nodes"},
		{"41 element sum", repl(small41, "2 3 1 3", "2 2 1 3"), "line 31: $Elements: element block 2 of 2: the number of elements in the block 2 out of range [0, 1]"},
		{"41 unknown entity", repl(small41, "2 1 2 2", "2 9 2 2"), "line 31: $Elements: element block 2 of 2: entity 9 of dimension 2 is not in $Entities"},
		{"41 type dim", repl(small41, "2 1 2 2", "2 1 4 2"), "line 31: $Elements: element block 2 of 2: tetrahedron elements in an entity of dimension 2"},
		{"short element line", repl(small22, "2 2 2 7 1 10 20 30", "2 2 2 7 1 10 20"), "(element 2's line, line 19, ends before a node tag: if it lacks a value, the values after it are out of place)"},
		{"long element line", repl(small22, "2 2 2 7 1 10 20 30", "2 2 2 7 1 10 20 30 40"), "(element 2's line, line 19, holds more values than its element: if one is extra, the values after it are out of place)"},
		{"41 short element line", repl(small41, "2 10 20 30", "2 10 20"), "(element 2's line, line 32, ends before a node tag: if it lacks a value, the values after it are out of place)"},
		{"41 long element line", repl(small41, "2 10 20 30", "2 10 20 30 40"), "(element 2's line, line 32, holds more values than its element: if one is extra, the values after it are out of place)"},
		{"parametric nodes", repl(small22, "$Nodes", "$ParametricNodes", "$EndNodes", "$EndParametricNodes"), "line 9: $ParametricNodes: $ParametricNodes (Mesh.SaveParametric = 1) is not read in MSH 2.2 files"},
		{"41 partitioned", repl(small41, "$Entities", "$PartitionedEntities"), "partitioned MSH 4.1 meshes, split into files or not, are not supported: write the mesh unpartitioned"},
		{"endianness", func() []byte { b := bytes.Clone(le); b[20] = 2; return b }(), "byte 20: $MeshFormat: the endianness marker is 02 00 00 00"},
		{"binary missing node", badNode, fmt.Sprintf("byte %d: $Elements: element 3 of 3: triangle 3: node tag 41 is not in $Nodes", i)},
		{"binary truncated", le[:len(le)-30], "$Elements: element 2 of 3: 2 elements claimed, but the"},
	}
}

func TestErrors(t *testing.T) {
	for _, c := range errorCases() {
		t.Run(c.name, func(t *testing.T) {
			m, err := Read(bytes.NewReader(c.data))
			if err == nil {
				t.Fatalf("no error; mesh %+v", m)
			}
			if m != nil {
				t.Errorf("a mesh and an error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\n does not say %q", err, c.want)
			}
		})
	}
}

// TestTruncated cuts every fixture at every byte before its last
// section's end: each prefix is an error that says where.
func TestTruncated(t *testing.T) {
	for _, f := range fixtures {
		for _, enc := range encodings {
			data, err := os.ReadFile(fixture(f.name, enc))
			if err != nil {
				t.Fatal(err)
			}
			end := bytes.LastIndex(data, []byte("$EndElements"))
			for n := range end + len("$EndElement") {
				_, err := Read(bytes.NewReader(data[:n]))
				if err == nil {
					t.Fatalf("%s-%s cut at %d: no error", f.name, enc, n)
				}
				e, ok := err.(*Error)
				if !ok || (e.Line == 0) == !e.Binary {
					t.Fatalf("%s-%s cut at %d: %v (%#v)", f.name, enc, n, err, err)
				}
			}
		}
	}
}

// TestHugeCountsAllocateNothing: a tiny file claiming 2^31-1 nodes (or
// 2^62 elements in a binary 4.1 file) is refused before anything of its
// size is allocated.
func TestHugeCountsAllocateNothing(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("$MeshFormat\n4.1 1 8\n")
	binary.Write(&b, binary.LittleEndian, int32(1))
	b.WriteString("\n$EndMeshFormat\n$Nodes\n")
	binary.Write(&b, binary.LittleEndian, []uint64{1, math.MaxInt32, 1, math.MaxInt32})
	bin41 := bytes.Clone(b.Bytes())
	b.Reset()
	b.WriteString("$MeshFormat\n4.1 1 8\n")
	binary.Write(&b, binary.LittleEndian, int32(1))
	b.WriteString("\n$EndMeshFormat\n$Nodes\n")
	binary.Write(&b, binary.LittleEndian, []uint64{0, 0, 0, 0})
	b.WriteString("\n$EndNodes\n$Elements\n")
	binary.Write(&b, binary.LittleEndian, []uint64{1, 1 << 62, 1, 1 << 62})
	binElems := b.Bytes()
	for name, data := range map[string][]byte{
		"ascii 2.2 nodes":  []byte("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2147483647\n"),
		"ascii 4.1 nodes":  []byte("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2147483647 1 2147483647\n"),
		"binary 4.1 nodes": bin41,
		"binary elements":  binElems,
		"names":            []byte("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n2147483647\n"),
		"entities":         []byte("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n2147483647 0 0 0\n"),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Read(bytes.NewReader(data))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "claimed, but the") {
			t.Errorf("%s: %v", name, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("%s: %d bytes allocated", name, d)
		}
	}
}

func TestReadFileNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.msh")
	if err := os.WriteFile(path, []byte(strings.Replace(small22, "10 30 40\n", "10 30 99\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	if want := "gmsh: " + path + ": line 20: $Elements"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want it to start %q", err, want)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.msh")); err == nil || !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadFileRefusesSpecialFiles(t *testing.T) {
	for _, s := range regfiletest.Make(t, "mesh.msh") {
		regfiletest.Refused(t, s, func() error { _, err := ReadFile(s.Path); return err })
	}
}

func TestSkipsOtherSections(t *testing.T) {
	src := strings.Replace(small41, "$Nodes\n", "$Comments\nfree text $EndNodes not at a line start\n$EndComments\n$Nodes\n", 1) +
		"$NodeData\n1\n\"T\"\n1\n0.0\n3\n0\n1\n4\n10 1\n20 2\n30 3\n40 4\n$EndNodeData\n$Periodic\n0\n$EndPeriodic\n"
	m, err := Read(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if m.NumNodes() != 4 || len(m.Blocks) != 2 {
		t.Errorf("%+v", m)
	}
}

// TestGroupOfSeveralGroups: a 4.1 entity in two physical groups gives
// its elements to both.
func TestGroupOfSeveralGroups(t *testing.T) {
	src := strings.NewReplacer("2\n1 3 \"edge\"", "3\n1 3 \"edge\"\n2 8 \"also\"", "1 0 0 0 1 1 0 1 7 0", "1 0 0 0 1 1 0 2 7 8 0").Replace(small41)
	m, err := Read(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"domain", "also"} {
		g, err := m.Group(name)
		if err != nil || len(g) != 1 || g[0].Len() != 2 {
			t.Errorf("%s: %v %+v", name, err, g)
		}
	}
	if g, _ := m.Group("edge"); len(g) != 1 || g[0].Type != Line || g[0].Len() != 1 {
		t.Errorf("edge: %+v", g)
	}
}
