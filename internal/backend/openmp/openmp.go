// Package openmp is the "openmp" backend: the generated wrapper runs the
// loop on all cores through OpenMP.
//
// Loops that modify nothing through a map are split evenly between threads.
// Loops that do (an INC, RW or WRITE through a map) follow an execution plan:
// the set is cut into blocks, the blocks are coloured so that no two blocks
// of one colour touch the same target element, and the colours run one after
// another with the blocks of each colour shared among the threads. Global
// reductions accumulate per thread and are combined in thread order after
// the loop, so a run is repeatable for a given thread count.
package openmp

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/goop2/op2/internal/cache"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/host"
	"github.com/goop2/op2/internal/jit"
)

// Name is the name the backend is registered under.
const Name = "openmp"

func init() {
	exec.RegisterGenerator(Name, generate)
	exec.Register(Name, func(cfg *exec.Config) (exec.Backend, error) {
		threads := cfg.Threads
		if threads < 1 {
			threads = min(runtime.NumCPU(), exec.MaxThreads)
		}
		if err := exec.CheckThreads(threads, "openmp: thread count"); err != nil {
			return nil, err
		}
		dir, err := cache.Open(cfg.CacheDir)
		if err != nil {
			return nil, err
		}
		return &backend{
			cc:      &jit.Compiler{CC: cfg.CC, Flags: cfg.CFlags, Cache: dir},
			threads: threads,
		}, nil
	})
}

type backend struct {
	cc      *jit.Compiler
	threads int
}

// Plan pointers appended to the wrapper's pv array.
const (
	pvBlkMap = iota
	pvOffset
	pvNElems
	pvColOffset
	pvCount
)

func (b *backend) Name() string { return Name }

// Generate writes the OpenMP wrapper for the loop.
func (b *backend) Generate(l *core.Loop) (string, error) { return generate(l) }

func generate(l *core.Loop) (string, error) {
	var g host.Gen
	g.Prelude(l)
	g.Printf("#include <omp.h>\n\n")
	g.Range(l)
	g.EntryOpen(l)
	g.Printf("  const long long op2_start = op2_iv[%d], op2_end = op2_iv[%d];\n", host.IvStart, host.IvEnd)
	g.Printf("  const int op2_nthreads = (int)op2_iv[%d];\n", host.IvThreads)
	coloured := l.NeedsColouring()
	nargs := len(l.Args)
	if coloured {
		g.Printf("  const int *const op2_blkmap = (const int *)op2_pv[%d];\n", 2*nargs+pvBlkMap)
		g.Printf("  const int *const op2_offset = (const int *)op2_pv[%d];\n", 2*nargs+pvOffset)
		g.Printf("  const int *const op2_nelems = (const int *)op2_pv[%d];\n", 2*nargs+pvNElems)
		g.Printf("  const int *const op2_coloff = (const int *)op2_pv[%d];\n", 2*nargs+pvColOffset)
	}
	// Per-thread partial results, one cache line apart.
	stride := func(a *core.Arg) int {
		per := 64 / a.Data.Type.Size()
		return (a.Data.Dim + per - 1) / per * per
	}
	var reductions []int
	for i := range l.Args {
		a := &l.Args[i]
		if !a.IsReduction() {
			continue
		}
		reductions = append(reductions, i)
		init := fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i])
		if a.Access == core.Inc {
			init = "0"
		}
		g.Printf("  %s *const op2_part%d = aligned_alloc(64, sizeof(%s) * op2_nthreads * %d);\n", a.Data.Type.CName(), i, a.Data.Type.CName(), stride(a))
		g.Printf("  if (!op2_part%d) {", i)
		for _, j := range reductions[:len(reductions)-1] {
			g.Printf(" free(op2_part%d);", j)
		}
		g.Printf(" return 1; }\n")
		g.Printf("  for (int op2_t = 0; op2_t < op2_nthreads; op2_t++)\n    for (int op2_k = 0; op2_k < %d; op2_k++) op2_part%d[op2_t * %d + op2_k] = %s;\n",
			a.Data.Dim, i, stride(a), init)
	}
	reduce := func(i int) string { return fmt.Sprintf("op2_part%d + op2_tid * %d", i, stride(&l.Args[i])) }
	// op2_range fails only when it cannot allocate its pointer arrays;
	// a failure anywhere fails the loop.
	fails := host.RangeFails(l)
	call := func(first, last string) string {
		c := host.RangeCall(l, first, last, reduce)
		if !fails {
			return "(void)" + c + ";"
		}
		return "if (" + c + ") {\n        #pragma omp atomic write\n        op2_failed = 1;\n      }"
	}
	if fails {
		g.Printf("  int op2_failed = 0;\n")
	}

	// The work of one thread. With one thread it runs without a parallel
	// region: the orphaned worksharing loop then binds to a team of one,
	// which costs far less than starting a region.
	var r host.Gen
	r.Printf("    const int op2_tid = omp_get_thread_num();\n    (void)op2_tid;\n")
	if coloured {
		r.Printf("    for (long long op2_c = op2_start; op2_c < op2_end; op2_c++) {\n")
		r.Printf("      #pragma omp for schedule(static)\n")
		r.Printf("      for (int op2_b = op2_coloff[op2_c]; op2_b < op2_coloff[op2_c + 1]; op2_b++) {\n")
		r.Printf("        const int op2_blk = op2_blkmap[op2_b];\n")
		r.Printf("        %s\n", call("op2_offset[op2_blk]", "(long long)op2_offset[op2_blk] + op2_nelems[op2_blk]"))
		r.Printf("      }\n    }\n")
	} else {
		r.Printf("    const int op2_nt = omp_get_num_threads();\n")
		r.Printf("    const long long op2_len = op2_end - op2_start;\n")
		r.Printf("    %s\n", call("op2_start + op2_len * op2_tid / op2_nt", "op2_start + op2_len * (op2_tid + 1) / op2_nt"))
	}
	g.Printf("  if (op2_nthreads > 1) {\n    #pragma omp parallel num_threads(op2_nthreads)\n    {\n%s    }\n  } else {\n%s  }\n", r.String(), r.String())
	if fails {
		g.Printf("  if (op2_failed) {")
		for _, i := range reductions {
			g.Printf(" free(op2_part%d);", i)
		}
		g.Printf(" return 1; }\n")
	}
	for _, i := range reductions {
		a := &l.Args[i]
		g.Printf("  for (int op2_t = 0; op2_t < op2_nthreads; op2_t++)\n    for (int op2_k = 0; op2_k < %d; op2_k++) { %s }\n",
			a.Data.Dim, host.Combine(a.Access, fmt.Sprintf("op2_d%d[op2_k]", l.Sig.Base[i]), fmt.Sprintf("op2_part%d[op2_t * %d + op2_k]", i, stride(a))))
		g.Printf("  free(op2_part%d);\n", i)
	}
	g.EntryClose(l)
	return g.String(), nil
}

