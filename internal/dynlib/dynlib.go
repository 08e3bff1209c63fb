// Package dynlib keeps the one copy of an optional system library that a
// process loads at run time (PETSc, PT-Scotch): the first load that
// succeeds is kept for the process's life, and every failure is
// remembered by the name asked for, so that a missing library is looked
// for once.
package dynlib

import (
	"fmt"

	"github.com/goop2/op2/internal/sigstack"
)

// Once is a library of type L loaded at most once per process. Its
// methods do not lock: the caller serialises them (with the lock that
// guards the rest of its state).
type Once[L any] struct {
	// What names the library in messages ("PETSc"), Env is the
	// environment variable naming its file, and Unavailable the error
	// every failure to use another file wraps.
	What, Env   string
	Unavailable error

	lib        *L
	name, path string           // what was asked for, what was loaded
	failed     map[string]error // failed loads, by the name asked for
}

// Load returns the library for name (the value of Env; "" for the
// system's default names): the one loaded already when name is "" or the
// one it was loaded for, an error when another file is asked for after
// one was loaded, the error of an earlier failure for the same name, or
// else what open returns (the library and the path it was loaded from),
// remembered either way. Loading runs the library's initialisers, which
// may install signal handlers: they are put back on the alternate stack
// the Go run time needs.
func (o *Once[L]) Load(name string, open func(name string) (*L, string, error)) (*L, error) {
	if o.lib != nil {
		if name == "" || name == o.name {
			return o.lib, nil
		}
		return nil, fmt.Errorf("%w: %s=%s, but this process has already loaded %s from %s", o.Unavailable, o.Env, name, o.What, o.path)
	}
	if err, ok := o.failed[name]; ok {
		return nil, err
	}
	l, path, err := open(name)
	if err != nil {
		if o.failed == nil {
			o.failed = map[string]error{}
		}
		o.failed[name] = err
		return nil, err
	}
	sigstack.Repair()
	o.lib, o.name, o.path = l, name, path
	return l, nil
}

// Loaded returns the library loaded, or nil.
func (o *Once[L]) Loaded() *L { return o.lib }

// Path returns the file the library was loaded from, or "".
func (o *Once[L]) Path() string { return o.path }

// Forget drops the library and the remembered failures (for tests that
// load another file; the library itself stays mapped).
func (o *Once[L]) Forget() { o.lib, o.name, o.path, o.failed = nil, "", "", nil }
