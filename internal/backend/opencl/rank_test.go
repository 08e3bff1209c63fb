package opencl

import (
	"os"
	"testing"

	cl "github.com/goop2/op2/internal/opencl"
)

// TestLaunchedRank: the driver gets the launcher's rank in a job of
// several processes, and cl.NoRank for a process no launcher started or
// the only process of a job.
func TestLaunchedRank(t *testing.T) {
	cases := []struct {
		name       string
		rank, size string
		want       int
	}{
		{"no launcher", "", "", cl.NoRank},
		{"one process", "0", "1", cl.NoRank},
		{"rank 1 of 2", "1", "2", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []string{"PMI_RANK", "PMIX_RANK", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"} {
				t.Setenv(v, "")
				os.Unsetenv(v)
			}
			t.Setenv("OMPI_COMM_WORLD_RANK", c.rank)
			t.Setenv("OMPI_COMM_WORLD_SIZE", c.size)
			if got := launchedRank(); got != c.want {
				t.Fatalf("launchedRank() = %d, want %d", got, c.want)
			}
		})
	}
}
