package jit

/*
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

// op2_check_symbols opens the library at path, looks up the n names,
// and closes it again: 0 when it loads and defines them all, else -1 with
// dlerror's message in err, or i+1 for the first name i it lacks.
static int op2_check_symbols(const char *path, const char *const *names, int n, char *err, size_t size) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, size, "%s", e ? e : "unknown dlopen error");
		return -1;
	}
	int missing = 0;
	for (int i = 0; i < n && missing == 0; i++) {
		dlerror();
		if (dlsym(h, names[i]) == NULL) missing = i + 1;
	}
	dlclose(h);
	return missing;
}
*/
import "C"

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/cache"
	"github.com/goop2/op2/internal/regfile"
)

// LowPriority is the nice value of the compilers Precompile runs: the
// lowest priority, so that a build in the background takes only the
// time the program leaves idle.
const LowPriority = 19

// Ready reports whether Build would find src's library (built with extra
// flags) without compiling it: loaded in this process, a valid entry in
// the disk cache, or a library a compile in the background left there.
func (c *Compiler) Ready(src string, extra ...string) bool {
	key, name, bind, err := c.entry(src, c.withAttributes(src, extra))
	if err != nil {
		return false
	}
	return c.ready(key, name, bind)
}

func (c *Compiler) ready(key, name, bind string) bool {
	loaded.Lock()
	_, ok := loaded.m[key]
	loaded.Unlock()
	if ok {
		return true
	}
	if c.Cache == nil {
		return false
	}
	if e, err := c.Cache.Get(name, bind); err == nil && e.Unchanged() == nil {
		return true
	}
	fi, err := os.Lstat(c.Cache.File(pendingName(name)))
	return err == nil && fi.Mode().IsRegular()
}

// pendingName is the name under which a compile in the background leaves
// the library of the entry called name, without its trailer, for Build
// to make it the entry (adopt).
func pendingName(name string) string { return strings.TrimSuffix(name, ".so") + ".pending.so" }

// Precompile compiles src (with extra flags) for the disk cache, unless
// the cache or this process has it already, so that a later Build, in
// this process or another, loads it without compiling. It is made for a
// goroutine that builds what the program will need while the program
// goes on:
//
//   - the compiler runs at the lowest priority (LowPriority), from a
//     thread of its own;
//   - it works in a private directory outside the cache (removed
//     afterwards), so a cache directory removed meanwhile is not written
//     into but for a moment at the end;
//   - when it succeeds, the library is copied into the cache under a
//     temporary name and renamed to a pending name (pendingName), by a
//     shell around the compiler, so that a process that exits while it
//     compiles still leaves the library for the next one; Build takes a
//     pending library as an entry once it has checked its pending
//     trailer (pendingMagic), loaded it and found its symbols (adopt),
//     and Precompile itself checks the symbols first (loading
//     it and closing it again);
//   - the library is not kept loaded, and Build counts it as a disk hit
//     when it loads it (Stats.Precompiles counts these compiles).
//
// A compiler error is a *CompileError, as from Build; it names the
// source, which is written to the cache for a look.
func (c *Compiler) Precompile(src string, symbols []string, extra ...string) error {
	if c.Cache == nil {
		return errors.New("jit: no cache directory")
	}
	extra = c.withAttributes(src, extra)
	key, name, bind, err := c.entry(src, extra)
	if err != nil {
		return err
	}
	if c.ready(key, name, bind) {
		return nil
	}
	if _, err := exec.LookPath("sha256sum"); err != nil {
		return fmt.Errorf("jit: compiling in the background needs sha256sum (install coreutils): %w", err)
	}
	if err := keepSource(c.Cache, key+".c", src); err != nil {
		return err
	}
	sweepWorkDirs()
	dir, err := os.MkdirTemp("", workPrefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return fmt.Errorf("creating a directory to compile in: %w", err)
	}
	defer os.RemoveAll(dir)
	tmpSrc, tmpLib := filepath.Join(dir, "src.c"), filepath.Join(dir, "lib.so")
	if err := os.WriteFile(tmpSrc, []byte(src), 0o600); err != nil {
		return fmt.Errorf("writing generated source: %w", err)
	}
	c.Cache.Unblock(pendingName(name)) // the shell's mv would move the library into a directory there
	pending := c.Cache.File(pendingName(name))
	stage := c.Cache.TempPath("pending", ".so")
	defer os.Remove(stage) // gone after the shell's rename
	runner := func(argv []string, stdin io.Reader, limit time.Duration) ([]byte, error) {
		// A process that has exited no longer stops a compiler at its
		// limit: the shell's timeout does, where there is one.
		if t, err := exec.LookPath("timeout"); err == nil {
			argv = append([]string{t, "-s", "KILL", strconv.Itoa(int(limit.Seconds()) + 1)}, argv...)
		}
		return runLow(append([]string{"/bin/sh", "-c", pendingScript, "sh", tmpLib, stage, pending, key}, argv...), stdin, limit)
	}
	command, msg, err := c.runCompiler(tmpSrc, tmpLib, c.Cache.File(key+".c"), extra, runner)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(pending); err != nil {
		if c.ready(key, name, bind) {
			return nil // another process sharing the cache took it
		}
		return fmt.Errorf("the library compiled by `%s` did not reach the cache: %w", command, err)
	}
	if reason := checkSymbols(pending, symbols); reason != "" {
		os.Remove(pending)
		return &LoadError{Path: c.Cache.File(name), SourcePath: c.Cache.File(key + ".c"), Compiler: command,
			Reason: strings.ReplaceAll(reason, pending, "the compiled library"), Warnings: msg}
	}
	stats.precompiles.Add(1)
	return nil
}

