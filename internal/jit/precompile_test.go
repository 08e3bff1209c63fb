package jit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/internal/cache"
)

// TestPrecompile: Precompile puts the library in the disk cache without
// loading it for the caller; Build then loads it from there, compiling
// nothing; Ready tells the two states apart.
func TestPrecompile(t *testing.T) {
	c := newCompiler(t, "cc")
	const src = `__attribute__((visibility("default"))) int op2_loop(void) { return 41; }`
	if c.Ready(src) {
		t.Fatal("Ready before anything was built")
	}
	before, loadedBefore := ReadStats(), Loaded()
	if err := c.Precompile(src, []string{"op2_loop"}); err != nil {
		t.Fatal(err)
	}
	after := ReadStats()
	if got := after.Precompiles - before.Precompiles; got != 1 {
		t.Errorf("%d compiles in the background, want 1", got)
	}
	if after.Compiles != before.Compiles || Loaded() != loadedBefore {
		t.Errorf("Precompile counted %d compiles and left %d libraries loaded", after.Compiles-before.Compiles, Loaded()-loadedBefore)
	}
	if !c.Ready(src) {
		t.Fatal("not Ready after Precompile")
	}
	if _, err := os.Stat(c.Cache.File(mustKey(t, c, src) + ".c")); err != nil {
		t.Errorf("the source is not kept next to the library: %v", err)
	}
	// Again: nothing to do.
	if err := c.Precompile(src, []string{"op2_loop"}); err != nil || ReadStats().Precompiles != after.Precompiles {
		t.Errorf("a second Precompile: %v, %d compiles", err, ReadStats().Precompiles-after.Precompiles)
	}
	lib, err := c.Build(src, []string{"op2_loop"})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Release()
	if s := ReadStats(); s.Compiles != before.Compiles || s.DiskHits != after.DiskHits+1 {
		t.Errorf("Build after Precompile: %d compiles, %d disk hits; want 0 and 1", s.Compiles-before.Compiles, s.DiskHits-after.DiskHits)
	}
	noTemps(t, c)
	noWorkDirs(t)
}

// TestPrecompileFailures: a compile error and a library lacking a symbol
// are errors as from Build, and leave no entry, temporary file or
// private directory behind.
func TestPrecompileFailures(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      any
	}{
		{"compile error", "int op2_loop(void) { return 1 +; }", new(*CompileError)},
		{"missing symbol", `__attribute__((visibility("default"))) int op2_precompiled_other(void) { return 2; }`, new(*LoadError)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCompiler(t, "cc")
			err := c.Precompile(tc.src, []string{"op2_loop"})
			if !errors.As(err, tc.want) {
				t.Fatalf("error %v, want a %T", err, tc.want)
			}
			if strings.Contains(err.Error(), workPrefix) {
				t.Errorf("the error names the private directory: %v", err)
			}
			if c.Ready(tc.src) {
				t.Error("Ready after a failed Precompile")
			}
			libs, _ := filepath.Glob(filepath.Join(c.Cache.Path(), "*.so"))
			if len(libs) != 0 {
				t.Errorf("a failed build was stored: %v", libs)
			}
			noTemps(t, c)
			noWorkDirs(t)
		})
	}
}

// TestPrecompileRunsTheCompilerNiced: the compiler Precompile runs has
// the lowest priority; Build's has the caller's.
func TestPrecompileRunsTheCompilerNiced(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nice")
	cc := script(t, `for a; do [ "$a" = --version ] && exec cc "$@"; done
nice > "`+out+`"
exec cc "$@"`)
	c := newCompiler(t, cc)
	const src = `__attribute__((visibility("default"))) int op2_loop(void) { return 3; }`
	if err := c.Precompile(src, []string{"op2_loop"}); err != nil {
		t.Fatal(err)
	}
	if got := readNice(t, out); got != LowPriority {
		t.Errorf("the background compiler ran at nice %d, want %d", got, LowPriority)
	}
	// Build's compiler starts from the calling thread, with its nice
	// value.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own := readNice(t, "/proc/thread-self/stat")
	lib, err := c.Build(src+"\n", []string{"op2_loop"})
	if err != nil {
		t.Fatal(err)
	}
	lib.Release()
	if got := readNice(t, out); got != own {
		t.Errorf("Build's compiler ran at nice %d, want the process's %d", got, own)
	}
}

// readNice reads a nice value: the number in a file the fake compiler
// wrote, or the 19th field of a /proc stat file.
func readNice(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(path, "/proc/") {
		s = strings.Fields(s[strings.LastIndexByte(s, ')')+2:])[16]
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

func mustKey(t *testing.T, c *Compiler, src string) string {
	t.Helper()
	k, err := c.Key(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// noWorkDirs fails when this process left a private directory of
// Precompile in the temporary directory.
func noWorkDirs(t *testing.T) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), workPrefix+strconv.Itoa(os.Getpid())+"-*"))
	if len(left) != 0 {
		t.Errorf("private directories left behind: %v", left)
	}
}

