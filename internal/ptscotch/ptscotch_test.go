package ptscotch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
)

// needLibrary skips t when PT-Scotch cannot be loaded here.
func needLibrary(t *testing.T) *library {
	t.Helper()
	l, err := load()
	testreq.Check(t, "ptscotch", err, ErrUnavailable)
	return l
}

func TestLoad(t *testing.T) {
	l := needLibrary(t)
	if l.bits != 32 && l.bits != 64 {
		t.Fatalf("SCOTCH_Num of %d bits", l.bits)
	}
	if !strings.HasPrefix(l.version, "7.") {
		t.Errorf("PT-Scotch version %s, want 7.x", l.version)
	}
	t.Logf("PT-Scotch %s from %s: SCOTCH_Num is %d bits", l.version, l.path, l.bits)
	if err := Load(); err != nil {
		t.Fatalf("second Load: %v", err)
	}
}

// withoutLoaded runs f as if this process had loaded no PT-Scotch.
func withoutLoaded(t *testing.T, f func()) {
	state.Lock()
	saved := state.lib
	state.lib.Forget()
	state.Unlock()
	defer func() {
		state.Lock()
		state.lib = saved
		state.Unlock()
	}()
	f()
}

func TestLoadMissingLibrary(t *testing.T) {
	for _, path := range []string{"/nonexistent", "/nonexistent/libptscotch-7.0.so"} {
		t.Run(path, func(t *testing.T) {
			t.Setenv(libraryEnv, path)
			withoutLoaded(t, func() {
				err := Load()
				t.Log(err)
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("Load with %s=%s: %v, want an error wrapping ErrUnavailable", libraryEnv, path, err)
				}
				for _, want := range []string{"apt-get install libptscotch-7.0", libraryEnv, path} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if again := Load(); again != err {
					t.Errorf("second Load: %v, want the remembered %v", again, err)
				}
			})
		})
	}
}

func TestLoadOtherLibraryAfterOne(t *testing.T) {
	l := needLibrary(t)
	t.Setenv(libraryEnv, "/nonexistent/libptscotch.so")
	err := Load()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), l.path) {
		t.Fatalf("Load of another library after %s: %v", l.path, err)
	}
}

