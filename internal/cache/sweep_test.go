package cache

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sweepChildEnv turns the test binary into a child process of the sweep
// tests: "hold DIR" opens the cache DIR, makes temporary files, prints
// their names and waits for its standard input to close; "churn DIR"
// writes, sweeps and checks temporary files for a while.
const sweepChildEnv = "OP2_CACHE_SWEEP_CHILD"

// TestMain runs the tests, or the child a sweep test started.
func TestMain(m *testing.M) {
	if mode := os.Getenv(sweepChildEnv); mode != "" {
		os.Exit(sweepChild(mode))
	}
	os.Exit(m.Run())
}

func sweepChild(mode string) int {
	what, dir, _ := strings.Cut(mode, " ")
	d, err := Open(dir)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	switch what {
	case "hold":
		// A compile's files: its private source and its library.
		f, err := d.CreateTemp("src", ".c")
		if err != nil {
			fmt.Println(err)
			return 1
		}
		lib := d.TempPath("lib", ".so")
		if err := os.WriteFile(lib, []byte("half a library"), 0o600); err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Println(filepath.Base(f.Name()))
		fmt.Println(filepath.Base(lib))
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "churn":
		// Write temporary files while this and other processes sweep:
		// none may vanish before it is renamed.
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
			f, err := d.CreateTemp("entry", "")
			if err != nil {
				fmt.Println(err)
				return 1
			}
			f.WriteString("partial")
			d.Sweep()
			if _, err := f.Stat(); err != nil {
				fmt.Println(err)
				return 1
			}
			if _, err := os.Stat(f.Name()); err != nil {
				fmt.Println("a live process's temporary file was removed:", err)
				return 1
			}
			f.Close()
			if err := os.Rename(f.Name(), d.File("entry")); err != nil {
				fmt.Println(err)
				return 1
			}
		}
		fmt.Println("ok")
		return 0
	}
	return 2
}

// holder is a child process holding temporary files in a cache.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	files []string
}

func startHolder(t *testing.T, dir string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), sweepChildEnv+"=hold "+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
		h.files = append(h.files, sc.Text())
	}
	if len(h.files) != 2 {
		t.Fatalf("child: %v", h.files)
	}
	return h
}

func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

// TestSweepRemovesTemporariesOfEndedProcesses: the temporary files of a
// process killed midway are removed at once when another process opens
// the cache or sweeps it, with its lock file; those of a live process
// stay until it ends, however it ends; files naming no process go by age.
func TestSweepRemovesTemporariesOfEndedProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * StaleAge)
	legacy := map[string]bool{".lib.123.abcdef.tmp.so": false, ".src.456.fedcba.tmp.c": true} // name: stays
	for name, stays := range legacy {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if !stays {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	live := startHolder(t, dir)
	killed := startHolder(t, dir)
	if err := killed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed.cmd.Wait()
	for _, f := range append(live.files, killed.files...) {
		if !exists(dir, f) {
			t.Fatalf("%s missing before the sweep", f)
		}
	}

	d := open(t, dir) // this process's first Open of dir sweeps
	for _, f := range killed.files {
		if exists(dir, f) {
			t.Errorf("%s, left by a killed process, survived Open", f)
		}
	}
	for _, f := range live.files {
		if !exists(dir, f) {
			t.Errorf("%s, a live process's, was removed", f)
		}
	}
	for name, stays := range legacy {
		if exists(dir, name) != stays {
			t.Errorf("%s: exists = %v, want %v", name, !stays, stays)
		}
	}
	lives := func() (n int) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), liveMark) && !IsTemp(e.Name()) {
				n++
			}
		}
		return n
	}
	if n := lives(); n != 2 { // this process's and the live child's
		t.Errorf("%d lock files after the sweep, want 2", n)
	}

	// The live process ends normally, leaving its files: the next sweep
	// removes them.
	live.stdin.Close()
	if err := live.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	d.Sweep()
	for _, f := range live.files {
		if exists(dir, f) {
			t.Errorf("%s, left by a process that has ended, survived Sweep", f)
		}
	}
	if n := lives(); n != 1 {
		t.Errorf("%d lock files after the second sweep, want this process's only", n)
	}
	// This process's own files are never swept.
	mine := d.TempPath("mine", ".so")
	if err := os.WriteFile(mine, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d.Sweep()
	if !exists(dir, filepath.Base(mine)) {
		t.Error("Sweep removed a temporary file of its own process")
	}
}

// TestSweepConcurrent: processes that write temporary files and sweep at
// the same time never lose a file they are writing, and a process killed
// meanwhile has its files removed.
func TestSweepConcurrent(t *testing.T) {
	dir := t.TempDir()
	killed := startHolder(t, dir)
	killed.cmd.Process.Signal(syscall.SIGKILL)
	killed.cmd.Wait()
	const n = 6
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), sweepChildEnv+"=churn "+dir)
			out, err := cmd.CombinedOutput()
			outs[i] = fmt.Sprintf("%s(%v)", strings.TrimSpace(string(out)), err)
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if o != "ok(<nil>)" {
			t.Errorf("process %d: %s", i, o)
		}
	}
	open(t, dir).Sweep()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if slices.ContainsFunc(left, IsTemp) || len(left) != 2 { // entry and this process's lock file
		t.Errorf("left in the cache: %v, want the entry and one lock file", left)
	}
}

// TestTempToken: the token is read back from every temporary name, and
// names from older versions have none.
func TestTempToken(t *testing.T) {
	d := &Dir{path: t.TempDir()}
	for _, base := range []string{"lib", "0123abcd.so", "a.b.c", "x-y"} {
		for _, suffix := range []string{"", ".c", ".so"} {
			name := filepath.Base(d.TempPath(base, suffix))
			if tok, ok := tempToken(name); !ok || tok != token {
				t.Errorf("%s: token %q, %v; want %q", name, tok, ok, token)
			}
		}
	}
	for _, name := range []string{".lib.123.abcdef.tmp.so", ".x.so.9.00.tmp", ".tmp", "..tmp", ".a.1-zz.00.tmp"} {
		if tok, ok := tempToken(name); ok {
			t.Errorf("%s: token %q, want none", name, tok)
		}
	}
}
