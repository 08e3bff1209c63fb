package mesh

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/regfile/regfiletest"
)

// blockOf returns rank's block (of ranks) of every set of m, cut from the
// whole mesh as Block splits the sets: what ReadBlock and GenerateBlock
// must give.
func blockOf(m *Mesh, rank, ranks int) *Mesh {
	ns, nn := Block(m.NNode, rank, ranks)
	cs, nc := Block(m.NCell, rank, ranks)
	es, ne := Block(m.NEdge, rank, ranks)
	bs, nb := Block(m.NBedge, rank, ranks)
	return &Mesh{
		NNode: nn, NCell: nc, NEdge: ne, NBedge: nb,
		X:      m.X[2*ns : 2*(ns+nn)],
		Cell:   m.Cell[4*cs : 4*(cs+nc)],
		Edge:   m.Edge[2*es : 2*(es+ne)],
		Ecell:  m.Ecell[2*es : 2*(es+ne)],
		Bedge:  m.Bedge[2*bs : 2*(bs+nb)],
		Becell: m.Becell[bs : bs+nb],
		Bound:  m.Bound[bs : bs+nb],
	}
}

// diffBlock describes how got differs from want, for failure messages.
func diffBlock(got, want *Mesh) string {
	if got.NNode != want.NNode || got.NCell != want.NCell || got.NEdge != want.NEdge || got.NBedge != want.NBedge {
		return fmt.Sprintf("counts %d %d %d %d, want %d %d %d %d", got.NNode, got.NCell, got.NEdge, got.NBedge,
			want.NNode, want.NCell, want.NEdge, want.NBedge)
	}
	parts := []struct {
		name string
		a, b *Mesh
	}{
		{"X", &Mesh{X: got.X}, &Mesh{X: want.X}},
		{"Cell", &Mesh{Cell: got.Cell}, &Mesh{Cell: want.Cell}},
		{"Edge", &Mesh{Edge: got.Edge}, &Mesh{Edge: want.Edge}},
		{"Ecell", &Mesh{Ecell: got.Ecell}, &Mesh{Ecell: want.Ecell}},
		{"Bedge", &Mesh{Bedge: got.Bedge}, &Mesh{Bedge: want.Bedge}},
		{"Becell", &Mesh{Becell: got.Becell}, &Mesh{Becell: want.Becell}},
		{"Bound", &Mesh{Bound: got.Bound}, &Mesh{Bound: want.Bound}},
	}
	var bad []string
	for _, p := range parts {
		if !p.a.Equal(p.b) {
			bad = append(bad, p.name)
		}
	}
	return "contents of " + strings.Join(bad, ", ") + " differ"
}

func TestBlock(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5, 7, 100, 101} {
		for ranks := 1; ranks <= 9; ranks++ {
			next := 0
			for rank := 0; rank < ranks; rank++ {
				start, count := Block(n, rank, ranks)
				if start != next || count < n/ranks || count > n/ranks+1 {
					t.Fatalf("Block(%d, %d, %d) = %d, %d after a block ending at %d", n, rank, ranks, start, count, next)
				}
				next = start + count
			}
			if next != n {
				t.Errorf("Block(%d, ·, %d): blocks cover %d elements", n, ranks, next)
			}
		}
	}
}

// blockCases are the (I, J) and rank counts the block tests try: rank
// counts up to beyond the sets' sizes (Generate(1, 1) has 3 cells and 3
// edges), so that some blocks are empty.
var blockCases = []struct {
	I, J  int
	ranks []int
}{
	{1, 1, []int{1, 2, 3, 4, 5, 7, 9, 16}},
	{1, 2, []int{1, 2, 3, 6, 11}},
	{2, 1, []int{1, 2, 5, 13}},
	{3, 4, []int{1, 2, 3, 4, 7, 40}},
	{5, 3, []int{2, 6, 9}},
	{4, 6, []int{1, 3, 8}},
	{40, 60, []int{1, 2, 3, 4, 5, 7, 16}},
	{7, 100, []int{2, 3, 64}},
}

