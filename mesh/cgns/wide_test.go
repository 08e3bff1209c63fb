package cgns_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/cgnstest"
	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/gmshtest"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// widen is a Python (h5py) script that rewrites a CGNS file as a CGNS
// library built with 64-bit cgsize_t writes it: every array of cgsize_t
// values (a zone's sizes, element ranges and connectivity, point ranges and
// lists, MIXED offsets) becomes I8; the rest stays as it was.
const widen = `
import sys, h5py, numpy as np
wide = {b"Zone_t", b"IndexRange_t", b"IndexArray_t"}
wide_names = {"ElementConnectivity", "ElementStartOffset", "ParentElements", "PointList", "ElementList"}
f = h5py.File(sys.argv[1], "r+")
def visit(name, obj):
    if not isinstance(obj, h5py.Group) or " data" not in obj or obj.attrs.get("type") != b"I4":
        return
    if obj.attrs.get("label") not in wide and name.rsplit("/", 1)[-1] not in wide_names:
        return
    data = obj[" data"][...].astype(np.int64)
    del obj[" data"]
    obj.create_dataset(" data", data=data)
    obj.attrs.modify("type", np.bytes_("I8"))
    print(name)
f.visititems(visit)
f.close()
`

// version4 sets the file's CGNSLibraryVersion to 4.2, as a CGNS 4 library
// writes it.
const version4 = `
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r+")
f["CGNSLibraryVersion"][" data"][...] = np.float32(4.2)
f.close()
`

// TestReadWideAndNewerFiles: files whose cgsize_t arrays are 64-bit (as a
// CGNS library built with 64-bit cgsize_t writes them; Debian's is 32-bit)
// read as the 32-bit file they came from, whole and by parts, for sections
// of one kind (aflr3_to_cgns) and MIXED sections (patran_to_cgns); a file
// a CGNS 4 library wrote is an error naming the file, not a crash.
func TestReadWideAndNewerFiles(t *testing.T) {
	need(t)
	py := gmshtest.Need(t, "h5py", "numpy")
	run := func(script, path string) string {
		t.Helper()
		out, err := exec.Command(py, "-c", script, path).CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return string(out)
	}
	layerAflr, _ := convert(t, "layer")
	g, err := gmsh.ReadFile(filepath.Join("testdata", "layer.msh"))
	if err != nil {
		t.Fatal(err)
	}
	layerPatran := cgnstest.Patran(t, g, t.TempDir(), "layer-mixed")
	for _, path := range []string{layerAflr, layerPatran} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			narrow, err := cgns.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			wide := strings.TrimSuffix(path, ".cgns") + "-wide.cgns"
			cgnstest.CopyFile(t, path, wide)
			if changed := run(widen, wide); !strings.Contains(changed, "ElementConnectivity") || !strings.Contains(changed, "Base/Zone\n") {
				t.Fatalf("the script widened only:\n%s", changed)
			}
			m, err := cgns.Read(wide)
			if err != nil {
				t.Fatal(err)
			}
			sameMesh(t, m, narrow)
			l, err := cgns.Scan(wide)
			if err != nil {
				t.Fatal(err)
			}
			keep := gmsh.Keep{Nodes: gmsh.Range{Count: int64(m.NumNodes())}, Elements: map[gmsh.Type]gmsh.Range{}}
			for _, b := range m.Blocks {
				keep.Elements[b.Type] = gmsh.Range{Count: int64(b.Len())}
			}
			p, err := l.ReadPart(collective.Single{}, keep)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.X, m.X) {
				t.Errorf("ReadPart's coordinates differ from Read's")
			}
			for _, b := range m.Blocks {
				i := slices.IndexFunc(p.Blocks, func(pb gmsh.PartBlock) bool { return pb.Type == b.Type })
				if i < 0 || p.Blocks[i].Len() != b.Len() {
					t.Fatalf("ReadPart: no %d %v elements", b.Len(), b.Type)
				}
				for j, v := range b.Nodes {
					if p.Blocks[i].Nodes[j] != int64(v)+1 {
						t.Fatalf("ReadPart: %v node %d is %d, want %d", b.Type, j, p.Blocks[i].Nodes[j], v+1)
					}
				}
			}
		})
	}
	newer := filepath.Join(t.TempDir(), "v4.cgns")
	cgnstest.CopyFile(t, layerAflr, newer)
	run(version4, newer)
	for _, read := range []func(string) error{
		func(p string) error { _, err := cgns.Read(p); return err },
		func(p string) error { _, err := cgns.Scan(p); return err },
	} {
		err := read(newer)
		if err == nil || !strings.Contains(err.Error(), newer) || !strings.Contains(err.Error(), "OP2_CGNS_LIBRARY") {
			t.Errorf("a CGNS 4 file: %v, want an error naming it and how to load a newer library", err)
		}
		t.Log(err)
	}
}

// sameMesh fails t unless m and want have the same nodes, blocks (kind,
// nodes, entities) and groups.
func sameMesh(t *testing.T, m, want *gmsh.Mesh) {
	t.Helper()
	if !slices.Equal(m.X, want.X) || m.Dim != want.Dim || len(m.Blocks) != len(want.Blocks) {
		t.Fatalf("%d coordinates, dim %d, %d blocks; want %d, %d, %d", len(m.X), m.Dim, len(m.Blocks), len(want.X), want.Dim, len(want.Blocks))
	}
	for i, b := range m.Blocks {
		w := want.Blocks[i]
		if b.Type != w.Type || !slices.Equal(b.Nodes, w.Nodes) || !slices.Equal(b.Entity, w.Entity) || !slices.Equal(b.Physical, w.Physical) {
			t.Errorf("block %d (%v) differs from the 32-bit file's (%v)", i, b.Type, w.Type)
		}
	}
	if !slices.Equal(m.Physical, want.Physical) {
		t.Errorf("groups %v, want %v", m.Physical, want.Physical)
	}
}
