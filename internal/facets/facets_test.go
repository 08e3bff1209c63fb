package facets_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/dist/disttest"
	"github.com/goop2/op2/internal/facets"
	"github.com/goop2/op2/mesh/topology"
)

// cubeCells returns the cells of kind k on an n×n (×n) grid of nodes
// numbered at random (seed): quadrilaterals, triangles (two per square),
// hexahedra, prisms (two per cube), tetrahedra (six per cube) or
// pyramids (six per cube, one on each face, their apex a node added at
// the cube's centre), and the node count.
func cubeCells(k topology.Kind, n int, seed uint64) ([]int32, int) {
	m := n + 1
	d := k.Dim()
	count := m * m
	if d == 3 {
		count *= m
	}
	grid := count
	if k == topology.Pyramid {
		count += n * n * n
	}
	perm := rand.New(rand.NewPCG(seed, 3)).Perm(count)
	v := func(i, j, l int) int32 { return int32(perm[i+m*(j+m*l)]) }
	centre := func(i, j, l int) int32 { return int32(perm[grid+i+n*(j+n*l)]) }
	var c []int32
	layers := 1
	if d == 3 {
		layers = n
	}
	for l := range layers {
		for j := range n {
			for i := range n {
				q := [8]int32{v(i, j, l), v(i+1, j, l), v(i+1, j+1, l), v(i, j+1, l)}
				if d == 3 {
					q[4], q[5], q[6], q[7] = v(i, j, l+1), v(i+1, j, l+1), v(i+1, j+1, l+1), v(i, j+1, l+1)
				}
				switch k {
				case topology.Quadrilateral:
					c = append(c, q[:4]...)
				case topology.Triangle:
					c = append(c, q[0], q[1], q[2], q[0], q[2], q[3])
				case topology.Hexahedron:
					c = append(c, q[:]...)
				case topology.Prism:
					c = append(c, q[0], q[1], q[2], q[4], q[5], q[6], q[0], q[2], q[3], q[4], q[6], q[7])
				case topology.Pyramid:
					for _, f := range [6][4]int{{0, 1, 2, 3}, {4, 7, 6, 5}, {0, 4, 5, 1}, {1, 5, 6, 2}, {2, 6, 7, 3}, {3, 7, 4, 0}} {
						c = append(c, q[f[0]], q[f[1]], q[f[2]], q[f[3]], centre(i, j, l))
					}
				case topology.Tetrahedron:
					for _, p := range [][3]int{{1, 2, 6}, {1, 5, 6}, {3, 2, 6}, {3, 7, 6}, {4, 5, 6}, {4, 7, 6}} {
						c = append(c, q[0], q[p[0]], q[p[1]], q[p[2]])
					}
				}
			}
		}
	}
	return c, count
}

// TestFacets derives the facets of meshes of every kind on 1 to 4
// simulated ranks, each holding a block of the cells, and checks that the
// ranks' blocks, one after another, are topology.Derive's facets of the
// whole mesh, interior and boundary apart, in the same order.
func TestFacets(t *testing.T) {
	kinds := []topology.Kind{topology.Triangle, topology.Quadrilateral, topology.Tetrahedron, topology.Hexahedron, topology.Prism, topology.Pyramid}
	for _, k := range kinds {
		for ranks := 1; ranks <= 4; ranks++ {
			t.Run(fmt.Sprintf("%v/%d-ranks", k, ranks), func(t *testing.T) {
				cells, nodes := cubeCells(k, 3, uint64(ranks))
				whole, err := topology.Derive(k, cells, nodes)
				if err != nil {
					t.Fatal(err)
				}
				sameAsWhole(t, whole, derivePlain(t, k, cells, nodes, ranks))
			})
		}
	}
}