// exitingPrecompileEnv makes TestPrecompileOutlivesTheProcess's child: it
// starts a Precompile in the cache directory the variable names, with the
// slow compiler exitingCompilerEnv names, and exits while it compiles.
const (
	exitingPrecompileEnv = "OP2_JIT_EXITING_PRECOMPILE_DIR"
	exitingCompilerEnv   = "OP2_JIT_EXITING_PRECOMPILE_CC"
)

// exitingSource is what the child compiles.
const exitingSource = `__attribute__((visibility("default"))) int op2_loop(void) { return 1234; }`

// TestPrecompileOutlivesTheProcess: a process that exits while a compile
// in the background runs leaves the library for the next process, which
// loads it without compiling.
func TestPrecompileOutlivesTheProcess(t *testing.T) {
	if dir := os.Getenv(exitingPrecompileEnv); dir != "" {
		d, err := cache.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		c := &Compiler{CC: os.Getenv(exitingCompilerEnv), Flags: []string{"-O1"}, Cache: d}
		go c.Precompile(exitingSource, []string{"op2_loop"})
		// Exit once the compiler has started (it then sleeps 3 s).
		started := filepath.Join(dir, "started")
		for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(started); err == nil || time.Now().After(end) {
				break
			}
		}
		os.Exit(0)
	}
	// The same compiler (its identity is in the key) in both processes;
	// it says in the cache directory when it starts.
	c := newCompiler(t, "")
	slow := script(t, `for a; do [ "$a" = --version ] && exec cc "$@"; done
: > "`+c.Cache.Path()+`/started"
sleep 3
exec cc "$@"`)
	c.CC = slow
	cmd := exec.Command(os.Args[0], "-test.run=^TestPrecompileOutlivesTheProcess$")
	cmd.Env = append(os.Environ(), exitingPrecompileEnv+"="+c.Cache.Path(), exitingCompilerEnv+"="+slow, "TMPDIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	key, name, _, err := c.entry(exitingSource, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Cache.File(pendingName(name))); err == nil {
		t.Fatal("the library was there when the child exited: the test shows nothing")
	}
	for end := time.Now().Add(time.Minute); !c.Ready(exitingSource); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the compile the child started left no library")
		}
	}
	before := ReadStats()
	lib, err := c.Build(exitingSource, []string{"op2_loop"})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Release()
	if s := ReadStats(); s.Compiles != before.Compiles || s.DiskHits != before.DiskHits+1 {
		t.Errorf("Build after the child: %d compiles, %d disk hits; want 0 and 1", s.Compiles-before.Compiles, s.DiskHits-before.DiskHits)
	}
	if _, err := c.Cache.Get(name, "goop2-jit-lib\x00"+key+"\x00"+srcHash(exitingSource)); err != nil {
		t.Errorf("the adopted library is no valid entry: %v", err)
	}
	if _, err := os.Stat(c.Cache.File(pendingName(name))); err == nil {
		t.Error("the pending library is still there")
	}
	noTemps(t, c)
}

func srcHash(src string) string {
	h := sha256.Sum256([]byte(src))
	return hex.EncodeToString(h[:])
}

// TestPrecompileIntoARemovedCache: a cache directory removed while
// Precompile compiles for it (a program or a test done with it) makes
// the build fail with an error, quietly: nothing panics, the directory
// is not made again and nothing of the build is left elsewhere.
func TestPrecompileIntoARemovedCache(t *testing.T) {
	marks := t.TempDir()
	started, proceed := filepath.Join(marks, "started"), filepath.Join(marks, "go")
	// The compiler says it has started, then waits for the test.
	cc := script(t, `for a; do [ "$a" = --version ] && exec cc "$@"; done
: > "`+started+`"
i=0
while [ ! -e "`+proceed+`" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done
exec cc "$@"`)
	dir := filepath.Join(t.TempDir(), "cache")
	d, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &Compiler{CC: cc, Flags: []string{"-O1"}, Cache: d}
	const src = `__attribute__((visibility("default"))) int op2_loop(void) { return 5; }`
	done := make(chan error, 1)
	go func() { done <- c.Precompile(src, []string{"op2_loop"}) }()
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Precompile returned before its compiler started: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("removing the cache directory while the compiler runs: %v", err)
	}
	if err := os.WriteFile(proceed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Error("Precompile into a removed cache directory succeeded")
	} else {
		t.Log(err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed cache directory is back: %v", err)
	}
	noWorkDirs(t)
}

