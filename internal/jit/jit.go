// Package jit compiles generated C source into shared libraries, caches them
// on disk and in memory, and loads them into the process.
//
// The disk cache (package internal/cache) is keyed by a SHA-256 of the
// source, the compiler's identity (its command, resolved path and version
// line), the flags and the host CPU. Each library is stored bound to that key
// and to the hash of its source, checked for ownership and integrity before
// it is loaded, and rebuilt when it is missing, truncated, damaged, written
// for another key, or loadable but lacking a symbol the caller needs (see
// Build). A fresh build is loaded from its private temporary file and checked
// before it is renamed into the cache, so a build that cannot be loaded never
// reaches the cache. A build in the background (Precompile) leaves its
// library under a pending name, which Build makes an entry only once it has
// loaded it (adopt).
//
// The compiler is CC, a command that may carry arguments ("gcc -std=gnu11",
// with simple shell quoting). Libraries are linked with -lm, so kernels may
// call any math.h function. The compiler's warnings are kept with the
// library and shown when it fails to load (an undefined symbol, typically
// from a call to an undeclared function).
package jit

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// op2_dlopen opens path; on failure it copies dlerror's message into err
// in the same call, since dlerror is per thread and a goroutine may move
// to another thread between two cgo calls.
static void *op2_dlopen(const char *path, char *err, size_t n) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, n, "%s", e ? e : "unknown dlopen error");
	}
	return h;
}
static void *op2_dlsym(void *h, const char *name) { dlerror(); return dlsym(h, name); }
static void op2_dlclose(void *h) { dlclose(h); }

// op2_pin_deps keeps loaded for good every object that was loaded after the
// library h (its dependencies: the OpenMP runtime, libm...) and whose path
// does not start with skip (the cache directory, where the other generated
// libraries are). Unloading a runtime such as libgomp when the last library
// using it is closed would pull the code from under its idle worker threads.
static void op2_pin_deps(void *h, const char *skip) {
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL) return;
	size_t n = strlen(skip);
	for (struct link_map *m = lm->l_next; m != NULL; m = m->l_next) {
		if (m->l_name == NULL || m->l_name[0] == 0 || strncmp(m->l_name, skip, n) == 0) continue;
		dlopen(m->l_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
	}
}
*/
import "C"

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/cache"
	"github.com/goop2/op2/internal/crash"
	"github.com/goop2/op2/internal/spawn"
)

// Stats counts what the JIT did in this process.
type Stats struct {
	Compiles  uint64 // compiler invocations that succeeded
	DiskHits  uint64 // libraries loaded from the disk cache without compiling
	Rebuilds  uint64 // damaged cache entries detected and rebuilt
	MemoryHit uint64 // builds answered from the in-process cache
	// Precompiles counts compiles in the background (Precompile) that
	// succeeded: their libraries are loaded later, from the disk cache.
	Precompiles uint64
}

var stats struct{ compiles, diskHits, rebuilds, memHits, precompiles atomic.Uint64 }

// ReadStats returns the counters.
func ReadStats() Stats {
	return Stats{
		Compiles:  stats.compiles.Load(),
		DiskHits:  stats.diskHits.Load(),
		Rebuilds:  stats.rebuilds.Load(),
		MemoryHit: stats.memHits.Load(),

		Precompiles: stats.precompiles.Load(),
	}
}

// Compiler builds shared libraries with one C compiler and one set of flags.
type Compiler struct {
	CC    string     // command, e.g. "cc", "gcc-12" or "gcc -std=gnu11"
	Flags []string   // flags added to every build (optimisation, -fopenmp)
	Cache *cache.Dir // where libraries are kept
	// CXX says that CC is a C++ compiler (the CXX command, e.g. "g++")
	// and the sources are C++: they are compiled with -x c++, and its
	// messages name the C++ compiler and what to install for it.
	CXX bool
	// Timeout bounds each run of the compiler (a build, the flag and
	// version probes); 0 means DefaultTimeout. A compiler still running
	// then is killed, with every process it started, and the build
	// fails with a *CompileError that says so.
	Timeout time.Duration
	// Env and Package, when set, are the variable that named CC and
	// what to install for it, as messages say (MPICC and Open MPI's
	// development files for MPI's wrapper); else CC (CXX) and gcc (g++).
	Env, Package string

	idMu  sync.Mutex
	argv  []string // CC split into words, the first resolved to a path
	id    string
	idErr error // kept unless the probe timed out
}