// sameAsWhole checks that the ranks' blocks (got), one after another, are
// the facets of the whole mesh, interior and boundary apart, in the same
// order.
func sameAsWhole(t *testing.T, whole *topology.Topology, got [][]facets.Block) {
	t.Helper()
	ranks := len(got)
	for s, fs := range whole.Facets {
		var nodesI, cellsI, nodesB, cellsB []int32
		var localI, localB []int8
		fn := fs.Kind.Nodes()
		for f := range fs.Len() {
			if fs.Cells[2*f+1] < 0 {
				nodesB = append(nodesB, fs.Nodes[f*fn:(f+1)*fn]...)
				cellsB = append(cellsB, fs.Cells[2*f])
				localB = append(localB, fs.Local[2*f])
				continue
			}
			nodesI = append(nodesI, fs.Nodes[f*fn:(f+1)*fn]...)
			cellsI = append(cellsI, fs.Cells[2*f:2*f+2]...)
			localI = append(localI, fs.Local[2*f:2*f+2]...)
		}
		var gn, gc, gbn, gbc []int32
		var gl, gbl []int8
		for r := range ranks {
			b := got[r][s]
			if b.Kind != fs.Kind || b.First != len(gc)/2 || b.BFirst != len(gbc) {
				t.Fatalf("rank %d, set %d: kind %v, first %d/%d; want %v, %d/%d", r, s, b.Kind, b.First, b.BFirst, fs.Kind, len(gc)/2, len(gbc))
			}
			gn, gc, gl = append(gn, b.Nodes...), append(gc, b.Cells...), append(gl, b.Local...)
			gbn, gbc, gbl = append(gbn, b.BNodes...), append(gbc, b.BCells...), append(gbl, b.BLocal...)
		}
		if !slices.Equal(gn, nodesI) || !slices.Equal(gc, cellsI) || !slices.Equal(gl, localI) {
			t.Errorf("set %d: the interior facets differ from topology.Derive's", s)
		}
		if !slices.Equal(gbn, nodesB) || !slices.Equal(gbc, cellsB) || !slices.Equal(gbl, localB) {
			t.Errorf("set %d: the boundary facets differ from topology.Derive's", s)
		}
		if b := got[0][s]; b.InteriorTotal != len(cellsI)/2 || b.BoundaryTotal != len(cellsB) {
			t.Errorf("set %d: totals %d and %d, want %d and %d", s, b.InteriorTotal, b.BoundaryTotal, len(cellsI)/2, len(cellsB))
		}
	}
}

// TestFacetsErrors: a facet of three cells, on whichever rank finds it,
// and a node out of range are every rank's error.
func TestFacetsErrors(t *testing.T) {
	cells := []int32{0, 1, 2, 1, 0, 3, 0, 1, 4}
	for _, c := range []struct {
		cells []int32
		nodes int
		want  string
	}{{cells, 5, "shared by 3 cells"}, {cells, 4, "outside [0,4)"}} {
		errs := disttest.Run(2, 0, func(p *disttest.Proc) error {
			start, count := collective.Block(3, p.Rank(), 2)
			_, err := facets.Derive(p, topology.Triangle, c.cells[3*start:3*(start+count)], start, c.nodes)
			return err
		})
		for r, err := range errs {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("rank %d: %v, want an error saying %q", r, err, c.want)
			}
		}
	}
}

