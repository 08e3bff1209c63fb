package cfront

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/core"
)

// ReservedPrefix starts every identifier that GoOP2's generated code
// introduces. Kernel sources may not use identifiers starting with it or
// with its upper-case form OP2_, but for the name of an include guard
// around the whole source, which ParseKernel blanks (blankIncludeGuard).
const ReservedPrefix = "op2_"

// ParseKernel finds the definition of function name in src and reads its
// parameters. It returns an error when no usable definition is found. It
// reads clex.Normalize(src) (line continuations moved out of tokens,
// digraphs spelled out) with an include guard around the whole source
// blanked (blankIncludeGuard), which has src's length and lines. Where the
// definition's head or parameters come from macros (a function-like macro
// such as #define DEF(name) void name(double *x), invoked as DEF(k) {
// ... }), the invocations are expanded in place, as the compiler expands
// them (see macros.go), and the result is the source with the
// expansions; its lines stay where they were. The offsets in the result
// are offsets into Source, which is what a Kernel's Source must hold.
func ParseKernel(src, name string) (*core.KernelInfo, error) {
	src = clex.Normalize(src)
	if i := clex.OpenComment(src); i >= 0 {
		return nil, fmt.Errorf("kernel source has a /* comment at line %d that no */ closes", lineOf(src, i))
	}
	src = blankIncludeGuard(src)
	// Each round expands the invocations it needs completely; a second
	// one expands macros in a parameter list the first one wrote.
	for round := 0; ; round++ {
		info, expanded, err := parseKernel(src, name)
		if expanded == "" || err != nil {
			if info != nil {
				info.Source = src
				info.SetsOptions = readOptions(src, info.Blanked)
				info.FileScope = readFileScope(clex.Blank(src, false, nil))
			}
			return info, err
		}
		if round == 3 {
			return nil, fmt.Errorf("the definition of function %q: its macros still need expanding after %d rounds", name, round+1)
		}
		src = expanded
	}
}

// parseKernel is one round of ParseKernel: the kernel's information, or
// src with the macro invocations expanded that the definition's head or
// parameters come from, for another round.
func parseKernel(src, name string) (*core.KernelInfo, string, error) {
	noComments := clex.Blank(src, true, nil)
	info := &core.KernelInfo{Idents: map[string]bool{}, TopLevel: map[string]bool{}}
	// Identifiers in macro bodies count: a macro may use a constant.
	for _, id := range clex.Identifiers(noComments) {
		if hasReservedPrefix(id) {
			return nil, "", fmt.Errorf("kernel source uses the identifier %q at line %d: names starting with %s or %s are reserved for GoOP2's generated code",
				id, lineOf(src, clex.IndexIdent(noComments, id)), ReservedPrefix, strings.ToUpper(ReservedPrefix))
		}
		info.Idents[id] = true
	}
	lit := clex.Blank(src, false, nil)
	pp, err := preprocess(noComments, lit)
	if err != nil {
		return nil, "", err
	}
	info.WritesStdio, info.HasEffects = readEffects(noComments, pp.skipped, pp.maybe)
	info.Macros = pp.names
	code, blocks := blankLinkageBlocks(clex.BlankAttributes(pp.code))
	for _, at := range blocks {
		// (#ifdef __cplusplus around one is C's too.)
		if pp.uncertainAt(at) == "" {
			info.CXXOnly = fmt.Sprintf(`a linkage-specification block (extern "C" { ... }) at line %d`, lineOf(src, at))
			break
		}
	}

	defs, knr, protos, tails, err := findDefinitions(code, name)
	if err != nil {
		return nil, "", err
	}
	switch {
	case len(defs) == 0 && knr >= 0:
		return nil, "", fmt.Errorf("function %q at line %d has a K&R-style definition; write a prototype (e.g. void %s(double *x, ...))", name, lineOf(src, knr), name)
	case len(defs) == 0:
		// The definition may come from macros.
		expanded, changed, err := expandKernelMacros(src, code, lit, pp, name, [2]int{}, [2]int{}, nil)
		switch {
		case changed:
			return nil, expanded, nil
		case err != nil:
			return nil, "", fmt.Errorf("kernel source has no definition of function %q that GoOP2 can read: %w", name, err)
		}
		return nil, "", fmt.Errorf("kernel source has no definition of function %q", name)
	}
	for _, d := range defs {
		if why := pp.uncertainAt(d.name); why != "" {
			return nil, "", fmt.Errorf("the definition of function %q at line %d depends on %s, which GoOP2 cannot evaluate (it uses macros the kernel source does not define); keep the definition outside such conditionals",
				name, lineOf(src, d.name), why)
		}
	}
	if len(defs) > 1 {
		return nil, "", fmt.Errorf("function %q is defined %d times (lines %d and %d) in the code the compiler sees", name, len(defs), lineOf(src, defs[0].name), lineOf(src, defs[1].name))
	}
	d := defs[0]
	macros := pp.macrosAt(d.name)
	if m, ok := macros[name]; ok && m.state != undefined {
		return nil, "", fmt.Errorf("kernel name %q is also a macro defined in the kernel source", name)
	}
	// Parameters written by macros, and macros between the list and the
	// body (#define NOEXCEPT noexcept) or a prototype's end.
	var tail [2]int
	if d.unread >= 0 {
		tail = [2]int{d.close + 1, d.body}
	}
	if expanded, changed, err := expandKernelMacros(src, code, lit, pp, name, [2]int{d.open + 1, d.close}, tail, tails); err != nil || changed {
		return nil, expanded, err
	}
	if d.unread >= 0 {
		return nil, "", fmt.Errorf("the definition of function %q at line %d has %q between its parameter list and its body, which GoOP2 does not read: it reads C++'s noexcept, throw(...) and a trailing return type (-> void), and macros that expand to them",
			name, lineOf(src, d.unread), strings.Join(strings.Fields(code[d.close+1:d.body]), " "))
	}
	if tail := strings.Join(strings.Fields(code[d.close+1:d.body]), " "); tail != "" {
		info.CXXOnly = fmt.Sprintf("%q between the definition's parameter list and its body", tail)
	}
	top := topLevel(code)
	for _, id := range clex.Identifiers(top) {
		info.TopLevel[id] = true
	}
	info.Functions = fileScopeFunctions(top)
	r := &typeResolver{macros: macros, typedefs: typedefs(code[:d.name], pp)}
	info.Params = parseParams(code[d.open+1:d.close], d.open+1, r)
	info.NameStart, info.ListStart, info.ListEnd, info.BodyOpen, info.BodyClose = d.name, d.open+1, d.close, d.body, d.bodyEnd
	info.Protos = protos
	info.Returns = clex.IndexIdent(code[d.body:d.bodyEnd], "return") >= 0
	info.Blanked = noComments
	info.Front = &reading{pp: pp, lit: lit}
	return info, "", nil
}

