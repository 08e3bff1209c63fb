package plan

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// pathInput is a 6-edge path: edge e joins nodes e and e+1, and both ends
// are incremented (one dataset of 7 nodes, 8 bytes each).
func pathInput(bs int) Input {
	m := []int32{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6}
	return Input{
		Core: 6, Owned: 6, Exec: 6,
		Args: []Arg{
			{Ind: 0, Map: m, Arity: 2, Idx: 0, Modifies: true, ElemBytes: 8},
			{Ind: 0, Map: m, Arity: 2, Idx: 1, Modifies: true, ElemBytes: 8},
			{Ind: -1, ElemBytes: 8},
		},
		NInds:      1,
		IndSetSize: []int{7},
		BlockSize:  bs,
	}
}

func mustBuild(t testing.TB, in Input) *Plan {
	t.Helper()
	p, err := Build(in)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := p.Check(in); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return p
}

func TestPathExact(t *testing.T) {
	p := mustBuild(t, pathInput(3))
	want := &Plan{
		BlockSize: 3, NBlocks: 2, NBlocksCore: 2, NBlocksOwned: 2,
		Offset:   []int32{0, 3},
		NElems:   []int32{3, 3},
		IndMap:   [][]int32{{0, 1, 2, 3, 3, 4, 5, 6}},
		IndOffs:  [][]int32{{0, 4}},
		IndSizes: [][]int32{{4, 4}},
		LocMap:   [][]int32{{0, 1, 2, 0, 1, 2}, {1, 2, 3, 1, 2, 3}, nil},
		ThrCol:   []int32{0, 1, 0, 0, 1, 0},
		NThrCol:  []int32{2, 2},
		BlkCol:   []int32{0, 1},
		NColors:  2, NColorsCore: 2, NColorsOwned: 2,
		NColBlk:   []int32{1, 1},
		ColOffset: []int32{0, 1, 2},
		BlkMap:    []int32{0, 1},
		NShared:   32,
		// 8 staged nodes read and written back at 8 bytes, plus 12
		// LocMap entries at 4 bytes.
		Transfer: 8*8*2 + 12*4,
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("plan mismatch\n got %+v\nwant %+v", p, want)
	}
}

func TestSectionsWithoutConflicts(t *testing.T) {
	tests := []struct {
		core, owned, exec, bs int
		nelems                []int32
		blkCol                []int32
		nCore, nOwned, n      int
	}{
		{4, 6, 9, 3, []int32{3, 1, 2, 3}, []int32{0, 0, 1, 2}, 1, 2, 3},
		{0, 0, 5, 2, []int32{2, 2, 1}, []int32{0, 0, 0}, 0, 0, 1},
		{5, 5, 5, 2, []int32{2, 2, 1}, []int32{0, 0, 0}, 1, 1, 1},
		{0, 4, 4, 4, []int32{4}, []int32{0}, 0, 1, 1},
		{3, 3, 7, 10, []int32{3, 4}, []int32{0, 1}, 1, 1, 2},
		{0, 0, 0, 4, []int32{}, []int32{}, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d_%d_%d_bs%d", tc.core, tc.owned, tc.exec, tc.bs), func(t *testing.T) {
			m := make([]int32, tc.exec)
			in := Input{
				Core: tc.core, Owned: tc.owned, Exec: tc.exec, BlockSize: tc.bs,
				Args:  []Arg{{Ind: 0, Map: m, Arity: 1, Idx: 0, ElemBytes: 4}},
				NInds: 1, IndSetSize: []int{1},
			}
			p := mustBuild(t, in)
			if !slices.Equal(p.NElems, tc.nelems) || !slices.Equal(p.BlkCol, tc.blkCol) {
				t.Errorf("NElems %v BlkCol %v, want %v %v", p.NElems, p.BlkCol, tc.nelems, tc.blkCol)
			}
			if p.NColorsCore != tc.nCore || p.NColorsOwned != tc.nOwned || p.NColors != tc.n {
				t.Errorf("colour sections %d %d %d, want %d %d %d",
					p.NColorsCore, p.NColorsOwned, p.NColors, tc.nCore, tc.nOwned, tc.n)
			}
			for e, c := range p.ThrCol {
				if c != 0 {
					t.Fatalf("element %d has thread colour %d without modifying args", e, c)
				}
			}
			if len(p.ColOffset) != p.NColors+1 {
				t.Errorf("ColOffset %v for %d colours", p.ColOffset, p.NColors)
			}
		})
	}
}

