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
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// LowPriority is the nice value of the compilers Precompile runs: the
// lowest priority, so that a build in the background takes only the
// time the program leaves idle.
const LowPriority = 19

// Ready reports whether Build would find src's library (built with extra
// flags) without compiling it: loaded in this process, or a valid entry
// in the disk cache.
func (c *Compiler) Ready(src string, extra ...string) bool {
	key, name, bind, err := c.entry(src, extra)
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
	e, err := c.Cache.Get(name, bind)
	return err == nil && e.Unchanged() == nil
}

// Precompile compiles src (with extra flags) into the disk cache, unless
// the cache or this process has it already, so that a later Build loads
// it without compiling. It is made for a goroutine that builds what the
// program will need while the program goes on:
//
//   - the compiler runs at the lowest priority (LowPriority), from a
//     thread of its own, and is killed if the process exits first;
//   - it works in a private directory outside the cache (removed
//     afterwards), and the library enters the cache only once it has
//     been loaded and found to define symbols, written atomically: a
//     process that ends midway leaves no entry, and a cache directory
//     removed meanwhile is not recreated;
//   - the library is not kept loaded, and Build's statistics count it
//     as a disk hit when it loads it (Stats.Precompiles counts these
//     compiles).
//
// A compiler error is a *CompileError, as from Build; one that is never
// shown to the user (the caller keeps running without the program) still
// names the source, which stays in the cache for a look.
func (c *Compiler) Precompile(src string, symbols []string, extra ...string) error {
	if c.Cache == nil {
		return errors.New("jit: no cache directory")
	}
	key, name, bind, err := c.entry(src, extra)
	if err != nil {
		return err
	}
	if c.ready(key, name, bind) {
		return nil
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
	srcPath := c.Cache.File(key + ".c")
	command, msg, err := c.runCompiler(tmpSrc, tmpLib, srcPath, extra, runLow)
	if err != nil {
		_ = c.Cache.WriteFile(key+".c", []byte(src)) // what the error names
		return err
	}
	if reason := checkSymbols(tmpLib, symbols); reason != "" {
		_ = c.Cache.WriteFile(key+".c", []byte(src))
		return &LoadError{Path: c.Cache.File(name), SourcePath: srcPath, Compiler: command,
			Reason: strings.ReplaceAll(reason, tmpLib, "the compiled library"), Warnings: msg}
	}
	body, err := os.ReadFile(tmpLib)
	if err != nil {
		return fmt.Errorf("reading the compiled library: %w", err)
	}
	if err := c.Cache.WriteFile(key+".c", []byte(src)); err != nil {
		return fmt.Errorf("writing generated source: %w", err)
	}
	if err := c.Cache.Put(name, bind, body); err != nil {
		return err
	}
	stats.precompiles.Add(1)
	return nil
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
// own set to LowPriority, whose nice value it inherits, and is killed
// (Pdeathsig) if that thread ends before it does, which happens only when
// the process exits. The thread is never handed back to Go: it ends with
// the goroutine, keeping its priority to itself.
func runLow(argv []string, stdin io.Reader, limit time.Duration) ([]byte, error) {
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		// On Linux a nice value is a thread's, and a child inherits it.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), LowPriority)
		out, err := runWith(argv, stdin, limit, true)
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
