package dist

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMETISMissingSaysWhatToInstall loads METIS from a library that does
// not exist (in a child process: the library is loaded once per process)
// and checks that the error says what to install.
func TestMETISMissingSaysWhatToInstall(t *testing.T) {
	if os.Getenv("OP2_TEST_METIS_CHILD") != "" {
		_, _, err := METISOwners(4, []int32{0, 1, 2, 3, 4}, []int32{1, 0, 3, 2}, 2)
		if !errors.Is(err, ErrNoMETIS) {
			t.Fatalf("METISOwners with %s=%s: error %v, want ErrNoMETIS", METISLibraryEnv, os.Getenv(METISLibraryEnv), err)
		}
		t.Log(err)
		for _, want := range []string{"apt-get install libmetis5", "/nonexistent/libmetis.so.5", METISLibraryEnv} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMETISMissingSaysWhatToInstall$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "OP2_TEST_METIS_CHILD=1", METISLibraryEnv+"=/nonexistent/libmetis.so.5")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "apt-get install libmetis5") {
		t.Fatalf("the child did not report the error:\n%s", out)
	}
}
