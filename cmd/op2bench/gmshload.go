package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/rss"
	"github.com/goop2/op2/mesh"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
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
	return nil
}

// gmshReadSection measures, in one process, the memory that reading a
// rank's part of the Gmsh mesh in path takes (of a CGNS file:
// cgnsReadSection's): the whole file read by
// gmsh.ReadFile (what Load did on every rank before it streamed the
// file), and, for each rank of 2 and 4, its blocks streamed by
// gmsh.ScanFile and gmsh.ReadFilePart (what Load does on each rank now).
// Each figure is the peak resident memory (VmHWM, reset before each read)
// above the resident memory before it, after a garbage collection.
func gmshReadSection(out io.Writer, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	mb := func(b int64) float64 { return float64(b) / (1 << 20) }
	measure := func(what string, read func() (any, error)) error {
		runtime.GC()
		debug.FreeOSMemory()
		now, _ := rss.Status()
		if !rss.ResetPeak() {
			return fmt.Errorf("cannot reset the peak resident memory (/proc/self/clear_refs)")
		}
		t0 := time.Now()
		v, err := read()
		if err != nil {
			return err
		}
		secs := time.Since(t0).Seconds()
		_, peak := rss.Status()
		runtime.KeepAlive(v)
		fmt.Fprintf(out, "read %s (%.1f MB), %s: %.2f s, peak RSS +%.1f MB\n", filepath.Base(path), float64(fi.Size())/1e6, what, secs, mb(peak-now))
		return nil
	}
	if isCGNS, _ := cgns.IsCGNS(path); isCGNS {
		return cgnsReadSection(path, measure)
	}
	if err := measure("whole (gmsh.ReadFile)", func() (any, error) { return gmsh.ReadFile(path) }); err != nil {
		return err
	}
	for _, ranks := range []int{2, 4} {
		for rank := range ranks {
			err := measure(fmt.Sprintf("rank %d of %d streamed (gmsh.ScanFile, gmsh.ReadFilePart)", rank, ranks), func() (any, error) {
				scan, err := gmsh.ScanFile(path)
				if err != nil {
					return nil, err
				}
				block := func(n int64) gmsh.Range {
					s, c := mesh.Block(int(n), rank, ranks)
					return gmsh.Range{Start: int64(s), Count: int64(c)}
				}
				keep := gmsh.Keep{Nodes: block(scan.NumNodes), Elements: map[gmsh.Type]gmsh.Range{}}
				for t, n := range scan.Counts {
					keep.Elements[t] = block(n)
				}
				return gmsh.ReadFilePart(path, keep)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
