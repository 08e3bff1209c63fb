package cgns_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/unstructured"
)

// int32s is the little-endian bytes of v.
func int32s(v ...int32) []byte {
	var b bytes.Buffer
	for _, x := range v {
		binary.Write(&b, binary.LittleEndian, x)
	}
	return b.Bytes()
}

// patch returns a copy of data with the only occurrence of old replaced
// by new; it fails t if old is not found exactly once.
func patch(t *testing.T, data, old, new []byte) []byte {
	t.Helper()
	if n := bytes.Count(data, old); n != 1 {
		t.Fatalf("the pattern %x is in the file %d times, want once", old, n)
	}
	return bytes.Replace(data, old, new, 1)
}

// convertedBox converts the box mesh (convert) and returns the mesh it
// came from, the .cgns file's bytes and its tetrahedra as Read gives them.
func convertedBox(t *testing.T) (g *gmsh.Mesh, good []byte, tets gmsh.Block) {
	t.Helper()
	path, g := convert(t, "box")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cgns.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return g, good, m.Cells()[0]
}

// TestReadMalformed: a .cgns aflr3_to_cgns wrote, truncated or with its
// data corrupted (a node number out of range, a zone claiming more
// vertices than the file holds, a section claiming more elements), and
// files that are not CGNS, give an error naming the file — and the node
// where it can — never a crash.
func TestReadMalformed(t *testing.T) {
	g, good, tets := convertedBox(t)
	nv, nt := int32(g.NumNodes()), int32(tets.Len())
	first := make([]int32, 4)
	for i, v := range tets.Nodes[:4] {
		first[i] = v + 1
	}
	bad := append([]int32{nv + 7}, first[1:]...)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data func() []byte
		want []string
	}{
		{"empty", func() []byte { return nil }, nil},
		{"truncated to 100 bytes", func() []byte { return good[:100] }, nil},
		{"truncated to half", func() []byte { return good[:len(good)/2] }, nil},
		{"truncated by 100 bytes", func() []byte { return good[:len(good)-100] }, nil},
		{"a Gmsh file", func() []byte {
			b, err := os.ReadFile(filepath.Join("testdata", "box.msh"))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}, nil},
		{"node out of range", func() []byte { return patch(t, good, int32s(first...), int32s(bad...)) },
			[]string{"/Base/Zone/TetElements", "element 1", "outside [1,"}},
		{"vertices beyond the file", func() []byte { return patch(t, good, int32s(nv, nt, 0), int32s(1<<30, nt, 0)) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".cgns")
			if err := os.WriteFile(p, tc.data(), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := cgns.Read(p)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, w := range append(tc.want, p) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := cgns.Read(filepath.Join(dir, "none.cgns")); err == nil || !os.IsNotExist(errorsUnwrapAll(err)) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestReadCorruptConnectivity overwrites node numbers of the box's
// tetrahedra in the file (values out of range, zero, negative, huge, or in
// range): Read gives an error naming the section and the element, or a
// mesh that passes gmsh.Mesh.Check — never a crash.
func TestReadCorruptConnectivity(t *testing.T) {
	g, good, tets := convertedBox(t)
	conn := make([]int32, len(tets.Nodes))
	for i, v := range tets.Nodes {
		conn[i] = v + 1
	}
	at := bytes.Index(good, int32s(conn...))
	if at < 0 || bytes.Count(good, int32s(conn[:16]...)) != 1 {
		t.Fatal("the connectivity is not stored once, contiguous, as 32-bit little-endian values")
	}
	rng := rand.New(rand.NewPCG(52, 2))
	nv := int32(g.NumNodes())
	values := []int32{0, -1, nv + 1, math.MaxInt32, math.MinInt32, 1, nv}
	dir := t.TempDir()
	for k := range 40 {
		data := bytes.Clone(good)
		i := rng.IntN(len(conn))
		v := values[k%len(values)]
		binary.LittleEndian.PutUint32(data[at+4*i:], uint32(v))
		p := filepath.Join(dir, fmt.Sprintf("corrupt%d.cgns", k))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := cgns.Read(p)
		switch {
		case v >= 1 && v <= nv:
			if err != nil {
				t.Errorf("node %d of element %d set to %d, in range: %v", i%4, i/4+1, v, err)
			} else if err := m.Check(); err != nil {
				t.Error(err)
			}
		case err == nil:
			t.Errorf("node %d of element %d set to %d: no error", i%4, i/4+1, v)
		default:
			want := fmt.Sprintf("/Base/Zone/TetElements: element %d (tetrahedron): node %d is %d, outside [1, %d]", i/4+1, i%4, v, nv)
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
				t.Errorf("error %q, want %q", err, want)
			}
		}
	}
}

// errorsUnwrapAll returns the innermost error of err's chain.
func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

// TestIsCGNS: the .cgns aflr3_to_cgns wrote (HDF5) and its ADF form
// (libcgns's hdf2adf) are CGNS, by content whatever their names, and
// both read and load alike; a .msh and an OP2 HDF5 mesh are not CGNS.
func TestIsCGNS(t *testing.T) {
	path, g := convert(t, "box")
	dir := t.TempDir()
	adf := filepath.Join(dir, "box-adf.mesh")
	if out, err := exec.Command("hdf2adf", path, adf).CombinedOutput(); err != nil {
		t.Fatalf("hdf2adf: %v\n%s", err, out)
	}
	op2h5 := filepath.Join(dir, "box.h5")
	if err := unstructured.WriteHDF5(op2h5, g); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{path, true}, {adf, true}, {filepath.Join("testdata", "box.msh"), false}, {op2h5, false},
	} {
		got, err := cgns.IsCGNS(tc.path)
		if err != nil || got != tc.want {
			t.Errorf("IsCGNS(%s) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
	h, err := cgns.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cgns.Read(adf)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, h, a)
	m, err := unstructured.Load(adf, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Cells.GlobalSize() != h.Cells()[0].Len() {
		t.Errorf("Load of the ADF file: %d cells, want %d", m.Cells.GlobalSize(), h.Cells()[0].Len())
	}
}
