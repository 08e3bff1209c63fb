package sparsity

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// brute is the pattern as a set of (row, col) entries, built the obvious
// way.
func brute(nRows int, pairs []Pair, diagonal bool) map[[2]int32]bool {
	m := map[[2]int32]bool{}
	for _, q := range pairs {
		for e := 0; e < q.N; e++ {
			for _, r := range q.Rows[e*q.RowArity : (e+1)*q.RowArity] {
				for _, c := range q.Cols[e*q.ColArity : (e+1)*q.ColArity] {
					m[[2]int32{r, c}] = true
				}
			}
		}
	}
	if diagonal {
		for r := range int32(nRows) {
			m[[2]int32{r, r}] = true
		}
	}
	return m
}

func randomPair(rng *rand.Rand, nRows, nCols int) Pair {
	q := Pair{RowArity: 1 + rng.IntN(4), ColArity: 1 + rng.IntN(4), N: rng.IntN(50)}
	for range q.N * q.RowArity {
		q.Rows = append(q.Rows, int32(rng.IntN(nRows)))
	}
	for range q.N * q.ColArity {
		q.Cols = append(q.Cols, int32(rng.IntN(nCols)))
	}
	return q
}

// TestBuildMatchesBruteForce builds patterns of random map pairs (repeated
// entries within a row of a map included) and compares them, their
// offsets and their scalar form with the obvious construction.
func TestBuildMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 200 {
		nRows, nCols := 1+rng.IntN(30), 1+rng.IntN(30)
		diagonal := trial%3 == 0
		if diagonal {
			nCols = nRows
		}
		var pairs []Pair
		for range 1 + rng.IntN(3) {
			pairs = append(pairs, randomPair(rng, nRows, nCols))
		}
		p, err := Build(nRows, nCols, pairs, diagonal)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		want := brute(nRows, pairs, diagonal)
		if p.NNZ() != len(want) {
			t.Fatalf("trial %d: %d entries, want %d", trial, p.NNZ(), len(want))
		}
		for r := 0; r < nRows; r++ {
			row := p.ColIdx[p.RowPtr[r]:p.RowPtr[r+1]]
			if !slices.IsSorted(row) {
				t.Fatalf("trial %d: row %d not sorted: %v", trial, r, row)
			}
			for _, c := range row {
				if !want[[2]int32{int32(r), c}] {
					t.Fatalf("trial %d: entry (%d, %d) is not coupled by any element", trial, r, c)
				}
			}
		}
		p2, offsets, err := BuildOffsets(nRows, nCols, pairs, diagonal)
		if err != nil {
			t.Fatalf("trial %d: BuildOffsets: %v", trial, err)
		}
		if !slices.Equal(p2.RowPtr, p.RowPtr) || !slices.Equal(p2.ColIdx, p.ColIdx) {
			t.Fatalf("trial %d: BuildOffsets' pattern differs from Build's", trial)
		}
		for k, q := range pairs {
			off, err := p.Offsets(q)
			if err != nil {
				t.Fatalf("trial %d: Offsets: %v", trial, err)
			}
			if !slices.Equal(offsets[k], off) {
				t.Fatalf("trial %d: BuildOffsets' offsets of pair %d differ from Offsets'", trial, k)
			}
			k := 0
			for e := 0; e < q.N; e++ {
				for _, r := range q.Rows[e*q.RowArity : (e+1)*q.RowArity] {
					for _, c := range q.Cols[e*q.ColArity : (e+1)*q.ColArity] {
						if at := off[k]; at < p.RowPtr[r] || at >= p.RowPtr[r+1] || p.ColIdx[at] != c {
							t.Fatalf("trial %d: offset of (%d, %d) is %d", trial, r, c, at)
						}
						k++
					}
				}
			}
		}
		// Scalar form with random block dims: every scalar entry is
		// in a coupled block, each row increasing, and the values
		// land where ScalarValues says.
		rdim, cdim := 1+rng.IntN(3), 1+rng.IntN(3)
		rowptr, colidx, err := p.Scalar(rdim, cdim)
		if err != nil {
			t.Fatal(err)
		}
		if len(colidx) != p.NNZ()*rdim*cdim || len(rowptr) != nRows*rdim+1 {
			t.Fatalf("trial %d: scalar form has %d entries and %d row offsets", trial, len(colidx), len(rowptr))
		}
		block := make([]int, p.NNZ()*rdim*cdim)
		for k := range p.NNZ() {
			for a := range rdim {
				for b := range cdim {
					// Encode (block row, block column, a, b).
					block[k*rdim*cdim+a*cdim+b] = int(p.ColIdx[k])*cdim + b + 1000*a
				}
			}
		}
		vals := ScalarValues(p, rdim, cdim, block)
		for sr := 0; sr < nRows*rdim; sr++ {
			row := colidx[rowptr[sr]:rowptr[sr+1]]
			if !slices.IsSorted(row) {
				t.Fatalf("trial %d: scalar row %d not sorted", trial, sr)
			}
			for i, sc := range row {
				r, c := int32(sr/rdim), sc/int32(cdim)
				if !want[[2]int32{r, c}] {
					t.Fatalf("trial %d: scalar entry (%d, %d) outside the blocks", trial, sr, sc)
				}
				if v := vals[int(rowptr[sr])+i]; v != int(sc)+1000*(sr%rdim) {
					t.Fatalf("trial %d: scalar value at (%d, %d) is %d, want %d", trial, sr, sc, v, int(sc)+1000*(sr%rdim))
				}
			}
		}
	}
}

