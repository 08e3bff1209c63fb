// Package sequential is the "sequential" backend: one C function with a
// plain loop over the iteration set that calls the user kernel, compiled
// together with the kernel so the call is inlined, and run on one core.
package sequential

import (
	"log/slog"

	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/host"
)

// Name is the name the backend is registered under.
const Name = "sequential"

func init() {
	exec.RegisterGenerator(Name, hostc.Sequential)
	exec.Register(Name, func(cfg *exec.Config) (exec.Backend, error) {
		cc, err := host.NewCompiler(cfg)
		if err != nil {
			return nil, err
		}
		return &backend{cc: cc}, nil
	})
}

type backend struct {
	cc *host.Compilers
}

func (b *backend) Name() string { return Name }

// Describe names the compiler (exec.Describer).
func (b *backend) Describe() []slog.Attr {
	return []slog.Attr{slog.String("platform", "host"), slog.String("compiler", b.cc.C.CC), slog.Int("threads", 1)}
}

// Generate writes the translation unit: prelude, kernel and a wrapper that
// loops over [op2_iv[0], op2_iv[1]). Global reductions accumulate into
// local copies, combined into the Global after the loop.
func (b *backend) Generate(l *core.Loop) (string, error) { return hostc.Sequential(l) }

func (b *backend) Build(l *core.Loop) (exec.Program, error) {
	src, err := hostc.Sequential(l)
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
	p.SetInt(hostc.IvStart, r.First)
	p.SetInt(hostc.IvEnd, r.Last)
	return p.Call(p.l)
}

func (p *program) Finish(l *core.Loop) error {
	p.l = nil
	return p.Program.Finish(l)
}
