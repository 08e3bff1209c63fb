package topology

import (
	"math"
	"slices"
	"testing"

	"github.com/goop2/op2/mesh/gmsh"
)

// TestGmshPyramids derives a mesh Gmsh made (testdata/make.py): two unit
// boxes, hexahedra in [0,1]×[0,1]², tetrahedra in [1,2]×[0,1]² and the
// pyramids Gmsh puts between the hexahedra's quadrilaterals and the
// tetrahedra. Gmsh's pyramids must be positively oriented as the package
// defines it, and each kind's facets must fit the others': a facet on
// the boundary of one kind's cells is either on the boxes' boundary,
// pointing out, or the facet of one cell of another kind, seen the other
// way round.
func TestGmshPyramids(t *testing.T) {
	m, err := gmsh.ReadFile("testdata/pyramids.msh")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[gmsh.Type]Kind{gmsh.Tetrahedron: Tetrahedron, gmsh.Hexahedron: Hexahedron, gmsh.Pyramid: Pyramid}
	type side struct {
		kind             Kind
		normal, centroid []float64
	}
	sides := map[[4]int32][]side{}
	volume := 0.0
	count := map[Kind]int{}
	var pyramids *Topology
	for _, b := range m.Cells() {
		k, ok := kinds[b.Type]
		if !ok {
			t.Fatalf("Gmsh made %d %vs", b.Len(), b.Type)
		}
		count[k] += b.Len()
		if k == Pyramid {
			for c := range b.Len() {
				p := b.Nodes[5*c : 5*c+5]
				if o := orient(m.X, []int32{p[0], p[1], p[3], p[4]}); o <= 0 {
					t.Errorf("Gmsh's pyramid %d, nodes %v: (n1-n0)×(n3-n0)·(n4-n0) = %g", c, p, o)
				}
			}
		}
		vol, _, err := CellGeometry(k, b.Nodes, m.X, 3)
		if err != nil {
			t.Fatal(err)
		}
		for c, v := range vol {
			if v <= 0 {
				t.Fatalf("%v %d has volume %g", k, c, v)
			}
			volume += v
		}
		top, err := Derive(k, b.Nodes, m.NumNodes())
		if err != nil {
			t.Fatal(err)
		}
		checkTopology(t, top, b.Nodes, m.X, 3)
		if k == Pyramid {
			pyramids = top
		}
		for s := range top.Facets {
			fs := &top.Facets[s]
			normals, centroids, err := fs.Geometry(m.X, 3)
			if err != nil {
				t.Fatal(err)
			}
			fn := fs.Kind.Nodes()
			for _, f := range fs.Boundary {
				key := [4]int32{-1, -1, -1, -1}
				copy(key[:], fs.Nodes[int(f)*fn:(int(f)+1)*fn])
				slices.Sort(key[:fn])
				sides[key] = append(sides[key], side{k, normals[3*f : 3*f+3], centroids[3*f : 3*f+3]})
			}
		}
	}
	if count[Pyramid] == 0 || count[Tetrahedron] == 0 || count[Hexahedron] == 0 {
		t.Fatalf("Gmsh made %v: want pyramids, tetrahedra and hexahedra", count)
	}
	if math.Abs(volume-2) > 1e-14 {
		t.Errorf("the cells' volumes sum to %.17g, want 2", volume)
	}
	shared := map[[2]Kind]int{}
	for key, s := range sides {
		switch len(s) {
		case 1:
			// On a face of the boxes [0,2]×[0,1]², pointing out: its
			// centroid on the face, its normal along the face's.
			on := false
			for i, bounds := range [3][2]float64{{0, 2}, {0, 1}, {0, 1}} {
				for j, b := range bounds {
					out := float64(2*j - 1)
					if math.Abs(s[0].centroid[i]-b) < 1e-15 && s[0].normal[i]*out > 0 &&
						math.Abs(s[0].normal[(i+1)%3]) < 1e-15 && math.Abs(s[0].normal[(i+2)%3]) < 1e-15 {
						on = true
					}
				}
			}
			if !on {
				t.Errorf("facet %v of the %vs is on no other cell and not on the boxes' boundary pointing out (centroid %v, normal %v)", key, s[0].kind, s[0].centroid, s[0].normal)
			}
		case 2:
			if s[0].kind == s[1].kind {
				t.Errorf("facet %v is a boundary facet of two %vs", key, s[0].kind)
			}
			for i := range 3 {
				if math.Abs(s[0].normal[i]+s[1].normal[i]) > 1e-15 {
					t.Errorf("facet %v: the %v sees area vector %v, the %v %v, not opposite", key, s[0].kind, s[0].normal, s[1].kind, s[1].normal)
				}
			}
			k := [2]Kind{s[0].kind, s[1].kind}
			if k[0] > k[1] {
				k[0], k[1] = k[1], k[0]
			}
			shared[k]++
		default:
			t.Errorf("facet %v is on %d cells", key, len(s))
		}
	}
	// Every pyramid's base on a hexahedron, its triangles on tetrahedra.
	if shared[[2]Kind{Hexahedron, Pyramid}] != count[Pyramid] || shared[[2]Kind{Tetrahedron, Pyramid}] != 4*count[Pyramid] || shared[[2]Kind{Tetrahedron, Hexahedron}] != 0 {
		t.Errorf("facets shared by kinds %v, for %d pyramids", shared, count[Pyramid])
	}

	// Gmsh's quadrangles on the boxes' shared face x = 1, in Gmsh's
	// node order, are the pyramids' bases.
	var quads []int32
	for _, b := range m.Blocks {
		if b.Type != gmsh.Quadrangle {
			continue
		}
		for q := range b.Len() {
			v := b.Nodes[4*q : 4*q+4]
			if !slices.ContainsFunc(v, func(i int32) bool { return m.X[3*i] != 1 }) {
				quads = append(quads, v...)
			}
		}
	}
	bases := &pyramids.Facets[1]
	if bases.Kind != Quadrilateral || pyramids.Facets[0].Kind != Triangle {
		t.Fatalf("the pyramids' facet sets are %vs and %vs", pyramids.Facets[0].Kind, bases.Kind)
	}
	got, err := bases.Find(quads)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Sort(got); !slices.Equal(got, bases.Boundary) || len(got) != count[Pyramid] {
		t.Errorf("Find gave %v for Gmsh's quadrangles at x = 1; want the %d bases %v", got, count[Pyramid], bases.Boundary)
	}
}