// DefaultTimeout is how long a compiler may run when Compiler.Timeout is
// 0: generated loops compile in seconds, so a compiler still running
// after it is taken to hang.
const DefaultTimeout = 5 * time.Minute

// TimeoutEnv names the variable that sets the compilers' timeout
// (exec.Config.CompileTimeout; the MPI compiler wrapper's too).
const TimeoutEnv = "OP2_COMPILE_TIMEOUT"

// ParseTimeout reads a timeout as TimeoutEnv gives it: a positive
// duration (90s, 10m).
func ParseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (90s, 10m)", v)
	}
	return d, nil
}

// timeout is the compiler's time limit.
func (c *Compiler) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// errTimedOut is the error of a compiler run stopped at its time limit;
// it matches context.DeadlineExceeded.
type errTimedOut struct{ limit time.Duration }

func (e *errTimedOut) Error() string {
	return fmt.Sprintf("did not finish within %v and was stopped (the limit is Config.CompileTimeout or OP2_COMPILE_TIMEOUT)", e.limit)
}
func (e *errTimedOut) Unwrap() error { return context.DeadlineExceeded }

// run runs the command argv with input stdin (nil: none) for at most
// limit and returns its combined output. A command still running at the
// limit is killed with the processes it started (its process group: a
// compiler driver runs cc1, as and ld), and the error is an *errTimedOut.
// The command dies with the program.
func run(argv []string, stdin io.Reader, limit time.Duration) ([]byte, error) {
	return runCommand(argv, stdin, limit, false)
}

// runCommand is run; a command that outlives the program (a compile in
// the background, Precompile, leaves its library for the next process)
// is not killed when the program dies.
func runCommand(argv []string, stdin io.Reader, limit time.Duration, outlive bool) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = stdin
	// Its own process group (the timeout kills the driver's cc1, as and
	// ld with it), which a Ctrl-C to the program's group does not reach:
	// the compiler driver is killed when the program dies (Pdeathsig),
	// from the thread that started it, which stays this goroutine's until
	// the compiler has ended (Linux sends the signal when that thread
	// exits). A cc1, as or ld the driver started runs on to its end; the
	// library's temporary name is swept by the next compile.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !outlive {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Output pipes held open by a process that escaped the group do not
	// keep the call waiting.
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := spawn.Start(cmd) // holding no file of the program open: it may outlive the call (Precompile)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = &errTimedOut{limit}
	}
	return out.Bytes(), err
}

// keepSource writes src as the file called name in the cache, for error
// messages to point at. Anything but a file in its place (a directory)
// is removed first: the cache's names are the cache's.
func keepSource(d *cache.Dir, name, src string) error {
	if fi, err := os.Lstat(d.File(name)); err == nil && !fi.Mode().IsRegular() {
		os.RemoveAll(d.File(name))
	}
	if err := d.WriteFile(name, []byte(src)); err != nil {
		return fmt.Errorf("writing generated source: %w", err)
	}
	return nil
}

// loaded holds every library this process has loaded, by cache key. It is
// process wide because the dynamic loader identifies libraries by path: a
// path loaded once can never be loaded again with new contents.
var loaded = struct {
	sync.Mutex
	m map[string]*Library
}{m: map[string]*Library{}}

// Library is a loaded shared library.
type Library struct {
	Path       string // the cache entry
	SourcePath string // the generated C file kept next to it
	Warnings   string // the compiler's messages when this process built it
	handle     unsafe.Pointer
	key        string // in loaded
	refs       int    // Build results not yet released; guarded by loaded
}

// Release says the caller that got l from Build no longer uses it or any
// symbol in it. When every caller has released it, it is unloaded (and
// loaded again by a later Build), so a process that builds ever new
// sources keeps a bounded number of libraries loaded.
func (l *Library) Release() {
	loaded.Lock()
	defer loaded.Unlock()
	if l.refs <= 0 {
		panic("jit: Library released more often than built")
	}
	l.refs--
	if l.refs == 0 {
		delete(loaded.m, l.key)
		crash.RemoveCode(unsafe.Pointer(l.handle))
		C.op2_dlclose(l.handle)
		l.handle = nil
	}
}

// Loaded is the number of libraries currently loaded by Build.
func Loaded() int {
	loaded.Lock()
	defer loaded.Unlock()
	return len(loaded.m)
}

