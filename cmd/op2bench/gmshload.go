package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/rss"
	"github.com/goop2/op2/mesh/unstructured"
)

// gmshLoadSection loads the Gmsh mesh in path with unstructured.Load, on
// one process or on each rank under mpirun, and prints per rank the
// seconds Load took and the process's peak resident memory (VmHWM) before
// and after it, and at the end of each phase of op2.Partition (within
// Load, after the read and the facets' derivation), then (rank 0) the
// declared sizes. Under MPI each rank streams the file and keeps its
// blocks; on one process Load reads the file whole.
func gmshLoadSection(out io.Writer, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	// Start MPI (under mpirun) before the first figure: its memory is
	// not the loader's.
	rank, ranks := op2.Rank(), op2.Ranks()
	before := rss.Peak()
	t0 := time.Now()
	m, err := unstructured.Load(path, unstructured.Options{})
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	peak := rss.Peak()
	mb := func(b int64) float64 { return float64(b) / (1 << 20) }
	fmt.Fprintf(out, "load %s (%.1f MB) rank %d of %d: %.2f s, peak RSS %.1f MB before Load, %.1f MB after (+%.1f MB); %d nodes, %d cells here\n",
		path, float64(fi.Size())/1e6, rank, ranks, secs, mb(before), mb(peak), mb(peak-before), m.Nodes.Size(), m.Cells.Size())
	if m.Partition != nil {
		var b strings.Builder
		for _, ph := range m.Partition.Phases {
			fmt.Fprintf(&b, ", %s %.2f s %.1f MB", ph.Name, ph.Seconds, mb(ph.MaxRSS))
		}
		fmt.Fprintf(out, "load rank %d of %d: peak RSS at the end of op2.Partition's phases%s\n", rank, ranks, b.String())
	}
	if rank == 0 {
		fmt.Fprintf(out, "load: %d nodes, %d %v\n", m.Nodes.GlobalSize(), m.Cells.GlobalSize(), m.Kind.Plural())
	}
	return op2.Finalize()
}
