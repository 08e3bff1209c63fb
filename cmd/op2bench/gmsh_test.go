package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestGmshSection runs -gmsh on the committed Gmsh fixtures of package
// mesh/gmsh: a box of tetrahedra in both 4.1 encodings and a square of
// triangles, and checks the counts it prints, Derive's and Load's (the 84
// boundary facets are the file's 84 boundary triangles); never how fast. A mesh of two kinds
// of cells and a round count of 0 are errors.
func TestGmshSection(t *testing.T) {
	const dir = "../../mesh/gmsh/testdata/"
	const box = "45 nodes, 101 cells (tetrahedron), 244 facets (244 triangle), 84 boundary facets, 160 interior; the file's other elements: 84 triangle"
	const boxLoad = "45 nodes, 101 cells, facets: 160 interior (triangle) 84 boundary (triangle)"
	for _, tc := range []struct {
		file       string
		want, load string
	}{
		{"box-41-binary.msh", box, boxLoad},
		{"box-41-ascii.msh", box, boxLoad},
		{"square-22-ascii.msh", "30 nodes, 42 cells (triangle), 71 facets (71 line), 16 boundary facets, 55 interior; the file's other elements: 16 line",
			"30 nodes, 42 cells, facets: 55 interior (line) 16 boundary (line)"},
	} {
		var out bytes.Buffer
		if err := gmshSection(&out, dir+tc.file, 2); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		for _, want := range []string{tc.want, tc.load, "unstructured.Load", "median:  load ", "total volume (of |volume|) 1, 0 cells negatively oriented",
			"round 1: read ", "round 2: read ", "median:  read ", "derive ", "cell geometry ", "facet geometry ", "read+derive ", "total "} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.file, want, out.String())
			}
		}
	}
	var out bytes.Buffer
	if err := gmshSection(&out, dir+"mixed-41-binary.msh", 1); err == nil || !strings.Contains(err.Error(), "want cells of one kind") {
		t.Errorf("mixed mesh: error %v, want one naming the kinds", err)
	}
	if err := gmshSection(&out, dir+"box-41-binary.msh", 0); err == nil {
		t.Error("0 rounds: no error")
	}
}

// TestGmshLoadAndReadSections runs -gmsh-load (on one process) and
// -gmsh-read on the committed box and checks what they print: the
// declared sizes, the peaks named per rank; never the figures. A missing
// file is an error.
func TestGmshLoadAndReadSections(t *testing.T) {
	const box = "../../mesh/gmsh/testdata/box-41-binary.msh"
	var out bytes.Buffer
	if err := gmshLoadSection(&out, box); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rank 0 of 1: ", "MB before Load", "45 nodes, 101 cells here", "load: 45 nodes, 101 tetrahedra"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-gmsh-load: output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := gmshReadSection(&out, box); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"whole (gmsh.ReadFile): ", "rank 1 of 2 streamed", "rank 3 of 4 streamed", "peak RSS +"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-gmsh-read: output lacks %q:\n%s", want, out.String())
		}
	}
	for _, f := range []func(io.Writer, string) error{gmshLoadSection, gmshReadSection} {
		if err := f(&out, "absent.msh"); err == nil || !strings.Contains(err.Error(), "absent.msh") {
			t.Errorf("absent file: error %v", err)
		}
	}
}