// CompileError is returned when the C compiler rejects generated code or
// does not produce a library.
type CompileError struct {
	CXX        bool   // the source was C++
	Compiler   string // the command line, without input and output files
	SourcePath string // where the generated source was written
	Output     string // the compiler's messages
	// Err, when not nil, is why the compiler was stopped: it overran its
	// time limit (the error matches context.DeadlineExceeded).
	Err error
}

func (e *CompileError) Error() string {
	if e.Err != nil {
		msg := fmt.Sprintf("the %s compiler %s (%s; generated source %s)", e.lang(), e.Err, e.Compiler, e.SourcePath)
		if out := strings.TrimSpace(e.Output); out != "" {
			msg += "; its output so far:\n" + out
		}
		return msg
	}
	return fmt.Sprintf("%s compilation failed (%s; generated source %s):\n%s", e.lang(), e.Compiler, e.SourcePath, strings.TrimSpace(e.Output))
}

// Unwrap returns Err.
func (e *CompileError) Unwrap() error { return e.Err }

func (e *CompileError) lang() string {
	if e.CXX {
		return "C++"
	}
	return "C"
}

// ErrNoCompiler marks the errors of a compiler command that cannot be
// used: it does not parse, is not found, or does not run. Package op2
// exports it as op2.ErrNoCompiler.
var ErrNoCompiler = errors.New("no usable C compiler")

// noCompiler is an error that matches ErrNoCompiler without printing it.
type noCompiler struct{ err error }

func (e *noCompiler) Error() string   { return e.err.Error() }
func (e *noCompiler) Unwrap() []error { return []error{e.err, ErrNoCompiler} }

// LoadError is returned when a library the compiler built cannot be loaded
// or lacks a symbol.
type LoadError struct {
	Path       string // the library
	SourcePath string // the generated source it was built from
	Compiler   string // the command line that built it
	Reason     string // the dynamic loader's message, or the missing symbol
	Warnings   string // the compiler's messages for this build
}

func (e *LoadError) Error() string {
	msg := fmt.Sprintf("loading the library built by `%s` from %s failed: %s", e.Compiler, e.SourcePath, e.Reason)
	if w := strings.TrimSpace(e.Warnings); w != "" {
		msg += "\ncompiler messages (warnings) for this build:\n" + w
	} else {
		msg += "\n(the compiler printed no warnings for this build)"
	}
	return msg
}

// SplitCommand splits a command such as CC into words at blanks, honouring
// single quotes, double quotes and backslash escapes as a shell does.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case ch == '\\':
			if i+1 < len(s) {
				i++
				w.WriteByte(s[i])
			}
			inWord = true
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// Check verifies that the compiler command can be used: it parses, is
// found, and runs (`CC --version`). The answer is cached per command and
// PATH for the life of the process, so checking again costs a map lookup.
// A failure matches ErrNoCompiler and says what to install.
func (c *Compiler) Check() error {
	_, err := c.identity()
	return err
}

// CheckFlags compiles an empty translation unit with the compiler's
// Flags, so that flags it refuses are reported when they are configured,
// naming source (where they came from, e.g. "OP2_CFLAGS"), rather than at
// the first loop. The outcome is kept per command, flags and PATH (probe).
func (c *Compiler) CheckFlags(source string) error {
	return c.checkCompiles("\x00flags\x00"+source, func(err error, out string) error {
		return fmt.Errorf("the %s compiler %q refuses the flags %s=%q: %v: %s", c.lang().name, c.CC, source, strings.Join(c.Flags, " "), err, out)
	})
}

// CheckArgs compiles an empty translation unit with the arguments the
// command CC holds ("gcc -std=gnu11"), which its --version (Check) may
// pass over, naming source (CC's setting, e.g. "Config.CC") when it
// cannot; kept as CheckFlags' outcome is.
func (c *Compiler) CheckArgs(source string) error {
	return c.checkCompiles("\x00args\x00"+source, func(err error, out string) error {
		return fmt.Errorf("the %s compiler %s=%q cannot compile a file: %v: %s", c.lang().name, source, c.CC, err, out)
	})
}