func TestCandidates(t *testing.T) {
	tests := []struct {
		name string
		want []candidate
	}{
		{"/opt/scotch/lib/libptscotch.so", []candidate{{"/opt/scotch/lib/libptscotch.so", "/opt/scotch/lib/libptscotcherr.so"}}},
		{"/usr/lib/x86_64-linux-gnu/scotch-int64/libptscotch-7.0.so",
			[]candidate{{"/usr/lib/x86_64-linux-gnu/scotch-int64/libptscotch-7.0.so", "/usr/lib/x86_64-linux-gnu/scotch-int64/libptscotcherr-7.0.so"}}},
		{"libptscotch.so.7", []candidate{{"libptscotch.so.7", "libptscotcherr.so.7"}}},
		{"/opt/all-in-one.so", []candidate{{"/opt/all-in-one.so", ""}}},
	}
	for _, tt := range tests {
		if got := candidates(tt.name); !slices.Equal(got, tt.want) {
			t.Errorf("candidates(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := candidates(""); len(got) == 0 || got[0].lib != "libptscotch-7.0.so" {
		t.Errorf("default candidates %v do not start with Debian's libptscotch-7.0.so", got)
	}
}

func TestCheckLocal(t *testing.T) {
	tests := []struct {
		name  string
		xadj  []int64
		adj   []int32
		parts int
		bits  int
		want  string // in the error; "" for none
	}{
		{"valid", []int64{0, 1, 2}, []int32{5, 7}, 2, 32, ""},
		{"no vertex", []int64{0}, nil, 4, 32, ""},
		{"empty xadj", nil, nil, 2, 32, "xadj is empty"},
		{"no parts", []int64{0}, nil, 0, 32, "0 parts"},
		{"parts beyond 32 bits", []int64{0}, nil, 1 << 31, 32, "do not fit"},
		{"parts within 64 bits", []int64{0}, nil, 1 << 31, 64, ""},
		{"xadj not from 0", []int64{1, 2}, []int32{3}, 2, 32, "xadj[0] is 1"},
		{"xadj decreasing", []int64{0, 2, 1, 3}, []int32{4, 5, 6}, 2, 32, "xadj decreases at vertex 1"},
		{"xadj past adj", []int64{0, 1, 3}, []int32{4, 5}, 2, 32, "adj has 2 entries"},
		{"negative neighbour", []int64{0, 1, 3}, []int32{4, 5, -1}, 2, 64, "neighbour of vertex 1) is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkLocal(tt.xadj, tt.adj, tt.parts, tt.bits)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// grid is a w×h grid graph, vertices numbered row by row.
type grid struct{ w, h int }

func (g grid) vertices() int { return g.w * g.h }

// block returns the adjacency lists of the vertices [first, first+n).
func (g grid) block(first, n int) ([]int64, []int32) {
	xadj := []int64{0}
	var adj []int32
	for v := first; v < first+n; v++ {
		x, y := v%g.w, v/g.w
		for _, d := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
			if nx, ny := x+d[0], y+d[1]; nx >= 0 && nx < g.w && ny >= 0 && ny < g.h {
				adj = append(adj, int32(ny*g.w+nx))
			}
		}
		xadj = append(xadj, int64(len(adj)))
	}
	return xadj, adj
}

// cut counts the grid's edges whose ends are in different parts.
func (g grid) cut(part []int32) int {
	c := 0
	for v := range part {
		x := v % g.w
		if x+1 < g.w && part[v] != part[v+1] {
			c++
		}
		if v+g.w < len(part) && part[v] != part[v+g.w] {
			c++
		}
	}
	return c
}

// blocks gives each of k holders a contiguous block of n items.
func blocks(n, k int) []int {
	c := make([]int, k)
	for i := range c {
		c[i] = n*(i+1)/k - n*i/k
	}
	return c
}

// gatherParts gives every rank the parts of every vertex.
func gatherParts(t *testing.T, w *mpi.World, part []int32) []int32 {
	t.Helper()
	mine := make([]byte, 4*len(part))
	for i, p := range part {
		binary.LittleEndian.PutUint32(mine[4*i:], uint32(p))
	}
	send := make([][]byte, w.Size())
	for r := range send {
		send[r] = mine
	}
	got, err := w.Alltoallv(send)
	if err != nil {
		t.Fatal(err)
	}
	var all []int32
	for _, b := range got {
		for i := 0; i+4 <= len(b); i += 4 {
			all = append(all, int32(binary.LittleEndian.Uint32(b[i:])))
		}
	}
	return all
}

func cacheDir(t *testing.T) string {
	if d := os.Getenv("OP2_CACHE_DIR"); d != "" {
		return d
	}
	return t.TempDir()
}

// TestPart partitions grids on 1 to 4 ranks: blocks of a grid, a grid of
// which one rank holds nothing, more parts than ranks, an empty graph, and
// graphs that some rank declares wrongly (every rank must fail, naming the
// rank), including an asymmetric one that only SCOTCH_dgraphCheck finds,
// on every rank. Each partition is checked for parts in range, balance,
// edge cut and being the same when repeated; where Debian's build of the
// other SCOTCH_Num width is installed, it runs on 2 ranks too.
func TestPart(t *testing.T) {
	if !mpitest.InRanks() {
		needLibrary(t)
		if _, err := mpitest.Mpirun(); err != nil {
			testreq.Skip(t, "mpi", err)
		}
		dir := cacheDir(t)
		for _, np := range []int{1, 2, 3, 4} {
			mpitest.Run(t, np, 3*time.Minute, "OP2_CACHE_DIR="+dir)
		}
		// The other width of SCOTCH_Num, where a build of it is
		// installed (Debian's scotch-int64 next to its default 32-bit
		// one), unless the library was chosen already.
		if os.Getenv(libraryEnv) == "" {
			other, _ := filepath.Glob("/usr/lib/*/scotch-int64/libptscotch-7.0.so")
			if l := needLibrary(t); l.bits == 64 {
				other, _ = filepath.Glob("/usr/lib/*/scotch-int32/libptscotch-7.0.so")
			}
			if len(other) > 0 {
				mpitest.Run(t, 2, 3*time.Minute, "OP2_CACHE_DIR="+dir, libraryEnv+"="+other[0])
			}
		}
		return
	}
	w, err := mpi.Init(os.Getenv("OP2_CACHE_DIR"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Finalize(); err != nil {
			t.Error(err)
		}
	}()
	checkGraph = true
	size, rank := w.Size(), w.Rank()
	g := grid{200, 150}
	lastEmpty := func(n int) []int {
		if size == 1 {
			return []int{n}
		}
		return append(blocks(n, size-1), 0)
	}
	firstEmpty := func(n int) []int {
		if size == 1 {
			return []int{n}
		}
		return append([]int{0}, blocks(n, size-1)...)
	}
	evenly := func(n int) []int { return blocks(n, size) }
	tests := []struct {
		name    string
		g       grid
		counts  func(n int) []int // vertices per rank
		parts   int
		corrupt func(xadj []int64, adj []int32) // applied on the last rank
		wantErr string                          // in the last rank's error
		allFail bool                            // and in every rank's: PT-Scotch finds it collectively
	}{
		{name: "grid in blocks", g: g, counts: evenly, parts: size},
		{name: "grid, first rank empty", g: g, counts: firstEmpty, parts: size},
		{name: "grid, last rank empty", g: g, counts: lastEmpty, parts: size + 1},
		{name: "more parts than ranks", g: g, counts: evenly, parts: size + 3},
		{name: "fewer parts than ranks", g: g, counts: evenly, parts: max(size-1, 1)},
		{name: "thin grid", g: grid{1000, 3}, counts: evenly, parts: 3},
		{name: "empty graph", g: grid{0, 0}, counts: evenly, parts: size},
		{name: "neighbour beyond the graph", g: g, counts: evenly, parts: size,
			corrupt: func(_ []int64, adj []int32) { adj[0] = int32(g.vertices()) }, wantErr: "beyond the 30000 vertices"},
		{name: "self loop", g: g, counts: evenly, parts: size,
			corrupt: func(_ []int64, adj []int32) { adj[len(adj)-1] = int32(g.vertices() - 1) }, wantErr: "is its own neighbour"},
		{name: "negative neighbour", g: g, counts: evenly, parts: size,
			corrupt: func(_ []int64, adj []int32) { adj[1] = -3 }, wantErr: "is -3"},
		{name: "asymmetric graph", g: g, counts: evenly, parts: size + 1,
			corrupt: func(_ []int64, adj []int32) { adj[0] = int32(g.vertices()/2 + 17) }, wantErr: "SCOTCH_dgraphCheck failed", allFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts := tt.counts(tt.g.vertices())
			first := 0
			for _, c := range counts[:rank] {
				first += c
			}
			xadj, adj := tt.g.block(first, counts[rank])
			if tt.corrupt != nil && rank == size-1 {
				tt.corrupt(xadj, adj)
			}
			part, err := Part(w, xadj, adj, tt.parts)
			if tt.wantErr != "" {
				want := tt.wantErr
				if rank != size-1 && !tt.allFail {
					want = fmt.Sprintf("failed on rank(s) [%d]", size-1)
				}
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("rank %d: error %v, want one saying %q", rank, err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("rank %d: %v", rank, err)
			}
			if len(part) != counts[rank] {
				t.Fatalf("rank %d: %d parts for %d vertices", rank, len(part), counts[rank])
			}
			again, err := Part(w, xadj, adj, tt.parts)
			if err != nil {
				t.Fatalf("rank %d, second run: %v", rank, err)
			}
			if !slices.Equal(part, again) {
				t.Errorf("rank %d: the second run gave other parts", rank)
			}
			all := gatherParts(t, w, part)
			n := tt.g.vertices()
			if n == 0 {
				return
			}
			sizes := make([]int, tt.parts)
			for v, p := range all {
				if p < 0 || int(p) >= tt.parts {
					t.Fatalf("vertex %d in part %d, outside [0, %d)", v, p, tt.parts)
				}
				sizes[p]++
			}
			// PT-Scotch's default strategy allows 5% imbalance.
			if most := slices.Max(sizes); float64(most) > 1.10*float64(n)/float64(tt.parts) {
				t.Errorf("part sizes %v: the largest is more than 10%% above the mean %.0f", sizes, float64(n)/float64(tt.parts))
			}
			// Against the parts of contiguous row-major blocks, which cut
			// each part from the next along about a row, and a random
			// partition's expected cut, edges × (1 - 1/parts).
			block := make([]int32, n)
			v := 0
			for p, c := range blocks(n, tt.parts) {
				for ; c > 0; c-- {
					block[v] = int32(p)
					v++
				}
			}
			edges := (tt.g.w-1)*tt.g.h + tt.g.w*(tt.g.h-1)
			cut, blockCut := tt.g.cut(all), tt.g.cut(block)
			random := float64(edges) * (1 - 1/float64(tt.parts))
			if rank == 0 {
				t.Logf("%d ranks, %d parts: edge cut %d (row blocks %d, random ≈ %.0f), part sizes %v", size, tt.parts, cut, blockCut, random, sizes)
			}
			// PT-Scotch 7.0.3 stays below the row blocks' cut (at most
			// 0.97 of it, on 2 ranks); 1.5 leaves room for other versions.
			if tt.parts > 1 && (float64(cut) > 1.5*float64(blockCut) || float64(cut) > random/10) {
				t.Errorf("edge cut %d: more than 1.5 times the row blocks' %d, or more than a tenth of a random partition's %.0f", cut, blockCut, random)
			}
		})
	}
}
