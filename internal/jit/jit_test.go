package jit

import (
	"context"
	"errors"
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

func newCompiler(t *testing.T, cc string) *Compiler {
	t.Helper()
	d, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Compiler{CC: cc, Flags: []string{"-O1"}, Cache: d}
}

// forget drops a key from the process's table of loaded libraries, as if
// a new process were building it.
func forget(t *testing.T, c *Compiler, src string) {
	t.Helper()
	key, err := c.Key(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	loaded.Lock()
	delete(loaded.m, key)
	loaded.Unlock()
}

func noTemps(t *testing.T, c *Compiler) {
	t.Helper()
	ents, err := os.ReadDir(c.Cache.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if cache.IsTemp(e.Name()) {
			t.Errorf("temporary file left in the cache: %s", e.Name())
		}
	}
}

// script writes an executable shell script standing in for a compiler.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-cc")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSplitCommand(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"cc", []string{"cc"}},
		{"  gcc   -std=gnu11 ", []string{"gcc", "-std=gnu11"}},
		{`gcc '-DMSG="a b"'`, []string{"gcc", `-DMSG="a b"`}},
		{`gcc "-DMSG=\"a b\""`, []string{"gcc", `-DMSG="a b"`}},
		{`/opt/my\ cc/gcc -O2`, []string{"/opt/my cc/gcc", "-O2"}},
		{`gcc ''`, []string{"gcc", ""}},
		{"", nil},
	}
	for _, c := range cases {
		got, err := SplitCommand(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`gcc 'x`, `gcc "x`} {
		if _, err := SplitCommand(bad); err == nil {
			t.Errorf("SplitCommand(%q) accepted an unterminated quote", bad)
		}
	}
}

// TestCCWithArguments: CC may carry arguments, quoted as in a shell.
func TestCCWithArguments(t *testing.T) {
	c := newCompiler(t, `cc -std=gnu11 '-DOP2_TEST_MSG="two words"'`)
	lib, err := c.Build(`const char *op2_msg(void) { return OP2_TEST_MSG; }
__attribute__((visibility("default"))) int op2_loop(void) { return op2_msg()[0]; }`, []string{"op2_loop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Symbol("op2_loop"); err != nil {
		t.Fatal(err)
	}
	for _, cc := range []string{"", "   ", "cc 'unterminated"} {
		_, err := newCompiler(t, cc).Build("int x;", nil)
		if err == nil || !strings.Contains(err.Error(), "CC=") {
			t.Errorf("CC=%q: error %v, want one naming CC", cc, err)
		}
	}
}

// TestNoCompiler: a compiler command that is empty, does not parse, is
// not found or does not run gives an error matching ErrNoCompiler; a
// working compiler rejecting the source does not.
func TestNoCompiler(t *testing.T) {
	cases := []struct {
		cc, src string
		want    bool
	}{
		{"", "int x;", true},
		{"cc 'unterminated", "int x;", true},
		{"no-such-cc-anywhere", "int x;", true},
		{"false", "int x;", true},
		{"cc", "int x = ;", false},
	}
	for _, c := range cases {
		_, err := newCompiler(t, c.cc).Build(c.src, nil)
		if err == nil || errors.Is(err, ErrNoCompiler) != c.want {
			t.Errorf("CC=%q: error %v, errors.Is(ErrNoCompiler) want %v", c.cc, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), ErrNoCompiler.Error()) {
			t.Errorf("CC=%q: the sentinel's text shows in %q", c.cc, err)
		}
	}
	// A compiler another variable named (MPI's wrapper, MPICC) is named
	// so, with what to install.
	for _, cc := range []string{"no-such-cc-anywhere", "false"} {
		c := newCompiler(t, cc)
		c.Env, c.Package = "MPICC", "libopenmpi-dev"
		_, err := c.Build("int x;", nil)
		if err == nil || !strings.Contains(err.Error(), "set MPICC") || !strings.Contains(err.Error(), "apt-get install libopenmpi-dev") || strings.Contains(err.Error(), "set CC") {
			t.Errorf("MPICC=%q: %v, want an error naming MPICC and libopenmpi-dev", cc, err)
		}
	}
}

// TestBadCompilerOutput: a compiler that succeeds without writing a
// library, or writes garbage, gives an error naming the compiler and its
// output, and leaves nothing in the cache.
func TestBadCompilerOutput(t *testing.T) {
	// Each fake compiler answers --version, prints a message and then
	// misbehaves with the file after -o.
	const version = `for a; do [ "$a" = --version ] && { echo "fake cc 1.0"; exit 0; }; done`
	const findOut = version + `
for a; do if [ "$prev" = -o ]; then out=$a; fi; prev=$a; done
echo "fake compiler was here"`
	cases := []struct {
		name string
		body string
		want []string
	}{
		{"writes nothing", findOut + "\nexit 0", []string{"wrote no library", "fake compiler was here"}},
		{"writes an empty file", findOut + "\n: > \"$out\"\nexit 0", []string{"wrote no library", "fake compiler was here"}},
		{"writes garbage", findOut + "\necho garbage > \"$out\"\nexit 0", []string{"fake compiler was here", "loading the library"}},
		{"fails without output", version + "\nexit 3", []string{"exit status 3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := script(t, tc.body)
			c := newCompiler(t, cc+" -std=gnu11")
			_, err := c.Build("int op2_loop(void) { return 0; }", []string{"op2_loop"})
			if err == nil {
				t.Fatal("built")
			}
			msg := err.Error()
			t.Log(msg)
			for _, w := range append(tc.want, cc+" -std=gnu11") {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not mention %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, ".tmp") {
				t.Errorf("error names a temporary file:\n%s", msg)
			}
			noTemps(t, c)
			libs, _ := filepath.Glob(filepath.Join(c.Cache.Path(), "*.so"))
			if len(libs) != 0 {
				t.Errorf("a bad build was stored: %v", libs)
			}
		})
	}
}

func TestCompileErrorLeavesNoTemporaryFiles(t *testing.T) {
	c := newCompiler(t, "cc")
	_, err := c.Build("int op2_loop(void) { return 1 +; }", []string{"op2_loop"})
	var ce *CompileError
	if !errors.As(err, &ce) || !strings.Contains(ce.Output, "expected expression") {
		t.Fatalf("error %v, want a compile error", err)
	}
	if _, err := os.Stat(ce.SourcePath); err != nil {
		t.Errorf("generated source not kept: %v", err)
	}
	noTemps(t, c)
}

// TestEntryLackingSymbolIsRebuilt: a valid, loadable entry without a
// symbol the caller needs is damaged: rebuilt, not an error forever.
func TestEntryLackingSymbolIsRebuilt(t *testing.T) {
	c := newCompiler(t, "cc")
	const good = `__attribute__((visibility("default"))) int op2_loop(void) { return 1; }`
	const other = `__attribute__((visibility("default"))) int op2_other(void) { return 2; }`
	for _, src := range []string{good, other} {
		if _, err := c.Build(src, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Store other's library as good's entry, bound to good's key: a
	// checksum-valid entry that lacks op2_loop.
	_, otherName, otherBind, _ := c.entry(other, nil)
	_, goodName, goodBind, _ := c.entry(good, nil)
	e, err := c.Cache.Get(otherName, otherBind)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Cache.Put(goodName, goodBind, e.Body); err != nil {
		t.Fatal(err)
	}
	forget(t, c, good)
	before := ReadStats()
	lib, err := c.Build(good, []string{"op2_loop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Symbol("op2_loop"); err != nil {
		t.Fatal(err)
	}
	after := ReadStats()
	if after.Rebuilds-before.Rebuilds != 1 || after.Compiles-before.Compiles != 1 {
		t.Errorf("rebuilds %d, compiles %d; want 1 and 1", after.Rebuilds-before.Rebuilds, after.Compiles-before.Compiles)
	}
	// The rebuilt entry is good for the next process.
	forget(t, c, good)
	before = ReadStats()
	if _, err := c.Build(good, []string{"op2_loop"}); err != nil {
		t.Fatal(err)
	}
	if d := ReadStats().DiskHits - before.DiskHits; d != 1 {
		t.Errorf("rebuilt entry not reused (%d disk hits)", d)
	}
}

// TestSwappedEntryIsRebuilt: another build's valid entry copied over this
// build's is detected and rebuilt.
func TestSwappedEntryIsRebuilt(t *testing.T) {
	c := newCompiler(t, "cc")
	src := func(v int) string {
		return fmt.Sprintf(`__attribute__((visibility("default"))) int op2_v%d(void) { return %d; }`, v, v)
	}
	for v := 1; v <= 2; v++ {
		if _, err := c.Build(src(v), []string{fmt.Sprintf("op2_v%d", v)}); err != nil {
			t.Fatal(err)
		}
	}
	_, name1, _, _ := c.entry(src(1), nil)
	_, name2, _, _ := c.entry(src(2), nil)
	b, err := os.ReadFile(c.Cache.File(name1))
	if err != nil {
		t.Fatal(err)
	}
	// Replace the file rather than write into it: this process has the
	// library mapped.
	if err := os.WriteFile(c.Cache.File("swap"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(c.Cache.File("swap"), c.Cache.File(name2)); err != nil {
		t.Fatal(err)
	}
	forget(t, c, src(2))
	before := ReadStats()
	lib, err := c.Build(src(2), nil) // even without symbols to check
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Symbol("op2_v2"); err != nil {
		t.Errorf("the swapped entry was loaded: %v", err)
	}
	if n := ReadStats().Rebuilds - before.Rebuilds; n != 1 {
		t.Errorf("%d rebuilds, want 1", n)
	}
}

// TestMathLibraryLinked: generated code may call any libm function.
func TestMathLibraryLinked(t *testing.T) {
	c := newCompiler(t, "cc")
	c.Flags = []string{"-O0"} // no constant folding: real calls
	_, err := c.Build(`#include <math.h>
__attribute__((visibility("default"))) double op2_f(double x) { return pow(x, 1.5) + tgamma(x) + atan2(x, 2) + erf(x) + cbrt(x); }`, []string{"op2_f"})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUndefinedSymbolShowsWarnings: a library that cannot be loaded
// because it calls an undeclared function names the function and shows the
// compiler's warning.
func TestUndefinedSymbolShowsWarnings(t *testing.T) {
	c := newCompiler(t, "cc")
	_, err := c.Build(`__attribute__((visibility("default"))) int op2_loop(void) { return no_such_function(3); }`, []string{"op2_loop"})
	var le *LoadError
	if !errors.As(err, &le) {
		var ce *CompileError
		if errors.As(err, &ce) && strings.Contains(ce.Output, "implicit declaration") {
			t.Skip("this compiler rejects implicit declarations")
		}
		t.Fatalf("error %v, want a *LoadError", err)
	}
	t.Log(err)
	for _, w := range []string{"no_such_function", "undefined symbol", "implicit declaration", "warnings", c.Cache.Path()} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), ".tmp") {
		t.Errorf("error names a temporary file:\n%v", err)
	}
	noTemps(t, c)
}

// TestHungCompilerIsStopped: a compiler that never finishes is killed at
// the compiler's time limit, with the processes it started, and the build
// fails with a *CompileError that says so, names the limit and matches
// context.DeadlineExceeded; no temporary file is left.
func TestHungCompilerIsStopped(t *testing.T) {
	// The fake compiler answers --version, then starts a child that
	// holds its output open and waits for it, as a driver waits for cc1.
	cc := script(t, `for a; do [ "$a" = --version ] && { echo "hung cc 1.0"; exit 0; }; done
echo "hung compiler started"
sleep 600 &
wait`)
	c := newCompiler(t, cc)
	c.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := c.Build("int op2_loop(void) { return 0; }", []string{"op2_loop"})
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the build returned after %v, with a limit of %v", d, c.Timeout)
	}
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a *CompileError", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not match context.DeadlineExceeded", err)
	}
	msg := err.Error()
	for _, w := range []string{"did not finish within 300ms", "OP2_COMPILE_TIMEOUT", "hung compiler started", cc} {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not mention %q:\n%s", w, msg)
		}
	}
	noTemps(t, c)
}

// TestDefaultTimeout: a compiler without a limit of its own gets
// DefaultTimeout, minutes rather than for ever.
func TestDefaultTimeout(t *testing.T) {
	if got := (&Compiler{}).timeout(); got != DefaultTimeout || got < time.Minute {
		t.Errorf("timeout %v, want DefaultTimeout (%v)", got, DefaultTimeout)
	}
	if got := (&Compiler{Timeout: time.Second}).timeout(); got != time.Second {
		t.Errorf("timeout %v, want 1s", got)
	}
}

// TestHolds: a preprocessor condition holds as the compiler, with its
// flags, evaluates it; the answer is kept; a condition the preprocessor
// refuses, or a compiler that is not there, is an error.
func TestHolds(t *testing.T) {
	c := newCompiler(t, "cc -DOP2_TEST_FLAG=2")
	for _, x := range []struct {
		cond string
		want bool
	}{
		{"defined(__GNUC__)", true},
		{"OP2_TEST_FLAG == 2 && defined(__x86_64__) == defined(__amd64__)", true},
		{"defined(OP2_NOT_DEFINED)", false},
		{"OP2_TEST_FLAG > 2", false},
	} {
		for range 2 {
			if got, err := c.Holds(x.cond); err != nil || got != x.want {
				t.Errorf("Holds(%q) = %v, %v; want %v", x.cond, got, err, x.want)
			}
		}
	}
	if _, err := c.Holds("(1"); err == nil || !strings.Contains(err.Error(), "#if (1") {
		t.Errorf("Holds of a broken condition: %v", err)
	}
	if _, err := newCompiler(t, "op2-no-such-cc").Holds("1"); !errors.Is(err, ErrNoCompiler) {
		t.Errorf("Holds without a compiler: %v, want ErrNoCompiler", err)
	}
}

// TestNoOpenMPRuntime: a build with -fopenmp that fails where the
// compiler cannot build OpenMP code at all (here a stand-in for Clang
// without libomp-dev, which refuses every source including omp.h) says
// so, with what to install, and matches ErrNoCompiler and CompileError;
// a source that does not compile with a compiler that builds OpenMP code
// gives the CompileError alone; and the check leaves no file behind.
func TestNoOpenMPRuntime(t *testing.T) {
	cc := script(t, `for a; do [ "$a" = --version ] && { echo "fake clang 1.0"; exit 0; }; done
for a; do [ "$a" = -fopenmp ] && omp=1; done
if [ -n "$omp" ]; then
  src=$(cat /dev/stdin 2>/dev/null; for a; do case "$a" in *.c) cat "$a";; esac; done)
  case "$src" in *omp.h*) echo "fatal error: 'omp.h' file not found" >&2; exit 1;; esac
fi
exec cc "$@"`)
	src := "#include <omp.h>\n__attribute__((visibility(\"default\"))) int op2_loop(void) { return omp_get_max_threads(); }"
	c := newCompiler(t, cc)
	_, err := c.Build(src, []string{"op2_loop"}, "-fopenmp")
	var ce *CompileError
	if err == nil || !errors.Is(err, ErrNoCompiler) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "libomp-dev") || !strings.Contains(err.Error(), "cannot build OpenMP code") {
		t.Fatalf("error %v: want one saying the compiler builds no OpenMP code, matching ErrNoCompiler and CompileError", err)
	}
	noTemps(t, c)
	if _, err := newCompiler(t, cc).Build(src, []string{"op2_loop"}); err == nil || errors.Is(err, ErrNoCompiler) {
		t.Errorf("without -fopenmp: %v, want a plain compile error", err)
	}
	gcc := newCompiler(t, "cc")
	if _, err := gcc.Build(src, []string{"op2_loop"}, "-fopenmp"); err != nil {
		t.Fatalf("cc -fopenmp: %v", err)
	}
	_, err = gcc.Build("int x = ;", nil, "-fopenmp")
	if err == nil || errors.Is(err, ErrNoCompiler) || !errors.As(err, &ce) {
		t.Errorf("cc -fopenmp, a broken source: %v, want a CompileError alone", err)
	}
	noTemps(t, gcc)
}

// TestOpenMPCheckNotFooled: flags under which the generated code or
// omp.h does not compile (-Wmissing-prototypes -Werror, -Wsystem-headers
// -Wpedantic -Werror) make a failing openmp build a plain CompileError,
// not "no OpenMP"; a check that timed out is not
// kept, so the next failing build checks again; and flags that write a
// dependency file (-MD) leave none behind from the checks.
func TestOpenMPCheckNotFooled(t *testing.T) {
	var ce *CompileError
	// -Wsystem-headers -Wpedantic -Werror refuses GCC's omp.h itself
	// (an enumerator's value): the user's flags, not the runtime.
	for _, flags := range [][]string{{"-O1", "-Wmissing-prototypes", "-Werror"}, {"-O1", "-Wsystem-headers", "-Wpedantic", "-Werror"}} {
		strict := newCompiler(t, "cc")
		strict.Flags = flags
		_, err := strict.Build("int x = ;", nil, "-fopenmp")
		if !errors.As(err, &ce) || errors.Is(err, ErrNoCompiler) {
			t.Errorf("a broken source with flags %q: %v, want a CompileError alone", flags, err)
		}
	}

	// The first check's compiles take 3 s, past the 1 s limit; after
	// that the compiler refuses omp.h, as Clang without libomp does.
	marker := filepath.Join(t.TempDir(), "slow-once")
	cc := script(t, `for a; do [ "$a" = --version ] && { echo "fake clang 1.0"; exit 0; }; done
for a; do [ "$a" = - ] && stdin=1; done
if [ -n "$stdin" ]; then
  [ -e `+marker+` ] || { touch `+marker+`; sleep 3; }
  case "$(cat)" in *omp.h*) echo "fatal error: 'omp.h' file not found" >&2; exit 1;; esac
  exec cc "$@" -x c - </dev/null
fi
exec cc "$@"`)
	c := newCompiler(t, cc)
	c.Timeout = time.Second
	if _, err := c.Build("int x = ;", nil, "-fopenmp"); errors.Is(err, ErrNoCompiler) || !errors.As(err, &ce) {
		t.Errorf("a check that timed out: %v, want the CompileError alone", err)
	}
	if _, err := c.Build("int y = ;", nil, "-fopenmp"); !errors.Is(err, ErrNoCompiler) || !strings.Contains(err.Error(), "libomp-dev") {
		t.Errorf("the check after one that timed out: %v, want no OpenMP", err)
	}
	noTemps(t, c)

	t.Chdir(t.TempDir())
	deps := newCompiler(t, "cc")
	deps.Flags = []string{"-O1", "-MD", "-MF", "deps.d"}
	if ok, err := deps.Holds("defined(__GNUC__)"); !ok || err != nil {
		t.Errorf("Holds with -MD: %v, %v", ok, err)
	}
	if err := deps.checkOpenMP(); err != nil {
		t.Errorf("checkOpenMP with -MD: %v", err)
	}
	if left, _ := filepath.Glob("*"); len(left) != 0 {
		t.Errorf("the checks left %v in the working directory", left)
	}
	if left, _ := filepath.Glob(filepath.Join(deps.Cache.Path(), "*.d")); len(left) != 0 {
		t.Errorf("the checks left %v in the cache", left)
	}
}

// TestAttributesInC: a C source with C2x attributes builds with a
// compiler that reads them only with attributeFlag (a stand-in for Clang
// 15, running cc), which is added to that build alone; a compiler that
// reads them without it (GCC) gets no flag, nor does a source without
// [[, nor C++.
func TestAttributesInC(t *testing.T) {
	cc := script(t, `for a; do [ "$a" = --version ] && { echo "fake clang 15"; exit 0; }; done
flag=; args=; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for a; do
  case "$a" in
  `+attributeFlag+`) flag=1;;
  *.c) sed 's/\[\[[^]]*\]\]//g' "$a" > "$tmp/src.c"; src=$(cat "$a"); args="$args '$tmp/src.c'";;
  -) stdin=1; args="$args '-'";;
  *) args="$args '$a'";;
  esac
done
if [ -n "$stdin" ]; then src=$(cat); fi
case "$src" in *"[["*) [ -n "$flag" ] || { echo "error: expected expression" >&2; exit 1; };; esac
# cc (GCC, or Clang 15 itself) compiles the source without its attributes.
if [ -n "$stdin" ]; then printf '%s\n' "$src" | sed 's/\[\[[^]]*\]\]//g' | eval cc $args; else eval cc $args; fi`)
	src := "[[gnu::hot]] __attribute__((visibility(\"default\"))) int op2_loop([[maybe_unused]] int x) { return 7; }"
	fake := newCompiler(t, cc)
	lib, err := fake.Build(src, []string{"op2_loop"})
	if err != nil {
		t.Fatalf("C2x attributes with a compiler that needs %s: %v", attributeFlag, err)
	}
	lib.Release()
	if got := fake.withAttributes(src, nil); !slices.Equal(got, []string{attributeFlag}) {
		t.Errorf("extra flags for C with [[: %q, want %q", got, attributeFlag)
	}
	if got := fake.withAttributes("int op2_loop(void) { return 7; }", []string{"-O1"}); !slices.Equal(got, []string{"-O1"}) {
		t.Errorf("extra flags for C without [[: %q, want -O1 alone", got)
	}
	cxx := newCompiler(t, cc)
	cxx.CXX = true
	if got := cxx.withAttributes(src, nil); len(got) != 0 {
		t.Errorf("extra flags for C++: %q, want none", got)
	}
	// A compiler that reads them without the flag (GCC; a stand-in, since
	// cc may be Clang 15).
	gcc := script(t, `for a; do [ "$a" = --version ] && { echo "fake gcc 12"; exit 0; }; done
cat >/dev/null
exit 0`)
	if got := newCompiler(t, gcc).withAttributes(src, nil); len(got) != 0 {
		t.Errorf("extra flags with a compiler that reads C2x attributes: %q, want none", got)
	}
}

// TestCompilerInheritsNoDescriptor: a descriptor the program opened
// without close-on-exec (as libhdf5 opens its files) is not open in the
// compiler, which could hold the file's lock after the program closed
// it, and stays as it was for the program's own children.
func TestCompilerInheritsNoDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held")
	fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_RDWR, 0o600) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	seen := filepath.Join(t.TempDir(), "seen")
	c := newCompiler(t, script(t, fmt.Sprintf(`for a; do [ "$a" = --version ] && exec cc "$@"; done
[ -e /proc/self/fd/%d ] && readlink /proc/self/fd/%d > %q
exec cc "$@"`, fd, fd, seen)))
	lib, err := c.Build(`__attribute__((visibility("default"))) int op2_loop = 3;`, []string{"op2_loop"})
	if err != nil {
		t.Fatal(err)
	}
	lib.Release()
	if b, err := os.ReadFile(seen); err == nil {
		t.Errorf("the compiler had descriptor %d open: %s", fd, b)
	}
	// The program's own children still inherit it.
	if err := exec.Command("/bin/sh", "-c", fmt.Sprintf("[ -e /proc/self/fd/%d ]", fd)).Run(); err != nil {
		t.Errorf("after a build, a child of the program no longer inherits descriptor %d: %v", fd, err)
	}
}

