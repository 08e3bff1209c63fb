package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/topology"
	"github.com/goop2/op2/mesh/unstructured"
)

// gmshPhases are the phases gmshSection times, in order.
var gmshPhases = []string{"read", "derive", "cell geometry", "facet geometry"}

// gmshSection times, rounds times each, what a code does to get a Gmsh
// mesh's connectivity: reading the file (gmsh.ReadFile), deriving its
// facets, facet→cell with local numbers, cell→facet, cell→cell and
// boundary facets (topology.Derive), the cells' volumes and centroids
// (CellGeometry) and the facets' area vectors and centroids
// (Facets.Geometry). The mesh's cells must be of one kind. It prints each
// round's phases, the medians and the counts (nodes, cells, facets,
// boundary facets), and, as a check, the cells' total volume. The garbage
// of a round is collected before the next: each phase's time includes
// only the collections it causes. It then times, rounds times, what a
// GoOP2 code calls to get all that declared (unstructured.Load: the read,
// the facets, RCM renumbering, the sets, maps and tags), and prints the
// facets Load declared.
func gmshSection(out io.Writer, path string, rounds int) error {
	if rounds < 1 {
		return fmt.Errorf("-gmsh-rounds %d: want at least 1", rounds)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Gmsh mesh %s (%.1f MB), GOMAXPROCS %d: read (gmsh.ReadFile), derive (topology.Derive), cell geometry (CellGeometry), facet geometry (Facets.Geometry), seconds (MB allocated)\n",
		path, float64(fi.Size())/1e6, runtime.GOMAXPROCS(0))
	np := len(gmshPhases)
	times := make([][]float64, rounds) // times[round][phase]
	var counts, check string
	for r := range rounds {
		runtime.GC()
		d := make([]float64, np)
		alloc := make([]uint64, np)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		last := ms.TotalAlloc
		phase := 0
		t0 := time.Now()
		mark := func() {
			d[phase] = time.Since(t0).Seconds()
			runtime.ReadMemStats(&ms)
			alloc[phase] = ms.TotalAlloc - last
			last = ms.TotalAlloc
			phase++
			t0 = time.Now()
		}
		m, err := gmsh.ReadFile(path)
		if err != nil {
			return err
		}
		mark()
		cells := m.Cells()
		if len(cells) != 1 {
			kinds := make([]string, len(cells))
			for i, b := range cells {
				kinds[i] = fmt.Sprintf("%d %v", b.Len(), b.Type)
			}
			return fmt.Errorf("%s: %s: want cells of one kind", path, strings.Join(kinds, ", "))
		}
		k, ok := unstructured.KindOf(cells[0].Type)
		if !ok {
			return fmt.Errorf("%s: package topology does not derive cells of type %v", path, cells[0].Type)
		}
		top, err := topology.Derive(k, cells[0].Nodes, m.NumNodes())
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		mark()
		x := m.Coords(m.Dim)
		vol, _, err := topology.CellGeometry(k, cells[0].Nodes, x, m.Dim)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		mark()
		for i := range top.Facets {
			if _, _, err := top.Facets[i].Geometry(x, m.Dim); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		mark()
		times[r] = d
		var b strings.Builder
		for i, name := range gmshPhases {
			fmt.Fprintf(&b, "%s %.3f (%.0f)  ", name, d[i], float64(alloc[i])/1e6)
		}
		fmt.Fprintf(out, "  round %d: %sread+derive %.3f  total %.3f\n", r+1, b.String(), d[0]+d[1], sum(d))
		if r == 0 {
			counts, check = gmshCounts(m, k, top, vol)
		}
	}
	var b strings.Builder
	col := make([]float64, rounds)
	for i, name := range gmshPhases {
		for r := range col {
			col[r] = times[r][i]
		}
		fmt.Fprintf(&b, "%s %.3f  ", name, median(col))
	}
	rd, tot := make([]float64, rounds), make([]float64, rounds)
	for r, d := range times {
		rd[r], tot[r] = d[0]+d[1], sum(d)
	}
	fmt.Fprintf(out, "  median:  %sread+derive %.3f  total %.3f\n", b.String(), median(rd), median(tot))
	fmt.Fprintf(out, "  %s\n  %s\n", counts, check)

	fmt.Fprintf(out, "unstructured.Load (read, facets, RCM renumbering, sets, maps, tags declared), seconds:\n")
	load := make([]float64, rounds)
	for r := range rounds {
		runtime.GC()
		t0 := time.Now()
		um, err := unstructured.Load(path, unstructured.Options{})
		if err != nil {
			return err
		}
		load[r] = time.Since(t0).Seconds()
		fmt.Fprintf(out, "  round %d: load %.3f\n", r+1, load[r])
		if r == 0 {
			counts = fmt.Sprintf("%d nodes, %d cells, facets:", um.Nodes.Size(), um.Cells.Size())
			for _, f := range um.Interior {
				counts += fmt.Sprintf(" %d interior (%v)", f.Set.Size(), f.Kind)
			}
			for _, f := range um.Boundary {
				counts += fmt.Sprintf(" %d boundary (%v)", f.Set.Size(), f.Kind)
			}
		}
	}
	fmt.Fprintf(out, "  median:  load %.3f\n  %s\n", median(load), counts)
	return nil
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// gmshCounts describes the mesh m whose cells of kind k Derive gave top
// and CellGeometry vol: its nodes, cells and facets, and the file's
// lower-dimensional elements; and the sum of the cells' |volume| with how
// many are negatively oriented.
func gmshCounts(m *gmsh.Mesh, k topology.Kind, top *topology.Topology, vol []float64) (counts, check string) {
	facets, boundary := 0, 0
	var kinds []string
	for _, f := range top.Facets {
		facets += f.Len()
		boundary += len(f.Boundary)
		kinds = append(kinds, fmt.Sprintf("%d %v", f.Len(), f.Kind))
	}
	var others []string
	for _, b := range m.Blocks {
		if b.Type.Dim() < m.Dim {
			others = append(others, fmt.Sprintf("%d %v", b.Len(), b.Type))
		}
	}
	if len(others) == 0 {
		others = []string{"none"}
	}
	counts = fmt.Sprintf("%d nodes, %d cells (%v), %d facets (%s), %d boundary facets, %d interior; the file's other elements: %s",
		m.NumNodes(), top.Cells, k, facets, strings.Join(kinds, ", "), boundary, facets-boundary, strings.Join(others, ", "))
	total, negative := 0.0, 0
	for _, v := range vol {
		total += math.Abs(v)
		if v < 0 {
			negative++
		}
	}
	check = fmt.Sprintf("total volume (of |volume|) %.12g, %d cells negatively oriented", total, negative)
	return counts, check
}