func TestGenerateBlock(t *testing.T) {
	for _, tc := range blockCases {
		whole, err := Generate(tc.I, tc.J)
		if err != nil {
			t.Fatal(err)
		}
		for _, ranks := range tc.ranks {
			for rank := 0; rank < ranks; rank++ {
				got, err := GenerateBlock(tc.I, tc.J, rank, ranks)
				if err != nil {
					t.Fatalf("GenerateBlock(%d, %d, %d, %d): %v", tc.I, tc.J, rank, ranks, err)
				}
				if want := blockOf(whole, rank, ranks); !got.Equal(want) {
					t.Errorf("GenerateBlock(%d, %d, %d, %d): %s", tc.I, tc.J, rank, ranks, diffBlock(got, want))
				}
			}
		}
	}
}

func TestGenerateBlockErrors(t *testing.T) {
	tests := []struct {
		I, J, rank, ranks int
		want              string
	}{
		{0, 5, 0, 1, "at least 1"},
		{5, -1, 0, 2, "at least 1"},
		{100000, 100000, 0, 1, "too large"},
		{2, 2, 2, 2, "0 <= rank < ranks"},
		{2, 2, -1, 2, "0 <= rank < ranks"},
		{2, 2, 0, 0, "0 <= rank < ranks"},
	}
	for _, tc := range tests {
		_, err := GenerateBlock(tc.I, tc.J, tc.rank, tc.ranks)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "GenerateBlock") {
			t.Errorf("GenerateBlock(%d, %d, %d, %d): error %v, want one saying %q", tc.I, tc.J, tc.rank, tc.ranks, err, tc.want)
		}
	}
}

func TestLinspaceAt(t *testing.T) {
	ends := [][2]float64{{0, 3}, {-3, 3}, {0.25, 3}, {-1e-3, 1e-3}, {1, -2}, {0.1, 0.7}}
	for n := 1; n <= 40; n++ {
		for _, e := range ends {
			want := linspace(e[0], e[1], n)
			for k := range want {
				if got := linspaceAt(e[0], e[1], n, k); math.Float64bits(got) != math.Float64bits(want[k]) {
					t.Fatalf("linspaceAt(%g, %g, %d, %d) = %v, linspace gives %v", e[0], e[1], n, k, got, want[k])
				}
			}
		}
	}
}