// checkCompiles compiles an empty translation unit with the command and
// its Flags, as probe key; failed describes a failure, given the run's
// error and the compiler's output.
func (c *Compiler) checkCompiles(key string, failed func(err error, out string) error) error {
	if _, err := c.identity(); err != nil {
		return err
	}
	_, err := c.probe(key, func() (bool, bool, error) {
		argv := append(append(append([]string{}, c.argv...), c.Flags...), "-c", "-o", os.DevNull, "-x", c.sourceLang(), "-")
		out, err := run(argv, strings.NewReader("int op2_flags_probe;\n"), c.timeout())
		if err != nil {
			_, timedOut := err.(*errTimedOut)
			return false, !timedOut, failed(err, strings.TrimSpace(string(out)))
		}
		return true, true, nil
	})
	return err
}

// Holds reports whether the preprocessor condition cond (the text of an
// #if, e.g. "defined(__clang__)") holds for the compiler with its Flags,
// so that Go code can decide as generated code's #if will. The answer is
// kept per command, flags, condition and PATH: the first call runs the
// preprocessor (milliseconds), later ones look it up. A run that timed
// out is not kept.
func (c *Compiler) Holds(cond string) (bool, error) {
	if _, err := c.identity(); err != nil {
		return false, err
	}
	return c.probe(cond, func() (bool, bool, error) {
		argv := append(append(append([]string{}, c.argv...), probeFlags(c.Flags)...), "-E", "-P", "-x", c.sourceLang(), "-")
		src := "#if " + cond + "\nop2_condition_holds\n#endif\n"
		out, err := run(argv, strings.NewReader(src), c.timeout())
		if err != nil {
			_, timedOut := err.(*errTimedOut)
			return false, !timedOut, fmt.Errorf("the %s compiler %q could not evaluate #if %s: %v: %s", c.lang().name, c.CC, cond, err, strings.TrimSpace(string(out)))
		}
		return strings.Contains(string(out), "op2_condition_holds"), true, nil
	})
}

// checkOpenMP reports whether the compiler builds a library calling
// the OpenMP runtime with -fopenmp: after a build with -fopenmp failed,
// so that a compiler without its OpenMP runtime (Clang without
// libomp-dev) is named as the cause, with what to install, rather than
// leaving a missing omp.h to the compiler's messages. The library must
// fail to build both with the Flags and without them (-Werror with
// warnings the generated code gives, or -std=c89, which omp.h's inline
// refuses, fail it with them only: the user's doing, not the runtime's;
// -I or -L flags naming a runtime's folders fail it without them only),
// and the same library without OpenMP must build. Kept per command,
// flags and PATH, as Holds, unless it could not tell (a run that timed
// out, or the library without OpenMP failed).
func (c *Compiler) checkOpenMP() error {
	if _, err := c.identity(); err != nil {
		return err
	}
	_, err := c.probe("\x00openmp", func() (bool, bool, error) {
		lib := c.Cache.TempPath("omp", ".so")
		defer os.Remove(lib)
		build := func(openmp, flags bool) ([]byte, error) {
			argv := append([]string{}, c.argv...)
			if flags {
				argv = append(argv, probeFlags(c.Flags)...)
			}
			src := "int op2_openmp_probe(void);\nint op2_openmp_probe(void) { return 1; }\n"
			if openmp {
				argv = append(argv, "-fopenmp")
				src = "#include <omp.h>\nint op2_openmp_probe(void);\nint op2_openmp_probe(void) { return omp_get_max_threads(); }\n"
			}
			argv = append(argv, "-fPIC", "-shared", "-o", lib, "-x", c.sourceLang(), "-")
			return run(argv, strings.NewReader(src), c.timeout())
		}
		if _, err := build(false, false); err != nil {
			return false, false, nil
		}
		out, err := build(true, false)
		if _, timedOut := err.(*errTimedOut); timedOut || err == nil {
			return true, !timedOut, nil
		}
		// With the flags (-I and -L naming a runtime's folders).
		if _, ferr := build(true, true); ferr == nil {
			return true, true, nil
		} else if _, timedOut := ferr.(*errTimedOut); timedOut {
			return true, false, nil
		}
		return false, true, fmt.Errorf("the %s compiler %q cannot build OpenMP code (-fopenmp), which the openmp backend needs: a library calling omp_get_max_threads does not build, while one without OpenMP does: %v: %s (install the compiler's OpenMP runtime: for Clang, `apt-get install libomp-dev`; GCC's, libgomp, comes with gcc; or set %s to GCC, or use the sequential backend)", c.lang().name, c.CC, err, strings.TrimSpace(string(out)), c.lang().env)
	})
	return err
}

