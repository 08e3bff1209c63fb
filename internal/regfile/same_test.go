package regfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSameFile: links, ./ spellings and absolute paths of one file are
// the same file, existing or not; other files are not.
func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("a.dat", []byte("mesh"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("b.dat", []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A regular file on /dev/shm is a file like any other.
	if f, err := os.CreateTemp("/dev/shm", "regfile-*.dat"); err == nil {
		f.Close()
		defer os.Remove(f.Name())
		if !SameFile(f.Name(), f.Name()) || !SameFile(f.Name(), "/dev/shm/./"+filepath.Base(f.Name())) || SameFile(f.Name(), "/dev/shm/regfile-new.dat") {
			t.Errorf("SameFile on %s: a regular file in /dev/shm is not compared as a file", f.Name())
		}
		if !SameFile("/dev/shm/regfile-new.dat", "/dev/shm/./regfile-new.dat") {
			t.Errorf("SameFile of two spellings of a new file in /dev/shm is false")
		}
		if err := os.Symlink(f.Name(), "shm-link.dat"); err != nil {
			t.Fatal(err)
		}
		if !SameFile("shm-link.dat", f.Name()) || !SameFile("shm-link.dat", "shm-link.dat") {
			t.Errorf("SameFile of a link to %s and the file is false", f.Name())
		}
	}
	if err := os.Symlink("a.dat", "link.dat"); err != nil {
		t.Fatal(err)
	}
	if err := os.Link("a.dat", "hard.dat"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", "subl"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"a.dat", "a.dat", true},
		{"a.dat", "./a.dat", true},
		{"a.dat", filepath.Join(dir, "a.dat"), true},
		{"a.dat", "sub/../a.dat", true},
		{"a.dat", "link.dat", true},
		{"a.dat", "hard.dat", true},
		{"new.vtu", "./new.vtu", true},
		{"sub/new.vtu", "subl/new.vtu", true},
		{"a.dat", "b.dat", false},
		{"a.dat", "new.vtu", false},
		{"a.dat", "", false},
		{"a.dat", "/proc/self/cwd/a.dat", true},
		{"new.vtu", "/proc/self/cwd/new.vtu", true},
		{"/proc/self/cwd/sub/../a.dat", "hard.dat", true},
		{"/proc/self/status", "/proc/self/status", false},
		{"/dev/null", "/dev/null", false},
		{"/dev/stdout", "/dev/stderr", false},
		{"/dev/stdout", "/dev/stdout", false},
	} {
		if got := SameFile(c.a, c.b); got != c.same {
			t.Errorf("SameFile(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
	err := CheckOutputs([]Named{{"-mesh", "a.dat"}}, []Named{{"-vtk", ""}, {"-dump-q", "./a.dat"}})
	if err == nil || !strings.Contains(err.Error(), "-dump-q ./a.dat and -mesh a.dat are the same file") {
		t.Errorf("an output over the input: %v", err)
	}
	err = CheckOutputs([]Named{{"-mesh", "a.dat"}}, []Named{{"-vtk", "o.vtu"}, {"-dump-q", "o.vtu"}})
	if err == nil || !strings.Contains(err.Error(), "-dump-q and -vtk both name o.vtu") {
		t.Errorf("two outputs on one file: %v", err)
	}
	if err := CheckOutputs([]Named{{"-mesh", "a.dat"}}, []Named{{"-vtk", "o.vtu"}, {"-dump-q", "b.dat"}}); err != nil {
		t.Errorf("distinct files: %v", err)
	}
	err = CheckOutputs(nil, []Named{{"-vtk", "o.vtu"}, {"-dump-q", "nodir/q.bin"}})
	if err == nil || err.Error() != "-dump-q nodir/q.bin: its folder nodir does not exist" {
		t.Errorf("an output in a missing folder: %v", err)
	}
	err = CheckOutputs(nil, []Named{{"-vtk", "a.dat/o.vtu"}})
	if err == nil || err.Error() != "-vtk a.dat/o.vtu: a.dat is not a folder" {
		t.Errorf("an output in a file: %v", err)
	}
}
