package opencl

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSeparateRankCache: a rank of a job of several processes gets a
// PoCL cache folder of its own under POCL_CACHE_DIR; NoRank (a process no
// launcher started, or the only process of a job) keeps POCL_CACHE_DIR.
func TestSeparateRankCache(t *testing.T) {
	base := t.TempDir()
	cases := []struct {
		name string
		rank int
		want string
	}{
		{"no rank", NoRank, base},
		{"rank 0", 0, filepath.Join(base, "rank-0")},
		{"rank 1", 1, filepath.Join(base, "rank-1")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("POCL_CACHE_DIR", base)
			separateRankCache(c.rank)
			if got := os.Getenv("POCL_CACHE_DIR"); got != c.want {
				t.Fatalf("POCL_CACHE_DIR = %q, want %q", got, c.want)
			}
			if fi, err := os.Stat(c.want); err != nil || !fi.IsDir() {
				t.Fatalf("%s: %v", c.want, err)
			}
		})
	}
}
