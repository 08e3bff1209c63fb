package cache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// otherUID is a uid that owns nothing on the test machine.
const otherUID = 54321

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
}

func open(t *testing.T, dir string) *Dir {
	t.Helper()
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if IsTemp(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestOpenCreatesPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	d := open(t, dir)
	fi, err := os.Stat(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("new cache directory has mode %04o, want 0700", fi.Mode().Perm())
	}
}

func TestOpenRelativeDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, rel := range []string{".", "sub", "./sub/deeper"} {
		d := open(t, rel)
		want, _ := filepath.EvalSymlinks(filepath.Join(dir, rel))
		if !filepath.IsAbs(d.Path()) || d.Path() != want {
			t.Errorf("Open(%q).Path() = %q, want %q", rel, d.Path(), want)
		}
		if !filepath.IsAbs(d.File("x.so")) {
			t.Errorf("Open(%q).File is relative: %q", rel, d.File("x.so"))
		}
	}
}

// TestOpenRefusesUnsafeDirectories: a cache directory, or a parent, that
// another user could write is refused with an error saying which and what
// to do.
func TestOpenRefusesUnsafeDirectories(t *testing.T) {
	cases := []struct {
		name  string
		root  bool // needs root (chown)
		setup func(t *testing.T, parent, dir string)
		want  []string // in the error; nil: accepted
	}{
		{"private", false, func(t *testing.T, parent, dir string) {}, nil},
		{"group writable", false, func(t *testing.T, parent, dir string) { chmod(t, dir, 0o770) }, []string{"cache directory", "0770", "chmod go-w"}},
		{"world writable", false, func(t *testing.T, parent, dir string) { chmod(t, dir, 0o777) }, []string{"cache directory", "0777", "other users can write"}},
		{"world writable sticky", false, func(t *testing.T, parent, dir string) { chmod(t, dir, 0o1777) }, []string{"cache directory", "mode 1777", "other users can write"}},
		{"readable by others", false, func(t *testing.T, parent, dir string) { chmod(t, dir, 0o755) }, nil},
		{"parent sticky like /tmp", false, func(t *testing.T, parent, dir string) { chmod(t, parent, 0o1777) }, nil},
		{"parent world writable", false, func(t *testing.T, parent, dir string) { chmod(t, parent, 0o777) }, []string{"parent directory", parentMark}},
		{"owned by another user", true, func(t *testing.T, parent, dir string) { chown(t, dir) }, []string{"owned by uid 54321", "OP2_CACHE_DIR"}},
		{"parent owned by another user", true, func(t *testing.T, parent, dir string) { chown(t, parent) }, []string{"parent directory", "owned by uid 54321"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root {
				requireRoot(t)
			}
			parent := filepath.Join(t.TempDir(), parentMark)
			dir := filepath.Join(parent, "cache")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			chmod(t, parent, 0o700)
			c.setup(t, parent, dir)
			_, err := Open(dir)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range append(c.want, parentMark) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q: %v", w, err)
				}
			}
		})
	}
}

// TestOpenCreatesNothingUnderUnsafeParents: a cache directory to be made
// under a parent others can write is refused before it is made.
func TestOpenCreatesNothingUnderUnsafeParents(t *testing.T) {
	parent := filepath.Join(t.TempDir(), parentMark)
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	chmod(t, parent, 0o777)
	dir := filepath.Join(parent, "sub", "cache")
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "refusing parent directory") {
		t.Errorf("Open under a world-writable parent: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(parent, "sub")); !os.IsNotExist(err) {
		t.Errorf("Open made %s before refusing its parent: %v", filepath.Join(parent, "sub"), err)
	}
}

