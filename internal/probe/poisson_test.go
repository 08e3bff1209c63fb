package probe_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/poisson"
)

// TestProbeReadTriangleMalformed (finding 7, fixed): malformed Triangle
// files (negative, huge or fractional counts in the headers) give an
// error naming the file, line and count; they used to panic (slice
// bounds), and a negative attribute count was accepted with the
// boundary marker read from a coordinate.
func TestProbeReadTriangleMalformed(t *testing.T) {
	good := "4 2 0 1\n0 0 0 1\n1 1 0 1\n2 0 1 1\n3 1 1 1\n"
	goodEle := "2 3 0\n0 0 1 2\n1 1 3 2\n"
	cases := []struct{ name, node, ele, want string }{
		{"negative nodes", "-1 2 0 1\n0 0 0 1\n", goodEle, "m.node:1: the header's node count is -1"},
		{"huge nodes", "1e300 2 0 1\n0 0 0 1\n", goodEle, "node count is 1e+300"},
		{"fractional nodes", "3.5 2 0 1\n0 0 0 1\n", goodEle, "node count is 3.5"},
		{"negative triangles", good, "-1 3 0\n0 0 1 2\n", "m.ele:1: the header's triangle count is -1"},
		{"huge triangles", good, "4e9 3 0\n0 0 1 2\n", "triangle count is 4e+09"},
		{"negative attributes", "4 2 -1 1\n0 0 0\n1 1 0\n2 0 1\n3 1 1\n", goodEle, "attribute count is -1"},
		{"negative markers", "4 2 0 -1\n0 0 0\n1 1 0\n2 0 1\n3 1 1\n", goodEle, "marker count is -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "m")
			if err := os.WriteFile(base+".node", []byte(c.node), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(base+".ele", []byte(c.ele), 0o644); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("ReadTriangle panicked: %v", p)
				}
			}()
			m, err := poisson.ReadTriangle(base)
			if err == nil {
				t.Fatalf("malformed mesh accepted: %+v", m)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadTriangle: %v; want it to contain %q", err, c.want)
			}
		})
	}
}