// TestManyThreadColours needs several passes of 32 colours inside a block.
func TestManyThreadColours(t *testing.T) {
	for _, n := range []int{31, 32, 33, 64, 65, 70, 100, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			in := Input{
				Core: n, Owned: n, Exec: n, BlockSize: 1024,
				Args:  []Arg{{Ind: 0, Map: make([]int32, n), Arity: 1, Idx: 0, Modifies: true, ElemBytes: 8}},
				NInds: 1, IndSetSize: []int{3},
			}
			p := mustBuild(t, in)
			if p.NBlocks != 1 || p.NThrCol[0] != int32(n) || p.NColors != 1 {
				t.Fatalf("NBlocks %d NThrCol %v NColors %d, want 1 [%d] 1", p.NBlocks, p.NThrCol, p.NColors, n)
			}
			for e, c := range p.ThrCol {
				if c != int32(e) {
					t.Fatalf("ThrCol[%d] = %d, want %d", e, c, e)
				}
			}
		})
	}
}

// TestManyBlockColours needs several passes of 32 colours for blocks.
func TestManyBlockColours(t *testing.T) {
	for _, n := range []int{32, 33, 64, 65, 100, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := make([]int32, 2*n)
			for e := range n {
				m[2*e+1] = int32(1 + e) // second column private, first shared
			}
			in := Input{
				Core: n, Owned: n, Exec: n, BlockSize: 1,
				Args: []Arg{
					{Ind: 0, Map: m, Arity: 2, Idx: -1, Modifies: true, ElemBytes: 24},
					{Ind: 1, Map: m, Arity: 2, Idx: 1, ElemBytes: 4},
				},
				NInds: 2, IndSetSize: []int{n + 1, n + 1},
			}
			p := mustBuild(t, in)
			if p.NColors != n || p.NColBlk[n-1] != 1 {
				t.Fatalf("NColors %d, want %d", p.NColors, n)
			}
			for b, c := range p.BlkCol {
				if c != int32(b) {
					t.Fatalf("BlkCol[%d] = %d, want %d", b, c, b)
				}
			}
			if p.NShared != 48+16 {
				t.Errorf("NShared %d, want 64", p.NShared)
			}
		})
	}
}

// TestManyColoursPerSection puts >64 conflicting blocks in each section.
func TestManyColoursPerSection(t *testing.T) {
	n := 3 * 70
	in := Input{
		Core: 70, Owned: 140, Exec: n, BlockSize: 1,
		Args:  []Arg{{Ind: 0, Map: make([]int32, n), Arity: 1, Idx: 0, Modifies: true, ElemBytes: 4}},
		NInds: 1, IndSetSize: []int{1},
	}
	p := mustBuild(t, in)
	if p.NColorsCore != 70 || p.NColorsOwned != 140 || p.NColors != 210 {
		t.Fatalf("colour sections %d %d %d, want 70 140 210", p.NColorsCore, p.NColorsOwned, p.NColors)
	}
}