// attributeFlag has Clang read C2x attributes ([[gnu::hot]],
// [[maybe_unused]]) in C before C2x, as GCC does by default: Clang 15
// refuses them in its default C mode without it.
const attributeFlag = "-fdouble-square-bracket-attributes"

// withAttributes returns the extra flags of a build of src: extra, and
// attributeFlag where src is C with a [[ in it and the compiler, with its
// Flags, refuses C2x attributes without the flag and reads them with it
// (Clang). The answer is kept per command, flags and PATH (probe); a
// check that failed or timed out leaves extra as it is.
func (c *Compiler) withAttributes(src string, extra []string) []string {
	if c.CXX || !strings.Contains(src, "[[") {
		return extra
	}
	if _, err := c.identity(); err != nil {
		return extra
	}
	need, _ := c.probe("\x00attributes", func() (bool, bool, error) {
		reads := func(flags ...string) (ok, keep bool) {
			argv := append(append(append(append([]string{}, c.argv...), probeFlags(c.Flags)...), flags...), "-c", "-o", os.DevNull, "-x", "c", "-")
			_, err := run(argv, strings.NewReader("[[maybe_unused]] static int op2_attributes_probe;\n"), c.timeout())
			_, timedOut := err.(*errTimedOut)
			return err == nil, !timedOut
		}
		if ok, keep := reads(); ok || !keep {
			return false, keep, nil
		}
		ok, keep := reads(attributeFlag)
		return ok, keep, nil
	})
	if need && !slices.Contains(extra, attributeFlag) {
		return append(slices.Clip(extra), attributeFlag)
	}
	return extra
}

// probe returns the answer of the probe named what for the compiler
// (its command, flags and PATH), running run when no earlier call kept
// one: run returns the answer and whether to keep it.
func (c *Compiler) probe(what string, run func() (holds, keep bool, err error)) (bool, error) {
	v, _ := probeAnswers.LoadOrStore(c.probeKey(what), &probeAnswer{})
	p := v.(*probeAnswer)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		holds, keep, err := run()
		if !keep {
			return holds, err
		}
		p.holds, p.err, p.done = holds, err, true
	}
	return p.holds, p.err
}

// probeKey is the key of the probe named what's answer for the
// compiler: its language, command, flags and PATH, each list quoted so
// that no two lists share a key (no flags and one empty flag, or flags
// split differently between the command and the flags).
func (c *Compiler) probeKey(what string) string {
	return fmt.Sprintf("%q %s %q %q %q", what, c.lang().name, c.argv, c.Flags, os.Getenv("PATH"))
}

// probeFlags are flags without those that make the compiler write
// files besides its output (-MD, -MMD, -MF file, -Wp,-MD,file...,
// -save-temps), which a probe would leave behind or overwrite.
func probeFlags(flags []string) []string {
	out := make([]string, 0, len(flags))
	for i := 0; i < len(flags); i++ {
		switch f := flags[i]; {
		case f == "-M" || f == "-MM" || f == "-MD" || f == "-MMD" || f == "-MP" || f == "-MG":
		case f == "-MF" || f == "-MT" || f == "-MQ":
			i++ // and its argument
		case strings.HasPrefix(f, "-MF") || strings.HasPrefix(f, "-MT") || strings.HasPrefix(f, "-MQ"),
			strings.HasPrefix(f, "-Wp,-M"), strings.HasPrefix(f, "-save-temps"):
		default:
			out = append(out, f)
		}
	}
	return out
}

// probeAnswer is the kept answer of a probe (CheckFlags, Holds,
// checkOpenMP).
type probeAnswer struct {
	mu    sync.Mutex
	done  bool
	holds bool
	err   error
}

// probeAnswers holds the probes' answers by key (Compiler.probe).
var probeAnswers sync.Map // string -> *probeAnswer

// sourceLang is the -x language of the compiler's sources.
func (c *Compiler) sourceLang() string {
	if c.CXX {
		return "c++"
	}
	return "c"
}

// probe is the outcome of running one compiler command's --version.
type probe struct {
	once sync.Once
	argv []string // the command's words, the first resolved to a path
	line string   // the first line of its --version output
	err  error
}

// probes caches probe results by command and PATH: starting the compiler
// takes milliseconds, and Configure checks it every time.
var probes sync.Map // string -> *probe

// language names a compiler kind in messages: the language, the
// environment variable that sets its command and the Debian package that
// installs GCC's.
type language struct{ name, env, pkg string }

