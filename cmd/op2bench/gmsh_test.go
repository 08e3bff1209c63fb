package main

import (
	"bytes"
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