// TestOpenRefusesUnsafeSymlinks: a cache directory reached through
// symbolic links is used only if nobody but the user (or root) made the
// links or could change them, and an entry that is a link is never used.
func TestOpenRefusesUnsafeSymlinks(t *testing.T) {
	cases := []struct {
		name string
		root bool // needs root (lchown)
		// setup makes the links below base and returns the path given to
		// Open; real is a private directory the links may point to.
		setup func(t *testing.T, base, real string) string
		want  []string // in the error; nil: accepted
	}{
		{"private link", false, func(t *testing.T, base, real string) string {
			return link(t, real, filepath.Join(base, "l"))
		}, nil},
		{"relative link", false, func(t *testing.T, base, real string) string {
			rel, err := filepath.Rel(base, real)
			if err != nil {
				t.Fatal(err)
			}
			return link(t, rel, filepath.Join(base, "l"))
		}, nil},
		{"link to a directory still to be created", false, func(t *testing.T, base, real string) string {
			return filepath.Join(link(t, real, filepath.Join(base, "l")), "new", "cache")
		}, nil},
		{"link in a sticky world-writable directory", false, func(t *testing.T, base, real string) string {
			chmod(t, mkdir(t, filepath.Join(base, "tmp")), 0o1777)
			return link(t, real, filepath.Join(base, "tmp", "l"))
		}, nil},
		{"link in a world-writable directory", false, func(t *testing.T, base, real string) string {
			chmod(t, mkdir(t, filepath.Join(base, "open")), 0o777)
			return link(t, real, filepath.Join(base, "open", "l"))
		}, []string{"symbolic link", "open/l", "other users can write", "0777"}},
		{"link in a group-writable directory", false, func(t *testing.T, base, real string) string {
			chmod(t, mkdir(t, filepath.Join(base, "grp")), 0o770)
			return link(t, real, filepath.Join(base, "grp", "l"))
		}, []string{"symbolic link", "grp/l", "0770"}},
		{"chain through an unsafe link", false, func(t *testing.T, base, real string) string {
			chmod(t, mkdir(t, filepath.Join(base, "open")), 0o777)
			mid := link(t, real, filepath.Join(base, "open", "mid"))
			return link(t, mid, filepath.Join(base, "l"))
		}, []string{"symbolic link", "open/mid"}},
		{"link to a world-writable directory", false, func(t *testing.T, base, real string) string {
			chmod(t, real, 0o777)
			return link(t, real, filepath.Join(base, "l"))
		}, []string{"cache directory", "other users can write"}},
		{"link to a file", false, func(t *testing.T, base, real string) string {
			f := filepath.Join(base, "file")
			if err := os.WriteFile(f, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return link(t, f, filepath.Join(base, "l"))
		}, []string{"not a directory"}},
		{"link loop", false, func(t *testing.T, base, real string) string {
			link(t, filepath.Join(base, "b"), filepath.Join(base, "a"))
			return link(t, filepath.Join(base, "a"), filepath.Join(base, "b"))
		}, []string{"too many levels of symbolic links"}},
		{"link owned by another user", true, func(t *testing.T, base, real string) string {
			l := link(t, real, filepath.Join(base, "l"))
			if err := os.Lchown(l, otherUID, otherUID); err != nil {
				t.Fatal(err)
			}
			return l
		}, []string{"symbolic link", "owned by uid 54321"}},
		{"link in a sticky directory, owned by another user", true, func(t *testing.T, base, real string) string {
			chmod(t, mkdir(t, filepath.Join(base, "tmp")), 0o1777)
			l := link(t, real, filepath.Join(base, "tmp", "l"))
			if err := os.Lchown(l, otherUID, otherUID); err != nil {
				t.Fatal(err)
			}
			return l
		}, []string{"symbolic link", "owned by uid 54321"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root {
				requireRoot(t)
			}
			base := t.TempDir()
			chmod(t, base, 0o700)
			real := mkdir(t, filepath.Join(base, "real"))
			d, err := Open(c.setup(t, base, real))
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !strings.HasPrefix(d.Path(), real) {
					t.Errorf("Path() = %s, want a path below %s", d.Path(), real)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted (path %s)", d.Path())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q: %v", w, err)
				}
			}
		})
	}

	t.Run("entry is a link", func(t *testing.T) {
		d := open(t, t.TempDir())
		if err := d.Put("target", "k", []byte("body")); err != nil {
			t.Fatal(err)
		}
		link(t, d.File("target"), d.File("entry"))
		_, err := d.Get("entry", "k")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Get of a link: %v, want ErrInvalid naming the symbolic link", err)
		}
	})
}

func link(t *testing.T, target, path string) string {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func mkdir(t *testing.T, path string) string {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

const parentMark = "parent-dir"

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	m := mode.Perm()
	if mode&0o1000 != 0 {
		m |= os.ModeSticky
	}
	if err := os.Chmod(path, m); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, path string) {
	t.Helper()
	if err := os.Chown(path, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chown(path, 0, 0) })
}

