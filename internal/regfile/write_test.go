package regfile

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o666&^umask {
			t.Errorf("mode %v, %v; want %v (0666 less the umask)", fi.Mode(), err, 0o666&^umask)
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

// TestPendingInPlace: what cannot be replaced is written in place: the
// process's standard output when it is a pipe (/dev/stdout leads through
// /proc to pipe:[N]), and a link that leads nowhere yet (its target is
// made). A file replaced keeps its mode.
func TestPendingInPlace(t *testing.T) {
	if os.Getenv("REGFILE_TEST_STDOUT") != "" {
		if err := WriteFile("/dev/stdout", []byte("NEW OUTPUT\n")); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Stdout.WriteString("after\n") // to the same file
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPendingInPlace$")
	cmd.Env = append(os.Environ(), "REGFILE_TEST_STDOUT=1")
	out, err := cmd.Output() // a pipe
	if err != nil || string(out) != "NEW OUTPUT\nafter\n" {
		t.Errorf("writing /dev/stdout on a pipe: %q, %v", out, err)
	}
	// On a file: written in place, so that the file stays the shell's
	// (renamed over, what the program printed next went to the old one).
	log := filepath.Join(t.TempDir(), "log")
	lf, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644) // >>
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(os.Args[0], "-test.run=^TestPendingInPlace$")
	cmd.Env = append(os.Environ(), "REGFILE_TEST_STDOUT=1")
	cmd.Stdout = lf
	err = cmd.Run()
	lf.Close()
	if b, rerr := os.ReadFile(log); err != nil || rerr != nil || string(b) != "NEW OUTPUT\nafter\n" {
		t.Errorf("writing /dev/stdout on a file: %q, %v, %v", b, err, rerr)
	}
	if ents, _ := os.ReadDir(filepath.Dir(log)); len(ents) != 1 {
		t.Errorf("the log's folder holds %d entries, want the log alone", len(ents))
	}
	dir := t.TempDir()
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("target.txt", dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dangling, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the dangling link is now %v, %v", fi.Mode(), err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "target.txt")); err != nil || string(b) != "x" {
		t.Errorf("the link's target holds %q, %v", b, err)
	}
	private := filepath.Join(dir, "private")
	if err := os.WriteFile(private, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(private, []byte("y")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(private); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a 0600 file replaced has mode %v, %v", fi.Mode(), err)
	}
}

// TestReplace: Replace puts a file in place of a link, leaving what the
// link led to alone.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	p, err := Replace(link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "old" {
		t.Errorf("the link's old target holds %q, %v; want it left alone", b, err)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the path is %v, %v; want a regular file", fi.Mode(), err)
	}
}

// TestPendingFIFONobodyReads: a FIFO no process reads is refused at
// once, and stays (the write would wait for ever; it is the user's); a
// socket is refused too.
func TestPendingFIFONobodyReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- WriteFile(path, []byte("z")) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no process reads") {
			t.Errorf("writing a FIFO nobody reads: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writing a FIFO nobody reads still waits after 10s")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v, %v", fi.Mode(), err)
	}
	sock := filepath.Join(t.TempDir(), "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := WriteFile(sock, []byte("z")); err == nil || !strings.Contains(err.Error(), "socket") {
		t.Errorf("writing a socket: %v", err)
	}
}

// TestPendingSweepsStale: a write removes the temporary files of earlier
// writes of its path that a killed program left, once an hour old, and
// leaves younger ones (a write under way) and other paths' alone.
func TestPendingSweepsStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out[1].vtu")
	old := filepath.Join(dir, ".out[1].vtu.123.tmp")
	young := filepath.Join(dir, ".out[1].vtu.456.tmp")
	other := filepath.Join(dir, ".other.vtu.789.tmp")
	for _, f := range []string{old, young, other} {
		if err := os.WriteFile(f, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * staleAfter)
	for _, f := range []string{old, other} {
		if err := os.Chtimes(f, past, past); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFile(path, []byte("whole")); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{old: false, young: true, other: true, path: true} {
		if _, err := os.Stat(f); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", filepath.Base(f), err == nil, want)
		}
	}
}

// TestWriteWith: a write that fails leaves the earlier file and no
// temporary file, its error kept and the path added; an error of
// creating the file gets the prefix.
func TestWriteWith(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteWith(path, "pkg", write("first")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteWith(path, "pkg", func(w io.Writer) error {
		write("second, half")(w)
		return boom
	})
	if !errors.Is(err, boom) || err.Error() != "boom (writing "+path+")" {
		t.Errorf("failed write: %v; want boom (writing %s)", err, path)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "first" {
		t.Errorf("after a failed write the path holds %q, %v; want first", b, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the folder holds %d entries, want the file alone", len(ents))
	}
	missing := filepath.Join(dir, "missing", "x")
	if err := WriteWith(missing, "pkg", write("x")); err == nil || !strings.HasPrefix(err.Error(), "pkg: "+missing+":") {
		t.Errorf("WriteWith in a missing folder: %v; want pkg: %s: …", err, missing)
	}
	if err := WriteWith(missing, "", write("x")); err == nil || !strings.HasPrefix(err.Error(), missing+":") {
		t.Errorf("WriteWith without a prefix: %v; want %s: …", err, missing)
	}
}