var (
	langC   = language{"C", "CC", "gcc"}
	langCXX = language{"C++", "CXX", "g++"}
)

func probeCompiler(cc string, lang language, limit time.Duration) *probe {
	key := lang.name + "\x00" + lang.env + "\x00" + lang.pkg + "\x00" + cc + "\x00" + os.Getenv("PATH")
	v, _ := probes.LoadOrStore(key, &probe{})
	p := v.(*probe)
	defer func() {
		if errors.Is(p.err, context.DeadlineExceeded) {
			probes.CompareAndDelete(key, p) // a busy machine's answer: the next call asks again
		}
	}()
	p.once.Do(func() {
		argv, err := SplitCommand(cc)
		if err == nil && len(argv) == 0 {
			err = errors.New("it is empty")
		}
		if err != nil {
			p.err = &noCompiler{fmt.Errorf("the %s compiler command %s=%q cannot be used: %v (install %s, e.g. `apt-get install %s`, and set %s to its name)", lang.name, lang.env, cc, err, lang.pkg, lang.pkg, lang.env)}
			return
		}
		path, err := exec.LookPath(argv[0])
		if err != nil {
			p.err = &noCompiler{fmt.Errorf("the %s compiler %q (from %s=%q) was not found (install %s: `apt-get install %s`, or set %s to an installed %s compiler): %w", lang.name, argv[0], lang.env, cc, lang.pkg, lang.pkg, lang.env, lang.name, err)}
			return
		}
		argv[0] = path
		out, err := run(append(argv[:len(argv):len(argv)], "--version"), nil, limit)
		if errors.Is(err, context.DeadlineExceeded) {
			p.err = fmt.Errorf("the %s compiler %q did not answer `%s --version`: %w", lang.name, cc, strings.Join(argv, " "), err)
			return
		}
		if err != nil {
			p.err = &noCompiler{fmt.Errorf("the %s compiler %q does not run (`%s --version`): %v: %s (install %s: `apt-get install %s`, or set %s to a working %s compiler)", lang.name, cc, strings.Join(argv, " "), err, strings.TrimSpace(string(out)), lang.pkg, lang.pkg, lang.env, lang.name)}
			return
		}
		p.line, _, _ = strings.Cut(string(out), "\n")
		p.argv = argv
	})
	return p
}

// identity resolves the compiler command and returns its identity: the
// command, the resolved path, the version line and the CPU.
func (c *Compiler) identity() (string, error) {
	c.idMu.Lock()
	defer c.idMu.Unlock()
	if c.id == "" && c.idErr == nil {
		p := probeCompiler(c.CC, c.lang(), c.timeout())
		if p.err != nil {
			if errors.Is(p.err, context.DeadlineExceeded) {
				return "", p.err // asked again next time
			}
			c.idErr = p.err
		} else {
			c.argv = append([]string(nil), p.argv...)
			c.id = c.lang().name + "\n" + strings.Join(c.argv, "\x00") + "\n" + p.line + "\n" + cpuIdentity()
		}
	}
	return c.id, c.idErr
}

// lang is the language the compiler builds.
func (c *Compiler) lang() language {
	l := langC
	if c.CXX {
		l = langCXX
	}
	if c.Env != "" {
		l.env = c.Env
	}
	if c.Package != "" {
		l.pkg = c.Package
	}
	return l
}

// cpuIdentity names the host CPU, since -march=native code is CPU specific.
func cpuIdentity() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown-cpu"
	}
	var model, flags string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		case "flags":
			if flags == "" {
				flags = strings.TrimSpace(v)
			}
		}
	}
	sum := sha256.Sum256([]byte(flags))
	return model + " " + hex.EncodeToString(sum[:8])
}

// buildFlags are the flags of every build, after the configured and the
// extra ones: a shared library exporting only what is marked.
var buildFlags = []string{"-fPIC", "-shared", "-fvisibility=hidden"}

