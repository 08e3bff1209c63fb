package mesh

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/internal/regfile/regfiletest"
)

// refSHA256 is the SHA-256 of OP2's uncompressed new_grid.dat.
const refSHA256 = "320b4817a42bd11bd9fbb809e965a61826140bac0491b1f48c82b54ef16aac4a"

// refMeshPath returns the location of the reference mesh: $OP2_AIRFOIL_MESH
// if set, else the repository's shared data folder.
func refMeshPath() string {
	if p := os.Getenv("OP2_AIRFOIL_MESH"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "shared", "data", "new_grid.dat.gz")
}

func sha256Of(t testing.TB, m *Mesh) string {
	t.Helper()
	h := sha256.New()
	if err := m.Write(h); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func encode(t testing.TB, m *Mesh) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := m.Write(&b); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.Bytes()
}

func TestGenerateReference(t *testing.T) {
	start := time.Now()
	m, err := Generate(400, 600)
	if err != nil {
		t.Fatal(err)
	}
	gen := time.Since(start)
	got := sha256Of(t, m)
	t.Logf("Generate(400,600) %v, Generate+Write %v", gen, time.Since(start))
	if got != refSHA256 {
		t.Errorf("sha256 of Generate(400, 600) output = %s, want %s", got, refSHA256)
	}
	if m.NNode != 721801 || m.NCell != 720000 || m.NEdge != 1438600 || m.NBedge != 2800 {
		t.Errorf("counts = %d %d %d %d, want 721801 720000 1438600 2800",
			m.NNode, m.NCell, m.NEdge, m.NBedge)
	}
}

func TestReadReference(t *testing.T) {
	path := refMeshPath()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("reference mesh not available at %s (set OP2_AIRFOIL_MESH): %v", path, err)
	}
	start := time.Now()
	m, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ReadFile(%s) %v", path, time.Since(start))
	if m.NNode != 721801 || m.NCell != 720000 || m.NEdge != 1438600 || m.NBedge != 2800 {
		t.Errorf("counts = %d %d %d %d, want 721801 720000 1438600 2800",
			m.NNode, m.NCell, m.NEdge, m.NBedge)
	}
	if err := m.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if got := sha256Of(t, m); got != refSHA256 {
		t.Errorf("sha256 of rewritten reference = %s, want %s", got, refSHA256)
	}
	// The generator must agree with the file on all connectivity.
	g, err := Generate(400, 600)
	if err != nil {
		t.Fatal(err)
	}
	if !sameTopology(g, m) {
		t.Errorf("connectivity of Generate(400, 600) differs from the reference file")
	}
}

func sameTopology(a, b *Mesh) bool {
	c1, c2 := *a, *b
	c1.X, c2.X = nil, nil
	return c1.Equal(&c2)
}

func TestGenerateCounts(t *testing.T) {
	tests := []struct{ I, J int }{
		{1, 1}, {1, 2}, {2, 1}, {4, 6}, {5, 3}, {40, 60}, {7, 100},
	}
	for _, tc := range tests {
		m, err := Generate(tc.I, tc.J)
		if err != nil {
			t.Fatalf("Generate(%d, %d): %v", tc.I, tc.J, err)
		}
		I, J := tc.I, tc.J
		want := [4]int{(3*I + 1) * (J + 1), 3 * I * J, 6*I*J - 2*I - J, 4*I + 2*J}
		got := [4]int{m.NNode, m.NCell, m.NEdge, m.NBedge}
		if got != want {
			t.Errorf("Generate(%d, %d) counts = %v, want %v", I, J, got, want)
		}
		if err := m.Validate(); err != nil {
			t.Errorf("Generate(%d, %d): Validate: %v", I, J, err)
		}
		checkGeometry(t, m, I)
	}
}