// randomInput builds a random loop over n elements.
func randomInput(r *rand.Rand, n, bs int) Input {
	in := Input{Exec: n, BlockSize: bs}
	switch r.IntN(3) {
	case 0:
		in.Core, in.Owned = n, n
	case 1:
		in.Core = r.IntN(n + 1)
		in.Owned = in.Core + r.IntN(n-in.Core+1)
	default:
		in.Owned = r.IntN(n + 1)
		in.Core = r.IntN(in.Owned + 1)
	}
	in.NInds = 1 + r.IntN(4)
	// A pool of maps; some datasets share a map.
	type mp struct {
		m      []int32
		arity  int
		target int
	}
	var maps []mp
	newMap := func(target int) mp {
		ar := 1 + r.IntN(8)
		rows := n + r.IntN(3) // tables may have rows past Exec
		m := make([]int32, rows*ar)
		local := r.IntN(2) == 0
		spread := 1 + r.IntN(8)
		for i := range m {
			if local {
				c := i/ar*target/max(rows, 1) + r.IntN(spread) - spread/2
				m[i] = int32(min(max(c, 0), target-1))
			} else {
				m[i] = int32(r.IntN(target))
			}
		}
		return mp{m, ar, target}
	}
	in.IndSetSize = make([]int, in.NInds)
	dsMap := make([]mp, in.NInds)
	for d := range in.NInds {
		if len(maps) > 0 && r.IntN(3) == 0 {
			dsMap[d] = maps[r.IntN(len(maps))]
		} else {
			target := 1 + r.IntN(max(1, n/(1+r.IntN(4))))
			if r.IntN(5) == 0 {
				target = 1 + r.IntN(3) // heavy conflicts
			}
			dsMap[d] = newMap(target)
			maps = append(maps, dsMap[d])
		}
		in.IndSetSize[d] = dsMap[d].target
	}
	nargs := 1 + r.IntN(7)
	for range nargs {
		if r.IntN(5) == 0 {
			in.Args = append(in.Args, Arg{Ind: -1, ElemBytes: 8})
			continue
		}
		d := r.IntN(in.NInds)
		m := dsMap[d]
		in.Args = append(in.Args, Arg{
			Ind: d, Map: m.m, Arity: m.arity, Idx: r.IntN(m.arity+1) - 1,
			Modifies: r.IntN(2) == 0, ElemBytes: 4 * (1 + r.IntN(6)),
		})
	}
	return in
}

func TestRandomMeshes(t *testing.T) {
	sizes := []int{0, 1, 17, 1000, 100000}
	blockSizes := []int{1, 7, 64, 256, 1024, 0}
	trials := 3
	if testing.Short() || raceEnabled {
		trials = 1
	}
	for _, n := range sizes {
		for _, bs := range blockSizes {
			t.Run(fmt.Sprintf("n%d_bs%d", n, bs), func(t *testing.T) {
				if n >= 100000 && bs == 1 && (testing.Short() || raceEnabled) {
					t.Skip("slow under -short or -race")
				}
				r := rand.New(rand.NewPCG(uint64(n), uint64(bs)))
				for trial := range trials {
					in := randomInput(r, n, bs)
					p, err := Build(in)
					if err != nil {
						t.Fatalf("trial %d: Build: %v", trial, err)
					}
					if err := p.Check(in); err != nil {
						t.Fatalf("trial %d: Check: %v", trial, err)
					}
					if bs == 0 && (p.BlockSize < minAdaptive || p.BlockSize > maxAdaptive || p.BlockSize%32 != 0) {
						t.Fatalf("adaptive block size %d", p.BlockSize)
					}
				}
			})
		}
	}
}

func TestDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 3 {
		in := randomInput(r, 1<<16, 0)
		a, b := mustBuild(t, in), mustBuild(t, in)
		if !reflect.DeepEqual(a, b) {
			t.Fatal("two builds of one input differ")
		}
	}
}

// TestSharedStorage: datasets reached through the same columns share
// their lists, arguments on the same column share LocMap.
func TestSharedStorage(t *testing.T) {
	en, ec, nn, nc := airfoilEdges()
	n := 20000
	in := airfoilInput(en[:2*n], ec[:2*n], nn, nc)
	p := mustBuild(t, in)
	if &p.IndMap[1][0] != &p.IndMap[2][0] || &p.LocMap[2][0] != &p.LocMap[4][0] {
		t.Error("datasets 1 and 2 should share lists and local maps")
	}
	if &p.LocMap[0][0] == &p.LocMap[1][0] {
		t.Error("different columns share a local map")
	}
	if p.BlockSize != 256 {
		t.Errorf("adaptive block size %d, want 256", p.BlockSize)
	}
	// The same arguments in another order still plan correctly.
	in.Args = []Arg{in.Args[5], in.Args[0], in.Args[3], in.Args[4], in.Args[2], in.Args[1]}
	mustBuild(t, in)
}

