// Package cgnstest makes the CGNS tests' files from Gmsh meshes with
// libcgns's own converters (Debian's cgns-convert), as a CGNS user's
// tools would: AFLR3 .ugrid files through aflr3_to_cgns (a section per
// kind, a boundary condition per surface), Patran neutral files through
// patran_to_cgns (the cells as one MIXED section, each named group of
// nodes as a section of the boundary faces within it). A test that needs
// them skips where libcgns or the converter is absent (internal/testreq:
// it fails instead under OP2_REQUIRE=cgns).
package cgnstest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	cg "github.com/goop2/op2/internal/cgns"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/gmsh"
)

// Need skips t unless libcgns loads and the converter tool (e.g.
// "aflr3_to_cgns") runs.
func Need(t testing.TB, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		// Absent (exec.ErrNotFound) skips; any other failure fails.
		testreq.Check(t, "cgns", fmt.Errorf("no %s (Debian: apt-get install cgns-convert): %w", tool, err), exec.ErrNotFound)
	}
	testreq.Check(t, "cgns", cg.Load(), cg.ErrUnavailable)
}

// FaceKey is a face's nodes, sorted, as text.
func FaceKey(nodes []int32) string {
	s := slices.Clone(nodes)
	slices.Sort(s)
	return fmt.Sprint(s)
}

// UGRID writes g's cells and boundary faces to dir/name.ugrid as an
// ASCII AFLR3 file (each face's surface ID its 2-D physical group's tag),
// converts it with aflr3_to_cgns -f, and returns the .cgns file.
func UGRID(t testing.TB, g *gmsh.Mesh, dir, name string) string {
	t.Helper()
	Need(t, "aflr3_to_cgns")
	ugrid, path := filepath.Join(dir, name+".ugrid"), filepath.Join(dir, name+".cgns")
	writeFile(t, ugrid, func(w *bufio.Writer) { writeUGRID(w, g) })
	convert(t, "aflr3_to_cgns", "-f", ugrid, path)
	return path
}

func writeUGRID(w *bufio.Writer, g *gmsh.Mesh) {
	surf := map[string]int32{} // face key → group tag
	for _, pg := range g.Physical {
		if pg.Dim != 2 {
			continue
		}
		for _, b := range g.GroupTag(2, pg.Tag) {
			nn := b.Type.NumNodes()
			for i := range b.Len() {
				surf[FaceKey(b.Nodes[nn*i:nn*i+nn])] = pg.Tag
			}
		}
	}
	blocks := map[gmsh.Type]gmsh.Block{}
	for _, b := range g.Blocks {
		blocks[b.Type] = b
	}
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
				if j > 0 {
					fmt.Fprint(w, " ")
				}
				fmt.Fprint(w, b.Nodes[nn*i+k]+1)
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
			fmt.Fprintln(w, surf[FaceKey(b.Nodes[nn*i:nn*i+nn])])
		}
	}
	conn(gmsh.Tetrahedron, []int{0, 1, 2, 3})
	conn(gmsh.Pyramid, []int{0, 3, 4, 1, 2}) // aflr3_to_cgns turns AFLR3's order into CGNS's (Gmsh's)
	conn(gmsh.Prism, []int{0, 1, 2, 3, 4, 5})
	conn(gmsh.Hexahedron, []int{0, 1, 2, 3, 4, 5, 6, 7})
}

// Patran writes g's cells (tetrahedra and prisms; another kind of cell
// fails t) and its 2-D groups, as named components of their nodes, to
// dir/name.pat as a Patran neutral file, converts it with
// patran_to_cgns, and returns the .cgns file.
func Patran(t testing.TB, g *gmsh.Mesh, dir, name string) string {
	t.Helper()
	Need(t, "patran_to_cgns")
	pat := filepath.Join(dir, name+".pat")
	writeFile(t, pat, func(w *bufio.Writer) {
		for i := range g.NumNodes() {
			fmt.Fprintf(w, " 1%8d%8d%8d\n%16.9E%16.9E%16.9E\n1G       6       0       0  000000\n", i+1, 0, 2, g.X[3*i], g.X[3*i+1], g.X[3*i+2])
		}
		id := 0
		for _, b := range g.Blocks {
			if b.Type.Dim() != 3 {
				continue
			}
			shape := map[gmsh.Type]int{gmsh.Tetrahedron: 5, gmsh.Prism: 7}[b.Type]
			if shape == 0 {
				t.Fatalf("no Patran shape for %v", b.Type)
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
	})
	path := filepath.Join(dir, name+".cgns")
	convert(t, "patran_to_cgns", pat, path)
	return path
}

// PatranText converts a Patran neutral file's text (its end line
// included) with patran_to_cgns, in a temporary folder, and returns the
// .cgns file.
func PatranText(t testing.TB, text string) string {
	t.Helper()
	Need(t, "patran_to_cgns")
	dir := t.TempDir()
	pat, path := filepath.Join(dir, "cells.pat"), filepath.Join(dir, "cells.cgns")
	writeFile(t, pat, func(w *bufio.Writer) { w.WriteString(text) })
	convert(t, "patran_to_cgns", pat, path)
	return path
}

// WithElementList copies the CGNS file at path to out and adds to its
// first zone a boundary condition name (BCTypeUserDefined) listing the
// elements ids.
func WithElementList(t testing.TB, path, out, name string, ids []int64) {
	t.Helper()
	CopyFile(t, path, out)
	f, err := cg.Open(out, cg.Modify)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.ZoneRead(1, 1); err != nil {
		t.Fatal(err)
	}
	const userDefined, elementList = 1, 7
	if _, err := f.BocoWrite(1, 1, name, userDefined, elementList, ids); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// CopyFile copies the file src to dst.
func CopyFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes path through write.
func writeFile(t testing.TB, path string, write func(w *bufio.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	write(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// convert runs a converter tool with args, failing t with its output.
func convert(t testing.TB, tool string, args ...string) {
	t.Helper()
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, out)
	}
}
