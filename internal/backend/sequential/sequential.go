// Package sequential is the "sequential" backend: one C function with a
// plain loop over the iteration set that calls the user kernel, compiled
// together with the kernel so the call is inlined, and run on one core.
package sequential

import (
	"fmt"
	"strconv"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/host"
	"github.com/goop2/op2/internal/jit"
)

// Name is the name the backend is registered under.
const Name = "sequential"

func init() {
	core.Register(Name, func(cfg *core.Config) (core.Backend, error) {
		return &backend{cc: &jit.Compiler{CC: cfg.CC, Flags: cfg.CFlags, CacheDir: cfg.CacheDir}}, nil
	})
}

type backend struct {
	cc *jit.Compiler
}

func (b *backend) Name() string { return Name }

// Generate writes the translation unit: prelude, kernel and a wrapper that
// loops over [iv[0], iv[1]). Global reductions accumulate into local copies,
// which start from the Global's value and are stored back after the loop.
func (b *backend) Generate(l *core.Loop) (string, error) {
	var g host.Gen
	g.Prelude(l)
	g.Range(l)
	g.EntryOpen(l)
	for i := range l.Args {
		a := &l.Args[i]
		if host.IsReduction(a) {
			t := a.Data.Type.CName()
			g.Printf("  %s r%d[%d];\n  for (int k = 0; k < %d; k++) r%d[k] = d%d[k];\n", t, i, a.Data.Dim, a.Data.Dim, i, host.Base(l, i))
		}
	}
	g.Printf("  %s\n", host.RangeCall(l, fmt.Sprintf("iv[%d]", host.IvStart), fmt.Sprintf("iv[%d]", host.IvEnd),
		func(i int) string { return "r" + strconv.Itoa(i) }))
	for i := range l.Args {
		a := &l.Args[i]
		if host.IsReduction(a) {
			g.Printf("  for (int k = 0; k < %d; k++) d%d[k] = r%d[k];\n", a.Data.Dim, host.Base(l, i), i)
		}
	}
	g.Printf("}\n")
	return g.String(), nil
}

func (b *backend) Prepare(l *core.Loop) (core.Program, error) {
	src, err := b.Generate(l)
	if err != nil {
		return nil, err
	}
	p, err := host.NewProgram(b.cc, l, src, 0)
	if err != nil {
		return nil, err
	}
	return &program{p}, nil
}

type program struct{ *host.Program }

func (p *program) Run(l *core.Loop) error {
	if err := p.Bind(l); err != nil {
		return err
	}
	p.SetInt(host.IvStart, 0)
	p.SetInt(host.IvEnd, l.IterEnd())
	p.Call()
	return nil
}