func TestAdaptiveBlockSize(t *testing.T) {
	m := make([]int32, 8*10)
	tests := []struct {
		args []Arg
		want int
	}{
		{nil, 1024},
		{[]Arg{{Ind: -1, ElemBytes: 64}}, 1024},
		{[]Arg{{Ind: 0, Map: m, Arity: 1, Idx: 0, ElemBytes: 8}}, 1024},                                                     // 24576/8 = 3072
		{[]Arg{{Ind: 0, Map: m, Arity: 2, Idx: -1, ElemBytes: 32}}, 384},                                                    // 24576/64
		{[]Arg{{Ind: 0, Map: m, Arity: 4, Idx: -1, ElemBytes: 32}, {Ind: 0, Map: m, Arity: 4, Idx: 2, ElemBytes: 32}}, 256}, // 192 -> 256
		{[]Arg{{Ind: 0, Map: m, Arity: 8, Idx: -1, ElemBytes: 100}}, 256},                                                   // 30 -> 256
		{[]Arg{{Ind: 0, Map: m, Arity: 2, Idx: 0, ElemBytes: 24}, {Ind: 0, Map: m, Arity: 2, Idx: 1, ElemBytes: 24}}, 512},  // 24576/48
	}
	for i, tc := range tests {
		in := Input{Core: 10, Owned: 10, Exec: 10, Args: tc.args, NInds: 1, IndSetSize: []int{1}}
		p := mustBuild(t, in)
		if p.BlockSize != tc.want {
			t.Errorf("case %d: block size %d, want %d", i, p.BlockSize, tc.want)
		}
	}
}

// TestConflictGroups: one dat incremented through two different maps must
// be coloured as one array.
func TestConflictGroups(t *testing.T) {
	const n = 40
	a := make([]int32, n)
	b := make([]int32, n)
	for e := range n {
		a[e] = int32(e % 5)
		b[e] = int32((e + 1) % 5)
	}
	base := Input{
		Core: n, Owned: n, Exec: n, BlockSize: 8,
		Args: []Arg{
			{Ind: 0, Map: a, Arity: 1, Idx: 0, Modifies: true, ElemBytes: 8},
			{Ind: 1, Map: b, Arity: 1, Idx: 0, Modifies: true, ElemBytes: 8},
		},
		NInds: 2, IndSetSize: []int{5, 5},
	}
	separate := mustBuild(t, base)
	grouped := base
	grouped.Conflict = []int{9, 9}
	p := mustBuild(t, grouped)
	// Elements e and e+4 touch target (e+1)%5 through different maps.
	if err := separate.Check(grouped); err == nil {
		t.Error("plan coloured per dataset passes the check for a shared group")
	}
	if p.NThrCol[0] <= separate.NThrCol[0] {
		t.Errorf("grouped plan uses %d thread colours, separate %d", p.NThrCol[0], separate.NThrCol[0])
	}
	bad := base
	bad.IndSetSize = []int{5, 6}
	bad.Args[1].Map = []int32{}
	bad.Conflict = []int{1, 1}
	if _, err := Build(bad); err == nil || !strings.Contains(err.Error(), "conflict group") {
		t.Errorf("mismatched group sizes: err = %v", err)
	}
	// A random stress of the global-mask path.
	r := rand.New(rand.NewPCG(3, 4))
	for _, nn := range []int{1000, 100000} {
		in := randomInput(r, nn, 0)
		in.Conflict = make([]int, in.NInds)
		for d := range in.Conflict {
			in.Conflict[d] = 0
			in.IndSetSize[d] = 0
		}
		// Make every map target the same set so all can share a group.
		target := 1 + nn/3
		for i := range in.Args {
			if in.Args[i].Ind >= 0 {
				in.IndSetSize[in.Args[i].Ind] = target
				for k := range in.Args[i].Map {
					in.Args[i].Map[k] %= int32(target)
				}
			}
		}
		for d := range in.IndSetSize {
			if in.IndSetSize[d] == 0 {
				in.IndSetSize[d] = target
			}
		}
		mustBuild(t, in)
	}
}