// TestTriangles checks a hand-made pattern: two triangles sharing an
// edge, nodes coupled through cells.
func TestTriangles(t *testing.T) {
	cells := []int32{0, 1, 2, 1, 3, 2}
	p, err := Build(4, 4, []Pair{{Rows: cells, Cols: cells, RowArity: 3, ColArity: 3, N: 2}}, true)
	if err != nil {
		t.Fatal(err)
	}
	wantPtr := []int32{0, 3, 7, 11, 14}
	wantCol := []int32{0, 1, 2, 0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3}
	if !slices.Equal(p.RowPtr, wantPtr) || !slices.Equal(p.ColIdx, wantCol) {
		t.Fatalf("got %v %v, want %v %v", p.RowPtr, p.ColIdx, wantPtr, wantCol)
	}
	if p.Find(0, 3) != -1 || p.Find(3, 3) != 13 || p.Find(4, 0) != -1 {
		t.Fatalf("Find: %d %d %d", p.Find(0, 3), p.Find(3, 3), p.Find(4, 0))
	}
	// A pair the pattern was not built from.
	_, err = p.Offsets(Pair{Rows: []int32{0}, Cols: []int32{3}, RowArity: 1, ColArity: 1, N: 1})
	if !errors.Is(err, ErrNotInPattern) || !strings.Contains(err.Error(), "row 0 with column 3") {
		t.Fatalf("Offsets of a foreign pair: %v", err)
	}
}

// TestBuildErrors checks that bad inputs are refused with errors naming
// what is wrong.
func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name     string
		nRows    int
		nCols    int
		pairs    []Pair
		diagonal bool
		want     string
	}{
		{"row out of range", 2, 2, []Pair{{Rows: []int32{0, 2}, Cols: []int32{0, 1}, RowArity: 2, ColArity: 2, N: 1}}, false, "row map entry 1 (element 0, column 1) is 2, outside the 2 rows"},
		{"column negative", 2, 3, []Pair{{Rows: []int32{0}, Cols: []int32{-1}, RowArity: 1, ColArity: 1, N: 1}}, false, "column map entry 0 (element 0, column 0) is -1"},
		{"short map", 2, 2, []Pair{{Rows: []int32{0}, Cols: []int32{0, 1}, RowArity: 1, ColArity: 1, N: 2}}, false, "2 elements need 2 row and 2 column entries; the maps have 1 and 2"},
		{"zero arity", 2, 2, []Pair{{RowArity: 0, ColArity: 1}}, false, "arities 0 and 1"},
		{"diagonal of a tall rectangle", 3, 2, nil, true, "a diagonal needs at least as many columns as rows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.nRows, tc.nCols, tc.pairs, tc.diagonal)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	p, _ := Build(1, 1, nil, true)
	if _, _, err := p.Scalar(0, 1); err == nil {
		t.Fatal("Scalar(0, 1) succeeded")
	}
}

// TestBuildInParts: patterns and offsets made by several goroutines, each
// a range of rows (one row each, at the extreme), equal those made by one.
func TestBuildInParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	type result struct {
		p   *Pattern
		off [][]int32
	}
	build := func(nRows, nCols int, pairs []Pair, diagonal bool, perWorker, procs int) result {
		t.Helper()
		defer func(n int) { minRowsPerWorker = n }(minRowsPerWorker)
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		minRowsPerWorker = perWorker
		p, off, err := BuildOffsets(nRows, nCols, pairs, diagonal)
		if err != nil {
			t.Fatal(err)
		}
		return result{p, off}
	}
	for trial := range 100 {
		nRows, nCols := 1+rng.IntN(40), 1+rng.IntN(40)
		diagonal := trial%2 == 0
		if diagonal {
			nCols = nRows
		}
		var pairs []Pair
		for range 1 + rng.IntN(3) {
			q := randomPair(rng, nRows+5, nCols)
			q.DropRows = true // rows nRows.. are dropped
			pairs = append(pairs, q)
		}
		one := build(nRows, nCols, pairs, diagonal, 1<<30, 1)
		for _, procs := range []int{2, 3, 7} {
			many := build(nRows, nCols, pairs, diagonal, 1, procs)
			if !slices.Equal(many.p.RowPtr, one.p.RowPtr) || !slices.Equal(many.p.ColIdx, one.p.ColIdx) {
				t.Fatalf("trial %d, %d goroutines: the pattern differs from one goroutine's", trial, procs)
			}
			for k := range pairs {
				if !slices.Equal(many.off[k], one.off[k]) {
					t.Fatalf("trial %d, %d goroutines: pair %d's offsets %v, one goroutine's %v", trial, procs, k, many.off[k], one.off[k])
				}
			}
		}
	}
}

