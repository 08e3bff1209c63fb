package core

import (
	"fmt"
	"slices"
	"strings"
)

// This file holds what the C front end (internal/cfront) reads from a
// kernel's source and the data model keeps on its Kernel: the parameters
// of its definition and the positions the generators adapt; and which
// parameters of a loop's kernel generated code declares const, with the
// note a failed build gets when that is why. The reading itself is
// cfront's.

// Param is one parameter of a kernel's C signature as far as GoOP2 can read it.
type Param struct {
	Text  string     // the declaration as written
	Name  string     // parameter name, "" if unnamed
	Type  ScalarType // 0 when the base type is not one GoOP2 supports
	Depth int        // pointer depth: '*' and '[]' counted together
	// CType describes the base type as GoOP2 resolved it, for messages:
	// "double", "real (typedef of double)", "long double", "uint64_t".
	CType string
	// Plain, set when a typedef hides pointer or array declarators
	// (typedef double *dp; dp x), is the declaration spelled without it
	// ("double *x"), for generators that must qualify the pointer.
	Plain string
	// Problem, when set, says why no argument can be passed to this
	// parameter (an array of arrays), naming it.
	Problem string
	// Ref says the parameter is a C++ reference (double &x, const
	// double &x): the kernel gets the element's one value itself.
	Ref bool
	// Untyped says the parameter is an untyped pointer (void *, or
	// void ** for a vector argument): it takes data of any element type,
	// which the kernel casts to the type it knows.
	Untyped bool
	// ConstData says the values the parameter points to are const
	// (const double *x, or through a typedef or macro).
	ConstData bool
	// Variadic says the parameter is a variadic list's ... (the last).
	Variadic bool
	// Start and End delimit the declaration in the source (Text as
	// written there), and TypeAt is the offset of its first type word,
	// where ReadOnlyText puts its const.
	Start, End, TypeAt int
}

// ReadOnlyText is the declaration with the values it points to made
// const, as generated code declares the parameter of a READ argument:
// const before the type words, or, where a typedef hides the pointer,
// the declaration spelled out (Plain) after const. A declaration whose
// values are const already is returned as it is.
func (p *Param) ReadOnlyText() string {
	switch {
	case p.ConstData:
		return p.Text
	case p.Plain != "":
		return "const " + p.Plain
	}
	at := p.TypeAt - p.Start
	return p.Text[:at] + "const " + p.Text[at:]
}