// TestGetBindsEntriesToKeys: an entry is only returned for its own key;
// a swapped, truncated or damaged entry is ErrInvalid, a missing one
// os.ErrNotExist.
func TestGetBindsEntriesToKeys(t *testing.T) {
	d := open(t, t.TempDir())
	if err := d.Put("a", "key-a", []byte("body of a")); err != nil {
		t.Fatal(err)
	}
	if err := d.Put("b", "key-b", []byte("body of b")); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(d.File("b"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		mangle  func(b []byte) []byte
		wantErr error
	}{
		{"intact", func(b []byte) []byte { return b }, nil},
		{"swapped (a's valid entry)", func([]byte) []byte { b, _ := os.ReadFile(d.File("a")); return b }, ErrInvalid},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, ErrInvalid},
		{"trailer only", func(b []byte) []byte { return b[len(b)-trailerSize:] }, ErrInvalid},
		{"body byte flipped", func(b []byte) []byte { b = bytes.Clone(b); b[2] ^= 1; return b }, ErrInvalid},
		{"checksum flipped", func(b []byte) []byte { b = bytes.Clone(b); b[len(b)-len(magic)-1] ^= 1; return b }, ErrInvalid},
		{"empty", func([]byte) []byte { return nil }, ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(d.File("b"), c.mangle(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			e, err := d.Get("b", "key-b")
			if c.wantErr == nil {
				if err != nil || string(e.Body) != "body of b" {
					t.Fatalf("Get = %v, %v", e, err)
				}
				if err := e.Unchanged(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("Get error %v, want %v", err, c.wantErr)
			}
		})
	}
	if _, err := d.Get("missing", "key"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing entry: %v, want os.ErrNotExist", err)
	}
	if e, err := d.Get("a", "key-b"); err == nil {
		t.Errorf("a's entry returned for b's key: %q", e.Body)
	}
}

// TestGetRefusesEntriesOthersCouldWrite: an entry writable by others, owned
// by another user or not a regular file is never used; one that is not a
// regular file is refused saying what it is, without blocking on a FIFO.
func TestGetRefusesEntriesOthersCouldWrite(t *testing.T) {
	cases := []struct {
		name  string
		root  bool
		setup func(t *testing.T, path string)
		want  string // in the error, if not ""
	}{
		{"group writable", false, func(t *testing.T, p string) { chmod(t, p, 0o620) }, "is writable by other users"},
		{"world writable", false, func(t *testing.T, p string) { chmod(t, p, 0o666) }, "is writable by other users"},
		{"owned by another user", true, func(t *testing.T, p string) { chown(t, p) }, "not by you"},
		{"symbolic link", false, func(t *testing.T, p string) {
			real := p + ".real"
			if err := os.Rename(p, real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, p); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link, which is never followed"},
		{"fifo", false, func(t *testing.T, p string) {
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip(err)
			}
		}, "is a named pipe (FIFO), not a regular file"},
		{"directory", false, func(t *testing.T, p string) {
			os.Remove(p)
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "is a directory, not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root {
				requireRoot(t)
			}
			d := open(t, t.TempDir())
			if err := d.Put("e", "key", []byte("code")); err != nil {
				t.Fatal(err)
			}
			c.setup(t, d.File("e"))
			if e, err := d.Get("e", "key"); !errors.Is(err, ErrInvalid) || !strings.Contains(fmt.Sprint(err), c.want) {
				t.Fatalf("Get = %v, %v; want ErrInvalid saying %q", e, err, c.want)
			}
		})
	}
}

func TestUnchangedDetectsReplacement(t *testing.T) {
	d := open(t, t.TempDir())
	if err := d.Put("e", "key", []byte("one")); err != nil {
		t.Fatal(err)
	}
	e, err := d.Get("e", "key")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put("e", "key", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if err := e.Unchanged(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Unchanged after a replacement = %v", err)
	}
}

// TestFailedWritesLeaveNoTemporaryFiles simulates a full disk.
func TestFailedWritesLeaveNoTemporaryFiles(t *testing.T) {
	d := open(t, t.TempDir())
	tmp := d.TempPath("lib", ".so")
	if err := os.WriteFile(tmp, []byte("library"), 0o600); err != nil {
		t.Fatal(err)
	}
	saved := writeHook
	t.Cleanup(func() { writeHook = saved })
	writeHook = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	if err := d.Put("e", "key", []byte("some body")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Put on a full disk: %v", err)
	}
	if err := d.WriteFile("src.c", []byte("int x;")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("WriteFile on a full disk: %v", err)
	}
	if err := d.AppendTrailer(tmp, "key"); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("AppendTrailer on a full disk: %v", err)
	}
	if left := temps(t, d.Path()); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
	for _, name := range []string{"e", "src.c"} {
		if _, err := os.Stat(d.File(name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a failed write", name)
		}
	}
	if err := d.Commit(d.TempPath("gone", ".so"), "x"); err == nil {
		t.Error("Commit of a missing file succeeded")
	}
}

func TestAppendTrailerAndCommit(t *testing.T) {
	d := open(t, t.TempDir())
	tmp := d.TempPath("lib", ".so")
	if err := os.WriteFile(tmp, []byte("library"), 0o600); err != nil {
		t.Fatal(err)
	}
	// As a linker makes it under umask 002: writable by the group.
	if err := os.Chmod(tmp, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := d.AppendTrailer(tmp, "key"); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(tmp, "lib.so"); err != nil {
		t.Fatal(err)
	}
	e, err := d.Get("lib.so", "key")
	if err != nil || string(e.Body) != "library" {
		t.Fatalf("Get = %v, %v", e, err)
	}
	if fi, err := os.Stat(d.File("lib.so")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the entry made from a file of mode 0775: %v, %v; want mode 0755", fi.Mode(), err)
	}
	if left := temps(t, d.Path()); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestOpenSweepsStaleTemporaryFiles: temporary files older than StaleAge
// (left by killed processes) go; recent ones (a build in progress) and
// other files stay.
func TestOpenSweepsStaleTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * StaleAge)
	files := map[string]bool{ // name: should survive
		".lib.123.abcdef.tmp.so": false,
		".src.123.abcdef.tmp.c":  false,
		".x.so.9.00.tmp":         false,
		".lib.456.fresh.tmp.so":  true,
		"0123abcd.so":            true,
		".hidden":                true,
	}
	for name, keep := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if !keep || name == "0123abcd.so" || name == ".hidden" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	open(t, dir)
	for name, keep := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if exists := err == nil; exists != keep {
			t.Errorf("%s: exists = %v, want %v", name, exists, keep)
		}
	}
}
