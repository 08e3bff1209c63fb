package plan

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// longPath is a path of n edges: edge e joins nodes e and e+1, and both
// ends are incremented.
func longPath(n int) Input {
	m := make([]int32, 2*n)
	for e := range n {
		m[2*e], m[2*e+1] = int32(e), int32(e+1)
	}
	return Input{
		Core: n, Owned: n, Exec: n,
		Args: []Arg{
			{Ind: 0, Map: m, Arity: 2, Idx: 0, Modifies: true, ElemBytes: 8},
			{Ind: 0, Map: m, Arity: 2, Idx: 1, Modifies: true, ElemBytes: 8},
		},
		NInds:      1,
		IndSetSize: []int{n + 1},
		BlockSize:  4096,
	}
}

// TestOwnerPath: on a 2000-edge path split between two owners, node 1000
// is modified by both pieces, so edges 999 and 1000 are separators; on a
// 6-edge path the interior runs are too short to keep and everything is a
// separator.
func TestOwnerPath(t *testing.T) {
	in := longPath(2000)
	in.Owners = 2
	p := mustBuild(t, in)
	got := [][]int32{p.Offset, p.NElems, p.BlkCol, p.BlkMap, p.OwnerOffset}
	want := [][]int32{{0, 999, 1001}, {999, 2, 999}, {0, 1, 0}, {0, 2, 1}, {0, 1, 2, 2, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Offset, NElems, BlkCol, BlkMap, OwnerOffset = %v, want %v", got, want)
	}
	if p.NColors != 2 || p.Owners != 2 {
		t.Errorf("NColors %d, Owners %d", p.NColors, p.Owners)
	}
	// One owner: every element is interior, one colour, one block.
	in.Owners = 1
	p = mustBuild(t, in)
	if p.NBlocks != 1 || p.NColors != 1 || !reflect.DeepEqual(p.OwnerOffset, []int32{0, 1}) {
		t.Errorf("one owner: %d blocks, %d colours, OwnerOffset %v", p.NBlocks, p.NColors, p.OwnerOffset)
	}
	short := pathInput(64)
	short.Owners = 2
	p = mustBuild(t, short)
	if p.NBlocks != 1 || p.BlkCol[0] != 0 || !reflect.DeepEqual(p.OwnerOffset, []int32{0, 0, 1}) {
		t.Errorf("short path: %d blocks, colours %v, OwnerOffset %v", p.NBlocks, p.BlkCol, p.OwnerOffset)
	}
}

// TestOwnerRandomMeshes checks the owner-compute layout on random inputs
// (with MPI sections) for several owner counts.
func TestOwnerRandomMeshes(t *testing.T) {
	for _, n := range []int{0, 1, 17, 1000, 30000} {
		for _, bs := range []int{1, 7, 256, 0} {
			for _, owners := range []int{1, 2, 3, 8} {
				t.Run(fmt.Sprintf("n%d_bs%d_owners%d", n, bs, owners), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(n), uint64(bs*16+owners)))
					for trial := range 2 {
						in := randomInput(r, n, bs)
						in.Owners = owners
						p, err := Build(in)
						if err != nil {
							t.Fatalf("trial %d: Build: %v", trial, err)
						}
						if err := p.Check(in); err != nil {
							t.Fatalf("trial %d: Check: %v", trial, err)
						}
					}
				})
			}
		}
	}
}

// TestOwnerGrid: on a grid numbered row by row, two owners leave only the
// edges around the middle row as separators.
func TestOwnerGrid(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("full-size mesh skipped under -short or -race")
	}
	en, ec, nn, nc := airfoilEdges()
	in := airfoilInput(en, ec, nn, nc)
	in.BlockSize = 8192
	for _, owners := range []int{2, 4} {
		in.Owners = owners
		p := mustBuild(t, in)
		sep := 0
		for c := 1; c < p.NColors; c++ {
			for _, b := range p.BlkMap[p.ColOffset[c]:p.ColOffset[c+1]] {
				sep += int(p.NElems[b])
			}
		}
		t.Logf("%d owners: %d blocks, %d colours, %d separator edges", owners, p.NBlocks, p.NColors, sep)
		if sep > owners*3*gridNX {
			t.Errorf("%d owners: %d separator edges, expected about %d per boundary", owners, sep, 2*gridNX)
		}
	}
}

// TestOwnerCheckDetectsConflict: blocks of two pieces in one colour that
// modify the same target are caught.
func TestOwnerCheckDetectsConflict(t *testing.T) {
	in := longPath(2000)
	in.Owners = 2
	p := clonePlan(mustBuild(t, in))
	p.BlkCol = []int32{0, 0, 0}
	p.BlkMap = []int32{0, 1, 2}
	p.NColBlk = []int32{3}
	p.ColOffset = []int32{0, 3}
	p.NColors, p.NColorsCore, p.NColorsOwned = 1, 1, 1
	p.OwnerOffset = []int32{0, 2, 3}
	if err := p.Check(in); err == nil {
		t.Error("Check accepted two pieces modifying node 999 in one colour")
	} else {
		t.Log(err)
	}
}