// writeMeshFiles writes m plain and gzipped into dir and returns the paths.
func writeMeshFiles(t *testing.T, dir string, m *Mesh) []string {
	t.Helper()
	var paths []string
	for _, name := range []string{"mesh.dat", "mesh.dat.gz"} {
		path := filepath.Join(dir, name)
		if err := m.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

func TestReadBlock(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range blockCases {
		g, err := Generate(tc.I, tc.J)
		if err != nil {
			t.Fatal(err)
		}
		sub := filepath.Join(dir, fmt.Sprintf("%dx%d", tc.I, tc.J))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, path := range writeMeshFiles(t, sub, g) {
			whole, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, ranks := range tc.ranks {
				for rank := 0; rank < ranks; rank++ {
					got, err := ReadBlock(path, rank, ranks)
					if err != nil {
						t.Fatalf("ReadBlock(%s, %d, %d): %v", path, rank, ranks, err)
					}
					if want := blockOf(whole, rank, ranks); !got.Equal(want) {
						t.Errorf("ReadBlock(%s, %d, %d): %s", path, rank, ranks, diffBlock(got, want))
					}
				}
			}
		}
	}
}

// TestReadBlockAccepts: the variants of the format Read accepts give, on
// every rank, the block of what Read gives.
func TestReadBlockAccepts(t *testing.T) {
	want, err := Read(strings.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	inputs := []struct{ name, input string }{
		{"plain", small},
		{"crlf", strings.ReplaceAll(small, "\n", "\r\n")},
		{"no final newline", strings.TrimSuffix(small, "\n")},
		{"no final newline crlf", strings.TrimSuffix(strings.ReplaceAll(small, "\n", "\r\n"), "\r\n")},
		{"trailing blank lines", small + "\n \t\n\n"},
		{"gzip", string(gzipBytes(t, []byte(small)))},
		{"gzip no final newline", string(gzipBytes(t, []byte(strings.TrimSuffix(small, "\n"))))},
	}
	for _, in := range inputs {
		for ranks := 1; ranks <= 6; ranks++ {
			for rank := 0; rank < ranks; rank++ {
				got, err := ReadBlockFrom(strings.NewReader(in.input), rank, ranks)
				if err != nil {
					t.Fatalf("%s: rank %d of %d: %v", in.name, rank, ranks, err)
				}
				if w := blockOf(want, rank, ranks); !got.Equal(w) {
					t.Errorf("%s: rank %d of %d: %s", in.name, rank, ranks, diffBlock(got, w))
				}
			}
		}
	}
}

// TestReadBlockLongLines: lines far longer than the reader's buffer, in
// skipped blocks, are counted right.
func TestReadBlockLongLines(t *testing.T) {
	lines := strings.SplitAfter(small, "\n")
	pad := strings.Repeat(" ", MaxLineLength-40) // within the limit, so Read accepts it
	for i := 1; i < len(lines)-1; i++ {
		lines[i] = pad + lines[i]
	}
	input := strings.Join(lines, "")
	want, err := Read(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	for ranks := 1; ranks <= 4; ranks++ {
		for rank := 0; rank < ranks; rank++ {
			got, err := ReadBlockFrom(strings.NewReader(input), rank, ranks)
			if err != nil {
				t.Fatalf("rank %d of %d: %v", rank, ranks, err)
			}
			if w := blockOf(want, rank, ranks); !got.Equal(w) {
				t.Errorf("rank %d of %d: %s", rank, ranks, diffBlock(got, w))
			}
		}
	}
}

// readAllRanks reads input with ReadBlockFrom on every rank of ranks.
func readAllRanks(input string, ranks int) []error {
	errs := make([]error, ranks)
	for rank := range errs {
		_, errs[rank] = ReadBlockFrom(strings.NewReader(input), rank, ranks)
	}
	return errs
}

// TestReadBlockTruncated: input cut at the end of any line is an error
// on every rank, the one Read gives (naming the line and the set); cut
// inside a line, it is an error on every rank, Read's on the rank that
// parses that line, except inside the last line, which a rank that only
// counts it takes for a complete last line without a newline: the rank
// whose block holds it reports it.
func TestReadBlockTruncated(t *testing.T) {
	g, err := Generate(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	text := string(encode(t, g))
	lineEnds := map[int]bool{}
	for i, c := range text {
		if c == '\n' {
			lineEnds[i+1] = true
		}
	}
	lastLine := strings.LastIndex(text[:len(text)-1], "\n") + 1
	for cut := 0; cut < len(text); cut++ {
		input := text[:cut]
		whole, readErr := Read(strings.NewReader(input))
		if readErr == nil { // only the last newline cut off
			for rank := range 3 {
				if b, err := ReadBlockFrom(strings.NewReader(input), rank, 3); err != nil || !b.Equal(blockOf(whole, rank, 3)) {
					t.Fatalf("cut at %d, which Read reads: rank %d of 3: %v", cut, rank, err)
				}
			}
			continue
		}
		for _, gz := range []bool{false, true} {
			in := input
			if gz {
				in = string(gzipBytes(t, []byte(input)))
			}
			for _, ranks := range []int{2, 3, 5, 40} {
				failed := false
				for rank, err := range readAllRanks(in, ranks) {
					failed = failed || err != nil
					switch {
					case err == nil && cut > lastLine:
						// Inside the last line: see above.
					case err == nil:
						t.Fatalf("cut at %d (gzip %v): rank %d of %d read it; Read: %v", cut, gz, rank, ranks, readErr)
					case lineEnds[cut] && err.Error() != readErr.Error():
						t.Fatalf("cut at %d (gzip %v): rank %d of %d: %v; Read: %v", cut, gz, rank, ranks, err, readErr)
					case cut > 0 && !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "line longer"):
						t.Fatalf("cut at %d (gzip %v): rank %d of %d: %v names no line", cut, gz, rank, ranks, err)
					}
				}
				if !failed {
					t.Fatalf("cut at %d (gzip %v): every rank of %d read it; Read: %v", cut, gz, ranks, readErr)
				}
			}
		}
	}
	// A cut inside a line: the rank whose block holds the line gives
	// Read's error; the others one naming the set that ends early.
	input := text[:strings.Index(text, " 1 ")+2] // inside the first cell
	_, readErr := Read(strings.NewReader(input))
	errs := readAllRanks(input, 2)
	if errs[0] == nil || errs[0].Error() != readErr.Error() {
		t.Errorf("cut in cell 0: rank 0: %v; Read: %v", errs[0], readErr)
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "end of input: expected cell") {
		t.Errorf("cut in cell 0: rank 1: %v, want an error naming the cells", errs[1])
	}
}

// TestReadBlockErrors: a malformed line is reported exactly as Read
// reports it by the rank whose block holds it (and by every rank for the
// header and what follows the last boundary edge); ReadBlock names the
// file.
func TestReadBlockErrors(t *testing.T) {
	lines := strings.SplitAfter(small, "\n")
	bad := []string{" x 0 \n", " 0 0 0 0 0 \n", " 0 1 9 9 \n", "\n", " 1e999 1 \n", " 0 1 0 x \n"}
	// Line (1-based) → the set and element on it, in small.
	owner := map[int]struct {
		set, elem, n int
	}{2: {0, 0, 4}, 3: {0, 1, 4}, 4: {0, 2, 4}, 5: {0, 3, 4}, 6: {1, 0, 1}, 7: {2, 0, 1}, 8: {3, 0, 2}, 9: {3, 1, 2}}
	for line := 1; line < len(lines); line++ {
		for _, b := range bad {
			input := replaceLine(line, b)
			_, readErr := Read(strings.NewReader(input))
			if readErr == nil {
				continue
			}
			for ranks := 1; ranks <= 5; ranks++ {
				for rank, err := range readAllRanks(input, ranks) {
					holds := line == 1 && strings.Contains(readErr.Error(), "line 1:") // a bad header, not another one
					if o, ok := owner[line]; ok {
						start, count := Block(o.n, rank, ranks)
						holds = o.elem >= start && o.elem < start+count
					}
					if holds && (err == nil || err.Error() != readErr.Error()) {
						t.Errorf("line %d = %q: rank %d of %d: %v; Read: %v", line, b, rank, ranks, err, readErr)
					}
				}
			}
		}
	}
	trailing := small + "\n 1 2 3 4 \n"
	_, readErr := Read(strings.NewReader(trailing))
	for ranks := 1; ranks <= 5; ranks++ {
		for rank, err := range readAllRanks(trailing, ranks) {
			if err == nil || err.Error() != readErr.Error() {
				t.Errorf("trailing data: rank %d of %d: %v; Read: %v", rank, ranks, err, readErr)
			}
		}
	}

	path := filepath.Join(t.TempDir(), "bad.dat")
	if err := os.WriteFile(path, []byte(replaceLine(9, " 2 3 7 2 \n")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadBlock(path, 1, 2)
	if err == nil || !strings.Contains(err.Error(), "line 9: bedge 1: cell index 7 out of range [0,1)") || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadBlock of a bad file: %v, want line 9 and the file named", err)
	}
	if _, err := ReadBlock(path, 0, 2); err != nil {
		t.Errorf("ReadBlock rank 0, whose block is sound: %v", err)
	}
	for _, r := range [][2]int{{2, 2}, {-1, 2}, {0, 0}} {
		if _, err := ReadBlock(path, r[0], r[1]); err == nil || !strings.Contains(err.Error(), "0 <= rank < ranks") {
			t.Errorf("ReadBlock(rank %d, ranks %d): %v", r[0], r[1], err)
		}
		if _, err := ReadBlockFrom(strings.NewReader(small), r[0], r[1]); err == nil || !strings.Contains(err.Error(), "0 <= rank < ranks") {
			t.Errorf("ReadBlockFrom(rank %d, ranks %d): %v", r[0], r[1], err)
		}
	}
}

// TestReadBlockRefusesSpecialFiles: ReadBlock opens files as ReadFile does.
func TestReadBlockRefusesSpecialFiles(t *testing.T) {
	for _, s := range regfiletest.Make(t, "mesh.dat") {
		t.Run(s.Name, func(t *testing.T) {
			regfiletest.Refused(t, s, func() error { _, err := ReadBlock(s.Path, 1, 2); return err })
		})
	}
}

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBlockMemory: reading or generating rank 3's block of 4 of a mesh of
// about 100 000 cells allocates well under half of what the whole mesh
// takes, for plain and gzipped files.
func TestBlockMemory(t *testing.T) {
	const I, J = 100, 333 // 99 900 cells
	var whole *Mesh
	genWhole := allocated(func() {
		var err error
		if whole, err = Generate(I, J); err != nil {
			t.Fatal(err)
		}
	})
	genBlock := allocated(func() {
		if _, err := GenerateBlock(I, J, 3, 4); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("Generate(%d, %d) allocates %.2f MB, GenerateBlock rank 3 of 4 %.2f MB (%.2f×)", I, J, mb(genWhole), mb(genBlock), float64(genBlock)/float64(genWhole))
	if float64(genBlock) > 0.5*float64(genWhole) {
		t.Errorf("GenerateBlock rank 3 of 4 allocates %d bytes, Generate %d: want under half", genBlock, genWhole)
	}
	for _, path := range writeMeshFiles(t, t.TempDir(), whole) {
		readWhole := allocated(func() {
			if _, err := ReadFile(path); err != nil {
				t.Fatal(err)
			}
		})
		readBlock := allocated(func() {
			if _, err := ReadBlock(path, 3, 4); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%s: ReadFile allocates %.2f MB, ReadBlock rank 3 of 4 %.2f MB (%.2f×)", filepath.Base(path), mb(readWhole), mb(readBlock), float64(readBlock)/float64(readWhole))
		if float64(readBlock) > 0.5*float64(readWhole) {
			t.Errorf("%s: ReadBlock rank 3 of 4 allocates %d bytes, ReadFile %d: want under half", path, readBlock, readWhole)
		}
	}
}

func mb(b uint64) float64 { return float64(b) / 1e6 }

// TestReadBlockReference: blocks of OP2's new_grid.dat.gz and of the
// generated reference mesh are the slices of the whole.
func TestReadBlockReference(t *testing.T) {
	if testing.Short() {
		t.Skip("reads and generates the 720 000-cell mesh: skipped in -short mode")
	}
	g, err := Generate(400, 600)
	if err != nil {
		t.Fatal(err)
	}
	for _, rank := range []int{0, 2} {
		b, err := GenerateBlock(400, 600, rank, 3)
		if err != nil {
			t.Fatal(err)
		}
		if want := blockOf(g, rank, 3); !b.Equal(want) {
			t.Errorf("GenerateBlock(400, 600, %d, 3): %s", rank, diffBlock(b, want))
		}
	}
	path := refMeshPath()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("reference mesh not available at %s (set OP2_AIRFOIL_MESH): %v", path, err)
	}
	b, err := ReadBlock(path, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	// The file's coordinates are the generated mesh's (see Generate).
	if want := blockOf(g, 1, 3); !b.Equal(want) {
		t.Errorf("ReadBlock(%s, 1, 3): %s", path, diffBlock(b, want))
	}
}