// KernelInfo is what GoOP2 reads from a kernel's source once
// (cfront.ParseKernel).
//
// The source is read as the compiler sees it: line continuations and
// digraphs are undone (clex.Normalize), comments and literals are skipped,
// and preprocessor conditionals (#if, #ifdef, #ifndef, #elif, #elifdef,
// #elifndef, #else) are evaluated as C does (see internal/cfront's
// cppexpr.go: intmax_t and uintmax_t arithmetic, an identifier that is no
// macro is 0); code in a branch that is not taken is ignored. A macro the
// source neither defines nor undefines is taken as undefined, unless a
// header included before or the compiler may define it (names reserved for
// the implementation such as __GNUC__ or __OPENCL_VERSION__, OpenCL's cl_*
// and CL_*): conditions on those cannot be evaluated. A definition of the
// kernel inside a branch GoOP2 cannot evaluate is refused, as are two
// definitions, K&R-style definitions, identifiers with GoOP2's reserved
// prefix (op2_, OP2_) and directives the compiler would reject (a division
// by zero in #if, #endif without #if, an unterminated #if), with the line.
// Macros given to the compiler with -D in Config.CFlags are not seen:
// define them in the source.
type KernelInfo struct {
	Params []Param
	Idents map[string]bool // every identifier in the source, to find the constants it uses
	// WritesStdio says the source names a function or stream that
	// writes to the C library's streams (printf, fputs_unlocked,
	// wprintf, __builtin_printf, std::cout...): generated code flushes
	// them after the loop. HasEffects says it names a way to act outside
	// its arguments at all: those, or writing a file or a descriptor,
	// running a command, ending the process (exit, abort): such a loop
	// runs when issued in lazy mode. Calls made through a header's macro
	// (assert) or a function pointer from elsewhere are not seen.
	WritesStdio, HasEffects bool
	// SetsOptions is what in the source changes GCC's options for the
	// functions after it or for one function (an optimize or target
	// pragma or attribute), or "": the kernel, the code calling it and
	// its SIMD lane form might then be compiled under different options.
	SetsOptions string
	// FileScope is what in the source holds for the code after it in
	// the same file besides declarations and its own macros, one a line:
	// its pragmas, its #includes of headers that may change later code
	// (<tgmath.h>, <assert.h>, its own), the #defines and #undefs before
	// an #include. Sources fused into one file (package fuse) must agree
	// on it.
	FileScope string
	// Macros are the names of the macros the source #defines (in any
	// branch), in order of first definition: generated code #undefs them
	// after the kernel so that they cannot change it.
	Macros []string
	// TopLevel holds the identifiers that occur at file scope in the code
	// the compiler sees (outside function bodies and directives): the
	// names the source declares (functions, variables, typedefs) and the
	// types it uses in those declarations.
	TopLevel map[string]bool
	// Functions are the names the source declares or defines as
	// functions at file scope (and names called in file-scope
	// initializers): no Const can be meant by them.
	Functions map[string]bool
	// Positions in the source of the definition's name, of its parameter
	// list (Source[ListStart:ListEnd] is the text between the parentheses)
	// and of its body's braces (Source[BodyOpen] is '{', Source[BodyClose]
	// '}'). Backends adapt the definition with them.
	NameStart, ListStart, ListEnd, BodyOpen, BodyClose int
	// Source is the source these positions are in: the kernel's source
	// normalised (clex.Normalize), with the macro invocations that write
	// the definition expanded in place (see cfront.ParseKernel).
	Source string
	// Blanked is Source with its comments and the contents of its
	// literals blanked (clex.Blank), at the same offsets.
	Blanked string
	// Returns says the body has a return statement (outside macros).
	Returns bool
	// CXXOnly says what of the C++ the reader reads, and C does not
	// have, the source uses: what stands between the definition's
	// parameter list and its body (noexcept, throw(), a trailing return
	// type), or a linkage-specification block (extern "C" { ... }); ""
	// when neither. A kernel not declared C++ with such a source is
	// refused, saying to declare it so.
	CXXOnly string
	// Protos are the spans of the parameter lists (between the
	// parentheses) of the kernel's file-scope prototypes, which must
	// follow any change to the definition's list.
	Protos [][2]int

	// Front is the C front end's own reading of Source (internal/cfront:
	// its directives, and the rest of the kernel's model once read),
	// opaque to the data model. It is nil in a KernelInfo made by hand,
	// whose Source the front end reads again when asked.
	Front any
}

// DefinesMacro reports whether the source #defines macro name.
func (k *KernelInfo) DefinesMacro(name string) bool {
	for _, m := range k.Macros {
		if m == name {
			return true
		}
	}
	return false
}

// ReadOnlyArg reports whether generated code declares the kernel
// parameter of argument a const: an enabled READ argument (a Dat, a
// Global or an index), whose values the kernel may only read.
func ReadOnlyArg(a *Arg) bool { return a.Access == Read && !a.Off }

// constDiagnostics are words of the compilers' messages (GCC, Clang,
// NVRTC; lower case) about writing to const values or discarding const.
var constDiagnostics = []string{"read-only", "discards", "incompatible pointer type", "modifiable lvalue", "not assignable",
	"const-qualified", `"const `}

// ReadOnlyNote explains a failed build of loop l whose compiler messages
// (in err) may come from a READ argument's parameter that generated code
// declared const (cfront.ReadOnlySource) although the kernel did not: it
// names those parameters and their arguments. It returns "" when the
// messages say nothing of const, or when the kernel declared every such
// parameter const itself.
func ReadOnlyNote(l *Loop, err error) string {
	if l.Kernel.Info == nil || err == nil {
		return ""
	}
	msg := strings.ToLower(err.Error())
	if !slices.ContainsFunc(constDiagnostics, func(d string) bool { return strings.Contains(msg, d) }) {
		return ""
	}
	var made []string
	for i, p := range l.Kernel.Info.Params {
		if i < len(l.Args) && ReadOnlyArg(&l.Args[i]) && !p.ConstData {
			name := p.Name
			if name == "" {
				name = p.Text
			}
			made = append(made, fmt.Sprintf("parameter %q (argument %d, %s)", name, i, l.Args[i].Describe()))
		}
	}
	if len(made) == 0 {
		return ""
	}
	return fmt.Sprintf("note: kernel %q may only read its READ arguments: on every backend GoOP2 declares their parameters const, so the kernel may not write through them, nor pass them where a pointer to modifiable values is expected (a helper's or a variable's); here %s; declare them const in the kernel and its helpers, or pass the data with an access that writes (WRITE, RW, INC)",
		l.Kernel.Name, strings.Join(made, ", "))
}
