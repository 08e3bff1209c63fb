package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/cgns"
)

// TestCGNSReadSection runs -gmsh-read on mesh/cgns's converted box and
// checks what it prints: the whole read and each rank's blocks named,
// never the figures.
func TestCGNSReadSection(t *testing.T) {
	testreq.Check(t, "cgns", cgns.Load(), cgns.ErrUnavailable)
	var out bytes.Buffer
	if err := gmshReadSection(&out, "../../mesh/cgns/testdata/box.cgns"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"whole (cgns.Read): ", "rank 1 of 2 by blocks", "rank 3 of 4 by blocks", "peak RSS +"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-gmsh-read: output lacks %q:\n%s", want, out.String())
		}
	}
}
