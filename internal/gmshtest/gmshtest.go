// Package gmshtest finds, for tests, a python3 that has Gmsh's Python
// module (Debian: python3-gmsh) and any other modules a test needs, so
// that tests can make meshes with Gmsh itself. Debian's modules belong to
// /usr/bin/python3, which another python3 on the PATH (pyenv, a virtual
// environment) may hide; both are tried.
package gmshtest

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/goop2/op2/internal/testreq"
)

var found sync.Map // modules, comma-joined → the python3 found, or ""

// Python returns a python3 that imports gmsh and modules, or "" if none
// does.
func Python(modules ...string) string {
	mods := strings.Join(append([]string{"gmsh"}, modules...), ", ")
	if p, ok := found.Load(mods); ok {
		return p.(string)
	}
	path := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import "+mods).Run() == nil {
			path = p
			break
		}
	}
	found.Store(mods, path)
	return path
}

// Need returns Python(modules...), or skips tb saying what to install.
func Need(tb testing.TB, modules ...string) string {
	tb.Helper()
	p := Python(modules...)
	if p == "" {
		pkgs := "python3-gmsh"
		for _, m := range modules {
			pkgs += " python3-" + m
		}
		testreq.Skip(tb, "gmsh", fmt.Errorf("no python3 imports gmsh %s (Debian: apt-get install %s)", strings.Join(modules, " "), pkgs))
	}
	return p
}
