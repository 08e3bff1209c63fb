package regfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPending: Commit puts the data at the path (0644), Abort and a
// Pending never committed leave the earlier file, and no temporary file
// stays behind.
func TestPending(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	for _, c := range []struct {
		data   string
		commit bool
		want   string
	}{
		{"first", true, "first"},
		{"second, dropped", false, "first"},
		{"third", true, "third"},
	} {
		p, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write([]byte(c.data)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); c.commit && string(b) == c.data {
			t.Errorf("%q is at the path before Commit", c.data)
		}
		if c.commit {
			if err := p.Commit(); err != nil {
				t.Fatal(err)
			}
		} else {
			p.Abort()
		}
		p.Abort() // after either: nothing
		if err := p.Commit(); err != nil {
			t.Errorf("Commit after %v: %v", c.commit, err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != c.want {
			t.Errorf("after writing %q (commit %v): %q, %v; want %q", c.data, c.commit, b, err, c.want)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Errorf("the folder holds %d entries, want the file alone", len(ents))
		}
	}
	_, err := Create(filepath.Join(dir, "missing", "x"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "missing", "x")) {
		t.Errorf("Create in a missing folder: %v, want an error naming the path", err)
	}
}

// TestPendingLinkAndDevice: a link is written as the file it leads to
// and stays a link; a device is written in place and stays a device.
func TestPendingLinkAndDevice(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is now %v, %v; want it left a link", fi.Mode(), err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "new" {
		t.Errorf("the link's file holds %q, %v; want \"new\"", b, err)
	}
	if err := WriteFile("/dev/null", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is now %v, %v", fi.Mode(), err)
	}
	if _, err := Create(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Create of a directory: %v", err)
	}
}
