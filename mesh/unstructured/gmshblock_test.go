package unstructured_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/unstructured"
)

// sparseTags writes the ASCII 2.2 mesh in path to dir with its nodes in
// the reverse order and tags 1000, 1007, 1014, ... (sparse, and not in the
// nodes' order), and returns the new file's path.
func sparseTags(t *testing.T, path, dir string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	newTag := map[string]string{}
	var out []string
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		switch lines[i] {
		case "$Nodes":
			n, _ := strconv.Atoi(lines[i+1])
			nodes := slices.Clone(lines[i+2 : i+2+n])
			slices.Reverse(nodes)
			for k, l := range nodes {
				f := strings.Fields(l)
				newTag[f[0]] = strconv.Itoa(1000 + 7*k)
				f[0] = newTag[f[0]]
				nodes[k] = strings.Join(f, " ")
			}
			out = append(append(out, lines[i+1]), nodes...)
			i += 1 + n
		case "$Elements":
			n, _ := strconv.Atoi(lines[i+1])
			out = append(out, lines[i+1])
			for k := range n {
				f := strings.Fields(lines[i+2+k])
				tv, _ := strconv.Atoi(f[1])
				nn := gmsh.Type(tv).NumNodes()
				for j := len(f) - nn; j < len(f); j++ {
					f[j] = newTag[f[j]]
				}
				out = append(out, strings.Join(f, " "))
			}
			i += 1 + n
		}
	}
	sparse := filepath.Join(dir, "sparse-"+filepath.Base(path))
	if err := os.WriteFile(sparse, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return sparse
}

// TestLoadStreamedOnRanks loads .msh files on 2, 3 and 4 MPI ranks, where
// each rank streams the file and keeps its blocks (gmsh.ReadFilePart):
// the summary equals one process's, which reads the file whole. The files:
// the fixtures in every encoding (each on one rank count, in turn), the
// mixed fixture of hexahedra and prisms, a
// mesh with sparse node tags not in the nodes' order, and Gmsh's prisms
// in MSH 2.2 (each element repeated once per group) where Gmsh's Python
// module is installed, these on every rank count.
func TestLoadStreamedOnRanks(t *testing.T) {
	const pathEnv, wantEnv = "UNSTRUCTURED_MESH", "UNSTRUCTURED_WANT"
	if mpitest.InRanks() {
		TestLoadOnRanks(t)
		return
	}
	dir := t.TempDir()
	type run struct {
		path  string
		ranks []int
	}
	var runs []run
	for i, name := range []string{"square-22-ascii", "square-22-binary", "square-41-ascii", "square-41-binary", "box-22-ascii", "box-22-binary", "box-41-ascii", "box-41-binary"} {
		runs = append(runs, run{filepath.Join(fixtures, name+".msh"), []int{2 + i%3}})
	}
	// Hexahedra and prisms in one mesh.
	runs = append(runs, run{filepath.Join(fixtures, "mixed-41-binary.msh"), []int{2, 3, 4}}, run{filepath.Join(fixtures, "mixed-22-ascii.msh"), []int{3}})
	runs = append(runs, run{sparseTags(t, filepath.Join(fixtures, "box-22-ascii.msh"), dir), []int{2, 3, 4}})
	// Each triangle in two groups that $PhysicalNames does not name.
	unnamed := filepath.Join(dir, "unnamed-groups.msh")
	if err := os.WriteFile(unnamed, []byte(unnamedGroups22), 0o644); err != nil {
		t.Fatal(err)
	}
	runs = append(runs, run{unnamed, []int{2}})
	// Gmsh's prisms last, in a subtest that skips without Gmsh.
	runs = append(runs, run{"prism-2.2", []int{2, 3, 4}})
	for _, r := range runs {
		t.Run(filepath.Base(r.path), func(t *testing.T) {
			if r.path == "prism-2.2" {
				r.path = gmshExtruded(t, "prism", "2.2", dir)
			}
			want := summaryOf(t, r.path)
			for _, ranks := range r.ranks {
				t.Run(strconv.Itoa(ranks), func(t *testing.T) {
					mpitest.Run(t, ranks, 2*time.Minute, pathEnv+"="+r.path, wantEnv+"="+want)
				})
			}
		})
	}
}