func TestBuildRejects(t *testing.T) {
	good := func() Input { in := pathInput(3); return in }
	tests := []struct {
		name   string
		mutate func(*Input)
		want   string
	}{
		{"map entry", func(in *Input) {
			m := slices.Clone(in.Args[1].Map)
			m[7] = 7
			in.Args[1].Map = m
		}, "arg 1: map entry for element 3, column 1 is 7"},
		{"negative map entry", func(in *Input) {
			m := slices.Clone(in.Args[0].Map)
			m[0] = -1
			in.Args[0].Map = m
			in.Args[1].Map = m
		}, "arg 0: map entry for element 0, column 0 is -1"},
		{"idx", func(in *Input) { in.Args[0].Idx = 2 }, "arg 0: map index 2"},
		{"idx below -1", func(in *Input) { in.Args[1].Idx = -2 }, "arg 1: map index -2"},
		{"arity", func(in *Input) { in.Args[1].Arity = 0 }, "arg 1: map arity 0"},
		{"short map", func(in *Input) { in.Args[1].Map = in.Args[1].Map[:11] }, "arg 1: map table has 11 entries"},
		{"ind", func(in *Input) { in.Args[2].Ind = 1 }, "arg 2: indirect dataset index 1"},
		{"sections", func(in *Input) { in.Core = 5; in.Owned = 4 }, "sections out of order"},
		{"negative core", func(in *Input) { in.Core = -1 }, "sections out of order"},
		{"owned past exec", func(in *Input) { in.Owned = 7 }, "sections out of order"},
		{"block size", func(in *Input) { in.BlockSize = -3 }, "negative block size"},
		{"set sizes", func(in *Input) { in.IndSetSize = nil }, "IndSetSize has 0 entries"},
		{"elem bytes", func(in *Input) { in.Args[0].ElemBytes = -8 }, "arg 0: negative element size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := good()
			tc.mutate(&in)
			p, err := Build(in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build error %v, want one containing %q", err, tc.want)
			}
			if p != nil {
				t.Error("Build returned a plan with an error")
			}
			if err := (&Plan{}).Check(in); err == nil {
				t.Error("Check accepted invalid input")
			}
		})
	}
	// The pooled work arrays must be clean after a failed build.
	mustBuild(t, good())
}

// clonePlan deep-copies a plan so tests can corrupt it.
func clonePlan(p *Plan) *Plan {
	q := *p
	cl := func(s [][]int32) [][]int32 {
		out := make([][]int32, len(s))
		for i := range s {
			out[i] = slices.Clone(s[i])
		}
		return out
	}
	q.Offset, q.NElems = slices.Clone(p.Offset), slices.Clone(p.NElems)
	q.IndMap, q.IndOffs, q.IndSizes, q.LocMap = cl(p.IndMap), cl(p.IndOffs), cl(p.IndSizes), cl(p.LocMap)
	q.ThrCol, q.NThrCol, q.BlkCol = slices.Clone(p.ThrCol), slices.Clone(p.NThrCol), slices.Clone(p.BlkCol)
	q.NColBlk, q.ColOffset, q.BlkMap = slices.Clone(p.NColBlk), slices.Clone(p.ColOffset), slices.Clone(p.BlkMap)
	return &q
}

