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
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/goop2/op2/internal/cache"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/host"
	"github.com/goop2/op2/internal/jit"
	"github.com/goop2/op2/internal/plan"
)

// Name is the name the backend is registered under.
const Name = "openmp"

func init() {
	core.Register(Name, func(cfg *core.Config) (core.Backend, error) {
		threads := cfg.Threads
		if threads < 1 {
			threads = min(runtime.NumCPU(), core.MaxThreads)
		}
		if err := core.CheckThreads(threads, "openmp: thread count"); err != nil {
			return nil, err
		}
		dir, err := cache.Open(cfg.CacheDir)
		if err != nil {
			return nil, err
		}
		return &backend{
			cc:        &jit.Compiler{CC: cfg.CC, Flags: cfg.CFlags, Cache: dir},
			threads:   threads,
			blockSize: cfg.BlockSize,
			plans:     core.NewPlanCache[*pinnedPlan](nil),
		}, nil
	})
}

type backend struct {
	cc        *jit.Compiler
	threads   int
	blockSize int

	mu    sync.Mutex
	plans *core.PlanCache[*pinnedPlan] // dropped with their set and maps
}

// pinnedPlan is a plan whose arrays are pinned so that their addresses can
// sit in the wrapper's C argument array, for as long as the pinnedPlan is
// reachable (it is cached by its backend).
type pinnedPlan struct {
	p *plan.Plan
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
func (b *backend) Generate(l *core.Loop) (string, error) {
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
		g.Printf("  const int op2_ncolors = (int)op2_iv[%d];\n", host.IvNColors)
		g.Printf("  const int *const op2_blkmap = (const int *)op2_pv[%d];\n", 2*nargs+pvBlkMap)
		g.Printf("  const int *const op2_offset = (const int *)op2_pv[%d];\n", 2*nargs+pvOffset)
		g.Printf("  const int *const op2_nelems = (const int *)op2_pv[%d];\n", 2*nargs+pvNElems)
		g.Printf("  const int *const op2_coloff = (const int *)op2_pv[%d];\n", 2*nargs+pvColOffset)
		g.Printf("  (void)op2_start; (void)op2_end;\n")
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
		r.Printf("    for (int op2_c = 0; op2_c < op2_ncolors; op2_c++) {\n")
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

func (b *backend) Prepare(l *core.Loop) (core.Program, error) {
	src, err := b.Generate(l)
	if err != nil {
		return nil, err
	}
	p, err := host.NewProgram(b.cc, l, src, pvCount, "-fopenmp")
	if err != nil {
		return nil, err
	}
	return &program{Program: p, b: b, coloured: l.NeedsColouring()}, nil
}

// build builds the plan. With a configured block size it uses that; else it
// chooses one for a CPU. A host thread needs no staging memory, so blocks
// start large: large blocks need fewer colours and keep each colour's data
// together in cache (measured on Airfoil's res_calc: 7.5 ms per call with
// 8192-element blocks, 13.9 ms with OP2's 256). But when the mesh has little
// locality large blocks all conflict and the colours serialise the loop, so
// the size is quartered until every colour has, on average, work for all
// threads (four blocks per thread), down to 256.
//
// It returns the plan and the input it was built from.
func (b *backend) build(in plan.Input, n int) (*plan.Plan, plan.Input, error) {
	if in.BlockSize > 0 {
		pl, err := plan.Build(in)
		return pl, in, err
	}
	in.BlockSize = min(max(n/(16*b.threads), 256), 8192)
	for {
		pl, err := plan.Build(in)
		if err != nil || in.BlockSize <= 256 || pl.NBlocks >= 4*b.threads*pl.NColors {
			return pl, in, err
		}
		in.BlockSize = max(in.BlockSize/4, 256)
	}
}

// serialBelow is the set size under which a loop runs on one thread.
const serialBelow = 512

type program struct {
	*host.Program
	pending  *core.Loop // the loop handed to the master thread
	b        *backend
	coloured bool

	key     []byte // plan key of the last call
	lastKey []byte
	last    *pinnedPlan
}

func (p *program) Run(l *core.Loop) error {
	if err := p.Bind(l); err != nil {
		return err
	}
	p.SetInt(host.IvStart, 0)
	p.SetInt(host.IvEnd, l.IterEnd())
	threads := p.b.threads
	if l.IterEnd() < serialBelow {
		threads = 1 // waking a thread team costs more than the work
	}
	p.SetInt(host.IvThreads, threads)
	if !p.coloured {
		return p.call(l, threads)
	}
	pp, err := p.plan(l)
	if err != nil {
		return err
	}
	pl := pp.p
	p.SetInt(host.IvNColors, pl.NColors)
	p.SetPtr(pvBlkMap, slicePtr(pl.BlkMap))
	p.SetPtr(pvOffset, slicePtr(pl.Offset))
	p.SetPtr(pvNElems, slicePtr(pl.NElems))
	p.SetPtr(pvColOffset, slicePtr(pl.ColOffset))
	return p.call(l, threads)
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

// plan returns the execution plan for the loop's set and maps, reusing the
// last one when nothing it depends on changed.
func (p *program) plan(l *core.Loop) (*pinnedPlan, error) {
	sig := l.Sig
	k := p.key[:0]
	k = binary.LittleEndian.AppendUint64(k, l.Set.ID)
	k = binary.LittleEndian.AppendUint64(k, uint64(p.b.blockSize))
	for i := range l.Args {
		a := &l.Args[i]
		if a.Map == nil {
			continue
		}
		mod := byte(0)
		if a.IndirectModify() {
			mod = 1
		}
		k = binary.LittleEndian.AppendUint64(k, a.Map.ID)
		k = binary.LittleEndian.AppendUint32(k, uint32(sig.Ind[i]))
		k = binary.LittleEndian.AppendUint32(k, uint32(sig.Base[i])) // conflict groups
		k = binary.LittleEndian.AppendUint32(k, uint32(a.Idx))
		k = append(k, mod)
	}
	p.key = k
	if p.last != nil && string(p.lastKey) == string(k) {
		return p.last, nil
	}

	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	pp, ok := p.b.plans.Get(k)
	if !ok {
		in := plan.ForLoop(l, func(i int) bool { return l.Args[i].IndirectModify() }, p.b.blockSize)
		built, in, err := p.b.build(in, l.IterEnd())
		if err != nil {
			return nil, fmt.Errorf("%s: building the execution plan: %w", l.Name(), err)
		}
		if plan.CheckingEnabled() {
			if err := built.Check(in); err != nil {
				return nil, fmt.Errorf("%s: execution plan check failed: %w", l.Name(), err)
			}
		}
		if os.Getenv("OP2_DEBUG_PLAN") != "" {
			fmt.Fprintf(os.Stderr, "plan %s: blocks %d size %d colours %d\n", l.Name(), built.NBlocks, built.BlockSize, built.NColors)
		}
		pp = &pinnedPlan{p: built}
		var ptrs []any
		for _, s := range [][]int32{built.BlkMap, built.Offset, built.NElems, built.ColOffset} {
			if len(s) > 0 {
				ptrs = append(ptrs, &s[0])
			}
		}
		core.KeepPinned(pp, ptrs...)
		p.b.plans.Put(k, l, pp)
	}
	p.last = pp
	p.lastKey = append(p.lastKey[:0], k...)
	return pp, nil
}