// Key returns the cache key of a build of src with extra flags.
func (c *Compiler) Key(src string, extra []string) (string, error) {
	id, err := c.identity()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte("goop2-jit-v2\x00"))
	for _, f := range buildFlags {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	h.Write([]byte(id))
	h.Write([]byte{0})
	for _, f := range c.Flags {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	h.Write([]byte{1})
	for _, f := range extra {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	h.Write([]byte{1})
	h.Write([]byte(src))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// entry returns the cache key of a build, the name of its cache entry and
// what the entry is bound to: the key and the hash of the source.
func (c *Compiler) entry(src string, extra []string) (key, name, bind string, err error) {
	key, err = c.Key(src, extra)
	if err != nil {
		return "", "", "", err
	}
	srcSum := sha256.Sum256([]byte(src))
	return key, key + ".so", "goop2-jit-lib\x00" + key + "\x00" + hex.EncodeToString(srcSum[:]), nil
}

// Build returns the loaded library for src, compiling it only when neither
// this process nor the disk cache has it. symbols are the names the caller
// will look up (the entry point, constants): a cached library that lacks one
// is treated as damaged and rebuilt, and a fresh build that lacks one is an
// error. extra flags are added to this build only.
func (c *Compiler) Build(src string, symbols []string, extra ...string) (*Library, error) {
	if c.Cache == nil {
		return nil, errors.New("jit: no cache directory")
	}
	extra = c.withAttributes(src, extra)
	key, name, bind, err := c.entry(src, extra)
	if err != nil {
		return nil, err
	}
	loaded.Lock()
	defer loaded.Unlock()
	if lib, ok := loaded.m[key]; ok {
		stats.memHits.Add(1)
		lib.refs++
		return lib, nil
	}
	srcPath := c.Cache.File(key + ".c")

	switch e, err := c.Cache.Get(name, bind); {
	case err == nil:
		if e.Unchanged() == nil {
			if lib, lerr := load(e.Path, symbols); lerr == nil {
				lib.SourcePath = srcPath
				stats.diskHits.Add(1)
				lib.key, lib.refs = key, 1
				loaded.m[key] = lib
				return lib, nil
			}
		}
		stats.rebuilds.Add(1) // valid entry, yet unloadable or incomplete
	case errors.Is(err, os.ErrNotExist) || c.unblocked(name):
		// A compile in the background (Precompile) may have left it.
		if lib := c.adopt(key, name, bind, srcPath, symbols); lib != nil {
			stats.diskHits.Add(1)
			lib.key, lib.refs = key, 1
			loaded.m[key] = lib
			return lib, nil
		}
	default:
		stats.rebuilds.Add(1) // damaged, foreign or unsafe
	}

	lib, err := c.compile(src, symbols, extra, name, srcPath, bind)
	if err != nil {
		return nil, err
	}
	lib.key, lib.refs = key, 1
	loaded.m[key] = lib
	return lib, nil
}

// unblocked removes what is not a file at the entry name (a directory),
// and reports whether there was one: the entry is then missing.
func (c *Compiler) unblocked(name string) bool {
	if fi, err := os.Lstat(c.Cache.File(name)); err != nil || fi.Mode().IsRegular() {
		return false
	}
	c.Cache.Unblock(name)
	return true
}

// Note* count work done by other code generators sharing the cache (device
// backends that compile through their driver), in the same statistics.
func NoteCompile() { stats.compiles.Add(1) }

// NoteDiskHit counts a program loaded from the disk cache.
func NoteDiskHit() { stats.diskHits.Add(1) }

// NoteRebuild counts a damaged cache entry that was rebuilt.
func NoteRebuild() { stats.rebuilds.Add(1) }

// compile builds src into a temporary file, loads it from there, checks
// its symbols and only then renames it into the cache as name. Every
// temporary file is removed on every error path.
func (c *Compiler) compile(src string, symbols, extra []string, name, srcPath, bind string) (*Library, error) {
	d := c.Cache
	// Remove what compiles killed midway (in any process) left behind,
	// and the libraries of compiles in the background that ended after
	// the entry was made.
	d.Sweep()
	sweepPending(d)
	if err := keepSource(d, name[:len(name)-len(".so")]+".c", src); err != nil {
		return nil, err
	}
	// Compile a private copy of the source so that a concurrent writer of
	// srcPath cannot change what this compiler reads.
	f, err := d.CreateTemp("src", ".c")
	if err != nil {
		return nil, err
	}
	tmpSrc := f.Name()
	defer os.Remove(tmpSrc)
	_, err = f.WriteString(src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing generated source: %w", err)
	}
	tmpLib := d.TempPath("lib", ".so")
	defer os.Remove(tmpLib) // gone after a successful rename

	command, msg, err := c.runCompiler(tmpSrc, tmpLib, srcPath, extra, run)
	if err != nil {
		return nil, err
	}
	stats.compiles.Add(1)
	if err := d.AppendTrailer(tmpLib, bind); err != nil {
		return nil, err
	}
	lib, err := load(tmpLib, symbols)
	if err != nil {
		var le *LoadError
		if errors.As(err, &le) {
			le.Path = d.File(name)
			le.SourcePath = srcPath
			le.Compiler = command
			le.Reason = strings.ReplaceAll(le.Reason, tmpLib, "the compiled library")
			le.Warnings = msg
		}
		return nil, err
	}
	// The library stays loaded under its temporary name; a failed rename
	// only costs a rebuild in the next process.
	_ = d.Commit(tmpLib, name)
	lib.Path = d.File(name)
	lib.SourcePath = srcPath
	lib.Warnings = msg
	return lib, nil
}

// runCompiler compiles the source file tmpSrc into the library tmpLib
// with extra flags, running the compiler through runner (run, or runLow
// in the background), and returns the command line (without input and
// output files) and the compiler's messages, in which srcPath (the source
// kept in the cache) names the source. A failure is a *CompileError.
func (c *Compiler) runCompiler(tmpSrc, tmpLib, srcPath string, extra []string, runner func([]string, io.Reader, time.Duration) ([]byte, error)) (command, msg string, err error) {
	args := append([]string{}, c.argv[1:]...)
	args = append(args, c.Flags...)
	args = append(args, extra...)
	args = append(args, buildFlags...)
	if c.CXX {
		args = append(args, "-x", "c++")
	}
	command = strings.Join(append([]string{c.argv[0]}, args...), " ")
	args = append(args, "-o", tmpLib, tmpSrc)
	if c.CXX {
		args = append(args, "-x", "none") // what follows is no C++ source
	}
	args = append(args, "-lm")
	out, err := runner(append([]string{c.argv[0]}, args...), nil, c.timeout())
	msg = strings.ReplaceAll(strings.ReplaceAll(string(out), tmpSrc, srcPath), tmpLib, "<library>")
	if t, ok := err.(*errTimedOut); ok {
		return command, msg, &CompileError{CXX: c.CXX, Compiler: command, SourcePath: srcPath, Output: msg, Err: t}
	}
	if err != nil {
		if len(strings.TrimSpace(msg)) == 0 {
			msg = err.Error()
		}
		ce := &CompileError{CXX: c.CXX, Compiler: command, SourcePath: srcPath, Output: msg}
		if slices.Contains(args, "-fopenmp") {
			if oerr := c.checkOpenMP(); oerr != nil {
				return command, msg, &noCompiler{fmt.Errorf("%v; the build: %w", oerr, ce)}
			}
		}
		return command, msg, ce
	}
	if fi, err := os.Stat(tmpLib); err != nil || fi.Size() == 0 {
		if len(strings.TrimSpace(msg)) == 0 {
			msg = "(no output)"
		}
		return command, msg, &CompileError{CXX: c.CXX, Compiler: command, SourcePath: srcPath,
			Output: "the compiler exited successfully but wrote no library; its output:\n" + msg}
	}
	return command, msg, nil
}

// load opens the library at path and checks that it defines symbols. On
// failure the library is closed again and the error is a *LoadError.
func load(path string, symbols []string) (*Library, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [4096]C.char
	h := C.op2_dlopen(cpath, &msg[0], C.size_t(len(msg)))
	if h == nil {
		return nil, &LoadError{Path: path, Reason: C.GoString(&msg[0])}
	}
	lib := &Library{Path: path, handle: h}
	for _, s := range symbols {
		if _, err := lib.Symbol(s); err != nil {
			C.op2_dlclose(h)
			return nil, &LoadError{Path: path, Reason: fmt.Sprintf("the library does not define the symbol %q", s)}
		}
	}
	cdir := C.CString(filepath.Dir(path) + "/")
	defer C.free(unsafe.Pointer(cdir))
	C.op2_pin_deps(h, cdir)
	crash.AddCode(unsafe.Pointer(h)) // a fault in its code ends the process
	return lib, nil
}

// Symbol returns the address of a symbol in the library.
func (l *Library) Symbol(name string) (unsafe.Pointer, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	p := C.op2_dlsym(l.handle, cname)
	if p == nil {
		return nil, fmt.Errorf("symbol %q not found in %s", name, l.Path)
	}
	return p, nil
}