// sweepPending removes the pending libraries (pendingName) in d whose
// entry exists and that are cache.StaleAge old: a compile in the
// background that ended after another process had made the entry left
// them for nothing. A younger one may be one a Precompile is checking.
func sweepPending(d *cache.Dir) {
	ents, err := os.ReadDir(d.Path())
	if err != nil {
		return
	}
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), ".pending.so")
		if !ok {
			continue
		}
		fi, err := e.Info()
		if err != nil || time.Since(fi.ModTime()) < cache.StaleAge {
			continue
		}
		if entry, err := os.Lstat(d.File(stem + ".so")); err == nil && entry.Mode().IsRegular() {
			os.Remove(d.File(e.Name()))
		}
	}
}

// pendingScript runs a compiler (its arguments after the library it
// writes, a temporary name in the cache, the pending name and the cache
// key) and, when it succeeds, copies the library into the cache under
// the temporary name, appends the pending trailer (pendingMagic) and
// renames it to the pending name, with the compiler's status.
const pendingScript = `lib=$1 stage=$2 pending=$3 key=$4
shift 4
"$@"
s=$?
if [ "$s" = 0 ] && [ -s "$lib" ] && cp "$lib" "$stage" && sum=$(sha256sum < "$stage"); then
	printf '%s%.64s%s' "$key" "$sum" ` + pendingMagic + ` >> "$stage" && mv "$stage" "$pending"
fi
exit "$s"`

// pendingMagic ends a pending library's trailer, which the shell around
// a compile in the background writes (pendingScript) and adopt checks
// before it loads the library:
//
//	library | cache key (hex) | SHA-256 of the library (hex) | pendingMagic
//
// A pending library cut short (the disk filled, a copy interrupted) or
// another loop's (copied over it) is removed and compiled again, never
// loaded.
const pendingMagic = "GOOP2PD1"