// checkGeometry checks the structure of a generated mesh: every cell has
// positive area and appears exactly four times among edges and boundary
// edges, every edge is a side of each of its cells (the wake cut joins
// distinct nodes that lie at the same point), and there are I wall edges.
func checkGeometry(t *testing.T, m *Mesh, I int) {
	t.Helper()
	pt := func(n int32) [2]float64 { return [2]float64{m.X[2*n], m.X[2*n+1]} }
	// isSide reports whether p->q or q->p is a side of cell c.
	isSide := func(c int32, p, q [2]float64) bool {
		for k := 0; k < 4; k++ {
			a, b := pt(m.Cell[4*c+int32(k)]), pt(m.Cell[4*c+int32((k+1)%4)])
			if (a == p && b == q) || (a == q && b == p) {
				return true
			}
		}
		return false
	}
	for c := 0; c < m.NCell; c++ {
		area := 0.0
		for k := 0; k < 4; k++ {
			a, b := pt(m.Cell[4*c+k]), pt(m.Cell[4*c+(k+1)%4])
			area += a[0]*b[1] - b[0]*a[1]
		}
		if !(area > 0) {
			t.Fatalf("cell %d: signed area %g, want > 0 (counter-clockwise)", c, area/2)
		}
	}
	uses := make([]int, m.NCell)
	for e := 0; e < m.NEdge; e++ {
		p, q := pt(m.Edge[2*e]), pt(m.Edge[2*e+1])
		for k := 0; k < 2; k++ {
			c := m.Ecell[2*e+k]
			uses[c]++
			if !isSide(c, p, q) {
				t.Fatalf("edge %d is not a side of its cell %d", e, c)
			}
		}
		if m.Ecell[2*e] == m.Ecell[2*e+1] {
			t.Fatalf("edge %d joins cell %d to itself", e, m.Ecell[2*e])
		}
	}
	walls := 0
	for e := 0; e < m.NBedge; e++ {
		c := m.Becell[e]
		uses[c]++
		if !isSide(c, pt(m.Bedge[2*e]), pt(m.Bedge[2*e+1])) {
			t.Fatalf("bedge %d is not a side of its cell %d", e, c)
		}
		switch m.Bound[e] {
		case BoundWall:
			walls++
		case BoundFarField:
		default:
			t.Fatalf("bedge %d: bound %d", e, m.Bound[e])
		}
	}
	if walls != I {
		t.Errorf("%d wall edges, want %d", walls, I)
	}
	for c, u := range uses {
		if u != 4 {
			t.Fatalf("cell %d is used by %d edges and boundary edges, want 4", c, u)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, tc := range []struct{ I, J int }{{0, 1}, {1, 0}, {-1, 5}, {5, -3}, {1 << 20, 1 << 20}, {math.MaxInt, 1}} {
		if m, err := Generate(tc.I, tc.J); err == nil {
			t.Errorf("Generate(%d, %d) = %d nodes, want an error", tc.I, tc.J, m.NNode)
		}
	}
}

func TestLinspace(t *testing.T) {
	tests := []struct {
		a, b float64
		n    int
		want []float64
	}{
		{0, 1, 1, []float64{1}},
		{0, 1, 2, []float64{0, 1}},
		{-3, 3, 3, []float64{-3, 0, 3}},
		{0, 3, 3, []float64{0, 1.5, 3}},
		{-3, 3, 7, []float64{-3, -2, -1, 0, 1, 2, 3}},
		{0, 3, 4, []float64{0, 1, 2, 3}},
	}
	for _, tc := range tests {
		got := linspace(tc.a, tc.b, tc.n)
		if len(got) != len(tc.want) {
			t.Errorf("linspace(%g, %g, %d) = %v, want %v", tc.a, tc.b, tc.n, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] || math.Signbit(got[i]) != math.Signbit(tc.want[i]) {
				t.Errorf("linspace(%g, %g, %d) = %v, want %v", tc.a, tc.b, tc.n, got, tc.want)
				break
			}
		}
	}
	// Symmetric ranges give exactly mirrored values.
	r := linspace(-3, 3, 1201)
	for k := range r {
		if r[k] != -r[len(r)-1-k] {
			t.Fatalf("linspace(-3, 3, 1201)[%d] = %v, not the negation of %v", k, r[k], r[len(r)-1-k])
		}
	}
}

// rounded returns m with every coordinate replaced by the value that Write
// followed by Read gives for it.
func rounded(m *Mesh) *Mesh {
	r := *m
	r.X = make([]float64, len(m.X))
	for i, v := range m.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			r.X[i] = v
			if math.IsNaN(v) {
				r.X[i] = math.NaN()
				if math.Signbit(v) {
					r.X[i] = negNaN
				}
			}
			continue
		}
		r.X[i], _ = strconv.ParseFloat(string(appendFixed6(nil, v)), 64)
	}
	return &r
}

