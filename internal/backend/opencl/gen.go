package opencl

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/host"
)

// WorkGroupSize is the number of work items per work group, fixed in each
// kernel's reqd_work_group_size attribute (OP2's GPU default).
const WorkGroupSize = 64

// maxDirectGroups caps the work groups of a direct loop; each work item
// then handles several elements.
const maxDirectGroups = 4096

// layout is what a loop's signature says about how its code is organised.
type layout struct {
	base       []int  // first argument with the same data, per argument
	inds       []int  // indirect dataset of each argument, -1 if none
	nind       int    // number of indirect datasets (unique dat and map)
	dsArg      []int  // first argument of each dataset
	dsStage    []bool // dataset values are staged into local memory (else zeroed: increments only)
	dsModified []bool // dataset is written back
	indirect   bool   // some argument goes through a map
	colourExec bool   // some argument is RW or WRITE through a map: kernel calls run colour by colour
	reductions []int  // Global reduction arguments
	// consts are the constants the kernel uses, less those a parameter of
	// the kernel shadows: they reach the kernel as extra parameters.
	consts []*core.Const
}

func analyse(l *core.Loop) (*layout, error) {
	n := len(l.Args)
	lay := &layout{base: make([]int, n), inds: make([]int, n)}
	lay.nind = core.Datasets(l, lay.inds)
	lay.dsArg = make([]int, lay.nind)
	lay.dsStage = make([]bool, lay.nind)
	lay.dsModified = make([]bool, lay.nind)
	for i := n - 1; i >= 0; i-- {
		a := &l.Args[i]
		lay.base[i] = host.Base(l, i)
		if d := lay.inds[i]; d >= 0 {
			lay.indirect = true
			lay.dsArg[d] = i
			if a.Access == core.RW || a.Access == core.Write {
				lay.colourExec = true
			}
			if a.Access != core.Inc {
				lay.dsStage[d] = true
			}
			if a.Access.Modifies() {
				lay.dsModified[d] = true
			}
		}
	}
	for i := range l.Args {
		if host.IsReduction(&l.Args[i]) {
			lay.reductions = append(lay.reductions, i)
		}
	}
	for _, c := range l.Consts {
		if !slices.ContainsFunc(l.Kernel.Info.Params, func(p core.Param) bool { return p.Name == c.Name }) {
			lay.consts = append(lay.consts, c)
		}
	}
	// A dat modified through a map is written back from its staged copy,
	// so no other argument may modify it, except that several datasets
	// that only increment it may (each copy is added back).
	for i := range l.Args {
		a := &l.Args[i]
		d := lay.inds[i]
		if d < 0 || !lay.dsModified[d] || lay.dsArg[d] != i {
			continue
		}
		for j := range l.Args {
			b := &l.Args[j]
			if b.Data != a.Data || lay.inds[j] == d || !b.Access.Modifies() {
				continue
			}
			if e := lay.inds[j]; e < 0 || lay.dsStage[d] || lay.dsStage[e] {
				return nil, fmt.Errorf("op2: %s: the opencl backend stages %s in local memory and writes it back, so the loop may not also pass it as argument %d (%s); pass it through one map, or use a host backend",
					l.Name(), a.Data.Describe(), j, b.Describe())
			}
		}
	}
	return lay, nil
}

// qualifier is the OpenCL address space of the memory kernel parameter i
// points to.
func (lay *layout) qualifier(l *core.Loop, i int) string {
	a := &l.Args[i]
	switch a.Kind {
	case core.ArgIndirect, core.ArgVector:
		if a.Access == core.Inc {
			return "__private"
		}
		return "__local"
	case core.ArgGlobal:
		if host.IsReduction(a) {
			return "__private"
		}
	}
	return "__global"
}

// kernelName is the name the user's kernel definition gets in OpenCL code.
const kernelName = "op2_user_kernel"

var longLong = regexp.MustCompile(`\blong\s+long\b`)