// pendingBody checks the pending trailer of b, a pending library for
// the entry of key, and returns the library without it.
func pendingBody(b []byte, key string) ([]byte, error) {
	n := len(key) + 2*sha256.Size + len(pendingMagic)
	if len(b) < n || string(b[len(b)-len(pendingMagic):]) != pendingMagic {
		return nil, errors.New("has no pending trailer (cut short, or not written by a compile in the background)")
	}
	body, t := b[:len(b)-n], b[len(b)-n:]
	if string(t[:len(key)]) != key {
		return nil, errors.New("was compiled for another key")
	}
	sum := sha256.Sum256(body)
	if string(t[len(key):len(key)+2*sha256.Size]) != hex.EncodeToString(sum[:]) {
		return nil, errors.New("is damaged (checksum mismatch)")
	}
	return body, nil
}

// adopt makes the library a compile in the background left for the entry
// name (pendingName) of key that entry, bound to bind, and returns it
// loaded with symbols, or nil when there is none or it cannot be used
// (its pending trailer does not hold; it is then removed, and the caller
// compiles). Caller holds loaded.
func (c *Compiler) adopt(key, name, bind, srcPath string, symbols []string) *Library {
	d := c.Cache
	pending := d.File(pendingName(name))
	if fi, err := os.Lstat(pending); err != nil || !fi.Mode().IsRegular() {
		d.Unblock(pendingName(name))
		return nil
	}
	tmp := d.TempPath("lib", ".so")
	if os.Rename(pending, tmp) != nil {
		return nil // another process took it
	}
	defer os.Remove(tmp) // gone after Commit
	f, err := regfile.Open(tmp)
	if err != nil {
		return nil
	}
	b, err := f.ReadAll()
	f.Close()
	if err != nil {
		return nil
	}
	body, err := pendingBody(b, key)
	if err != nil || os.Truncate(tmp, int64(len(body))) != nil || d.AppendTrailer(tmp, bind) != nil {
		return nil
	}
	lib, err := load(tmp, symbols)
	if err != nil {
		return nil
	}
	_ = d.Commit(tmp, name) // the library stays loaded under tmp's name
	lib.Path, lib.SourcePath = d.File(name), srcPath
	return lib
}

// checkSymbols loads the library at path, looks up symbols and closes it
// again, and returns what is wrong ("": nothing). It pins nothing the
// library loaded (load does, for libraries kept loaded).
func checkSymbols(path string, symbols []string) string {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	names := make([]*C.char, len(symbols)+1)
	for i, s := range symbols {
		names[i] = C.CString(s)
		defer C.free(unsafe.Pointer(names[i]))
	}
	var msg [4096]C.char
	switch r := C.op2_check_symbols(cpath, &names[0], C.int(len(symbols)), &msg[0], C.size_t(len(msg))); {
	case r < 0:
		return C.GoString(&msg[0])
	case r > 0:
		return fmt.Sprintf("the library does not define the symbol %q", symbols[r-1])
	}
	return ""
}

// runLow is run for Precompile: the command starts from a thread of its
// own set to LowPriority, whose nice value it inherits (on Linux a nice
// value is a thread's). The thread is never handed back to Go: it ends
// with the goroutine, keeping its priority to itself.
func runLow(argv []string, stdin io.Reader, limit time.Duration) ([]byte, error) {
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), LowPriority)
		out, err := runCommand(argv, stdin, limit, true)
		done <- result{out, err}
	}()
	r := <-done
	return r.out, r.err
}

// workPrefix starts the names of Precompile's private directories in the
// temporary directory, followed by the process id and a dash.
const workPrefix = "goop2-build-"

// workStale is how old a private directory of a process that no longer
// runs must be before sweepWorkDirs removes it (a process id may be
// reused, or belong to another namespace): longer than a compile may run
// by default.
const workStale = 2 * DefaultTimeout

// sweepWorkDirs removes, once per process, the private directories that
// processes which ended in the middle of a Precompile left behind.
var sweepWorkDirs = sync.OnceFunc(func() {
	tmp := os.TempDir()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-workStale)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), workPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.ModTime().Before(cutoff) {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(filepath.Join(tmp, e.Name()))
		}
	}
})