// TestPendingLibraryChecked: a pending library cut short, another loop's
// copied over it, one without its pending trailer or with a damaged
// byte is never loaded (a library cut short made dlopen fail with
// SIGBUS): Build removes it and compiles, and the entry it makes holds
// this loop's library.
func TestPendingLibraryChecked(t *testing.T) {
	const (
		mine  = `__attribute__((visibility("default"))) int op2_loop = 7;`
		other = `__attribute__((visibility("default"))) int op2_loop = 8;`
	)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, c *Compiler, pending string, b []byte) []byte
	}{
		{"cut in half", func(_ *testing.T, _ *Compiler, _ string, b []byte) []byte { return b[:len(b)/2] }},
		{"cut before the trailer", func(_ *testing.T, c *Compiler, _ string, b []byte) []byte {
			key, _, _, _ := c.entry(mine, nil)
			return b[:len(b)-len(key)-2*sha256.Size-len(pendingMagic)]
		}},
		{"a byte changed", func(_ *testing.T, _ *Compiler, _ string, b []byte) []byte {
			b = append([]byte(nil), b...)
			b[len(b)/3] ^= 0x40
			return b
		}},
		{"another loop's", func(t *testing.T, c *Compiler, _ string, _ []byte) []byte {
			if err := c.Precompile(other, []string{"op2_loop"}); err != nil {
				t.Fatal(err)
			}
			_, name, _, _ := c.entry(other, nil)
			b, err := os.ReadFile(c.Cache.File(pendingName(name)))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCompiler(t, "cc")
			if err := c.Precompile(mine, []string{"op2_loop"}); err != nil {
				t.Fatal(err)
			}
			_, name, _, _ := c.entry(mine, nil)
			pending := c.Cache.File(pendingName(name))
			b, err := os.ReadFile(pending)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(pending, tc.damage(t, c, pending, b), 0o600); err != nil {
				t.Fatal(err)
			}
			before := ReadStats()
			lib, err := c.Build(mine, []string{"op2_loop"})
			if err != nil {
				t.Fatal(err)
			}
			defer lib.Release()
			if s := ReadStats(); s.Compiles != before.Compiles+1 || s.DiskHits != before.DiskHits {
				t.Errorf("Build: %d compiles, %d disk hits; want 1 and 0", s.Compiles-before.Compiles, s.DiskHits-before.DiskHits)
			}
			p, err := lib.Symbol("op2_loop")
			if err != nil {
				t.Fatal(err)
			}
			if got := *(*int32)(p); got != 7 {
				t.Errorf("op2_loop = %d, want 7", got)
			}
			if _, err := os.Lstat(pending); err == nil {
				t.Error("the damaged pending library is still there")
			}
			noTemps(t, c)
		})
	}
}

// TestPrecompileNeedsSHA256Sum: without sha256sum (which writes a
// pending library's checksum) Precompile says what to install.
func TestPrecompileNeedsSHA256Sum(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatal(err)
	}
	c := newCompiler(t, cc)
	t.Setenv("PATH", t.TempDir())
	err = c.Precompile(`__attribute__((visibility("default"))) int op2_loop = 5;`, []string{"op2_loop"})
	if err == nil || !strings.Contains(err.Error(), "sha256sum") || !strings.Contains(err.Error(), "coreutils") {
		t.Errorf("Precompile without sha256sum: %v, want an error naming it and coreutils", err)
	}
}

// TestCacheNamesTakenBack: a directory at an entry's name or at its
// pending name, and a stale pending library left beside a valid entry,
// are removed: the entry is stored and found again (a directory made every
// later process compile again), a compile in the background adopted (mv
// had moved its library into the directory, one more file each run).
func TestCacheNamesTakenBack(t *testing.T) {
	c := newCompiler(t, "cc")
	const src = `__attribute__((visibility("default"))) int op2_loop = 11;`
	_, name, _, err := c.entry(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	pending := c.Cache.File(pendingName(name))
	for _, dir := range []string{c.Cache.File(name), pending} {
		if err := os.MkdirAll(filepath.Join(dir, "inside"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Precompile(src, []string{"op2_loop"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(pending); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the pending library: %v, %v; want a file", fi, err)
	}
	before := ReadStats()
	lib, err := c.Build(src, []string{"op2_loop"})
	if err != nil {
		t.Fatal(err)
	}
	lib.Release()
	if fi, err := os.Lstat(c.Cache.File(name)); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the entry: %v, %v; want a file", fi, err)
	}
	if s := ReadStats(); s.Compiles != before.Compiles {
		t.Errorf("the pending library was compiled again, not adopted")
	}
	// A pending library beside a valid entry goes with the next compile
	// once it is stale (a younger one may be a Precompile's, checking it).
	if err := os.WriteFile(pending, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	young := c.Cache.File("young.pending.so")
	for _, p := range []string{young, c.Cache.File("young.so")} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-cache.StaleAge - time.Minute)
	if err := os.Chtimes(pending, old, old); err != nil {
		t.Fatal(err)
	}
	lib, err = c.Build(`__attribute__((visibility("default"))) int op2_loop = 12;`, []string{"op2_loop"})
	if err != nil {
		t.Fatal(err)
	}
	lib.Release()
	if _, err := os.Lstat(pending); !os.IsNotExist(err) {
		t.Errorf("the stale pending library beside the entry: %v; want it removed", err)
	}
	if _, err := os.Lstat(young); err != nil {
		t.Errorf("a young pending library beside its entry: %v; want it kept", err)
	}
}