// kernelSource returns the user's kernel made into OpenCL C: every pointer
// parameter gets its address-space qualifier, the constants it uses arrive
// as __constant parameters (scalars are read into locals in a block around
// the body, so that the kernel's own variables may shadow them), and
// `long long` becomes OpenCL's 64-bit `long`.
func kernelSource(l *core.Loop, lay *layout) string {
	k := l.Kernel
	info := k.Info
	var params []string
	for i, p := range info.Params {
		params = append(params, lay.qualifier(l, i)+" "+p.Text)
	}
	var locals strings.Builder
	var b strings.Builder
	for _, c := range lay.consts {
		sym := "op2c_" + c.Name
		params = append(params, fmt.Sprintf("__constant %s *%s", clType(c.Type), sym))
		if c.Dim == 1 {
			fmt.Fprintf(&locals, " const %s %s_v = %s[0];", clType(c.Type), sym, sym)
			fmt.Fprintf(&b, "#define %s %s_v\n", c.Name, sym)
		} else {
			fmt.Fprintf(&b, "#define %s %s\n", c.Name, sym)
		}
	}
	// The definition is renamed, so that prototypes of the kernel in the
	// source (which keep the parameters unqualified) declare a function
	// nobody calls rather than conflict with it.
	src := k.Source
	def := src[:info.NameStart] + kernelName + src[info.NameStart+len(k.Name):info.ListStart] +
		strings.Join(params, ", ") + src[info.ListEnd:info.BodyOpen+1] +
		locals.String() + " {" + src[info.BodyOpen+1:info.BodyClose] + "}" + src[info.BodyClose:]
	fmt.Fprintf(&b, "/* user kernel %s */\n%s\n/* end of user kernel */\n", k.Name, longLong.ReplaceAllString(def, "long"))
	for _, c := range lay.consts {
		fmt.Fprintf(&b, "#undef %s\n", c.Name)
	}
	return b.String()
}

// clType is the OpenCL spelling of a scalar type.
func clType(t core.ScalarType) string {
	if t == core.Int64 {
		return "long"
	}
	return t.CName()
}

type writer struct{ strings.Builder }

func (w *writer) p(format string, a ...any) { fmt.Fprintf(&w.Builder, format, a...) }

// generate writes the whole OpenCL program for the loop: the kernel and a
// __kernel stub named op2_stub.
func generate(l *core.Loop, lay *layout) string {
	var w writer
	w.p("/* Generated by GoOP2 (opencl) for kernel %s. Do not edit. */\n", l.Kernel.Name)
	w.p("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n")
	w.p("typedef char int8_t; typedef uchar uint8_t; typedef short int16_t; typedef ushort uint16_t;\n")
	w.p("typedef int int32_t; typedef uint uint32_t; typedef long int64_t; typedef ulong uint64_t;\n")
	w.p("#define ROUND_UP(bytes) (((bytes) + 15) & ~15)\n\n")
	w.p("%s\n", kernelSource(l, lay))
	if lay.indirect {
		indirectStub(&w, l, lay)
	} else {
		directStub(&w, l, lay)
	}
	return w.String()
}

// dataParams declares one __global pointer per distinct Dat or Global.
func dataParams(w *writer, l *core.Loop, lay *layout) {
	for i := range l.Args {
		if lay.base[i] == i {
			w.p("    __global %s *restrict d%d,\n", clType(l.Args[i].Data.Type), i)
		}
	}
}

// tailParams declares the constants and the reduction buffers and ends the
// parameter list.
func tailParams(w *writer, l *core.Loop, lay *layout) {
	var ps []string
	for _, c := range lay.consts {
		ps = append(ps, fmt.Sprintf("    __constant %s *op2c_%s", clType(c.Type), c.Name))
	}
	for _, i := range lay.reductions {
		t := clType(l.Args[i].Data.Type)
		ps = append(ps, fmt.Sprintf("    __global %s *red%d", t, i), fmt.Sprintf("    __local %s *rs%d", t, i))
	}
	if len(ps) == 0 {
		ps = append(ps, "    int op2_unused")
	}
	w.p("%s)\n{\n", strings.Join(ps, ",\n"))
}

// reductionInit declares each reduction's private accumulator.
func reductionInit(w *writer, l *core.Loop, lay *layout) {
	for _, i := range lay.reductions {
		a := &l.Args[i]
		t, dim := clType(a.Data.Type), a.Data.Dim
		init := fmt.Sprintf("d%d[k]", lay.base[i])
		if a.Access == core.Inc {
			init = "0"
		}
		w.p("  %s r%d[%d];\n  for (int k = 0; k < %d; k++) r%d[k] = %s;\n", t, i, dim, dim, i, init)
	}
}

