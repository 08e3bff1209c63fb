package opencl

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSeparateRankCache: a rank of a job of several processes gets a
// PoCL cache folder of its own under POCL_CACHE_DIR; a process no
// launcher started, or the only process of a job, keeps POCL_CACHE_DIR.
func TestSeparateRankCache(t *testing.T) {
	base := t.TempDir()
	cases := []struct {
		name       string
		rank, size string
		want       string
	}{
		{"no launcher", "", "", base},
		{"one process", "0", "1", base},
		{"rank 1 of 2", "1", "2", filepath.Join(base, "rank-1")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []string{"PMI_RANK", "PMIX_RANK", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"} {
				t.Setenv(v, "")
				os.Unsetenv(v)
			}
			t.Setenv("OMPI_COMM_WORLD_RANK", c.rank)
			t.Setenv("OMPI_COMM_WORLD_SIZE", c.size)
			t.Setenv("POCL_CACHE_DIR", base)
			separateRankCache()
			if got := os.Getenv("POCL_CACHE_DIR"); got != c.want {
				t.Fatalf("POCL_CACHE_DIR = %q, want %q", got, c.want)
			}
			if fi, err := os.Stat(c.want); err != nil || !fi.IsDir() {
				t.Fatalf("%s: %v", c.want, err)
			}
		})
	}
}