// TestDropRows: a rank's pattern keeps its owned rows (the first nRows)
// and drops the halo rows the maps reach, whose offsets are -1; columns
// reach the halo.
func TestDropRows(t *testing.T) {
	// Elements couple (0,2), (2,3), (1,3); rows 0-1 owned, 2-3 halo.
	tab := []int32{0, 2, 2, 3, 1, 3}
	q := Pair{Rows: tab, Cols: tab, RowArity: 2, ColArity: 2, N: 3, DropRows: true}
	p, err := Build(2, 4, []Pair{q}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.RowPtr, []int32{0, 2, 4}) || !slices.Equal(p.ColIdx, []int32{0, 2, 1, 3}) {
		t.Fatalf("pattern %v %v", p.RowPtr, p.ColIdx)
	}
	off, err := p.Offsets(q)
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{0, 1, -1, -1, -1, -1, -1, -1, 2, 3, -1, -1}
	if !slices.Equal(off, want) {
		t.Fatalf("offsets %v, want %v", off, want)
	}
	if _, offsets, err := BuildOffsets(2, 4, []Pair{q}, true); err != nil || !slices.Equal(offsets[0], want) {
		t.Fatalf("BuildOffsets: offsets %v (%v), want %v", offsets, err, want)
	}
	q.DropRows = false
	if _, err := Build(2, 4, []Pair{q}, false); err == nil || !strings.Contains(err.Error(), "outside the 2 rows") {
		t.Fatalf("without DropRows: %v", err)
	}
}

// TestEmpty: no rows, no pairs.
func TestEmpty(t *testing.T) {
	p, err := Build(0, 0, nil, true)
	if err != nil || p.NNZ() != 0 || len(p.RowPtr) != 1 {
		t.Fatalf("%v %+v", err, p)
	}
}

// BenchmarkBuildQuads builds the node-node pattern of an n×n grid of
// quadrilaterals (arity 4 both ways), as a bilinear finite-element
// matrix has.
func BenchmarkBuildQuads(b *testing.B) {
	const n = 500
	cells := make([]int32, 0, 4*n*n)
	for i := range int32(n) {
		for j := range int32(n) {
			k := i*(n+1) + j
			cells = append(cells, k, k+1, k+n+2, k+n+1)
		}
	}
	q := Pair{Rows: cells, Cols: cells, RowArity: 4, ColArity: 4, N: n * n}
	for b.Loop() {
		if _, err := Build((n+1)*(n+1), (n+1)*(n+1), []Pair{q}, true); err != nil {
			b.Fatal(err)
		}
	}
}

// squareTriangles returns the triangles of cmd/poisson's n×n square mesh
// (poisson.Square: each square cut into two, the cut alternating) over
// (n+1)² nodes; with shuffled, the nodes numbered in a random order (as
// a mesh generator's numbering may be: no locality).
func squareTriangles(n int, shuffled bool) []int32 {
	nodes := (n + 1) * (n + 1)
	num := make([]int32, nodes)
	for i := range num {
		num[i] = int32(i)
	}
	if shuffled {
		rand.New(rand.NewPCG(1, 2)).Shuffle(nodes, func(i, j int) { num[i], num[j] = num[j], num[i] })
	}
	tri := make([]int32, 0, 6*n*n)
	for j := range n {
		for i := range n {
			a := int32(j*(n+1) + i)
			b, c, d := a+1, a+int32(n)+2, a+int32(n)+1
			if (i+j)%2 == 0 {
				tri = append(tri, num[a], num[b], num[c], num[a], num[c], num[d])
			} else {
				tri = append(tri, num[a], num[b], num[d], num[b], num[c], num[d])
			}
		}
	}
	return tri
}

// BenchmarkPoisson times the P1 pattern of cmd/poisson -n 708 (1 002 528
// triangles, 502 681 nodes) and its assembly offsets (BuildOffsets, as
// op2.NewSparsity makes them), in the mesh's numbering and in a
// random one.
func BenchmarkPoisson(b *testing.B) {
	const n = 708
	for _, shuffled := range []bool{false, true} {
		name := map[bool]string{false: "banded", true: "shuffled"}[shuffled]
		tri := squareTriangles(n, shuffled)
		q := Pair{Rows: tri, Cols: tri, RowArity: 3, ColArity: 3, N: len(tri) / 3}
		nodes := (n + 1) * (n + 1)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := BuildOffsets(nodes, nodes, []Pair{q}, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