// reductionFinish combines the work group's accumulators with a tree in
// local memory and stores the group's result in slot of the partials.
func reductionFinish(w *writer, l *core.Loop, lay *layout, slot string) {
	for _, i := range lay.reductions {
		a := &l.Args[i]
		dim := a.Data.Dim
		w.p("  for (int k = 0; k < %d; k++) {\n", dim)
		w.p("    rs%d[lid] = r%d[k];\n    barrier(CLK_LOCAL_MEM_FENCE);\n", i, i)
		w.p("    for (int s = %d; s > 0; s >>= 1) {\n", WorkGroupSize/2)
		w.p("      if (lid < s) { %s }\n", host.Combine(a.Access, fmt.Sprintf("rs%d[lid]", i), fmt.Sprintf("rs%d[lid + s]", i)))
		w.p("      barrier(CLK_LOCAL_MEM_FENCE);\n    }\n")
		w.p("    if (lid == 0) red%d[(%s) * %d + k] = rs%d[0];\n", i, slot, dim, i)
		w.p("    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n")
	}
}

// callArgs returns the kernel call's argument expressions for element e.
func callArgs(l *core.Loop, lay *layout, e string) []string {
	var out []string
	for i := range l.Args {
		a := &l.Args[i]
		dim := a.Data.Dim
		switch a.Kind {
		case core.ArgDirect:
			out = append(out, fmt.Sprintf("d%d + (size_t)(%s) * %d", lay.base[i], e, dim))
		case core.ArgIndirect:
			if a.Access == core.Inc {
				out = append(out, fmt.Sprintf("l%d", i))
			} else {
				out = append(out, fmt.Sprintf("s%d + loc%d[%s] * %d", lay.inds[i], i, e, dim))
			}
		case core.ArgVector:
			out = append(out, fmt.Sprintf("v%d", i))
		case core.ArgGlobal:
			if host.IsReduction(a) {
				out = append(out, fmt.Sprintf("r%d", i))
			} else {
				out = append(out, fmt.Sprintf("d%d", lay.base[i]))
			}
		}
	}
	for _, c := range lay.consts {
		out = append(out, "op2c_"+c.Name)
	}
	return out
}

func directStub(w *writer, l *core.Loop, lay *layout) {
	w.p("__kernel __attribute__((reqd_work_group_size(%d, 1, 1)))\nvoid op2_stub(\n    int set_size,\n", WorkGroupSize)
	dataParams(w, l, lay)
	tailParams(w, l, lay)
	w.p("  const int lid = get_local_id(0);\n  (void)lid;\n")
	reductionInit(w, l, lay)
	w.p("  for (int n = get_global_id(0); n < set_size; n += get_global_size(0)) {\n")
	w.p("    %s(\n        %s);\n  }\n", kernelName, strings.Join(callArgs(l, lay, "n"), ",\n        "))
	reductionFinish(w, l, lay, "get_group_id(0)")
	w.p("}\n")
}