// TestFacetsTagged tags every boundary facet and every third interior
// facet of meshes of each kind, every fourth of them with a second tag
// too, and one with the same tag twice, each rank listing a block of the
// tagged facets with their nodes rotated, on 1 to 4 simulated ranks:
// every facet derived carries its tags in increasing order, the others
// none; a listed facet of no cell is every rank's error.
func TestFacetsTagged(t *testing.T) {
	tagOf := func(key []int32) int32 { return 1 + (key[0]+2*key[len(key)-1])%5 }
	for _, k := range []topology.Kind{topology.Triangle, topology.Quadrilateral, topology.Tetrahedron, topology.Hexahedron, topology.Prism} {
		for ranks := 1; ranks <= 4; ranks++ {
			t.Run(fmt.Sprintf("%v/%d-ranks", k, ranks), func(t *testing.T) {
				cells, nodes := cubeCells(k, 3, uint64(10+ranks))
				whole, err := topology.Derive(k, cells, nodes)
				if err != nil {
					t.Fatal(err)
				}
				// The listed facets, per kind; want: tag by sorted nodes.
				want := map[string][]int32{}
				keyOf := func(f []int32) string {
					s := slices.Clone(f)
					slices.Sort(s)
					return fmt.Sprint(s)
				}
				var list []facets.Tagged
				for _, fs := range whole.Facets {
					tf := facets.Tagged{Kind: fs.Kind}
					fn := fs.Kind.Nodes()
					for f := range fs.Len() {
						if fs.Cells[2*f+1] >= 0 && f%3 != 0 {
							continue
						}
						nd := slices.Clone(fs.Nodes[f*fn : (f+1)*fn])
						tag := tagOf(nd)
						want[keyOf(nd)] = []int32{tag}
						nd = append(nd[1:], nd[0]) // another start
						tf.Nodes = append(tf.Nodes, nd...)
						tf.Tags = append(tf.Tags, tag)
						if f%4 == 0 {
							want[keyOf(nd)] = []int32{tag, 100}
							tf.Nodes = append(tf.Nodes, nd...)
							tf.Tags = append(tf.Tags, 100)
						}
						if f == 1 {
							tf.Nodes = append(tf.Nodes, nd...)
							tf.Tags = append(tf.Tags, tag)
						}
					}
					list = append(list, tf)
				}
				nn := k.Nodes()
				n := len(cells) / nn
				got := onRanks(t, ranks, func(p *disttest.Proc) ([]facets.Block, error) {
					start, count := collective.Block(n, p.Rank(), ranks)
					var mine []facets.Tagged
					for _, tf := range list {
						fn := tf.Kind.Nodes()
						s, c := collective.Block(len(tf.Tags), p.Rank(), ranks)
						mine = append(mine, facets.Tagged{Kind: tf.Kind, Nodes: tf.Nodes[s*fn : (s+c)*fn], Tags: tf.Tags[s : s+c]})
					}
					return facets.DeriveTagged(p, k, cells[start*nn:(start+count)*nn], start, nodes, mine, nil)
				})
				seen := 0
				for r := range ranks {
					for _, b := range got[r] {
						fn := b.Kind.Nodes()
						if b.TagDim != 2 {
							t.Errorf("rank %d: %v: TagDim %d, want 2", r, b.Kind, b.TagDim)
						}
						check := func(nd, tags []int32, what string) {
							for f := range len(nd) / fn {
								w := want[keyOf(nd[f*fn:(f+1)*fn])]
								got := slices.DeleteFunc(slices.Clone(tags[f*b.TagDim:(f+1)*b.TagDim]), func(v int32) bool { return v == 0 })
								if !slices.Equal(got, w) {
									t.Errorf("rank %d: %s %v %v: tags %v, want %v", r, what, b.Kind, nd[f*fn:(f+1)*fn], got, w)
								}
								if w != nil {
									seen++
								}
							}
						}
						check(b.Nodes, b.Tags, "interior")
						check(b.BNodes, b.BTags, "boundary")
					}
				}
				if seen != len(want) {
					t.Errorf("%d facets tagged, want %d", seen, len(want))
				}
			})
		}
	}
	// A listed triangle no cell has.
	cells := []int32{0, 1, 2, 1, 3, 2}
	errs := disttest.Run(2, 0, func(p *disttest.Proc) error {
		start, count := collective.Block(2, p.Rank(), 2)
		var tf []facets.Tagged
		if p.Rank() == 1 {
			tf = []facets.Tagged{{Kind: topology.Line, Nodes: []int32{0, 3}, Tags: []int32{7}}}
		}
		_, err := facets.DeriveTagged(p, topology.Triangle, cells[3*start:3*(start+count)], start, 4, tf, nil)
		return err
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "an element of group 7, a line with nodes [0 3] (numbered from 0 in the nodes' order), is not a face of any cell") {
			t.Errorf("rank %d: %v; want the untagged facet named", r, err)
		}
	}
}