func TestRoundTrip(t *testing.T) {
	m, err := Generate(40, 60)
	if err != nil {
		t.Fatal(err)
	}
	text := encode(t, m)
	r, err := Read(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !r.Equal(rounded(m)) {
		t.Fatalf("Read(Write(m)) differs from m with coordinates rounded to 6 decimals")
	}
	if again := encode(t, r); !bytes.Equal(again, text) {
		t.Fatalf("Write(Read(Write(m))) differs from Write(m)")
	}

	dir := t.TempDir()
	for _, name := range []string{"mesh.dat", "mesh.dat.gz"} {
		path := filepath.Join(dir, name)
		if err := m.WriteFile(path); err != nil {
			t.Fatalf("WriteFile(%s): %v", name, err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		isGz := len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b
		if isGz != strings.HasSuffix(name, ".gz") {
			t.Errorf("%s: gzip = %v", name, isGz)
		}
		f, err := ReadFile(path)
		if err != nil {
			t.Fatalf("ReadFile(%s): %v", name, err)
		}
		if !f.Equal(r) {
			t.Errorf("ReadFile(%s) differs from Read of the written text", name)
		}
		// Overwriting an existing file works too.
		if err := f.WriteFile(path); err != nil {
			t.Fatalf("WriteFile(%s) again: %v", name, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("WriteFile left %d files in the directory, want 2", len(ents))
	}
	if err := m.WriteFile(filepath.Join(dir, "no", "such", "dir.dat")); err == nil {
		t.Errorf("WriteFile into a missing directory succeeded")
	}
}

func TestWriteFormat(t *testing.T) {
	m := &Mesh{
		NNode: 8, NCell: 1, NEdge: 1, NBedge: 1,
		X: []float64{
			math.Copysign(0, -1), 0,
			-1e-9, 4e-7,
			0.0078125, -0.0234375, // exact ties: to even
			0.1234565, 2.5,
			math.Inf(1), math.Inf(-1),
			math.NaN(), negNaN,
			-123456.7890123, 1e20,
			5e-7, -5e-7, // binary values lie just below 0.5e-6 in magnitude
		},
		Cell:   []int32{0, 1, 2, 3},
		Edge:   []int32{4, 5},
		Ecell:  []int32{0, 0},
		Bedge:  []int32{6, 7},
		Becell: []int32{0},
		Bound:  []int32{-42},
	}
	want := " 8 1 1 1 \n" +
		" -0.000000 0.000000 \n" +
		" -0.000000 0.000000 \n" +
		" 0.007812 -0.023438 \n" +
		" 0.123456 2.500000 \n" +
		" inf -inf \n" +
		" nan -nan \n" +
		" -123456.789012 100000000000000000000.000000 \n" +
		" 0.000000 -0.000000 \n" + // 5e-7 is just below the tie
		" 0 1 2 3 \n" +
		" 4 5 0 0 \n" +
		" 6 7 0 -42 \n"
	got := string(encode(t, m))
	if got != want {
		t.Errorf("Write:\n%q\nwant\n%q", got, want)
	}
	r, err := Read(strings.NewReader(got))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !r.Equal(rounded(m)) {
		t.Errorf("Read(Write(m)) differs from the rounded mesh")
	}
	if !math.Signbit(r.X[0]) || !math.IsNaN(r.X[11]) || !math.Signbit(r.X[11]) {
		t.Errorf("signs of -0 or -nan lost: %v %v", r.X[0], r.X[11])
	}
	m.Bedge[0] = 8
	if err := m.Write(&bytes.Buffer{}); err == nil {
		t.Errorf("Write of an invalid mesh succeeded")
	}
}

// small is a valid mesh: 4 nodes, 1 cell, 1 edge, 2 bedges.
const small = " 4 1 1 2 \n" + // line 1
	" 0.000000 0.000000 \n" + // line 2: node 0
	" 1.000000 0.000000 \n" + // 3
	" 1.000000 1.000000 \n" + // 4
	" 0.000000 1.000000 \n" + // 5: node 3
	" 0 1 2 3 \n" + // 6: cell 0
	" 0 1 0 0 \n" + // 7: edge 0
	" 1 2 0 1 \n" + // 8: bedge 0
	" 2 3 0 2 \n" // 9: bedge 1

// replaceLine returns small with 1-based line n replaced by s.
func replaceLine(n int, s string) string {
	lines := strings.SplitAfter(small, "\n")
	lines[n-1] = s
	return strings.Join(lines, "")
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string // substrings of the error
	}{
		{"empty", "", []string{"line 1:", "empty input"}},
		{"only whitespace", "   \n", []string{"line 1:", "expected 4 counts", "got 0"}},
		{"too few counts", " 4 1 1 \n", []string{"line 1:", "expected 4 counts", "got 3"}},
		{"too many counts", " 4 1 1 2 5 \n", []string{"line 1:", "got 5"}},
		{"negative count", " 4 -1 1 2 \n", []string{"line 1:", "ncell", "negative"}},
		{"non-numeric count", " 4 1 x 2 \n", []string{"line 1:", "nedge", `"x"`}},
		{"float count", " 4.0 1 1 2 \n", []string{"line 1:", "nnode", `"4.0"`}},
		{"huge count", " 4 1 1 99999999999999999999 \n", []string{"line 1:", "nbedge"}},
		{"count over int32", " 2147483648 0 0 0 \n", []string{"line 1:", "nnode", "exceeds"}},
		{"truncated in nodes", strings.Join(strings.SplitAfter(small, "\n")[:3], ""),
			[]string{"line 4:", "end of input", "node 2 of 4"}},
		{"truncated in cells", strings.Join(strings.SplitAfter(small, "\n")[:5], ""),
			[]string{"line 6:", "end of input", "cell 0 of 1"}},
		{"truncated in bedges", strings.Join(strings.SplitAfter(small, "\n")[:8], ""),
			[]string{"line 9:", "end of input", "bedge 1 of 2"}},
		{"huge count truncated", " 2000000000 0 0 0 \n 1 2 \n", []string{"line 3:", "end of input", "node 1 of 2000000000"}},
		{"malformed float", replaceLine(3, " 1.0.0 0.000000 \n"), []string{"line 3:", "node 1", "x", `"1.0.0"`}},
		{"malformed y", replaceLine(4, " 1.000000 abc \n"), []string{"line 4:", "node 2", "y", `"abc"`}},
		{"float overflow", replaceLine(4, " 1e999 1 \n"), []string{"line 4:", "node 2", "range"}},
		{"node line extra field", replaceLine(2, " 0.0 0.0 0.0 \n"), []string{"line 2:", "node 0", "expected 2 fields, got 3"}},
		{"node line one field", replaceLine(5, " 0.0\n"), []string{"line 5:", "node 3", "expected 2 fields, got 1"}},
		{"blank line", replaceLine(5, "\n"), []string{"line 5:", "node 3", "got 0"}},
		{"cell node out of range", replaceLine(6, " 0 1 4 3 \n"), []string{"line 6:", "cell 0", "node index 4 out of range [0,4)"}},
		{"cell node negative", replaceLine(6, " 0 -1 2 3 \n"), []string{"line 6:", "cell 0", "node index -1 out of range"}},
		{"cell node not int", replaceLine(6, " 0 1 2.0 3 \n"), []string{"line 6:", "cell 0", `invalid node index "2.0"`}},
		{"cell extra field", replaceLine(6, " 0 1 2 3 0 \n"), []string{"line 6:", "cell 0", "expected 4 fields, got 5"}},
		{"edge node out of range", replaceLine(7, " 0 9 0 0 \n"), []string{"line 7:", "edge 0", "node index 9 out of range [0,4)"}},
		{"edge cell out of range", replaceLine(7, " 0 1 0 1 \n"), []string{"line 7:", "edge 0", "cell index 1 out of range [0,1)"}},
		{"edge too few fields", replaceLine(7, " 0 1 0\n"), []string{"line 7:", "edge 0", "expected 4 fields, got 3"}},
		{"bedge node out of range", replaceLine(9, " 2 4 0 2 \n"), []string{"line 9:", "bedge 1", "node index 4 out of range"}},
		{"bedge cell out of range", replaceLine(8, " 1 2 3 1 \n"), []string{"line 8:", "bedge 0", "cell index 3 out of range [0,1)"}},
		{"bound not int", replaceLine(9, " 2 3 0 x \n"), []string{"line 9:", "bedge 1", "boundary kind"}},
		{"bound over int32", replaceLine(9, " 2 3 0 2147483648 \n"), []string{"line 9:", "bedge 1", "boundary kind"}},
		{"trailing garbage", small + "\n  \n 1 2 3 4 \n", []string{"line 12:", "unexpected data"}},
		{"trailing garbage no newline", small + "x", []string{"line 10:", "unexpected data"}},
		{"long line", replaceLine(2, strings.Repeat(" ", MaxLineLength)+"0 0\n"), []string{"line 2:", "longer than"}},
		{"bad gzip", "\x1f\x8b\x08garbage", []string{"gzip"}},
		{"truncated gzip", string(gzipBytes(t, []byte(small))[:40]), []string{"mesh:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Read(strings.NewReader(tc.input))
			if err == nil {
				t.Fatalf("Read succeeded (%d nodes), want error containing %q", m.NNode, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadAccepts(t *testing.T) {
	want, err := Read(strings.NewReader(small))
	if err != nil {
		t.Fatalf("Read(small): %v", err)
	}
	if err := want.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, input string }{
		{"crlf", strings.ReplaceAll(small, "\n", "\r\n")},
		{"tabs and runs of spaces", strings.ReplaceAll(small, " ", " \t  ")},
		{"no leading or trailing spaces", strings.ReplaceAll(strings.ReplaceAll(small, " \n", "\n"), "\n ", "\n")[1:]},
		{"no final newline", strings.TrimSuffix(small, "\n")},
		{"trailing blank lines", small + "\n \n\t\n"},
		{"other float spellings", replaceLine(4, " 1 1e0 \n")},
		{"plus signs", replaceLine(6, " +0 +1 2 3 \n")},
		{"gzip", string(gzipBytes(t, []byte(small)))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Read(strings.NewReader(tc.input))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if !m.Equal(want) {
				t.Errorf("Read gave a different mesh")
			}
		})
	}

	// Boundary kinds are not restricted; special floats are accepted.
	m, err := Read(strings.NewReader(replaceLine(9, " 2 3 0 -2147483648 \n")))
	if err != nil || m.Bound[1] != math.MinInt32 {
		t.Errorf("bound -2147483648: %v", err)
	}
	m, err = Read(strings.NewReader(replaceLine(2, " -nan inf \n")))
	if err != nil || !math.IsNaN(m.X[0]) || !math.Signbit(m.X[0]) || !math.IsInf(m.X[1], 1) {
		t.Errorf("-nan inf: %v", err)
	}
	// An empty mesh is valid.
	m, err = Read(strings.NewReader(" 0 0 0 0 \n"))
	if err != nil || m.NNode != 0 || m.Validate() != nil {
		t.Errorf("empty mesh: %v", err)
	}
}

func TestValidate(t *testing.T) {
	good := func() *Mesh {
		m, err := Read(strings.NewReader(small))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name   string
		modify func(m *Mesh)
		want   string
	}{
		{"negative count", func(m *Mesh) { m.NEdge = -1 }, "nedge = -1"},
		{"short X", func(m *Mesh) { m.X = m.X[:7] }, "len(X) = 7, want 8"},
		{"long Cell", func(m *Mesh) { m.Cell = append(m.Cell, 0) }, "len(Cell) = 5, want 4"},
		{"count mismatch", func(m *Mesh) { m.NBedge = 1 }, "len(Bedge) = 4, want 2"},
		{"cell node", func(m *Mesh) { m.Cell[2] = 4 }, "cell 0: node index 4 out of range [0,4)"},
		{"edge node", func(m *Mesh) { m.Edge[1] = -1 }, "edge 0: node index -1"},
		{"edge cell", func(m *Mesh) { m.Ecell[1] = 1 }, "edge 0: cell index 1 out of range [0,1)"},
		{"bedge node", func(m *Mesh) { m.Bedge[3] = 7 }, "bedge 1: node index 7"},
		{"becell", func(m *Mesh) { m.Becell[1] = 2 }, "bedge 1: cell index 2"},
	}
	for _, tc := range tests {
		m := good()
		tc.modify(m)
		err := m.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
	m := good()
	m.Bound[0] = 12345 // any boundary kind is fine
	if err := m.Validate(); err != nil {
		t.Errorf("Validate with bound 12345: %v", err)
	}
	if err := (*Mesh)(nil).Validate(); err == nil {
		t.Errorf("nil mesh validated")
	}
}

func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		if _, err := Generate(400, 600); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReadFileRefusesSpecialFiles: a FIFO, a link to /dev/zero or a
// directory given as the mesh file is refused at once, naming the path
// and what it is (a FIFO used to block ReadFile for ever).
func TestReadFileRefusesSpecialFiles(t *testing.T) {
	for _, s := range regfiletest.Make(t, "mesh.dat") {
		t.Run(s.Name, func(t *testing.T) {
			regfiletest.Refused(t, s, func() error { _, err := ReadFile(s.Path); return err })
		})
	}
}

func BenchmarkGenerateWrite(b *testing.B) {
	for b.Loop() {
		m, err := Generate(400, 600)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Write(discard{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadReference(b *testing.B) {
	path := refMeshPath()
	if _, err := os.Stat(path); err != nil {
		b.Skipf("reference mesh not available at %s: %v", path, err)
	}
	for b.Loop() {
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// discard is an io.Writer that drops everything (io.Discard would do, but
// this keeps the benchmark free of its ReaderFrom fast paths).
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