// TestLoadStreamedErrors: on 3 ranks, malformed .msh files give every rank
// an error naming the file and what is wrong, and no rank waits for the
// others: a truncated file, node tags not in $Nodes (dense and sparse
// tags), a sparse tag given twice, and a 2.2 file
// whose copies of an element in two groups do not follow one another.
func TestLoadStreamedErrors(t *testing.T) {
	const casesEnv = "UNSTRUCTURED_ERRORS"
	type errCase struct{ Path, Want string }
	if mpitest.InRanks() {
		var cases []errCase
		if err := json.Unmarshal([]byte(os.Getenv(casesEnv)), &cases); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			_, err := unstructured.Load(c.Path, unstructured.Options{})
			if err == nil || !strings.Contains(err.Error(), c.Want) || !strings.Contains(err.Error(), filepath.Base(c.Path)) {
				t.Errorf("%s: %v; want an error naming the file and saying %q", c.Path, err, c.Want)
			}
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	box := read(filepath.Join(fixtures, "box-22-ascii.msh"))
	sparse := read(sparseTags(t, filepath.Join(fixtures, "box-22-ascii.msh"), dir))
	// The last element's last node tag made one no node has.
	lastNode := func(s, tag string) string {
		end := strings.LastIndex(s, "\n$EndElements")
		sp := strings.LastIndex(s[:end], " ")
		return s[:sp+1] + tag + s[end:]
	}
	square := strings.Split(read(filepath.Join(fixtures, "square-22-ascii.msh")), "\n")
	// A third group of the triangles, its copies of the first triangle
	// at the end of $Elements.
	var apart []string
	for i := 0; i < len(square); i++ {
		l := square[i]
		switch l {
		case "$PhysicalNames":
			n, _ := strconv.Atoi(square[i+1])
			apart = append(append(append(apart, l, strconv.Itoa(n+1)), square[i+2:i+2+n]...), `2 99 "again"`)
			i += 1 + n
			continue
		case "$Elements":
			n, _ := strconv.Atoi(square[i+1])
			els := slices.Clone(square[i+2 : i+2+n])
			for _, e := range els {
				if f := strings.Fields(e); f[1] == "2" {
					f[0], f[3] = "100000", "99"
					els = append(els, strings.Join(f, " "))
					break
				}
			}
			apart = append(append(apart, l, strconv.Itoa(len(els))), els...)
			i += 1 + n
			continue
		}
		apart = append(apart, l)
	}
	dup := strings.Replace(sparse, "\n1007 ", "\n1000 ", 1)
	cases := []errCase{
		{write("cut.msh", box[:len(box)*2/3]), "truncated"},
		{write("missing.msh", lastNode(box, "46")), "node tag 46 is not in $Nodes"},
		{write("missing-sparse.msh", lastNode(sparse, "1001")), "node tag 1001 is not in $Nodes"},
		{write("twice.msh", dup), "node tag 1000 is given twice"},
		{write("apart.msh", strings.Join(apart, "\n")), "are not one after the other"},
	}
	for _, c := range cases[:len(cases)-1] {
		if _, err := unstructured.Load(c.Path, unstructured.Options{}); err == nil {
			t.Errorf("%s: one process reads it", c.Path)
		}
	}
	// One process finds the copies apart.
	if _, err := unstructured.Load(cases[len(cases)-1].Path, unstructured.Options{}); err != nil {
		t.Errorf("one process: %v", err)
	}
	js, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	mpitest.Run(t, 3, 2*time.Minute, casesEnv+"="+string(js))
}

// TestLoadFlatOnRanks: on one process and on 2 ranks, a 2-D mesh whose z
// varies is refused, every rank alike, naming the file, also when each
// rank's block is flat but the blocks are not in one plane; a plane
// z = 0.1 whose nodes Gmsh's OpenCASCADE writes at 0.1 and
// 0.09999999999999999 loads.
func TestLoadFlatOnRanks(t *testing.T) {
	const pathEnv, wantEnv = "OP2_TEST_FLAT_PATH", "OP2_TEST_FLAT_WANT"
	load := func(t *testing.T, path, want string) {
		_, err := unstructured.Load(path, unstructured.Options{})
		switch {
		case want == "" && err != nil:
			t.Errorf("rank %d: Load: %v", op2.Rank(), err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path)):
			t.Errorf("rank %d: Load: %v, want an error saying %q and naming %s", op2.Rank(), err, want, path)
		}
	}
	if mpitest.InRanks() {
		load(t, os.Getenv(pathEnv), os.Getenv(wantEnv))
		if err := op2.Finalize(); err != nil {
			t.Error(err)
		}
		return
	}
	const head = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 %s\n2 1 0 %s\n3 1 1 %s\n4 0 1 %s\n$EndNodes\n$Elements\n2\n1 2 2 1 1 1 2 3\n2 2 2 1 1 1 3 4\n$EndElements\n"
	const refused = "a 2-D mesh must lie in a plane z = constant"
	for _, c := range []struct {
		name string
		z    [4]string
		want string
	}{
		{"one-node-off", [4]string{"0", "0", "0", "1"}, refused},
		{"blocks-in-two-planes", [4]string{"0", "0", "1", "1"}, refused},
		{"rounding", [4]string{"0.1", "0.09999999999999999", "0.1", "0.10000000000000001"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.name+".msh")
			if err := os.WriteFile(path, []byte(fmt.Sprintf(head, c.z[0], c.z[1], c.z[2], c.z[3])), 0o644); err != nil {
				t.Fatal(err)
			}
			load(t, path, c.want)
			mpitest.Run(t, 2, 2*time.Minute, pathEnv+"="+path, wantEnv+"="+c.want, "OP2_MPI_TIMEOUT=30s")
		})
	}
}
