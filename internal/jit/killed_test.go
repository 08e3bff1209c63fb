package jit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goop2/op2/internal/cache"
)

// killedCompileEnv makes TestKilledCompileLeavesNothing's child: it
// compiles with a compiler that never finishes, in the cache directory
// the variable names.
const killedCompileEnv = "OP2_JIT_KILLED_COMPILE_DIR"

// TestKilledCompileLeavesNothing: a process killed while its compiler
// runs leaves its private copy of the source (and the library's
// temporary name) behind; the next compile in another process that
// shares the cache removes them, while its own files survive.
func TestKilledCompileLeavesNothing(t *testing.T) {
	if dir := os.Getenv(killedCompileEnv); dir != "" {
		d, err := cache.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		hang := script(t, `for a; do [ "$a" = --version ] && { echo "slow cc 1.0"; exit 0; }; done
for a; do if [ "$prev" = -o ]; then : > "$a"; fi; prev=$a; done
echo $$ > "$OP2_JIT_KILLED_COMPILER_PID"
exec sleep 600`)
		c := &Compiler{CC: hang, Cache: d}
		_, err = c.Build("int killed_midway;", nil)
		t.Fatalf("the compile returned: %v", err)
	}
	c := newCompiler(t, "cc")
	dir := c.Cache.Path()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledCompileLeavesNothing$")
	// The child is killed, so its t.TempDir is never removed: it goes
	// under this test's.
	pidFile := filepath.Join(t.TempDir(), "compiler.pid")
	cmd.Env = append(os.Environ(), killedCompileEnv+"="+dir, "TMPDIR="+t.TempDir(), "OP2_JIT_KILLED_COMPILER_PID="+pidFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the child and its compiler
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
	}()
	// Wait until the compiler runs: the private source and the library
	// are there.
	var left []string
	for end := time.Now().Add(time.Minute); len(left) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the child's compile never started; temporary files: %v", left)
		}
		left, _ = filepath.Glob(filepath.Join(dir, ".*.tmp*"))
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true
	// The compiler, in a process group of its own, dies with the child.
	b, err := os.ReadFile(pidFile)
	var pid int
	if _, serr := fmt.Sscan(string(b), &pid); err != nil || serr != nil {
		t.Fatalf("the compiler wrote no pid: %q, %v", b, err)
	}
	for end := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the compiler (pid %d) still runs 10 s after its program was killed", pid)
		}
	}
	for _, f := range left {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s vanished with the child", f)
		}
	}
	if !slices.ContainsFunc(left, func(f string) bool { return strings.HasSuffix(f, ".tmp.c") }) {
		t.Fatalf("no temporary source among %v", left)
	}
	// A compile here (the cache was opened before the child died).
	src := "int after_the_kill(void) { return 7; }"
	if _, err := c.Build(src, nil); err != nil {
		t.Fatal(err)
	}
	noTemps(t, c)
}
