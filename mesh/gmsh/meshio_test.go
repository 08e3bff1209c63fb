package gmsh

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/internal/gmshtest"
)

// meshioNames are meshio's names of the element types.
var meshioNames = map[Type]string{
	Point: "vertex", Line: "line", Triangle: "triangle", Quadrangle: "quad",
	Tetrahedron: "tetra", Hexahedron: "hexahedron", Prism: "wedge", Pyramid: "pyramid",
}

type counts struct {
	Nodes  int            `json:"nodes"`
	Cells  map[string]int `json:"cells"`
	Groups map[string]int `json:"groups"`
}

// meshioCounts reads path with meshio (testdata/meshio_counts.py).
func meshioCounts(t *testing.T, py, path string) counts {
	t.Helper()
	out, err := exec.Command(py, "testdata/meshio_counts.py", path).Output()
	if err != nil {
		t.Fatalf("meshio on %s: %v\n%s", path, err, stderr(err))
	}
	var c counts
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("meshio on %s: %v\n%s", path, err, out)
	}
	return c
}

func stderr(err error) string {
	if e, ok := err.(*exec.ExitError); ok {
		return string(e.Stderr)
	}
	return ""
}

// ourCounts is what meshioCounts gives, from Read.
func ourCounts(t *testing.T, m *Mesh) counts {
	t.Helper()
	c := counts{Nodes: m.NumNodes(), Cells: map[string]int{}, Groups: map[string]int{}}
	for _, b := range m.Blocks {
		c.Cells[meshioNames[b.Type]] += b.Len()
	}
	for _, g := range m.Physical {
		blocks, err := m.Group(g.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			c.Groups[g.Name] += b.Len()
		}
	}
	return c
}

func compareWithMeshio(t *testing.T, py, path string) {
	t.Helper()
	m, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	check(t, m)
	want := meshioCounts(t, py, path)
	if got := ourCounts(t, m); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: Read gives %+v, meshio %+v", path, got, want)
	}
}

// TestFixturesAgreeWithMeshio: nodes, elements per type and elements per
// physical group agree with meshio's for every fixture.
func TestFixturesAgreeWithMeshio(t *testing.T) {
	py := gmshtest.Need(t, "meshio")
	for _, f := range fixtures {
		for _, enc := range encodings {
			if f.name == "reversed" && strings.HasPrefix(enc, "41") {
				// meshio takes the negative physical tags of 4.1 as
				// they are, and leaves the groups "left" and "s"
				// empty; Gmsh (its 2.2 files) puts the elements in.
				continue
			}
			compareWithMeshio(t, py, fixture(f.name, enc))
		}
	}
}

// TestGmshGeneratedAgreesWithMeshio has Gmsh mesh random domains (2-D with
// a hole, some recombined into quadrangles, and 3-D boxes) with random
// sizes now (testdata/gen_random.py), and compares Read with meshio.
func TestGmshGeneratedAgreesWithMeshio(t *testing.T) {
	py := gmshtest.Need(t, "meshio")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	runs := 4
	if testing.Short() {
		runs = 2
	}
	for r := range runs {
		s := rng.IntN(1 << 30)
		s = s&^1 | r&1 // 2-D and 3-D in turn
		t.Run(fmt.Sprint("seed", s), func(t *testing.T) {
			dir := t.TempDir()
			if out, err := exec.Command(py, "testdata/gen_random.py", dir, fmt.Sprint(s)).CombinedOutput(); err != nil {
				t.Fatalf("gen_random.py %d: %v\n%s", s, err, out)
			}
			var ref *Mesh
			for _, enc := range encodings {
				path := filepath.Join(dir, "mesh-"+enc+".msh")
				compareWithMeshio(t, py, path)
				m, _ := ReadFile(path)
				if ref == nil {
					ref = m
				} else if m.NumNodes() != ref.NumNodes() || len(m.Blocks) != len(ref.Blocks) {
					t.Errorf("%s: %d nodes, %d blocks; 22-ascii %d, %d", enc, m.NumNodes(), len(m.Blocks), ref.NumNodes(), len(ref.Blocks))
				}
			}
			if ref.Dim == 0 {
				t.Error("no elements")
			}
		})
	}
}