func (b *backend) Build(l *core.Loop) (exec.Program, error) {
	src, err := generate(l)
	if err != nil {
		return nil, err
	}
	p, err := host.NewProgram(b.cc, l, src, pvCount, "-fopenmp")
	if err != nil {
		return nil, err
	}
	return &program{Program: p, b: b, coloured: l.Sig.Colour, needs: exec.PlanNeeds{Threads: b.threads}}, nil
}

// serialBelow is the set size under which a loop runs on one thread.
const serialBelow = 512

// program runs the wrapper once per launched range: elements for a loop
// split evenly between threads, block colours of the plan for a coloured
// one.
type program struct {
	*host.Program
	pending  *core.Loop // the loop handed to the master thread
	b        *backend
	coloured bool
	needs    exec.PlanNeeds // of a coloured loop

	l       *core.Loop // the bound loop, between Bind and Finish
	threads int        // threads for the bound loop
}

func (p *program) PlanNeeds() *exec.PlanNeeds {
	if !p.coloured {
		return nil
	}
	return &p.needs
}

func (p *program) Bind(l *core.Loop, pl *exec.Plan) error {
	if err := p.Program.Bind(l); err != nil {
		return err
	}
	p.l = l
	p.threads = p.b.threads
	if l.IterEnd() < serialBelow {
		p.threads = 1 // waking a thread team costs more than the work
	}
	p.SetInt(host.IvThreads, p.threads)
	if p.coloured {
		p.SetPtr(pvBlkMap, slicePtr(pl.BlkMap))
		p.SetPtr(pvOffset, slicePtr(pl.Offset))
		p.SetPtr(pvNElems, slicePtr(pl.NElems))
		p.SetPtr(pvColOffset, slicePtr(pl.ColOffset))
	}
	return nil
}

func (p *program) Launch(r exec.Range) error {
	p.SetInt(host.IvStart, r.First)
	p.SetInt(host.IvEnd, r.Last)
	return p.call(p.l, p.threads)
}

func (p *program) Finish(*core.Loop) error {
	p.l = nil
	return nil
}

// The parallel regions all start from one OS thread, the master. OpenMP
// keeps a pool of worker threads per thread that starts regions, and Go
// runs successive calls into C on whichever thread is free: starting
// regions from many threads would create many pools, more workers than
// CPUs, and make OpenMP stop spinning at barriers and sleep instead
// (measured: a random-mesh increment loop with 572 colours took 30-45 ms
// instead of 17-21 ms on 2 threads). Loops that run on one thread stay on
// the calling thread.
var master struct {
	once sync.Once
	req  chan *program
	done chan error
}

func (p *program) call(l *core.Loop, threads int) error {
	if threads <= 1 {
		return p.Call(l)
	}
	master.once.Do(func() {
		master.req = make(chan *program)
		master.done = make(chan error)
		go func() {
			runtime.LockOSThread() // for good: this thread is the master
			for q := range master.req {
				master.done <- q.Call(q.pending)
			}
		}()
	})
	p.pending = l
	master.req <- p
	err := <-master.done
	p.pending = nil
	return err
}

func slicePtr(s []int32) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}
