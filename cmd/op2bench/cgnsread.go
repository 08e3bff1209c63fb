package main

import (
	"fmt"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/mesh"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
)

// cgnsReadSection is gmshReadSection for the CGNS file at path: the
// whole file read by cgns.Read (what Load does on one process, and did
// on every rank before it read by blocks), and, for each rank of 2 and 4,
// its blocks read by cgns.Scan and cgns.Layout.ReadPart (what Load does
// on each rank now), each measured by measure.
func cgnsReadSection(path string, measure func(string, func() (any, error)) error) error {
	if err := measure("whole (cgns.Read)", func() (any, error) { return cgns.Read(path) }); err != nil {
		return err
	}
	for _, ranks := range []int{2, 4} {
		for rank := range ranks {
			err := measure(fmt.Sprintf("rank %d of %d by blocks (cgns.Scan, cgns.Layout.ReadPart)", rank, ranks), func() (any, error) {
				l, err := cgns.Scan(path)
				if err != nil {
					return nil, err
				}
				block := func(n int64) gmsh.Range {
					s, c := mesh.Block(int(n), rank, ranks)
					return gmsh.Range{Start: int64(s), Count: int64(c)}
				}
				keep := gmsh.Keep{Nodes: block(l.Part.NumNodes), Elements: map[gmsh.Type]gmsh.Range{}}
				for t, n := range l.Part.Counts {
					keep.Elements[t] = block(n)
				}
				return l.ReadPart(collective.Single{}, keep) // one process: the part's groups alone, but what a rank reads and holds
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
