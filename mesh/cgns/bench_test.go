package cgns_test

import (
	"os"
	"testing"

	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// benchMesh is the .msh BenchmarkRead converts: $CGNS_BENCH_MSH, else
// testdata/box.msh.
func benchMesh() string {
	if p := os.Getenv("CGNS_BENCH_MSH"); p != "" {
		return p
	}
	return "testdata/box.msh"
}

// BenchmarkRead reads a mesh from the .cgns aflr3_to_cgns makes of it
// ("cgns") and from the .msh ("msh"), reporting cells per second.
func BenchmarkRead(b *testing.B) {
	path, g := convertFile(b, benchMesh())
	cells := 0
	for _, c := range g.Cells() {
		cells += c.Len()
	}
	for _, bc := range []struct {
		name string
		read func() error
	}{
		{"cgns", func() error { _, err := cgns.Read(path); return err }},
		{"msh", func() error { _, err := gmsh.ReadFile(benchMesh()); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if err := bc.read(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cells)*float64(b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}
