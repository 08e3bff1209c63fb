package device

import (
	"strings"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/clex"
)

// A kernel source is C for the host compilers, which know nothing of the
// device languages' built-in names: MG-CFD declares its own double3, a
// kernel may typedef uint or define a macro named float4. OpenCL C and
// CUDA have those names built in, and their compilers refuse a second
// definition. So that the same kernel runs on every backend, the device
// generator renames, in the device code only, each name the source
// declares itself that the dialect has built in. Functions the source
// defines (dot, clamp, min...) are renamed anyway (funcName). A name the
// source declares only for the host compilers (in #if groups the device
// compiler skips) is the device language's own there, and kept.

// builtinRename is the name that name, declared by the kernel source and
// built into the dialect, has in the generated device code. Kernel
// sources may not use the op2_ prefix, so it cannot clash with a user's
// name.
func builtinRename(name string) string { return "op2_u_" + name }

// sharedBuiltins are the type names that both dialects have built in or
// that the generated preamble declares: a source's own declaration of one
// clashes unless it declares the very same type (C11 allows repeating a
// typedef), and C++ (CUDA) has bool as a keyword.
var sharedBuiltins = setOf(strings.Fields(`bool size_t ptrdiff_t intptr_t uintptr_t
	int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t`))

// cudaVector reports whether name is one of CUDA's built-in vector types
// (vector_types.h, which NVRTC includes in every program), with the 16-
// and 32-byte aligned forms of the 4-element 64-bit ones that newer CUDA
// releases add, or dim3.
func cudaVector(name string) bool {
	if name == "dim3" {
		return true
	}
	base := strings.TrimPrefix(name, "u")
	if b, ok := strings.CutSuffix(base, "4_16a"); ok && (b == "long" || b == "longlong" || b == "double" && base == name) {
		return true
	}
	if b, ok := strings.CutSuffix(base, "4_32a"); ok && (b == "long" || b == "longlong" || b == "double" && base == name) {
		return true
	}
	if n := len(base); n > 1 && base[n-1] >= '1' && base[n-1] <= '4' {
		switch b := base[:n-1]; b {
		case "char", "short", "int", "long", "longlong":
			return true
		case "float", "double":
			return base == name
		}
	}
	return false
}

// openCLBuiltin reports whether OpenCL C reserves or predefines name (its
// keywords, scalar and vector types, the built-ins cfront.OpenCLNameProblem
// lists) or the generated preamble declares it.
func openCLBuiltin(name string) bool {
	return sharedBuiltins[name] || cfront.OpenCLNameProblem(name) != ""
}

// openCLForeignTypes are the type names OpenCL C has built in that no C
// header declares (C has uint, ushort and ulong in sys/types.h, bool in
// stdbool.h, the atomic types in stdatomic.h, with the same meaning).
var openCLForeignTypes = setOf(strings.Fields(`half quad uchar event_t sampler_t queue_t ndrange_t
	clk_event_t reserve_id_t cl_mem_fence_flags`))

// openCLReserved reports whether OpenCL C reserves name where a C source
// cannot mean OpenCL's own: a keyword (global, local, constant, private,
// kernel...), a type no C header declares (half, uchar, image2d_t...), a
// built-in function or a CLK_ macro.
func openCLReserved(name string) bool {
	switch cfront.OpenCLNameProblem(name) {
	case "an OpenCL C keyword", "an OpenCL C built-in function":
		return true
	}
	return openCLForeignTypes[name] || strings.HasPrefix(name, "image") && strings.HasSuffix(name, "_t") ||
		strings.HasPrefix(name, "CLK_")
}

// cudaBuiltin reports whether NVRTC predefines name as a type (the vector
// types, dim3, size_t) or the generated preamble declares it.
func cudaBuiltin(name string) bool {
	return sharedBuiltins[name] || cudaVector(name)
}

// renameBuiltins records in u.renamed the names the source declares that
// dialect d has built in (Dialect.Builtin): typedef names, the tags of
// the structs, unions, enums and classes it defines, C++ aliases (using
// name = ...) and macros. A name the source only uses, such as OpenCL's
// own double3, stays the built-in, and so does a name the source
// declares only in #if groups that the device compiler skips (with
// Dialect.Predefined's macros: MG-CFD's double3 for host compilers
// only), since the device code would otherwise use the renamed type that
// nothing declares there. A declaration in a group GoOP2 cannot decide is
// renamed. The error is a directive the device compiler would refuse.
func (u *userSource) renameBuiltins(d *Dialect) error {
	u.renamed = map[string]bool{}
	var skipped [][2]int
	if d.Builtin != nil && (len(u.MacroDefs) > 0 || len(u.DeclaredTypes) > 0) {
		var err error
		if skipped, err = u.Skipped(d.Predefined); err != nil {
			return err
		}
	}
	note := func(name string, at int) {
		if d.Builtin != nil && d.Builtin(name) && !cfront.InSpans(skipped, at) {
			u.renamed[name] = true
		}
	}
	for _, m := range u.MacroDefs {
		note(m.Name, m.At)
	}
	for i, name := range u.DeclaredTypes {
		note(name, u.DeclaredAt[i])
	}
	u.reserved = map[string]bool{}
	if d.Reserved != nil {
		for name := range u.Names {
			if d.Reserved(name) {
				u.reserved[name] = true
			}
		}
	}
	return nil
}

// deviceName is the name the source's name has in the generated code.
func (u *userSource) deviceName(name string) string {
	if u.renamed[name] || u.reserved[name] {
		return builtinRename(name)
	}
	return name
}

// renames returns the edits that rename, in C text s, the names
// u.renamed lists: everywhere (in directives too) but in comments, string
// and character literals, and members (after '.' or "->"); and the names
// u.reserved lists, members included.
func (u *userSource) renames(s string) []edit {
	if len(u.renamed) == 0 && len(u.reserved) == 0 {
		return nil
	}
	return u.renameTokens(clex.Tokenize(clex.BlankAttributes(clex.Blank(s, true, nil))))
}

// renameTokens is renames of the text whose tokens are toks.
func (u *userSource) renameTokens(toks []clex.Token) []edit {
	var out []edit
	for i, t := range toks {
		member := i > 0 && (toks[i-1].Text == "." || toks[i-1].Text == "->")
		// clex keeps a.b.c as one token: its first name, then members.
		at := t.Start
		for k, name := range strings.Split(t.Text, ".") {
			if u.reserved[name] || u.renamed[name] && !member && k == 0 {
				out = append(out, edit{at, at + len(name), builtinRename(name)})
			}
			at += len(name) + 1
		}
	}
	return out
}

// renameEdits returns the edits that rename the names u.renamed lists in
// the kernel source (renames), but for those inside the span of one of
// the edits others replace (the kernel's parameter list, which the
// generator writes anew from the parameters' text: renameText renames
// them there).
func (u *userSource) renameEdits(others []edit) []edit {
	var out []edit
	if len(u.renamed) == 0 && len(u.reserved) == 0 {
		return nil
	}
	for _, r := range u.renameTokens(u.SrcTokens) {
		inside := false
		for _, e := range others {
			if e.end > e.at && r.at < e.end && e.at < r.end {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, r)
		}
	}
	return out
}

// renameText returns text taken from the kernel source (a parameter's
// declaration) with the names u.renamed lists renamed.
func (u *userSource) renameText(text string) string {
	return applyEdits(text, u.renames(text))
}