func hasReservedPrefix(id string) bool {
	return strings.HasPrefix(id, ReservedPrefix) || strings.HasPrefix(id, strings.ToUpper(ReservedPrefix))
}

// lineOf is the 1-based line of offset i in s.
func lineOf(s string, i int) int {
	if i < 0 {
		i = 0
	}
	if i > len(s) {
		i = len(s)
	}
	return strings.Count(s[:i], "\n") + 1
}

// definition is one function definition found in the code: offsets of its
// name, of the parentheses of its parameter list and of its body's braces,
// and of the first token between the list and the body that the reader
// does not read (readDeclTail; -1 if none).
type definition struct{ name, open, close, body, bodyEnd, unread int }

// findDefinitions returns the definitions of function name at file scope
// in code (comments, literals, directives and dead branches blanked), the
// offset of a K&R-style definition of it (-1 if none), the spans of the
// parameter lists of its file-scope prototypes (between the parentheses)
// and the spans of what the reader does not read (readDeclTail) between
// the parameter list and the ';' or ',' of declarations that may be
// prototypes (void k(double *x) NOEXCEPT;): macros there are expanded
// for the next round to read them.
func findDefinitions(code, name string) ([]definition, int, [][2]int, [][2]int, error) {
	var defs []definition
	var protos, tails [][2]int
	knr := -1
	depth := 0
	for i := 0; i < len(code); {
		c := code[i]
		switch {
		case c == '{':
			depth++
			i++
		case c == '}':
			depth--
			i++
		case clex.IsIdentStart(c):
			j := i
			for j < len(code) && clex.IsIdentChar(code[j]) {
				j++
			}
			if depth != 0 || code[i:j] != name {
				i = j
				continue
			}
			open := clex.SkipSpace(code, j)
			i = j
			if open >= len(code) || code[open] != '(' {
				continue
			}
			end := clex.MatchParen(code, open)
			if end < 0 {
				return nil, -1, nil, nil, fmt.Errorf("function %q: unbalanced parentheses in its parameter list", name)
			}
			k := clex.SkipSpace(code, end+1)
			unread := -1
			if k < len(code) && code[k] != '{' && code[k] != ';' && code[k] != ',' {
				// C++'s noexcept, throw(), -> T, or macros, before the
				// body or the declaration's end.
				switch t := readDeclTail(code, end+1); {
				case t.end < 0:
				case t.try && code[t.end] == '{':
					return nil, -1, nil, nil, fmt.Errorf("function %q at line %d is defined with a function-try-block (try before its body): a function-try-block kernel is not supported; put the try statement inside the body", name, lineOf(code, i))
				case code[t.end] == '{':
					k, unread = t.end, t.unread
				case t.unread < 0:
					k = t.end
				case !isKnRList(code[open+1 : end]):
					tails = append(tails, [2]int{end + 1, t.end})
				}
			}
			if k < len(code) && code[k] == '{' {
				close := clex.MatchBrace(code, k)
				if close < 0 {
					return nil, -1, nil, nil, fmt.Errorf("function %q: unbalanced braces in its body", name)
				}
				defs = append(defs, definition{name: i - len(name), open: open, close: end, body: k, bodyEnd: close, unread: unread})
				i = close + 1
				continue
			}
			if k < len(code) && (code[k] == ';' || code[k] == ',') {
				protos = append(protos, [2]int{open + 1, end})
				continue
			}
			if k < len(code) && clex.IsIdentStart(code[k]) && knr < 0 && isKnRList(code[open+1:end]) {
				w := k
				for w < len(code) && clex.IsIdentChar(code[w]) {
					w++
				}
				switch code[k:w] {
				case "__attribute__", "__attribute", "__asm__", "__asm", "asm":
				default:
					knr = i - len(name)
				}
			}
		case c >= '0' && c <= '9':
			for i < len(code) && (clex.IsIdentChar(code[i]) || code[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return defs, knr, protos, tails, nil
}

// isKnRList reports whether a parameter list holds only bare names, as in
// a K&R-style definition `void k(a, b) double *a; double *b; { ... }`.
func isKnRList(list string) bool {
	if strings.TrimSpace(list) == "" {
		return false
	}
	for _, p := range strings.Split(list, ",") {
		ids := clex.Identifiers(p)
		if len(ids) != 1 || strings.TrimSpace(p) != ids[0] || specifierWords[ids[0]] {
			return false
		}
	}
	return true
}

// topLevel returns code with everything between braces blanked (the
// braces too): what stands at file scope, at the same offsets.
func topLevel(code string) string {
	b := []byte(code)
	depth := 0
	for i, c := range b {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		}
		if depth != 0 || c == '}' {
			b[i] = ' '
		}
	}
	return string(b)
}

// fileScopeFunctions returns the names top (topLevel's) declares or
// defines as functions: a name before "(" outside parentheses (static
// double f(double v), double g(void);), and names called in file-scope
// initializers (exp in = exp(1.0)), which name no variable either.
func fileScopeFunctions(top string) map[string]bool {
	out := map[string]bool{}
	toks := clex.Tokenize(top)
	parens := 0
	for k, t := range toks {
		switch t.Text {
		case "(":
			parens++
		case ")":
			parens--
		default:
			if parens == 0 && clex.IsIdentStart(t.Text[0]) && k+1 < len(toks) && toks[k+1].Text == "(" {
				out[t.Text] = true
			}
		}
	}
	return out
}

// parseParams reads the parameter list list, which starts at offset at of
// the source.
func parseParams(list string, at int, r *typeResolver) []core.Param {
	parts := clex.SplitList(list)
	if len(parts) == 1 && (strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[0]) == "void") {
		return nil
	}
	params := make([]core.Param, len(parts))
	for i, p := range parts {
		text := strings.TrimSpace(p)
		start := at + strings.Index(p, text)
		params[i] = parseParam(text, r)
		params[i].Start, params[i].End = start, start+len(text)
		params[i].TypeAt += start
		at += len(p) + 1 // the part and its comma
	}
	return params
}

var qualifiers = map[string]bool{
	"const": true, "volatile": true, "restrict": true, "__restrict": true,
	"__restrict__": true, "register": true, "static": true, "_Atomic": true,
}

// namesDeclarator reports whether the words before a typedef's first
// "(" (ids, qualifiers included) end with the declarator's name, as in a
// function type (typedef double unop(double)), rather than with its base
// type, before a parenthesised declarator (typedef double (*fp)(double),
// typedef unsigned long (fn)(int), typedef struct s (*sp)(void)): a
// base type is one word, or ends with a specifier keyword after another
// or with a tag after struct, union or enum.
func namesDeclarator(ids []string) bool {
	var words []string
	for _, w := range ids {
		if !qualifiers[w] {
			words = append(words, w)
		}
	}
	n := len(words)
	switch {
	case n <= 1:
		return false
	case words[n-2] == "struct" || words[n-2] == "union" || words[n-2] == "enum":
		return false
	case specifierWords[words[n-1]] && specifierWords[words[n-2]]:
		return false
	}
	return true
}

// TypeWord reports whether w is one of C's type qualifiers or the
// keywords of its arithmetic, void, struct, union and enum type
// specifiers.
func TypeWord(w string) bool { return qualifiers[w] || specifierWords[w] }

// specifierWords are the keywords that make up C's arithmetic and void
// type specifiers.
var specifierWords = map[string]bool{
	"void": true, "char": true, "short": true, "int": true, "long": true, "float": true,
	"double": true, "signed": true, "unsigned": true, "_Bool": true, "_Complex": true,
	"__int128": true, "struct": true, "union": true, "enum": true,
}

func parseParam(text string, r *typeResolver) core.Param {
	p := core.Param{Text: text}
	p.Depth = strings.Count(text, "*") + strings.Count(text, "[")
	if strings.Contains(text, "...") {
		p.CType, p.Variadic = "... (variadic)", true
		return p
	}
	if strings.ContainsAny(text, "()") {
		p.CType = "a function pointer or parenthesised declarator"
		return p
	}
	// Identifiers before any '[' form the type and the name.
	head := text
	if i := strings.IndexByte(head, '['); i >= 0 {
		head = head[:i]
	}
	var words []string
	for _, w := range clex.Identifiers(head) {
		if !qualifiers[w] {
			words = append(words, w)
		}
	}
	// Whether the values pointed to are const: const among the words
	// before the first declarator (const double *x, double const x[]).
	inner := head
	if i := strings.IndexByte(inner, '*'); i >= 0 {
		inner = inner[:i]
	}
	textConst := slices.Contains(clex.Identifiers(inner), "const")
	if len(words) > 0 {
		p.TypeAt = clex.IndexIdent(text, words[0])
	}
	// The last word names the parameter unless it is part of the type:
	// the only word, a type keyword, or the tag of struct/union/enum.
	if n := len(words); n >= 2 && !specifierWords[words[n-1]] && !(n == 2 && (words[0] == "struct" || words[0] == "union" || words[0] == "enum")) {
		p.Name = words[n-1]
		words = words[:n-1]
	}
	rt := r.resolve(words, 0)
	ptrs, arrays := rt.ptrs, rt.arrays
	p.Type, p.CType = rt.t, rt.desc
	// Where a typedef hides the pointer, a const written before it
	// qualifies the pointer, not the values.
	p.ConstData = rt.constBase || textConst && ptrs+arrays == 0
	p.Depth += ptrs + arrays
	p.Untyped = rt.void && p.Depth > 0
	if ptrs+arrays > 0 && (p.Type != 0 || p.Untyped) && p.Name != "" {
		// The same parameter without the typedef, for generators that
		// qualify the pointer (OpenCL address spaces).
		base := "void"
		if p.Type != 0 {
			base = p.Type.CName()
		}
		p.Plain = base + " " + strings.Repeat("*", p.Depth) + p.Name
	}
	// A C++ reference: to one value of the element type. References to
	// pointers and rvalue references are no way GoOP2 passes data.
	if strings.Contains(head, "&") {
		p.Ref = true
		name := p.Name
		if name == "" {
			name = "(unnamed)"
		}
		switch {
		case strings.Contains(head, "&&"):
			p.Problem = fmt.Sprintf("parameter %s is an rvalue reference (&&); GoOP2 passes a pointer to the element's values, or a reference (T &%s) to a single value", name, name)
		case p.Depth > 0:
			p.Problem = fmt.Sprintf("parameter %s is a reference to a pointer or an array; GoOP2 passes a pointer to the element's values (T *%s), or a reference (T &%s) to a single value", name, name, name)
		}
	}
	// An array of arrays (double x[3][2], or an array of a typedef'd
	// array) is a pointer to rows: GoOP2 passes a pointer to the element's
	// values, or one pointer per map column.
	if arrays += strings.Count(text, "["); arrays > 1 && strings.Count(text, "*")+ptrs == 0 {
		name := p.Name
		if name == "" {
			name = "(unnamed)"
		}
		t := "T"
		if p.Type != 0 {
			t = p.Type.CName()
		}
		p.Problem = fmt.Sprintf("parameter %s is an array of arrays, which is not how GoOP2 passes data: it passes a pointer to the element's values (declare it %s *%s and index it as %s[i*cols + j]) or, for ArgVec, one pointer per map column (%s **%s)", name, t, name, name, t, name)
	}
	return p
}

// typeResolver resolves the base type of a parameter through the simple
// typedefs and object-like macros the kernel source declares before the
// kernel's definition.
type typeResolver struct {
	macros   map[string]macro
	typedefs map[string]typedef
}

// typedef is a file-scope typedef: its base type words, or why GoOP2
// cannot use it.
type typedef struct {
	words   []string
	ptrs    int // pointer declarators: typedef double *dp
	arrays  int // array declarators: typedef double v3[3]
	problem string
	// constBase: the base type is const (typedef const double *cdp).
	constBase bool
}

// resolvedType is what a parameter's type words denote.
type resolvedType struct {
	t    core.ScalarType // 0 if no type GoOP2 supports
	desc string          // a description for messages
	// ptrs and arrays are the pointer and array declarators that
	// typedefs add (typedef double *dp).
	ptrs, arrays int
	void         bool // the base type is void
	// constBase: a typedef or macro on the way made the base type const
	// (typedef const double creal; #define REAL const double).
	constBase bool
}

// resolve returns what the type words denote.
func (r *typeResolver) resolve(words []string, depth int) resolvedType {
	spelled := strings.Join(words, " ")
	if len(words) == 0 {
		return resolvedType{desc: "no type"}
	}
	if depth > 16 {
		return resolvedType{desc: spelled + " (nested too deeply)"}
	}
	for i, w := range words {
		m, ok := r.macros[w]
		if !ok || m.state == undefined {
			continue
		}
		if m.state == maybeDefined {
			return resolvedType{desc: fmt.Sprintf("%s (macro %s is defined under a condition GoOP2 cannot evaluate)", spelled, w)}
		}
		body := strings.TrimSpace(m.body)
		ids := clex.Identifiers(body)
		if m.funcLike || strings.Join(ids, " ") != strings.Join(strings.Fields(body), " ") {
			return resolvedType{desc: fmt.Sprintf("%s (macro %s expands to %q, not a plain type name)", spelled, w, body)}
		}
		var kept []string
		for _, id := range ids {
			if !qualifiers[id] {
				kept = append(kept, id)
			}
		}
		next := append(append(append([]string(nil), words[:i]...), kept...), words[i+1:]...)
		rt := r.resolve(next, depth+1)
		rt.desc = fmt.Sprintf("%s (macro for %s)", spelled, rt.desc)
		rt.constBase = rt.constBase || slices.Contains(ids, "const")
		return rt
	}
	if len(words) == 1 {
		if td, ok := r.typedefs[words[0]]; ok {
			if td.problem != "" {
				return resolvedType{desc: fmt.Sprintf("%s (typedef of %s)", spelled, td.problem)}
			}
			rt := r.resolve(td.words, depth+1)
			what := rt.desc
			if td.ptrs+td.arrays > 0 {
				what = rt.desc + " " + strings.Repeat("*", td.ptrs) + strings.Repeat("[]", td.arrays)
			}
			rt.desc = fmt.Sprintf("%s (typedef of %s)", spelled, what)
			rt.ptrs += td.ptrs
			rt.arrays += td.arrays
			rt.constBase = rt.constBase || td.constBase
			return rt
		}
	}
	return resolvedType{t: canonicalType(words), desc: spelled, void: len(words) == 1 && words[0] == "void"}
}

// canonicalType maps the words of an arithmetic type specifier (in any
// order, as C allows) or a stdint name to the scalar type GoOP2 stores
// that way, or 0. `long` is 64 bits, as on the LP64 systems GoOP2 runs on.
func canonicalType(words []string) core.ScalarType {
	if len(words) == 1 {
		switch words[0] {
		case "double":
			return core.Float64
		case "float":
			return core.Float32
		case "int32_t":
			return core.Int32
		case "int64_t":
			return core.Int64
		case "uint32_t":
			return core.Uint32
		}
	}
	var signed, unsigned, ints, longs int
	for _, w := range words {
		switch w {
		case "signed":
			signed++
		case "unsigned":
			unsigned++
		case "int":
			ints++
		case "long":
			longs++
		default:
			return 0 // char, short, double, a typedef, a struct...
		}
	}
	if signed+unsigned > 1 || ints > 1 || longs > 2 {
		return 0
	}
	switch {
	case longs == 0 && unsigned == 1:
		return core.Uint32
	case longs == 0:
		return core.Int32
	case unsigned == 0:
		return core.Int64
	}
	return 0 // unsigned long: GoOP2 has no unsigned 64-bit data
}

// typedefs collects the file-scope typedefs of code (the part of the
// source before the kernel's definition).
func typedefs(code string, pp *preprocessed) map[string]typedef {
	out := map[string]typedef{}
	depth := 0
	for i := 0; i < len(code); i++ {
		switch c := code[i]; {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case depth == 0 && clex.IsIdentStart(c) && (i == 0 || !clex.IsIdentChar(code[i-1])):
			j := i
			for j < len(code) && clex.IsIdentChar(code[j]) {
				j++
			}
			if code[i:j] != "typedef" {
				i = j - 1
				continue
			}
			end := statementEnd(code, j)
			if end < 0 {
				return out
			}
			stmt := code[j:end]
			uncertain := pp.uncertainAt(i)
			// Declarators after the first share its base type. Commas
			// inside parentheses (a function type's parameters) part
			// nothing.
			parts := clex.SplitList(stmt)
			if strings.ContainsAny(stmt, "{}") {
				parts = []string{stmt}
			}
			var base []string
			baseConst := false
			for k, part := range parts {
				head := part
				if b := strings.LastIndexByte(head, '}'); b >= 0 {
					head = head[b+1:] // the declarators after a struct's body
				}
				if b := strings.IndexAny(head, "[("); b >= 0 {
					head = head[:b]
				}
				ids := clex.Identifiers(head)
				if len(ids) == 0 && !strings.Contains(part, "(") {
					continue
				}
				name := ""
				if len(ids) > 0 {
					name = ids[len(ids)-1]
				}
				// After the first declarator the words before a "(" are
				// the declarator's name alone (typedef double f(double),
				// g(int)); none is a parenthesised one ((*fp)(int)).
				if o := strings.IndexByte(part, '('); o >= 0 && !strings.ContainsAny(part[:o], "{}") && (k == 0 && !namesDeclarator(ids) || k > 0 && len(ids) == 0) {
					// A parenthesised declarator: typedef double (*fp)(double).
					for _, id := range clex.Identifiers(part[o:]) {
						if !qualifiers[id] {
							name = id
							break
						}
					}
				}
				if name == "" || specifierWords[name] || qualifiers[name] {
					continue // no typedef takes a keyword's name
				}
				if k == 0 {
					for _, w := range ids[:len(ids)-1] {
						if !qualifiers[w] {
							base = append(base, w)
						}
					}
					inner, _, _ := strings.Cut(head, "*")
					baseConst = slices.Contains(clex.Identifiers(inner), "const")
				}
				td := typedef{words: base, ptrs: strings.Count(part, "*"), arrays: strings.Count(part, "["), constBase: baseConst}
				switch {
				case uncertain != "":
					td.problem = "a type declared under " + uncertain + ", which GoOP2 cannot evaluate"
				case strings.ContainsAny(stmt, "{}"):
					td.problem = "a struct, union or enum"
				case strings.ContainsAny(part, "()"):
					td.problem = "a function type or a parenthesised declarator"
				}
				out[name] = td
			}
			i = end
		}
	}
	return out
}

// statementEnd returns the offset of the ';' ending the declaration that
// continues at i (outside braces), or -1.
func statementEnd(code string, i int) int {
	depth := 0
	for ; i < len(code); i++ {
		switch code[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ';':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// Tri-state truth of a preprocessor condition or macro definition.
type tri uint8

const (
	no tri = iota
	yes
	maybe
)

func and3(a, b tri) tri {
	if a == no || b == no {
		return no
	}
	if a == maybe || b == maybe {
		return maybe
	}
	return yes
}

func not3(a tri) tri {
	switch a {
	case yes:
		return no
	case no:
		return yes
	}
	return maybe
}

func or3(a, b tri) tri { return not3(and3(not3(a), not3(b))) }

// macro is the state of a macro the source defines or undefines.
type macroState uint8

const (
	undefined    macroState = iota // #undef'd by the source
	defined                        // #define'd in code that is certainly compiled
	maybeDefined                   // #define'd or #undef'd in a branch GoOP2 cannot evaluate
)

type macro struct {
	state    macroState
	funcLike bool
	body     string
}

type macroEvent struct {
	pos  int
	name string
	m    macro
}

type region struct {
	from, to int
	why      string
}

// preprocessed is the result of reading a source's directives.
type preprocessed struct {
	code      string // directives and code in branches not taken blanked
	events    []macroEvent
	names     []string // macros #defined anywhere, in order of first definition
	uncertain []region // code in branches GoOP2 cannot evaluate
	// skipped are the lines in branches not taken: code, and the
	// directives other than the conditionals' own.
	skipped [][2]int
	// maybe are the starts of the lines of the #define and #undef
	// directives in branches that may not be compiled (#ifdef NDEBUG: the
	// command line or a header may define it), in order.
	maybe []int
}

func (p *preprocessed) addSkipped(from, to int) {
	if n := len(p.skipped); n > 0 && p.skipped[n-1][1] == from {
		p.skipped[n-1][1] = to
		return
	}
	p.skipped = append(p.skipped, [2]int{from, to})
}

func (p *preprocessed) uncertainAt(pos int) string {
	for _, r := range p.uncertain {
		if pos >= r.from && pos < r.to {
			return r.why
		}
	}
	return ""
}

// macrosAt is the state of the source's macros at offset pos.
func (p *preprocessed) macrosAt(pos int) map[string]macro {
	out := map[string]macro{}
	for _, e := range p.events {
		if e.pos >= pos {
			break
		}
		out[e.name] = e.m
	}
	return out
}

type condFrame struct {
	branch tri    // whether the current branch is taken
	taken  tri    // whether an earlier branch was taken
	why    string // the directive that made the current branch uncertain
	first  string // the #if, #ifdef or #ifndef that opened the conditional
	line   int    // its line
}

// preprocess reads the directives of src (comments and literals already
// blanked; lit is the same text with the literals kept, for the character
// constants of #if expressions), tracking the macros it defines and which
// code is compiled, after the generated code's headers (preludeMacros).
// It returns an error for directives the compiler would reject in code
// it compiles: a #if expression it cannot evaluate (a division by zero,
// a syntax error), #else or #endif without #if, an unterminated #if.
func preprocess(src, lit string) (*preprocessed, error) {
	return preprocessWith(src, lit, preludePredef)
}

// preprocessWith is preprocess for a compiler that defines the macros
// predef says are ppPredefined and certainly does not define those it
// says are ppNotMacro (unless the source defines them).
func preprocessWith(src, lit string, predef map[string]ppIdent) (*preprocessed, error) {
	p := &preprocessed{}
	b := []byte(src)
	clear := func(from, to int) {
		for k := from; k < to && k < len(b); k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	st := &ppState{macros: map[string]macro{}, included: no, predef: predef}
	seen := map[string]bool{}
	var stack []condFrame
	state := func() (tri, string) {
		t := yes
		why := ""
		for _, f := range stack {
			t = and3(t, f.branch)
			if f.branch == maybe && why == "" {
				why = f.why
			}
		}
		return t, why
	}
	for i := 0; i < len(src); {
		lineEnd := strings.IndexByte(src[i:], '\n')
		if lineEnd < 0 {
			lineEnd = len(src)
		} else {
			lineEnd += i
		}
		k := skipBlanks(src, i)
		if k >= len(src) || src[k] != '#' {
			if st, why := state(); st == no {
				clear(i, lineEnd)
				p.addSkipped(i, min(lineEnd+1, len(src)))
			} else if st == maybe {
				p.addUncertain(i, lineEnd+1, why)
			}
			i = lineEnd + 1
			continue
		}
		end := clex.LogicalLineEnd(src, k)
		text := strings.ReplaceAll(lit[k+1:end], "\\\n", " ")
		clear(k, end)
		line := lineOf(src, k)
		directive, rest := splitWord(strings.TrimSpace(text))
		cur, _ := state()
		// The state around the innermost conditional: a directive that
		// opens, continues or closes it is read when that is compiled.
		outer := yes
		for _, f := range stack[:max(len(stack)-1, 0)] {
			outer = and3(outer, f.branch)
		}
		switch directive {
		case "if", "ifdef", "ifndef":
			c, err := st.evalDirective(directive, rest, line)
			if err != nil && cur == yes {
				return nil, err
			}
			if cur == no {
				c = no // not evaluated in a group that is skipped
			}
			f := condFrame{branch: c, taken: c, first: fmt.Sprintf("#%s %s (line %d)", directive, rest, line), line: line}
			if c == maybe {
				f.why = f.first
			}
			stack = append(stack, f)
		case "elif", "elifdef", "elifndef", "else":
			if len(stack) == 0 {
				return nil, fmt.Errorf("#%s at line %d without #if", directive, line)
			}
			f := &stack[len(stack)-1]
			c := yes
			if directive != "else" && outer != no && f.taken != yes {
				var err error
				c, err = st.evalDirective(strings.TrimPrefix(directive, "el"), rest, line)
				if err != nil && outer == yes && f.taken == no {
					return nil, err
				}
			}
			f.branch = and3(not3(f.taken), c)
			f.taken = or3(f.taken, c)
			if f.branch == maybe {
				f.why = fmt.Sprintf("the #%s (line %d) of %s", directive, line, f.first)
				if directive != "else" {
					f.why = fmt.Sprintf("#%s %s (line %d) after %s", directive, rest, line, f.first)
				}
			}
		case "endif":
			if len(stack) == 0 {
				return nil, fmt.Errorf("#endif at line %d without #if", line)
			}
			stack = stack[:len(stack)-1]
		case "include", "include_next", "import":
			st.included = or3(st.included, cur)
		case "define", "undef":
			if cur == no {
				p.addSkipped(i, min(end+1, len(src))) // from the line's start, as directives gives it
				break
			}
			if cur == maybe {
				p.maybe = append(p.maybe, i)
			}
			name, body := splitWord(rest)
			if !isIdentifier(name) {
				break
			}
			m := macro{state: undefined}
			if directive == "define" {
				m.state = defined
				if strings.HasPrefix(rest[len(name):], "(") {
					m.funcLike = true
				}
				m.body = body
				if !seen[name] {
					seen[name] = true
					p.names = append(p.names, name)
				}
			}
			if cur == maybe {
				m.state = maybeDefined
			}
			st.macros[name] = m
			p.events = append(p.events, macroEvent{pos: k, name: name, m: m})
		}
		i = end + 1
	}
	if n := len(stack); n > 0 {
		return nil, fmt.Errorf("unterminated %s: no #endif", stack[n-1].first)
	}
	p.code = string(b)
	return p, nil
}

func (p *preprocessed) addUncertain(from, to int, why string) {
	if n := len(p.uncertain); n > 0 && p.uncertain[n-1].to == from && p.uncertain[n-1].why == why {
		p.uncertain[n-1].to = to
		return
	}
	p.uncertain = append(p.uncertain, region{from, to, why})
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// splitWord splits s into its leading identifier-like word and the rest.
func splitWord(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	j := 0
	for j < len(s) && clex.IsIdentChar(s[j]) {
		j++
	}
	return s[:j], strings.TrimSpace(s[j:])
}

func isIdentifier(s string) bool {
	if s == "" || !clex.IsIdentStart(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !clex.IsIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// evalDirective evaluates the condition of #if, #ifdef or #ifndef (the
// #elif forms without their "el") at line line.
func (st *ppState) evalDirective(directive, rest string, line int) (tri, error) {
	switch directive {
	case "ifdef", "ifndef":
		name, _ := splitWord(rest)
		if !isIdentifier(name) {
			return maybe, fmt.Errorf("#%s at line %d: no macro name", directive, line)
		}
		d := ppTri(st.ident(name) != ppNotMacro)
		if st.ident(name) == ppUnknown {
			d = maybe
		}
		if directive == "ifndef" {
			d = not3(d)
		}
		return d, nil
	}
	return evalIf(rest, line, st.lookup)
}

// ppState is what the reader knows while it goes through the directives:
// the macros the source defines or undefines, and whether a header has
// been included (which may define any macro).
type ppState struct {
	macros   map[string]macro
	included tri // whether an #include before this point is compiled
	// predef says what the compiler itself defines (ppPredefined) and
	// certainly does not (ppNotMacro), where known (preprocessWith).
	predef map[string]ppIdent
}

// ident says what name is at this point of the source. A name the source
// neither defines nor undefines is no macro (0 in #if), as for the C
// compiler, unless something outside the source may define it: a header
// included before, or the compiler itself (names reserved for the
// implementation such as __GNUC__ or __OPENCL_VERSION__, the traditional
// unix and linux, OpenCL's cl_* and CL_* macros).
func (st *ppState) ident(name string) ppIdent {
	if m, ok := st.macros[name]; ok {
		switch {
		case m.state == undefined:
			return ppNotMacro
		case m.state == maybeDefined:
			return ppUnknown
		case m.funcLike:
			return ppFunction
		}
		return ppObject
	}
	if k, ok := st.predef[name]; ok {
		return k
	}
	if st.included != no || mayBePredefined(name) {
		return ppUnknown
	}
	return ppNotMacro
}

func (st *ppState) lookup(name string) (ppIdent, string) {
	k := st.ident(name)
	if k == ppObject || k == ppFunction {
		return k, st.macros[name].body
	}
	return k, ""
}

// mayBePredefined reports whether a C or OpenCL C compiler may define
// macro name without the source asking for it.
func mayBePredefined(name string) bool {
	switch {
	case strings.HasPrefix(name, "__") || len(name) > 1 && name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z':
		return true
	case strings.HasPrefix(name, "cl_") || strings.HasPrefix(name, "CL_") || strings.HasPrefix(name, "FP_FAST_FMA"):
		return true
	}
	switch name {
	case "unix", "linux", "i386", "EMBEDDED_PROFILE", "NULL", "NDEBUG":
		return true
	}
	return false
}

// reservedConstWords are the names a Const may not take: C keywords (C11,
// C23 and common extensions), OpenCL C address-space keywords, the
// stdint.h and stddef.h type names and macros the generated code relies on.
var reservedConstWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		auto break case char const continue default do double else enum extern float for goto
		if inline int long register restrict return short signed sizeof static struct switch
		typedef union unsigned void volatile while
		_Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
		alignas alignof bool true false nullptr constexpr static_assert thread_local typeof typeof_unqual
		_BitInt _Decimal32 _Decimal64 _Decimal128 asm complex imaginary noreturn

		size_t ptrdiff_t wchar_t max_align_t nullptr_t intptr_t uintptr_t intmax_t uintmax_t NULL offsetof
		main acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp ldexp
		log log10 log1p log2 logb modf cbrt fabs hypot pow sqrt erf erfc lgamma tgamma ceil floor
		nearbyint rint lrint round lround trunc fmod remainder remquo copysign nan nextafter fdim fmax
		fmin fma abs labs llabs div printf fprintf sprintf snprintf puts putchar fflush stdout stderr
		malloc calloc realloc free exit abort memcpy memmove memset memcmp strlen strcmp strcpy
		M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_E M_LN2 M_LN10 M_LOG2E M_LOG10E M_SQRT2 M_SQRT1_2
		NAN INFINITY HUGE_VAL EOF MIN MAX isnan isinf isfinite signbit`) {
		reservedConstWords[w] = true
	}
	for _, n := range []string{"8", "16", "32", "64"} {
		for _, f := range []string{"int%s_t", "uint%s_t", "int_least%s_t", "uint_least%s_t", "int_fast%s_t", "uint_fast%s_t"} {
			reservedConstWords[fmt.Sprintf(f, n)] = true
		}
	}
}

// ConstNameProblem says why name cannot be the name of a Const, or returns
// "" when it can: a Const is visible to kernels by its name, so it must be
// a C identifier that is not a keyword, a standard type name, a name
// OpenCL C reserves (see OpenCLNameProblem), or a name reserved for the
// implementation (starting with __ or _ and a capital)
// or for GoOP2's generated code (op2_, OP2_).
func ConstNameProblem(name string) string {
	switch {
	case !isIdentifier(name):
		return "name must be a C identifier"
	case reservedConstWords[name]:
		return "name is a C keyword or a name of the C standard library (a type, function or macro kernels may use)"
	case OpenCLNameProblem(name) != "":
		return fmt.Sprintf("name is %s, which would break the kernel on the opencl backend (every kernel must run on every backend)", OpenCLNameProblem(name))
	case hasReservedPrefix(name):
		return fmt.Sprintf("names starting with %s or %s are reserved for GoOP2's generated code", ReservedPrefix, strings.ToUpper(ReservedPrefix))
	case strings.HasPrefix(name, "__") || (len(name) > 1 && name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z'):
		return "names starting with __ or with _ and a capital letter are reserved for the C implementation"
	}
	return ""
}

// Insert is text to insert at offset At of a kernel's source (on lines
// of its own).
type Insert struct {
	At   int
	Text string
}

// emptyPointerList matches a pointer to a function declared without a
// prototype, (*p)(), in a list written on one line.
var emptyPointerList = regexp.MustCompile(`\(\s*\*\s*([A-Za-z_][A-Za-z_0-9]*)\s*\)\s*\(\s*\)`)

// ReadOnlySource returns the loop's kernel source with the parameters of
// its READ arguments (ReadOnlyArg) declared const (Param.ReadOnlyText),
// in the definition and in every file-scope prototype, so that a kernel
// that writes through one, or passes it on where a non-const pointer is
// expected, does not compile; and with inserts (the kernel's lane form,
// after the definitions it copies), those at one offset in their order.
// Nothing else changes.
func ReadOnlySource(l *core.Loop, inserts ...Insert) string {
	k := l.Kernel
	info := k.Info
	src := k.Source
	if info == nil {
		return src
	}
	var b strings.Builder
	pos := info.ListStart
	for i := range info.Params {
		p := &info.Params[i]
		if i >= len(l.Args) || !core.ReadOnlyArg(&l.Args[i]) || p.ConstData {
			continue
		}
		b.WriteString(src[pos:p.Start])
		b.WriteString(p.ReadOnlyText())
		pos = p.End
	}
	b.WriteString(src[pos:info.ListEnd])
	list := b.String()
	// The definition's list and the prototypes' lists, in source order,
	// rewritten when a parameter became const; the lane form after the
	// body.
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	if pos != info.ListStart {
		edits = append(edits, edit{info.ListStart, info.ListEnd, list})
		for _, sp := range info.Protos {
			edits = append(edits, edit{sp[0], sp[1], list})
		}
	}
	// In C, declarations without a prototype get one (the compiler
	// refuses the others, strictConstPush), so that calls are checked
	// against the parameters (a READ argument passed to a function
	// declared f() reached a helper writing through it): a function the
	// source defines, declared f(), takes its definition's parameters,
	// and one defined f() takes nothing, as C23 reads it; a pointer to a
	// function, (*p)(), takes nothing, as in C23.
	if !k.CXX {
		if m, err := Model(info); err == nil && m.Src == src && len(m.Code) == len(src) {
			empty := func(f FuncDecl) bool {
				return f.ListEnd <= len(src) && strings.TrimSpace(m.Code[f.ListStart:f.ListEnd]) == ""
			}
			params := map[string]string{} // a defined function: its list, on one line
			for _, f := range m.Defs {
				list := "void"
				if !empty(f) {
					list = strings.Join(strings.Fields(src[f.ListStart:f.ListEnd]), " ")
					list = emptyPointerList.ReplaceAllString(list, "(*$1)(void)")
				}
				params[f.Name] = list
			}
			for _, f := range append(slices.Clip(m.Defs), m.Protos...) {
				if list, ok := params[f.Name]; ok && f.Name != k.Name && empty(f) {
					edits = append(edits, edit{f.ListStart, f.ListEnd, list})
				}
			}
			toks := m.Tokens
			for i := 0; i+5 < len(toks); i++ {
				if toks[i].Text == "(" && toks[i+1].Text == "*" && clex.IsIdent(toks[i+2].Text) && toks[i+3].Text == ")" && toks[i+4].Text == "(" && toks[i+5].Text == ")" {
					edits = append(edits, edit{toks[i+4].End, toks[i+5].Start, "void"})
				}
			}
		}
	}
	for _, in := range inserts {
		text := "\n" + in.Text
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		edits = append(edits, edit{in.At, in.At, text})
	}
	if len(edits) == 0 {
		return src
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return a.from - b.from })
	var out strings.Builder
	pos = 0
	for _, e := range edits {
		out.WriteString(src[pos:e.from])
		out.WriteString(e.text)
		pos = e.to
	}
	out.WriteString(src[pos:])
	return out.String()
}