// noErrors fails the test for every rank's error.
// onRanks runs derive on ranks simulated ranks and returns each rank's
// facet blocks.
func onRanks(t *testing.T, ranks int, derive func(p *disttest.Proc) ([]facets.Block, error)) [][]facets.Block {
	t.Helper()
	var mu sync.Mutex
	got := make([][]facets.Block, ranks)
	noErrors(t, disttest.Run(ranks, 0, func(p *disttest.Proc) error {
		fb, err := derive(p)
		mu.Lock()
		got[p.Rank()] = fb
		mu.Unlock()
		return err
	}))
	return got
}

// derivePlain derives the facets of cells of kind k on ranks simulated
// ranks, each given its block of the cells.
func derivePlain(t *testing.T, k topology.Kind, cells []int32, nodes, ranks int) [][]facets.Block {
	t.Helper()
	nn := k.Nodes()
	n := len(cells) / nn
	return onRanks(t, ranks, func(p *disttest.Proc) ([]facets.Block, error) {
		start, count := collective.Block(n, p.Rank(), ranks)
		return facets.Derive(p, k, cells[start*nn:(start+count)*nn], start, nodes)
	})
}

func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestFacetsMixed derives the facets of meshes of several kinds on 1 to
// 4 simulated ranks, each holding a block of the cells (which straddles
// the kinds' blocks): a grid of cubes with the first layer hexahedra
// and the others two prisms each (the layers' faces do not match: they
// are boundary facets), a square of triangles and quadrilaterals
// sharing edges, and an empty block of prisms before tetrahedra. The
// ranks' blocks are topology.DeriveMixed's facets of the whole mesh.
func TestFacetsMixed(t *testing.T) {
	type mixed struct {
		name   string
		blocks []topology.Cells
		nodes  int
	}
	var cases []mixed
	// Hexahedra and prisms on the same numbered grid: cubeCells numbers
	// the nodes the same way for the same seed and n.
	hex, nodes := cubeCells(topology.Hexahedron, 3, 7)
	pri, _ := cubeCells(topology.Prism, 3, 7)
	cases = append(cases, mixed{"hexahedra and prisms", []topology.Cells{{Kind: topology.Hexahedron, Nodes: hex[:8*9]}, {Kind: topology.Prism, Nodes: pri[12*9:]}}, nodes})
	quad, nodes2 := cubeCells(topology.Quadrilateral, 4, 5)
	tri, _ := cubeCells(topology.Triangle, 4, 5)
	cases = append(cases, mixed{"quadrilaterals and triangles", []topology.Cells{{Kind: topology.Triangle, Nodes: tri[:6*5]}, {Kind: topology.Quadrilateral, Nodes: quad[4*5:]}}, nodes2})
	tet, nodes3 := cubeCells(topology.Tetrahedron, 2, 3)
	cases = append(cases, mixed{"prisms and tetrahedra", []topology.Cells{{Kind: topology.Prism, Nodes: pri[:0]}, {Kind: topology.Tetrahedron, Nodes: tet}}, nodes3})
	for _, c := range cases {
		whole, err := topology.DeriveMixed(c.blocks, c.nodes)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range c.blocks {
			n += b.Len()
		}
		for ranks := 1; ranks <= 4; ranks++ {
			t.Run(fmt.Sprintf("%s/%d-ranks", c.name, ranks), func(t *testing.T) {
				got := onRanks(t, ranks, func(p *disttest.Proc) ([]facets.Block, error) {
					start, count := collective.Block(n, p.Rank(), ranks)
					// This rank's part of each kind's block.
					var mine []topology.Cells
					first := 0
					for _, b := range c.blocks {
						lo, hi := max(start, first), min(start+count, first+b.Len())
						nn := b.Kind.Nodes()
						part := topology.Cells{Kind: b.Kind}
						if lo < hi {
							part.Nodes = b.Nodes[(lo-first)*nn : (hi-first)*nn]
						}
						mine = append(mine, part)
						first += b.Len()
					}
					return facets.DeriveMixed(p, mine, start, c.nodes, nil, nil)
				})
				sameAsWhole(t, whole, got)
			})
		}
	}
}
