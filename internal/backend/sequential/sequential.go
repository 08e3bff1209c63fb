// Package sequential is the "sequential" backend: one C function with a
// plain loop over the iteration set that calls the user kernel, compiled
// together with the kernel so the call is inlined, and run on one core.
package sequential

import (
	"fmt"
	"strconv"

	"github.com/goop2/op2/internal/cache"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/host"
	"github.com/goop2/op2/internal/jit"
)

// Name is the name the backend is registered under.
const Name = "sequential"

func init() {
	exec.RegisterGenerator(Name, generate)
	exec.Register(Name, func(cfg *exec.Config) (exec.Backend, error) {
		dir, err := cache.Open(cfg.CacheDir)
		if err != nil {
			return nil, err
		}
		return &backend{cc: &jit.Compiler{CC: cfg.CC, Flags: cfg.CFlags, Cache: dir}}, nil
	})
}

type backend struct {
	cc *jit.Compiler
}

func (b *backend) Name() string { return Name }

// Generate writes the translation unit: prelude, kernel and a wrapper that
// loops over [op2_iv[0], op2_iv[1]). Global reductions accumulate into
// local copies, combined into the Global after the loop.
func (b *backend) Generate(l *core.Loop) (string, error) { return generate(l) }

func generate(l *core.Loop) (string, error) {
	var g host.Gen
	g.Prelude(l)
	g.Range(l)
	g.EntryOpen(l)
	for i := range l.Args {
		a := &l.Args[i]
		if a.IsReduction() {
			t := a.Data.Type.CName()
			init := fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i])
			if a.Access == core.Inc {
				init = "0"
			}
			g.Printf("  %s op2_r%d[%d];\n  for (int op2_k = 0; op2_k < %d; op2_k++) op2_r%d[op2_k] = %s;\n", t, i, a.Data.Dim, a.Data.Dim, i, init)
		}
	}
	g.Printf("  if (%s) return 1;\n", host.RangeCall(l, fmt.Sprintf("op2_iv[%d]", host.IvStart), fmt.Sprintf("op2_iv[%d]", host.IvEnd),
		func(i int) string { return "op2_r" + strconv.Itoa(i) }))
	// Each accumulator started from the identity (or the Global's value for
	// MIN and MAX), so a Global passed twice gets both contributions.
	for i := range l.Args {
		a := &l.Args[i]
		if a.IsReduction() {
			g.Printf("  for (int op2_k = 0; op2_k < %d; op2_k++) { %s }\n", a.Data.Dim,
				host.Combine(a.Access, fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i]), fmt.Sprintf("op2_r%d[op2_k]", i)))
		}
	}
	g.EntryClose(l)
	return g.String(), nil
}

func (b *backend) Build(l *core.Loop) (exec.Program, error) {
	src, err := generate(l)
	if err != nil {
		return nil, err
	}
	p, err := host.NewProgram(b.cc, l, src, 0)
	if err != nil {
		return nil, err
	}
	return &program{Program: p}, nil
}

// program runs the wrapper once per launched range of elements.
type program struct {
	*host.Program
	l *core.Loop // the bound loop, between Bind and Finish
}

func (p *program) PlanNeeds() *exec.PlanNeeds { return nil }

func (p *program) Bind(l *core.Loop, _ *exec.Plan) error {
	p.l = l
	return p.Program.Bind(l)
}

func (p *program) Launch(r exec.Range) error {
	p.SetInt(host.IvStart, r.First)
	p.SetInt(host.IvEnd, r.Last)
	return p.Call(p.l)
}

func (p *program) Finish(*core.Loop) error {
	p.l = nil
	return nil
}