func TestCheckDetectsCorruption(t *testing.T) {
	in := pathInput(3)
	base := mustBuild(t, in)
	r := rand.New(rand.NewPCG(11, 12))
	const bigN, target = 5000, 700
	m := make([]int32, 3*bigN)
	for i := range m {
		m[i] = int32(r.IntN(target))
	}
	big := Input{
		Core: 2000, Owned: 4000, Exec: bigN, BlockSize: 64,
		Args: []Arg{
			{Ind: 0, Map: m, Arity: 3, Idx: -1, Modifies: true, ElemBytes: 8},
			{Ind: 0, Map: m, Arity: 3, Idx: 1, ElemBytes: 8},
			{Ind: 1, Map: m, Arity: 3, Idx: 2, ElemBytes: 16},
			{Ind: -1, ElemBytes: 4},
		},
		NInds: 2, IndSetSize: []int{target, target},
	}
	bigPlan := mustBuild(t, big)
	if bigPlan.NColors < 2 {
		t.Fatalf("random plan has %d colours; the test needs conflicts", bigPlan.NColors)
	}
	tests := []struct {
		name   string
		onBig  bool
		mutate func(p *Plan)
		want   string
	}{
		{"swap blkmap across colours", false, func(p *Plan) { p.BlkMap[0], p.BlkMap[1] = p.BlkMap[1], p.BlkMap[0] }, "sits among colour"},
		{"swap blkmap big", true, func(p *Plan) {
			i, j := p.ColOffset[0], p.ColOffset[p.NColors-1]
			p.BlkMap[i], p.BlkMap[j] = p.BlkMap[j], p.BlkMap[i]
		}, "sits among colour"},
		{"duplicate blkmap", true, func(p *Plan) { p.BlkMap[1] = p.BlkMap[0] }, ""},
		{"bad locmap", false, func(p *Plan) { p.LocMap[1][4] = 0 }, "LocMap gives local 0"},
		{"locmap out of range", true, func(p *Plan) { p.LocMap[0][3] = 1 << 20 }, "local index"},
		{"thread colour conflict", false, func(p *Plan) { p.ThrCol[2] = 1 }, "share thread colour 1"},
		{"thread colour conflict big", true, func(p *Plan) {
			for b := range p.NBlocks {
				if p.NThrCol[b] > 1 {
					s, e := p.Offset[b], p.Offset[b]+p.NElems[b]
					for i := s; i < e; i++ {
						if p.ThrCol[i] == 1 {
							for j := s; j < e; j++ {
								p.ThrCol[j] = max(p.ThrCol[j], 1) // keeps NThrCol valid
							}
							return
						}
					}
				}
			}
		}, "share thread colour"},
		{"thread colour range", false, func(p *Plan) { p.ThrCol[0] = 5 }, "thread colour 5 outside"},
		{"nthrcol", false, func(p *Plan) { p.NThrCol[1] = 3 }, "NThrCol = 3"},
		{"block colour conflict", false, func(p *Plan) {
			p.BlkCol[1] = 0
			p.NColors, p.NColorsCore, p.NColorsOwned = 1, 1, 1
			p.NColBlk, p.ColOffset, p.BlkMap = []int32{2}, []int32{0, 2}, []int32{0, 1}
		}, "share block colour 0"},
		{"blkcol disagrees", true, func(p *Plan) { p.BlkCol[0] = (p.BlkCol[0] + 1) % int32(p.NColors) }, ""},
		{"unsorted list", false, func(p *Plan) { p.IndMap[0][1], p.IndMap[0][2] = p.IndMap[0][2], p.IndMap[0][1] }, "not strictly ascending"},
		{"extra list entry", false, func(p *Plan) { p.IndMap[0][3] = 4 }, ""},
		{"list size", true, func(p *Plan) { p.IndSizes[0][0]++ }, "indirect dataset 0, block"},
		{"nshared", false, func(p *Plan) { p.NShared = 16 }, "NShared = 16"},
		{"offset", false, func(p *Plan) { p.Offset[1] = 2 }, "block 1 starts at 2"},
		{"nelems", false, func(p *Plan) { p.NElems[1] = 2 }, ""},
		{"colour sections", true, func(p *Plan) { p.NColorsCore = p.NColors + 1 }, "colour sections out of order"},
		{"ncolblk", false, func(p *Plan) { p.NColBlk[0] = 2 }, "ColOffset"},
		{"block size", false, func(p *Plan) { p.BlockSize = 4 }, "block size 4"},
		{"missing locmap", false, func(p *Plan) { p.LocMap[0] = nil }, "arg 0: LocMap has 0 entries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, inp := base, in
			if tc.onBig {
				src, inp = bigPlan, big
			}
			p := clonePlan(src)
			tc.mutate(p)
			err := p.Check(inp)
			if err == nil {
				t.Fatal("Check accepted a corrupted plan")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if err := src.Check(inp); err != nil {
				t.Fatalf("original plan was modified: %v", err)
			}
		})
	}
	var nilPlan *Plan
	if nilPlan.Check(in) == nil {
		t.Error("nil plan passes Check")
	}
	// Section ordering of colours: an exec block coloured as core.
	sec := pathInput(1)
	sec.Core, sec.Owned = 3, 3
	p := clonePlan(mustBuild(t, sec))
	p.BlkCol[5] = 0
	if err := p.Check(sec); err == nil || !strings.Contains(err.Error(), "exec-halo block 5") {
		t.Errorf("section colour error = %v", err)
	}
}

func TestAirfoilPlan(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("full-size mesh skipped under -short or -race")
	}
	en, ec, nn, nc := airfoilEdges()
	in := airfoilInput(en, ec, nn, nc)
	p := mustBuild(t, in)
	if p.NBlocks != (1438600+255)/256 {
		t.Errorf("NBlocks %d", p.NBlocks)
	}
	t.Logf("blocks %d colours %d max thread colours %d NShared %d transfer %.0f",
		p.NBlocks, p.NColors, slices.Max(p.NThrCol), p.NShared, p.Transfer)
}