func indirectStub(w *writer, l *core.Loop, lay *layout) {
	w.p("__kernel __attribute__((reqd_work_group_size(%d, 1, 1)))\nvoid op2_stub(\n", WorkGroupSize)
	dataParams(w, l, lay)
	for d := 0; d < lay.nind; d++ {
		w.p("    __global const int *restrict ind_map%d, __global const int *restrict ind_offs%d, __global const int *restrict ind_sizes%d,\n", d, d, d)
	}
	for i := range l.Args {
		if l.Args[i].Map != nil {
			w.p("    __global const int *restrict loc%d,\n", i)
		}
	}
	w.p("    __global const int *restrict blkmap, __global const int *restrict offset, __global const int *restrict nelems,\n")
	w.p("    __global const int *restrict nthrcol, __global const int *restrict thrcol,\n")
	w.p("    int block_offset,\n    __local char *shared,\n")
	tailParams(w, l, lay)

	w.p("  const int lid = get_local_id(0);\n")
	w.p("  const int bid = blkmap[get_group_id(0) + block_offset];\n")
	w.p("  const int nelem = nelems[bid], first = offset[bid];\n")
	w.p("  int nbytes = 0;\n")
	for d := 0; d < lay.nind; d++ {
		a := &l.Args[lay.dsArg[d]]
		t, dim := clType(a.Data.Type), a.Data.Dim
		w.p("  const int size%d = ind_sizes%d[bid];\n", d, d)
		w.p("  __global const int *const map%d = ind_map%d + ind_offs%d[bid];\n", d, d, d)
		w.p("  __local %s *const s%d = (__local %s *)(shared + nbytes);\n", t, d, t)
		w.p("  nbytes += ROUND_UP(size%d * %d * (int)sizeof(%s));\n", d, dim, t)
	}
	w.p("  (void)nbytes;\n")
	// Stage in (or zero) every indirect dataset.
	for d := 0; d < lay.nind; d++ {
		a := &l.Args[lay.dsArg[d]]
		dim := a.Data.Dim
		src := fmt.Sprintf("d%d[i %% %d + (size_t)map%d[i / %d] * %d]", lay.base[lay.dsArg[d]], dim, d, dim, dim)
		if !lay.dsStage[d] {
			src = "0"
		}
		w.p("  for (int i = lid; i < size%d * %d; i += %d) s%d[i] = %s;\n", d, dim, WorkGroupSize, d, src)
	}
	w.p("  barrier(CLK_LOCAL_MEM_FENCE);\n")
	reductionInit(w, l, lay)

	// The elements: every work item makes the same number of passes so
	// that all reach the barriers of the coloured increments.
	w.p("  const int nelem2 = nelem > 0 ? %d * (1 + (nelem - 1) / %d) : 0;\n", WorkGroupSize, WorkGroupSize)
	w.p("  for (int n = lid; n < nelem2; n += %d) {\n", WorkGroupSize)
	w.p("    const int e = n + first;\n    int col = -1;\n")
	for i := range l.Args {
		a := &l.Args[i]
		t, dim := clType(a.Data.Type), a.Data.Dim
		switch {
		case a.Kind == core.ArgIndirect && a.Access == core.Inc:
			w.p("    %s l%d[%d];\n    for (int k = 0; k < %d; k++) l%d[k] = 0;\n", t, i, dim, dim, i)
		case a.Kind == core.ArgVector && a.Access == core.Inc:
			ar := a.Map.Arity
			w.p("    %s l%d[%d][%d];\n    for (int c = 0; c < %d; c++) for (int k = 0; k < %d; k++) l%d[c][k] = 0;\n", t, i, ar, dim, ar, dim, i)
			w.p("    __private %s *v%d[%d];\n    for (int c = 0; c < %d; c++) v%d[c] = l%d[c];\n", t, i, ar, ar, i, i)
		case a.Kind == core.ArgVector:
			ar := a.Map.Arity
			w.p("    __local %s *v%d[%d];\n", t, i, ar)
			w.p("    if (n < nelem) for (int c = 0; c < %d; c++) v%d[c] = s%d + loc%d[(size_t)e * %d + c] * %d;\n", ar, i, lay.inds[i], i, ar, dim)
		}
	}
	call := fmt.Sprintf("%s(\n          %s);", kernelName, strings.Join(callArgs(l, lay, "e"), ",\n          "))
	w.p("    if (n < nelem) {\n")
	if !lay.colourExec {
		w.p("      %s\n", call)
	}
	w.p("      col = thrcol[e];\n    }\n")
	w.p("    for (int c = 0; c < nthrcol[bid]; c++) {\n      if (col == c) {\n")
	if lay.colourExec {
		w.p("        %s\n", call)
	}
	for i := range l.Args {
		a := &l.Args[i]
		if a.Access != core.Inc || a.Map == nil {
			continue
		}
		dim, d := a.Data.Dim, lay.inds[i]
		if a.Kind == core.ArgIndirect {
			w.p("        for (int k = 0; k < %d; k++) s%d[loc%d[e] * %d + k] += l%d[k];\n", dim, d, i, dim, i)
		} else {
			ar := a.Map.Arity
			w.p("        for (int c2 = 0; c2 < %d; c2++) for (int k = 0; k < %d; k++) s%d[loc%d[(size_t)e * %d + c2] * %d + k] += l%d[c2][k];\n",
				ar, dim, d, i, ar, dim, i)
		}
	}
	w.p("      }\n      barrier(CLK_LOCAL_MEM_FENCE);\n    }\n  }\n")

	// Write back what changed.
	for d := 0; d < lay.nind; d++ {
		if !lay.dsModified[d] {
			continue
		}
		a := &l.Args[lay.dsArg[d]]
		dim := a.Data.Dim
		op := "="
		if !lay.dsStage[d] {
			op = "+="
		}
		w.p("  for (int i = lid; i < size%d * %d; i += %d) d%d[i %% %d + (size_t)map%d[i / %d] * %d] %s s%d[i];\n",
			d, dim, WorkGroupSize, lay.base[lay.dsArg[d]], dim, d, dim, dim, op, d)
		// Another dataset of the same dat may add to the same elements.
		w.p("  barrier(CLK_GLOBAL_MEM_FENCE);\n")
	}
	reductionFinish(w, l, lay, "bid")
	w.p("}\n")
}