// TestCompilerProbeTimeoutNotKept: a compiler that did not answer
// --version in time (a busy machine, a short Timeout) is asked again
// next time, by the same Compiler and by a new one, instead of failing
// every later build of the process; its error says it timed out and
// suggests installing nothing.
func TestCompilerProbeTimeoutNotKept(t *testing.T) {
	slow := filepath.Join(t.TempDir(), "slow")
	if err := os.WriteFile(slow, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cc := script(t, fmt.Sprintf(`for a; do [ "$a" = --version ] && [ -e %q ] && sleep 5; done
exec cc "$@"`, slow))
	c := newCompiler(t, cc)
	c.Timeout = 200 * time.Millisecond
	const src = "int op2_loop;"
	_, err := c.Key(src, nil)
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "install") {
		t.Fatalf("a compiler that does not answer in time: %v; want a timeout naming no package", err)
	}
	if err := os.Remove(slow); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Key(src, nil); err != nil {
		t.Errorf("the same compiler, answering now: %v", err)
	}
	d := newCompiler(t, cc)
	if _, err := d.Key(src, nil); err != nil {
		t.Errorf("a new Compiler of the same command, answering now: %v", err)
	}
}

// TestSourceNameTakenByADirectory: a directory where the generated
// source is kept (<key>.c) does not stop the build, in Build or in
// Precompile: it is replaced by the source.
func TestSourceNameTakenByADirectory(t *testing.T) {
	for _, pre := range []bool{false, true} {
		c := newCompiler(t, "cc")
		src := fmt.Sprintf(`__attribute__((visibility("default"))) int op2_loop = %d; // precompiled: %v`, 1, pre)
		key, _, _, err := c.entry(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		kept := c.Cache.File(key + ".c")
		if err := os.MkdirAll(filepath.Join(kept, "inside"), 0o700); err != nil {
			t.Fatal(err)
		}
		if pre {
			err = c.Precompile(src, []string{"op2_loop"})
		} else {
			var lib *Library
			if lib, err = c.Build(src, []string{"op2_loop"}); err == nil {
				lib.Release()
			}
		}
		if err != nil {
			t.Fatalf("precompile %v: %v", pre, err)
		}
		if b, err := os.ReadFile(kept); err != nil || string(b) != src {
			t.Errorf("precompile %v: the kept source: %q, %v", pre, b, err)
		}
	}
}

// TestProbeKeysDiffer: a probe's answer is kept per compiler command and
// flags, and no two lists of them share a key: no flags and one empty
// flag, or the same words split otherwise between command and flags.
func TestProbeKeysDiffer(t *testing.T) {
	cs := []*Compiler{
		{argv: []string{"/usr/bin/cc"}},
		{argv: []string{"/usr/bin/cc"}, Flags: []string{""}},
		{argv: []string{"/usr/bin/cc"}, Flags: []string{"", ""}},
		{argv: []string{"/usr/bin/cc", "-O2"}},
		{argv: []string{"/usr/bin/cc"}, Flags: []string{"-O2"}},
		{argv: []string{"/usr/bin/cc"}, Flags: []string{"-O2\x00-g"}},
		{argv: []string{"/usr/bin/cc"}, Flags: []string{"-O2", "-g"}},
	}
	seen := map[string]int{}
	for i, c := range cs {
		k := c.probeKey("flags")
		if j, ok := seen[k]; ok {
			t.Errorf("compilers %d (%q %q) and %d (%q %q) share the probe key %q", j, cs[j].argv, cs[j].Flags, i, c.argv, c.Flags, k)
		}
		seen[k] = i
	}
}

// TestBuildUnderUmask002: with the umask of Debian's users (002, which
// makes the linker's library group-writable) a build is stored and
// loaded, its entry private: it failed ("writable by other users"),
// every loop and GoOP2's MPI shim with it. The umask is the process's:
// the test does not run in parallel.
func TestBuildUnderUmask002(t *testing.T) {
	c := newCompiler(t, "cc") // its cache directory made before the umask changes
	defer syscall.Umask(syscall.Umask(0o002))
	lib, err := c.Build(`__attribute__((visibility("default"))) int op2_umask_probe(void) { return 7; }`, []string{"op2_umask_probe"})
	if err != nil {
		t.Fatalf("Build under umask 002: %v", err)
	}
	defer lib.Release()
	if fi, err := os.Stat(lib.Path); err != nil || fi.Mode().Perm()&0o022 != 0 {
		t.Errorf("the entry %s under umask 002: %v, %v; want no write for others", lib.Path, fi.Mode(), err)
	}
}
