package hostc

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/core"
)

// SIMD lanes (the host backends' vectorised variant).
//
// A loop runs in chunks of Lanes consecutive elements of its range: the
// values each element reads are gathered into lane arrays, one per
// argument, laid out component-major (op2_x<i>[component][lane]); the
// kernel, rewritten to take lane arrays (LaneKernel: every p[e] of a
// lane parameter p becomes p[e][op2_lane], every *p becomes
// p[0][op2_lane]; a vector argument's p[e][f] becomes p[e][f][op2_lane]
// and *p[e] p[e][0][op2_lane]), runs for the chunk's elements in a loop that
// `#pragma omp simd` vectorises, so that each vector lane computes one
// element; then the results are written back element by element in
// element order. Gathers and write-backs move whole rows: a row of 4 (or
// 2) values is one vector load or store, and rows and components are
// transposed in registers (GCC vector extensions), so that the arithmetic
// runs on vectors while the memory traffic stays that of the scalar
// code. A C kernel's calls of math functions the compiler cannot
// vectorise (cbrt, exp...) go through functions with SIMD clones, which
// call the scalar function lane by lane, so that the rest of the kernel
// still runs on vectors (laneCloneCalls, mathClones). The elements left
// after the last whole chunk run the scalar code. The tile forms
// (tiles.go) run each run of consecutive elements of a tile as a range
// (RunsRangeLanes). In a loop over an extruded set
// a chunk is consecutive layers of one column (extrudedLanes). C++
// kernels get lanes as C kernels do, compiled by the C++ compiler.
//
// Every element computes the expressions it computes in the scalar
// code, and increments through maps are added in the scalar code's order
// (lane by lane, argument by argument), so the results are the scalar
// code's but for Global increments: each element's contributions are
// summed in its lane first, then the lanes in element order. That needs
// the default flags' -ffp-contract=off (exec.DefaultCFlags): under GNU
// C's -ffp-contract=fast on CPUs with FMA the compiler may contract
// a*b+c in one form and not in the other.
//
// A loop has lanes only when running its elements W at a time cannot
// change what any element reads (SIMDCheck): no Dat that the loop
// modifies is read by another of its arguments, and the kernel uses its
// parameters only as p[e] and *p (p[e][f] and *p[e] for vector
// arguments), with its macros expanded, or passes them whole (or a
// vector argument's row p[e]) to functions its source defines that use
// them so in turn: those get lane forms of their own (laneHelpers). A
// matrix argument's element matrix is a lane array like the others,
// added into the matrix lane by lane in element order after the chunk.
// RW and WRITE through a map are gathered and stored like direct
// arguments; a chunk in which two elements reach one such target runs
// with the scalar code (laneClash). In a loop over an extruded set,
// nothing is modified through a map but by INC, MIN or MAX, and no
// data that every layer of a column shares is modified directly.

// LaneWidths are the lane counts the host backends offer (elements per
// chunk), as SIMD variants "simd4" and "simd8".
var LaneWidths = []int{4, 8}

// maxLaneDim bounds an argument's values per element for lanes, and
// maxLaneBytes the lane arrays of a loop (on the stack).
const (
	maxLaneDim   = 64
	maxLaneBytes = 32 << 10
)

// SIMDCheck returns nil when loop l can run in SIMD lanes, or an error
// saying why not.
func SIMDCheck(l *core.Loop) error {
	if err := laneArgsCheck(l); err != nil {
		return err
	}
	_, err := LaneKernel(l, LaneWidths[0])
	return err
}

// laneArgsCheck is SIMDCheck without the kernel's rewriting: the loop's
// and arguments' part.
func laneArgsCheck(l *core.Loop) error {
	k := l.Kernel
	switch {
	case l.Check:
		return fmt.Errorf("check mode passes the kernel pointers into the data")
	case k.Info == nil:
		return fmt.Errorf("kernel %s's source was not read", k.Name)
	}
	if what := k.Info.SetsOptions; what != "" {
		// The kernel and the code calling it would be compiled under
		// options its lane form may not share (GCC inlines, or not,
		// across them as it sees fit), so that their results could
		// differ.
		return fmt.Errorf("kernel %s's source sets the compiler's options (%q)", k.Name, what)
	}
	bytes := 0
	for i := range l.Args {
		a := &l.Args[i]
		if a.Hidden && i == l.RangeArg() {
			continue // an extruded set's layer ranges: no lane array
		}
		switch {
		case a.Off || a.Hidden:
			return fmt.Errorf("argument %d is a disabled optional argument", i)
		case l.Extruded != nil && (a.Kind == core.ArgIndirect || a.Kind == core.ArgVector) && (a.Access == core.RW || a.Access == core.Write):
			return fmt.Errorf("argument %d writes through a map (%s) in a loop over an extruded set", i, a.Access)
		case l.Extruded != nil && a.Kind == core.ArgDirect && modifies(a) && (a.Ext == nil || a.Ext.Offset[0] == 0):
			return fmt.Errorf("argument %d modifies data every layer of a column shares", i)
		case l.Extruded != nil && a.Kind == core.ArgMat:
			return fmt.Errorf("argument %d is a matrix in a loop over an extruded set", i)
		case laneDim(a) > maxLaneDim:
			return fmt.Errorf("argument %d has %d values per element (at most %d)", i, laneDim(a), maxLaneDim)
		}
		if a.Kind != core.ArgGlobal || a.IsReduction() {
			n := laneDim(a) * a.Data.Type.Size() * slices.Max(LaneWidths)
			if a.Kind == core.ArgVector {
				n *= a.Map.Arity
			}
			bytes += n
		}
		if !modifies(a) {
			continue
		}
		for j := range l.Args {
			b := &l.Args[j]
			if j == i || l.Sig.Base[j] != l.Sig.Base[i] || !a.Overlaps(b) {
				continue
			}
			if b.Access != a.Access || !Combining(a.Access) || a.Kind == core.ArgDirect || b.Kind == core.ArgDirect || a.Kind == core.ArgGlobal {
				return fmt.Errorf("arguments %d and %d pass the same data and one modifies it", i, j)
			}
		}
	}
	if bytes > maxLaneBytes {
		return fmt.Errorf("the lane arrays would take %d bytes (at most %d)", bytes, maxLaneBytes)
	}
	return nil
}

// laneDim is the number of values per element of argument a's lane
// array: its dim, or a matrix argument's element matrix (rows × columns).
func laneDim(a *core.Arg) int {
	if a.Kind == core.ArgMat {
		r, c := a.MatShape()
		return r * c
	}
	return a.Dim()
}

// modifies reports whether argument a changes its data.
func modifies(a *core.Arg) bool { return a.Access != core.Read }

// laneParam reports whether kernel parameter i gets a lane array: every
// argument but a READ Global (the same values for every lane) and the
// hidden layer ranges of an extruded loop (no parameter of the kernel).
func laneParam(a *core.Arg) bool { return !a.Hidden && (a.Kind != core.ArgGlobal || a.IsReduction()) }

// LaneName is the name of the lane form of kernel name.
func LaneName(kernel string) string { return "op2_lanes_" + kernel }

// LaneForm is a kernel's lane form, in parts that go in the kernel's
// source (core.KernelInfo.Source) each right after the definition it is
// the lane form of (the kernel's, or a helper's the kernel passes a lane
// parameter to), so that each part is compiled as what it copies is:
// under the same macros and declarations, not those the source makes
// after it. A part starts with the prototypes of the helpers' lane forms
// it calls that come after it.
type LaneForm struct {
	Parts []LanePart
}

// LanePart is text to insert at offset At of the kernel's source.
type LanePart struct {
	At     int
	Source string
}

// LaneKernel returns the lane form of l's kernel for lanes lanes (see the
// comment at the top of this file): a static inline function named
// LaneName(kernel) taking, for each lane parameter, a lane array T
// name[][lanes] (const for READ), each READ Global's parameter as
// declared, and the lane number op2_lane last. It returns an error when
// the kernel uses a lane parameter in any other way than p[e] or *p.
func LaneKernel(l *core.Loop, lanes int) (LaneForm, error) {
	info := l.Kernel.Info
	nargs := len(l.Args)
	if l.RangeArg() >= 0 {
		nargs-- // the layer ranges are the generated code's
	}
	if len(info.Params) != nargs {
		return LaneForm{}, fmt.Errorf("kernel %s has %d parameters for %d arguments", l.Kernel.Name, len(info.Params), nargs)
	}
	// The body as the compiler sees it (the kernel model's): macros
	// expanded, so that a use of a parameter inside a macro is seen (and
	// the lane form does not depend on the macros).
	body, err := cfront.Body(info)
	if body.Directive {
		return LaneForm{}, fmt.Errorf("kernel %s has a preprocessor directive in its body", l.Kernel.Name)
	}
	if err != nil {
		return LaneForm{}, fmt.Errorf("kernel %s: %w", l.Kernel.Name, err)
	}
	lane := map[string]laneVar{} // lane parameters
	var decls []string
	for i := range nargs {
		a, p := &l.Args[i], &info.Params[i]
		if !laneParam(a) {
			text := p.Text
			if core.ReadOnlyArg(a) && !p.ConstData {
				text = p.ReadOnlyText()
			}
			decls = append(decls, text)
			continue
		}
		depth, shape := 1, fmt.Sprintf("[][%d]", lanes)
		if a.Kind == core.ArgVector {
			depth, shape = 2, fmt.Sprintf("[][%d][%d]", a.Dim(), lanes)
		}
		if p.Depth != depth || p.Untyped || p.Ref || p.Plain != "" || p.Type != a.Data.Type {
			return LaneForm{}, fmt.Errorf("kernel %s's parameter %d (%s) is not a plain pointer to %s%s", l.Kernel.Name, i, p.Text,
				a.Data.Type.CName(), map[int]string{1: "", 2: " pointers"}[depth])
		}
		c := ""
		if a.Access == core.Read {
			c = "const "
		}
		v := laneVar{depth: depth, typ: a.Data.Type, decl: c + a.Data.Type.CName(), shape: shape}
		name := p.Name
		if name == "" {
			name = fmt.Sprintf("op2_unnamed%d", i)
		} else {
			lane[name] = v
		}
		decls = append(decls, v.declare(name))
	}
	model, err := cfront.Model(info)
	if err != nil {
		return LaneForm{}, fmt.Errorf("kernel %s: %w", l.Kernel.Name, err)
	}
	h := &laneHelpers{l: l, info: info, model: model, names: map[string]string{}, making: map[string]bool{}}
	params := clex.Tokenize(info.Blanked[info.ListStart:info.ListEnd])
	rewritten, calls, err := h.rewriteBody(l.Kernel.Name, body.Text, body.Code, body.Tokens, lane, params, 0)
	if err != nil {
		return LaneForm{}, err
	}
	def, undef := functionNames(l.Kernel.Name, l.Kernel.CXX, body.Code)
	h.copies = append(h.copies, laneCopy{at: info.BodyClose + 1, calls: calls,
		def: fmt.Sprintf("%sstatic inline __attribute__((always_inline)) void %s(%s, int op2_lane)\n%s\n%s", def, LaneName(l.Kernel.Name), strings.Join(decls, ", "), rewritten, undef)})
	return h.form()
}

// functionNames returns the directives that have a lane form's
// __func__ and __FUNCTION__ (in C also __PRETTY_FUNCTION__, which is the
// same there; C++'s names the whole signature, so that a C++ assert's
// message still names the lane form) name the function it is the lane
// form of, as in the scalar code, and those that end them after it; none
// when its body (code) names none of them nor assert.
func functionNames(name string, cxx bool, code string) (def, undef string) {
	names := []string{"__func__", "__FUNCTION__", "__PRETTY_FUNCTION__"}
	if !slices.ContainsFunc(append(names, "assert"), func(n string) bool { return strings.Contains(code, n) }) {
		return "", ""
	}
	if cxx {
		names = names[:2]
	}
	var d, u strings.Builder
	for _, n := range names {
		fmt.Fprintf(&d, "#define %s %q\n", n, name)
		fmt.Fprintf(&u, "#undef %s\n", n)
	}
	return d.String(), u.String()
}

// laneVar is a lane parameter in scope: its pointer depth as the kernel
// declares it (2 for a vector argument's), its values' type, and its
// lane array's declaration but for the name: the type (const for READ)
// and the shape ([][L], or [][dim][L]).
type laneVar struct {
	depth int
	typ   core.ScalarType
	decl  string
	shape string
}

// declare returns the declaration of lane array name.
func (v laneVar) declare(name string) string { return fmt.Sprintf("%s %s%s", v.decl, name, v.shape) }

// laneHelpers makes the lane forms of the functions the kernel source
// defines that the kernel passes lane parameters to (helpers, such as a
// finite-element kernel's geometry function): each is a copy of the
// helper whose parameters that receive lane parameters are lane arrays
// too, with its body rewritten as the kernel's is, and an op2_lane
// parameter last; the call passes the lane arrays and op2_lane. One copy
// is made per helper and set of such parameters; out collects them, each
// after the copies it calls.
type laneHelpers struct {
	l      *core.Loop
	info   *core.KernelInfo
	model  *cfront.SourceModel
	names  map[string]string // key (helper and its lane parameters) -> the copy's name
	making map[string]bool   // the copies being made (a recursive helper calls one)
	copies []laneCopy        // each after the copies it calls; the kernel's last
}

// laneCopy is a lane form of the kernel or of a helper: its definition,
// which goes at offset at of the source (after what it copies), the
// helper copies it calls, and a helper copy's name and prototype.
type laneCopy struct {
	at                       int
	calls                    []string
	helper, name, proto, def string
	needs                    []protoName // the names its prototype's types use
}

// form places the copies: each after its original, in the order made,
// with the prototypes of the copies it calls that come later in the
// source before it.
func (h *laneHelpers) form() (LaneForm, error) {
	var f LaneForm
	for _, c := range h.copies {
		var b strings.Builder
		b.WriteString("#pragma GCC diagnostic push\n#pragma GCC diagnostic error \"-Wvla\"\n")
		for _, callee := range h.copies {
			if callee.at <= c.at || !slices.Contains(c.calls, callee.name) {
				continue
			}
			for _, n := range callee.needs {
				if !h.declaredBefore(n, c.at, callee.at) {
					return LaneForm{}, fmt.Errorf("kernel %s calls %s, whose lane form's declaration needs %s, which the source declares after the call", h.l.Kernel.Name, callee.helper, n.name)
				}
			}
			b.WriteString(callee.proto)
		}
		b.WriteString(c.def)
		b.WriteString("#pragma GCC diagnostic pop\n")
		f.Parts = append(f.Parts, LanePart{At: c.at, Source: b.String()})
	}
	return f, nil
}

// declaredBefore reports whether name n, as a prototype placed at
// offset at uses it, means there what it means at offset until (the
// helper's definition): a C keyword; a macro defined before at and not
// again until there; a struct, union or enum tag the source names
// before at (declared or used there); a type the source declares before
// at; or another name the source does not use before at (a header's, an
// enum constant's) nor after it.
func (h *laneHelpers) declaredBefore(n protoName, at, until int) bool {
	if cfront.TypeWord(n.name) {
		return true
	}
	u, defined := h.model, false
	for _, m := range u.MacroDefs {
		if m.Name == n.name {
			if m.At >= at && m.At < until {
				return false // (re)defined between
			}
			defined = defined || m.At < at
		}
	}
	if defined {
		return true
	}
	first := clex.IndexIdent(u.Code, n.name)
	if n.tag {
		return first >= 0 && first < at
	}
	typ := false
	for i, t := range u.DeclaredTypes {
		if t == n.name {
			if u.DeclaredAt[i] < at {
				return true
			}
			typ = true
		}
	}
	return !typ && (first < 0 || first < at)
}

// withoutDefault returns parameter declaration decl without a C++
// default argument (= value at its top level).
func withoutDefault(decl string) string {
	depth := 0
	for i := 0; i < len(decl); i++ {
		switch c := decl[i]; {
		case c == '(' || c == '[' || c == '{' || c == '<':
			depth++
		case c == ')' || c == ']' || c == '}' || c == '>':
			depth--
		case c == '=' && depth == 0 && (i+1 >= len(decl) || decl[i+1] != '='):
			return strings.TrimSpace(decl[:i])
		}
	}
	return decl
}

// protoName is a name a lane copy's prototype uses for a type: a tag
// (after struct, union or enum) or not.
type protoName struct {
	name string
	tag  bool
}

// maxHelperDepth bounds the chain of helpers passing lane parameters on
// (a recursive helper would have no end).
const maxHelperDepth = 8

// rewriteBody rewrites the body of function fn in which the lane
// parameters lane are in scope: text as written, code the same with its
// comments and literals blanked (at the same offsets), toks code's
// tokens, params the tokens of its parameter list. What lies between the
// tokens it rewrites is copied from text, so that literals keep their
// contents. depth counts the helpers above it.
func (h *laneHelpers) rewriteBody(fn, text, code string, toks []clex.Token, lane map[string]laneVar, params []clex.Token, depth int) (string, []string, error) {
	if k := staticVariable(toks); k >= 0 {
		return "", nil, fmt.Errorf("kernel %s keeps a static variable (%s): its lane form, a copy, would keep another", h.l.Kernel.Name, declaredName(toks, k))
	}
	if name := h.shadowedHelper(params, toks); name != "" {
		return "", nil, fmt.Errorf("kernel %s: %s both calls %s, a function the source defines, and names it otherwise (a parameter, local, lambda or pointer of that name may hide the function there): its lane form would call the function", h.l.Kernel.Name, fn, name)
	}
	text, toks = unparen(text, code, toks, lane)
	r := &laneRewriter{l: h.l, body: text, toks: toks, lane: lane, helpers: h, depth: depth}
	out, err := r.rewrite(0, len(toks), 0, len(text))
	return out, r.calls, err
}

// shadowedHelper returns the name of a function the source defines that
// the function being rewritten (its parameter list and body, lists of
// tokens) both calls and declares again, or "": a parameter, local,
// lambda, function pointer, binding or using-declaration of that name
// hides the function there, and a call of it must not become one of the
// function's lane form. See declaresAt for what declares a name; a name
// after ".", "->" or a qualifying "::" is a member's, and one inside a
// struct's braces a member's declaration.
func (h *laneHelpers) shadowedHelper(lists ...[]clex.Token) string {
	defined := h.model.Defined
	called, declared := map[string]bool{}, map[string]bool{}
	for _, toks := range lists {
		using := false    // in a using-declaration: using ns::f declares f here
		var members []int // the brace depths at which struct bodies open
		depth := 0
		for i, t := range toks {
			switch t.Text {
			case "using":
				using = true
			case ";":
				using = false
			case "{":
				depth++
				if structBodyAt(toks, i) {
					members = append(members, depth)
				}
			case "}":
				if n := len(members); n > 0 && members[n-1] == depth {
					members = members[:n-1]
				}
				depth--
			}
			if !defined[t.Text] || memberAt(toks, i) && !using || len(members) > 0 && members[len(members)-1] == depth {
				continue
			}
			switch {
			case using || declaresAt(toks, i):
				declared[t.Text] = true
			case i+1 < len(toks) && toks[i+1].Text == "(":
				called[t.Text] = true
			}
		}
	}
	for _, toks := range lists {
		for _, t := range toks {
			if called[t.Text] && declared[t.Text] {
				return t.Text
			}
		}
	}
	return ""
}

// declaresAt reports whether token i of toks, a name, is declared there
// rather than called or used as a value: after a word that is not a
// keyword before an expression (double f, auto f = ..., fn f(g), double
// f(const double *) as a parameter); before "=" (f = g: a function
// cannot be assigned), "[" or "]", or after "[" (f[...], auto [f, b],
// [f = g]); or as (*f) or (&f) before "(" (double (*f)(double)).
func declaresAt(toks []clex.Token, i int) bool {
	text := func(k int) string {
		if k < 0 || k >= len(toks) {
			return ""
		}
		return toks[k].Text
	}
	prev, next := text(i-1), text(i+1)
	switch {
	case declaringWord(prev):
		return true
	case next == "=" || next == "[" || next == "]" || prev == "[" && next != "(":
		return true
	case (prev == "*" || prev == "&" || prev == "&&") && text(i-2) == "(" && next == ")" && text(i+2) == "(":
		return true
	}
	return false
}

// structBodyAt reports whether the "{" at token i opens a struct's,
// union's or class's body (struct { or struct name {).
func structBodyAt(toks []clex.Token, i int) bool {
	for k := i - 1; k >= 0 && k >= i-2; k-- {
		switch toks[k].Text {
		case "struct", "union", "class":
			return true
		}
		if !clex.IsIdentStart(toks[k].Text[0]) {
			return false
		}
	}
	return false
}

// declaringWord reports whether token text t, before a name, makes it
// part of a declaration: clex.Declares, and not one of moreExpressionKeywords.
func declaringWord(t string) bool { return clex.Declares(t) && !moreExpressionKeywords[t] }

// moreExpressionKeywords are the keywords an expression may follow beyond
// those clex.Declares knows (return, sizeof, else, do, case): C's goto
// and _Alignof, and C++'s, for lane forms of C++ kernels (in C they may
// be names, which only makes a lane form refused the less often).
var moreExpressionKeywords = map[string]bool{"throw": true, "co_return": true, "co_yield": true, "co_await": true,
	"alignof": true, "_Alignof": true, "typeid": true, "decltype": true, "noexcept": true, "new": true, "delete": true,
	"goto": true, "and": true, "or": true, "not": true, "bitand": true, "bitor": true, "xor": true, "compl": true,
	"and_eq": true, "or_eq": true, "xor_eq": true, "not_eq": true}

// memberAt reports whether token i of toks names a member: it follows
// "." or "->", or "::" that qualifies it (ns::f, T::f, X<T>::f; a
// leading ::f, or one after a keyword such as return, is the global f).
func memberAt(toks []clex.Token, i int) bool {
	if i == 0 {
		return false
	}
	switch toks[i-1].Text {
	case ".", "->":
		return true
	case "::":
		if i < 2 {
			return false
		}
		q := toks[i-2].Text
		return q == ">" || declaringWord(q)
	}
	return false
}

// staticVariable returns the index of the first "static" of a body's
// tokens that declares a variable the code may change (no const in its
// declaration before its name), or -1.
func staticVariable(toks []clex.Token) int {
	for k, t := range toks {
		if t.Text != "static" || k > 0 && (toks[k-1].Text == "const" || toks[k-1].Text == "constexpr") {
			continue
		}
		changes := true
		for _, u := range toks[k+1:] {
			if u.Text == "const" || u.Text == "constexpr" {
				changes = false
			}
			if strings.ContainsAny(u.Text, ";=[(,") {
				break
			}
		}
		if changes {
			return k
		}
	}
	return -1
}

// declaredName returns the name the declaration at toks[k] declares: the
// last word before its first ;, =, [, ( or ,.
func declaredName(toks []clex.Token, k int) string {
	name := ""
	for _, u := range toks[k+1:] {
		if strings.ContainsAny(u.Text, ";=[(,") {
			break
		}
		if u.Text != "" && clex.IsIdentStart(u.Text[0]) {
			name = u.Text
		}
	}
	return name
}

// helperHeadWords are the words a helper's head may have before its
// return type that its lane form does not repeat (it is static inline).
var helperHeadWords = map[string]bool{"static": true, "inline": true, "__inline": true, "__inline__": true}

// copyOf returns the name of the lane form of helper def called with the
// lane arrays vars at the parameter positions pos, making it first if
// need be.
func (h *laneHelpers) copyOf(def *cfront.FuncDecl, defIdx, nargs int, pos []int, vars []laneVar, depth int) (string, error) {
	kname := h.l.Kernel.Name
	if depth >= maxHelperDepth {
		return "", fmt.Errorf("kernel %s passes its parameters through more than %d helpers (%s)", kname, maxHelperDepth, def.Name)
	}
	key := def.Name
	for k, p := range pos {
		key += fmt.Sprintf("|%d:%s%s", p, vars[k].decl, vars[k].shape)
	}
	if name, ok := h.names[key]; ok {
		if h.making[name] {
			return "", fmt.Errorf("kernel %s passes a parameter to %s, which calls itself with it", kname, def.Name)
		}
		return name, nil
	}
	u := h.model
	if def.BodyOpen < 0 {
		return "", fmt.Errorf("kernel %s passes a parameter to %s, which the source declares but does not define", kname, def.Name)
	}
	for _, line := range strings.Split(u.Src[def.BodyOpen:def.BodyClose+1], "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			return "", fmt.Errorf("kernel %s passes a parameter to %s, whose body has a preprocessor directive", kname, def.Name)
		}
	}
	for _, m := range u.Macros {
		if u.BodyIdents[defIdx][m] {
			return "", fmt.Errorf("kernel %s passes a parameter to %s, whose body uses macro %s", kname, def.Name, m)
		}
	}
	// The head: the return type, without static and inline.
	start := def.NameAt
	for start > 0 && !strings.ContainsRune(";}{", rune(u.Code[start-1])) {
		start--
	}
	var head []string
	for _, t := range clex.Tokenize(u.Code[start:def.NameAt]) {
		switch {
		case helperHeadWords[t.Text]:
		case t.Text == "*" || clex.IsIdentStart(t.Text[0]):
			head = append(head, t.Text)
		default:
			return "", fmt.Errorf("kernel %s passes a parameter to %s, whose declaration has %q before its name", kname, def.Name, t.Text)
		}
	}
	if strings.Contains(u.Code[def.ListStart:def.ListEnd], "...") {
		return "", fmt.Errorf("kernel %s passes a parameter to %s, which takes a variable number of arguments", kname, def.Name)
	}
	params := cfront.HelperParams(h.info, *def)
	if nargs < len(params) {
		// C++'s default arguments: the copy's op2_lane would take one's place.
		return "", fmt.Errorf("kernel %s calls %s with %d arguments for its %d parameters", kname, def.Name, nargs, len(params))
	}
	lane := map[string]laneVar{}
	decls := make([]string, len(params))
	for k, p := range params {
		decls[k] = p.Text
	}
	for k, at := range pos {
		if at >= len(params) {
			return "", fmt.Errorf("kernel %s calls %s with more arguments than its %d parameters", kname, def.Name, len(params))
		}
		p, v := params[at], vars[k]
		if p.Name == "" || p.Depth != v.depth || p.Untyped || p.Ref || p.Plain != "" || p.Type != v.typ || p.Problem != "" {
			return "", fmt.Errorf("kernel %s passes a parameter to %s, whose parameter %d (%s) is not a plain pointer to %s%s", kname, def.Name, at, p.Text,
				v.typ.CName(), map[int]string{1: "", 2: " pointers"}[v.depth])
		}
		lane[p.Name] = v
		decls[at] = v.declare(p.Name)
	}
	name := fmt.Sprintf("op2_lanes_%s_%s_%d", kname, def.Name, len(h.names))
	h.names[key] = name
	h.making[name] = true
	code := u.Code[def.BodyOpen : def.BodyClose+1]
	list := clex.Tokenize(u.Code[def.ListStart:def.ListEnd])
	body, calls, err := h.rewriteBody(def.Name, u.Src[def.BodyOpen:def.BodyClose+1], code, clex.Tokenize(code), lane, list, depth+1)
	if err != nil {
		return "", err
	}
	delete(h.making, name)
	names, unnames := functionNames(def.Name, h.l.Kernel.CXX, code)
	// Without C++'s default arguments: its calls pass every argument,
	// and op2_lane, last, has none.
	for k, d := range decls {
		decls[k] = withoutDefault(d)
	}
	// What C++ has between the list and the body (noexcept, a trailing
	// return type, which an auto head needs) as the helper has it.
	tail := strings.Join(strings.Fields(u.Code[def.ListEnd+1:def.BodyOpen]), " ")
	if tail != "" {
		tail = " " + tail
	}
	sig := fmt.Sprintf("static inline __attribute__((always_inline)) %s %s(%s, int op2_lane)%s", strings.Join(head, " "), name, strings.Join(decls, ", "), tail)
	proto := sig + ";\n"
	var needs []protoName // the identifiers of the types: the head's and the parameters' but their names
	paramNames := map[string]bool{}
	for _, p := range params {
		paramNames[p.Name] = true
	}
	prev := ""
	for _, t := range clex.Tokenize(strings.Join(head, " ") + " , " + strings.Join(decls, " , ") + tail) {
		if clex.IsIdentStart(t.Text[0]) && !paramNames[t.Text] && !tailKeywords[t.Text] {
			needs = append(needs, protoName{name: t.Text, tag: prev == "struct" || prev == "union" || prev == "enum"})
		}
		prev = t.Text
	}
	h.copies = append(h.copies, laneCopy{at: def.BodyClose + 1, helper: def.Name, name: name, calls: calls, needs: needs, proto: proto, def: fmt.Sprintf("%s%s\n%s\n%s", names, sig, body, unnames)})
	return name, nil
}

// tailKeywords are C++ keywords a helper's head or the text between its
// parameter list and its body may have, which a prototype may name
// anywhere.
var tailKeywords = map[string]bool{"auto": true, "noexcept": true, "throw": true, "true": true, "false": true, "decltype": true, "sizeof": true}

// unparen returns text with the parentheses around a lane parameter
// alone, (p), removed where they only group (macro expansions write
// (V)[0]); not those of a call f(p), which stays a call. code is text
// with its comments and literals blanked, toks code's tokens; the
// result's tokens (of the result's code) come with it.
func unparen(text, code string, toks []clex.Token, lane map[string]laneVar) (string, []clex.Token) {
	for {
		var b, bc strings.Builder
		pos, changed := 0, false
		for i := 1; i+1 < len(toks); i++ {
			if lane[toks[i].Text].depth == 0 || toks[i-1].Text != "(" || toks[i+1].Text != ")" {
				continue
			}
			if i >= 2 && clex.OperandEnd(toks[i-2].Text) {
				continue // a call
			}
			b.WriteString(text[pos:toks[i-1].Start])
			bc.WriteString(code[pos:toks[i-1].Start])
			b.WriteString(" " + toks[i].Text + " ")
			bc.WriteString(" " + toks[i].Text + " ")
			pos, changed = toks[i+1].End, true
			i++
		}
		if !changed {
			return text, toks
		}
		b.WriteString(text[pos:])
		bc.WriteString(code[pos:])
		text, code = b.String(), bc.String()
		toks = clex.Tokenize(code)
	}
}

// laneRewriter rewrites a kernel body's uses of lane parameters (or a
// helper's: see laneHelpers).
type laneRewriter struct {
	l       *core.Loop
	body    string
	toks    []clex.Token // body's tokens
	lane    map[string]laneVar
	helpers *laneHelpers
	depth   int      // of the helper being rewritten; 0 for the kernel
	calls   []string // the helper copies the body calls
}

// prev returns the text of the token before token i, or "".
func (r *laneRewriter) prev(i int) string {
	if i <= 0 {
		return ""
	}
	return r.toks[i-1].Text
}

// addressed reports whether the expression that starts at token i is the
// operand of a unary &, directly or through parentheses (&e, &(e),
// &((e))): the address of an element of a lane parameter, which the lane
// form would move to the next lane's value.
func (r *laneRewriter) addressed(i int) bool {
	k := i - 1
	for k >= 0 && r.toks[k].Text == "(" {
		k--
	}
	if k < 0 || r.toks[k].Text != "&" {
		return false
	}
	return !clex.OperandEnd(r.prev(k)) || r.castBefore(k)
}

// castBefore reports whether the tokens before token k are a cast, (T),
// whose ) an & at k follows: then the & takes an address ((double *)&e)
// rather than being a bitwise and ((a) & e).
func (r *laneRewriter) castBefore(k int) bool {
	if r.prev(k) != ")" {
		return false
	}
	depth, open := 0, -1
	for j := k - 1; j >= 0; j-- {
		switch r.toks[j].Text {
		case ")":
			depth++
		case "(":
			depth--
		}
		if depth == 0 {
			open = j
			break
		}
	}
	if open < 0 || clex.OperandEnd(r.prev(open)) {
		return false // a call's arguments, or no ( at all
	}
	// A group of words and *s may be a type name, whatever typedefs
	// declare it: taken as a cast (at worst, a loop without lanes).
	for _, t := range r.toks[open+1 : k-1] {
		if t.Text != "*" && (t.Text == "" || !clex.IsIdentStart(t.Text[0])) {
			return false // an expression's operator or number
		}
	}
	return k-1 > open+1
}

// rewrite returns body[start:stop], whose tokens are [from, to), with
// every use of a lane parameter p rewritten: p[e] as p[e'][op2_lane] (e'
// rewritten in turn), *p as p[0][op2_lane]; for a vector argument's
// parameter (pointer depth 2), p[e][f] as p[e'][f'][op2_lane] and *p[e]
// as p[e'][0][op2_lane]. Any other use is an error: the lane form would
// change its meaning.
func (r *laneRewriter) rewrite(from, to, start, stop int) (string, error) {
	name := r.l.Kernel.Name
	var b strings.Builder
	pos := start
	for i := from; i < to; i++ {
		t := r.toks[i]
		if text, end, ok, err := r.helperCall(i, to); err != nil {
			return "", err
		} else if ok {
			b.WriteString(r.body[pos:t.Start])
			b.WriteString(text)
			pos, i = r.toks[end].End, end
			continue
		}
		depth := r.lane[t.Text].depth
		if depth == 0 {
			continue
		}
		p := r.prev(i)
		if p == "." || p == "->" {
			continue // a member of the same name
		}
		if clex.Declares(p) {
			return "", fmt.Errorf("kernel %s declares %s in its body", name, t.Text)
		}
		next := ""
		if i+1 < to {
			next = r.toks[i+1].Text
		}
		other := fmt.Errorf("kernel %s uses %s other than as %s[i] or *%s", name, t.Text, t.Text, t.Text)
		if depth == 2 {
			other = fmt.Errorf("kernel %s uses %s other than as %s[i][j] or *%s[i]", name, t.Text, t.Text, t.Text)
		}
		switch {
		case next == "[":
			if r.addressed(i) || p == "*" && r.addressed(i-1) {
				return "", fmt.Errorf("kernel %s takes the address of an element of %s", name, t.Text)
			}
			// The subscripts: one for a plain parameter, two for a
			// vector argument's (or one after a *).
			var subs []string
			j := i
			for len(subs) < depth && j+1 < to && r.toks[j+1].Text == "[" {
				k := r.closing(j+1, to)
				if k < 0 {
					return "", fmt.Errorf("kernel %s: no ] closes a subscript of %s", name, t.Text)
				}
				inner, err := r.rewrite(j+2, k, r.toks[j+1].End, r.toks[k].Start)
				if err != nil {
					return "", err
				}
				subs = append(subs, inner)
				j = k
			}
			if j+1 < to && r.toks[j+1].Text == "[" {
				return "", fmt.Errorf("kernel %s indexes %s %d times", name, t.Text, len(subs)+1)
			}
			head := t.Start
			if len(subs) < depth {
				if depth == 1 || p != "*" || clex.Declares(r.prev(i-1)) {
					return "", other
				}
				subs = append(subs, "0") // *p[e]: its first value
				head = r.toks[i-1].Start
			}
			b.WriteString(r.body[pos:head])
			b.WriteString(t.Text)
			for _, e := range subs {
				b.WriteString("[" + e + "]")
			}
			b.WriteString("[op2_lane]")
			pos = r.toks[j].End
			i = j
		case p == "*" && depth == 1:
			if clex.Declares(r.prev(i - 1)) {
				return "", fmt.Errorf("kernel %s declares %s in its body", name, t.Text)
			}
			if r.addressed(i - 1) {
				return "", fmt.Errorf("kernel %s takes the address of an element of %s", name, t.Text)
			}
			if next == "++" || next == "--" {
				return "", fmt.Errorf("kernel %s moves pointer %s", name, t.Text)
			}
			b.WriteString(r.body[pos:r.toks[i-1].Start])
			b.WriteString(t.Text + "[0][op2_lane]")
			pos = t.End
		default:
			return "", other
		}
	}
	b.WriteString(r.body[pos:stop])
	return b.String(), nil
}

// helperCall rewrites the call at token i (before token to) when it is a
// call of a function the source defines with lane parameters as whole
// arguments: it returns the call of the helper's lane form (laneHelpers)
// and the index of the call's closing parenthesis, and ok. Other calls
// are left to the caller.
func (r *laneRewriter) helperCall(i, to int) (text string, end int, ok bool, err error) {
	t := r.toks[i]
	u := r.helpers.model
	if !u.Defined[t.Text] || i+1 >= to || r.toks[i+1].Text != "(" || memberAt(r.toks, i) || r.lane[t.Text].depth > 0 {
		return "", 0, false, nil
	}
	end = r.matchParen(i+1, to)
	if end < 0 {
		return "", 0, false, nil
	}
	// The arguments' token ranges, split at the top-level commas.
	var args [][2]int
	level, from := 0, i+2
	for j := i + 2; j < end; j++ {
		switch r.toks[j].Text {
		case "(", "[", "{":
			level++
		case ")", "]", "}":
			level--
		case ",":
			if level == 0 {
				args, from = append(args, [2]int{from, j}), j+1
			}
		}
	}
	if from < end {
		args = append(args, [2]int{from, end})
	}
	// Lane arguments: a lane parameter, or a row p[e] of a vector
	// argument's (a lane array of one map entry).
	var pos []int
	var vars []laneVar
	for k, a := range args {
		v := r.lane[r.toks[a[0]].Text]
		switch {
		case a[1]-a[0] == 1 && v.depth > 0:
		case v.depth == 2 && a[1]-a[0] > 3 && r.toks[a[0]+1].Text == "[" && r.closing(a[0]+1, a[1]) == a[1]-1:
			v = laneVar{depth: 1, typ: v.typ, decl: v.decl, shape: "[]" + v.shape[strings.LastIndex(v.shape, "["):]}
		default:
			continue
		}
		pos, vars = append(pos, k), append(vars, v)
	}
	if len(pos) == 0 {
		return "", 0, false, nil
	}
	defIdx := -1
	for k := range u.Defs {
		if u.Defs[k].Name == t.Text {
			if defIdx >= 0 {
				return "", 0, false, fmt.Errorf("kernel %s passes a parameter to %s, which the source defines more than once", r.l.Kernel.Name, t.Text)
			}
			defIdx = k
		}
	}
	if defIdx < 0 {
		return "", 0, false, nil
	}
	name, err := r.helpers.copyOf(&u.Defs[defIdx], defIdx, len(args), pos, vars, r.depth)
	if err != nil {
		return "", 0, false, err
	}
	r.calls = append(r.calls, name)
	var b strings.Builder
	b.WriteString(name + "(")
	for k, a := range args {
		if k > 0 {
			b.WriteString(", ")
		}
		if k := slices.Index(pos, k); k >= 0 && vars[k].depth == r.lane[r.toks[a[0]].Text].depth {
			b.WriteString(r.toks[a[0]].Text)
			continue
		} else if k >= 0 { // a row: p[e'], its subscript rewritten
			sub, err := r.rewrite(a[0]+2, a[1]-1, r.toks[a[0]+1].End, r.toks[a[1]-1].Start)
			if err != nil {
				return "", 0, false, err
			}
			b.WriteString(r.toks[a[0]].Text + "[" + sub + "]")
			continue
		}
		if a[0] == a[1] {
			continue // an empty argument: the compiler says what is wrong
		}
		arg, err := r.rewrite(a[0], a[1], r.toks[a[0]].Start, r.toks[a[1]-1].End)
		if err != nil {
			return "", 0, false, err
		}
		b.WriteString(arg)
	}
	b.WriteString(", op2_lane)")
	return b.String(), end, true, nil
}

// matchParen returns the index of the ) that closes the ( at token open
// (before token to), or -1.
func (r *laneRewriter) matchParen(open, to int) int { return r.match(open, to, "(", ")") }

// closing returns the index of the ] that closes the [ at token open
// (before token to), or -1.
func (r *laneRewriter) closing(open, to int) int { return r.match(open, to, "[", "]") }

// match returns the index of the token c that closes the token o at
// token open (before token to), or -1.
func (r *laneRewriter) match(open, to int, o, c string) int {
	depth := 0
	for j := open; j < to; j++ {
		switch r.toks[j].Text {
		case o:
			depth++
		case c:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// vecName is the name of the generated vector type of n values of type t
// (op2_v4_double); unaligned adds the variant that may sit at any
// address of a t (rows of a Dat).
func vecName(t core.ScalarType, n int, unaligned bool) string {
	u := ""
	if unaligned {
		u = "u"
	}
	return fmt.Sprintf("op2_v%d%s_%s", n, u, strings.ReplaceAll(t.CName(), " ", "_"))
}

// laneTypes writes the vector types the lane code of l uses.
func (g *Gen) laneTypes(l *core.Loop, lanes int) {
	var done []core.ScalarType
	for i := range l.Args {
		a := &l.Args[i]
		t := a.Data.Type
		if !laneParam(a) || slices.Contains(done, t) {
			continue
		}
		done = append(done, t)
		for _, n := range slices.Compact([]int{2, 4, lanes}) {
			g.Printf("typedef %s %s __attribute__((vector_size(%d)));\n", t.CName(), vecName(t, n, false), n*t.Size())
			g.Printf("typedef %s %s __attribute__((vector_size(%d), aligned(%d)));\n", t.CName(), vecName(t, n, true), n*t.Size(), t.Size())
		}
	}
}

// laneChunks splits dim values into the pieces lane code moves as one:
// 4 values while at least 4 are left, then 2, then 1.
func laneChunks(dim int) [][2]int {
	var out [][2]int
	for k := 0; k < dim; {
		c := 1
		switch {
		case dim-k >= 4:
			c = 4
		case dim-k >= 2:
			c = 2
		}
		out = append(out, [2]int{k, c})
		k += c
	}
	return out
}

// transpose4 is the C that transposes the 4×4 block whose rows are the
// v4 values in[0..3] into out[0..3] (declared by the caller's text).
func transpose4(v4 string, in, out [4]string) string {
	return fmt.Sprintf("{ const %[1]s op2_t0 = __builtin_shufflevector(%[2]s, %[3]s, 0, 4, 2, 6), op2_t1 = __builtin_shufflevector(%[2]s, %[3]s, 1, 5, 3, 7), "+
		"op2_t2 = __builtin_shufflevector(%[4]s, %[5]s, 0, 4, 2, 6), op2_t3 = __builtin_shufflevector(%[4]s, %[5]s, 1, 5, 3, 7); "+
		"%[6]s = __builtin_shufflevector(op2_t0, op2_t2, 0, 1, 4, 5); %[7]s = __builtin_shufflevector(op2_t1, op2_t3, 0, 1, 4, 5); "+
		"%[8]s = __builtin_shufflevector(op2_t0, op2_t2, 2, 3, 6, 7); %[9]s = __builtin_shufflevector(op2_t1, op2_t3, 2, 3, 6, 7); }",
		v4, in[0], in[1], in[2], in[3], out[0], out[1], out[2], out[3])
}

// laneSlot names what lane code moves for one argument (or one map
// entry of a vector argument): its lane array (arr, indexed
// [component][lane]), the row each lane reaches (row(j), a pointer to the
// element's first value), and the prefix of the row variables that
// laneRows declares (w).
type laneSlot struct {
	arr string
	row func(j int) string
	w   string
}

// slots returns the lane slots of argument i: one, or one per map entry
// of a vector argument.
func slots(a *core.Arg, i int) []laneSlot {
	if a.Kind != core.ArgVector {
		return []laneSlot{{arr: fmt.Sprintf("op2_x%d", i), row: func(j int) string { return fmt.Sprintf("op2_p%d_%d", i, j) }, w: fmt.Sprintf("op2_w%d", i)}}
	}
	out := make([]laneSlot, a.Map.Arity)
	for c := range out {
		out[c] = laneSlot{arr: fmt.Sprintf("op2_x%d[%d]", i, c), row: func(j int) string { return fmt.Sprintf("op2_p%d_%d_%d", i, c, j) }, w: fmt.Sprintf("op2_w%d_%d", i, c)}
	}
	return out
}

// laneGather writes the statements filling slot s's lane array from its
// rows (dim values of type t each): each piece of each group of 4 lanes
// is loaded row by row and transposed in registers, and stored as one
// vector per component.
func (g *Gen) laneGather(t core.ScalarType, dim, lanes int, s laneSlot, ind string) {
	v4, vw := vecName(t, 4, false), vecName(t, lanes, false)
	for _, ch := range laneChunks(dim) {
		k0, c := ch[0], ch[1]
		g.Printf("%s{\n", ind)
		for grp := 0; grp < lanes/4; grp++ {
			row := func(j int) string { return s.row(4*grp + j) }
			for q := 0; q < c; q++ {
				g.Printf("%s  %s op2_c%d_%d;\n", ind, v4, grp, q)
			}
			switch c {
			case 4:
				u := vecName(t, 4, true)
				var in, out [4]string
				for j := range 4 {
					in[j] = fmt.Sprintf("(*(const %s *)(%s + %d))", u, row(j), k0)
					out[j] = fmt.Sprintf("op2_c%d_%d", grp, j)
				}
				g.Printf("%s  %s\n", ind, transpose4(v4, in, out))
			case 2:
				u := vecName(t, 2, true)
				g.Printf("%s  { const %s op2_t0 = __builtin_shufflevector(*(const %s *)(%s + %d), *(const %s *)(%s + %d), 0, 1, 2, 3), "+
					"op2_t1 = __builtin_shufflevector(*(const %s *)(%s + %d), *(const %s *)(%s + %d), 0, 1, 2, 3); "+
					"op2_c%d_0 = __builtin_shufflevector(op2_t0, op2_t1, 0, 2, 4, 6); op2_c%d_1 = __builtin_shufflevector(op2_t0, op2_t1, 1, 3, 5, 7); }\n",
					ind, v4, u, row(0), k0, u, row(1), k0, u, row(2), k0, u, row(3), k0, grp, grp)
			default:
				g.Printf("%s  op2_c%d_0 = (%s){%s[%d], %s[%d], %s[%d], %s[%d]};\n", ind, grp, v4, row(0), k0, row(1), k0, row(2), k0, row(3), k0)
			}
		}
		for q := 0; q < c; q++ {
			if lanes == 4 {
				g.Printf("%s  *(%s *)%s[%d] = op2_c0_%d;\n", ind, vw, s.arr, k0+q, q)
			} else {
				g.Printf("%s  *(%s *)%s[%d] = __builtin_shufflevector(op2_c0_%d, op2_c1_%d, 0, 1, 2, 3, 4, 5, 6, 7);\n", ind, vw, s.arr, k0+q, q, q)
			}
		}
		g.Printf("%s}\n", ind)
	}
}

// laneRows writes the declarations of the rows <s.w>_<lane>_<k0> (a
// vector of the piece's values, or one value) that slot s's lane array
// holds for each lane, transposed from its components in registers.
func (g *Gen) laneRows(t core.ScalarType, dim, lanes int, s laneSlot, ind string) {
	v4, vw := vecName(t, 4, false), vecName(t, lanes, false)
	for _, ch := range laneChunks(dim) {
		k0, c := ch[0], ch[1]
		rowT := map[int]string{4: v4, 2: vecName(t, 2, false), 1: t.CName()}[c]
		for j := 0; j < lanes; j++ {
			g.Printf("%s%s %s_%d_%d;\n", ind, rowT, s.w, j, k0)
		}
		g.Printf("%s{\n", ind)
		for grp := 0; grp < lanes/4; grp++ {
			comp := func(q int) string {
				if lanes == 4 {
					return fmt.Sprintf("(*(const %s *)%s[%d])", vw, s.arr, k0+q)
				}
				return fmt.Sprintf("__builtin_shufflevector(*(const %s *)%s[%d], *(const %s *)%s[%d], %d, %d, %d, %d)",
					vw, s.arr, k0+q, vw, s.arr, k0+q, 4*grp, 4*grp+1, 4*grp+2, 4*grp+3)
			}
			out := func(j int) string { return fmt.Sprintf("%s_%d_%d", s.w, 4*grp+j, k0) }
			switch c {
			case 4:
				var in, o [4]string
				for q := range 4 {
					in[q], o[q] = comp(q), out(q)
				}
				g.Printf("%s  %s\n", ind, transpose4(v4, in, o))
			case 2:
				g.Printf("%s  { const %s op2_t0 = %s, op2_t1 = %s; const %s op2_t2 = __builtin_shufflevector(op2_t0, op2_t1, 0, 4, 1, 5), op2_t3 = __builtin_shufflevector(op2_t0, op2_t1, 2, 6, 3, 7); "+
					"%s = __builtin_shufflevector(op2_t2, op2_t2, 0, 1); %s = __builtin_shufflevector(op2_t2, op2_t2, 2, 3); "+
					"%s = __builtin_shufflevector(op2_t3, op2_t3, 0, 1); %s = __builtin_shufflevector(op2_t3, op2_t3, 2, 3); }\n",
					ind, v4, comp(0), comp(1), v4, out(0), out(1), out(2), out(3))
			default:
				g.Printf("%s  { const %s op2_t0 = %s; %s = op2_t0[0]; %s = op2_t0[1]; %s = op2_t0[2]; %s = op2_t0[3]; }\n", ind, v4, comp(0), out(0), out(1), out(2), out(3))
			}
		}
		g.Printf("%s}\n", ind)
	}
}

// laneStore writes the statements storing lane j's rows of slot s (dim
// values of type t), or, with add, adding them to its row.
func (g *Gen) laneStore(t core.ScalarType, dim int, add bool, s laneSlot, j int, ind string) {
	op := "="
	if add {
		op = "+="
	}
	for _, ch := range laneChunks(dim) {
		k0, c := ch[0], ch[1]
		if c == 1 {
			g.Printf("%s%s[%d] %s %s_%d_%d;\n", ind, s.row(j), k0, op, s.w, j, k0)
			continue
		}
		g.Printf("%s*(%s *)(%s + %d) %s %s_%d_%d;\n", ind, vecName(t, c, true), s.row(j), k0, op, s.w, j, k0)
	}
}

// RangeLanes writes op2_range (see Range) running chunks of lanes
// elements in SIMD lanes (see the comment at the top of this file) and
// the elements after the last whole chunk with the scalar code. The
// prelude must have been written with the same lanes (the lane kernel).
func (g *Gen) RangeLanes(l *core.Loop, lanes int) { g.rangeLanes(l, lanes, false) }

// RunsRangeLanes writes op2_range for runs of elements (see RunsRange)
// running each run as RangeLanes runs a range: its whole chunks of lanes
// elements in SIMD lanes, then its remaining elements with the scalar
// code. The prelude must have been written with the same lanes.
func (g *Gen) RunsRangeLanes(l *core.Loop, lanes int) { g.rangeLanes(l, lanes, true) }

// rangeLanes writes RangeLanes, or with runs RunsRangeLanes.
func (g *Gen) rangeLanes(l *core.Loop, lanes int, runs bool) {
	g.laneTypes(l, lanes)
	g.Printf("\n")
	if l.Extruded != nil {
		g.extrudedLanes(l, lanes, runs)
		return
	}
	end := "op2_last"
	if runs {
		g.rangeHead(l, ",\n    const int *restrict op2_ru")
		g.Printf("  for (long long op2_q = op2_first; op2_q < op2_last; op2_q++) {\n")
		g.Printf("  long long op2_n = op2_ru[2 * op2_q];\n  const long long op2_e = op2_ru[2 * op2_q + 1];\n")
		end = "op2_e"
	} else {
		g.rangeHead(l, "")
		g.Printf("  long long op2_n = op2_first;\n")
	}
	g.Printf("  for (; op2_n + %d <= %s; op2_n += %d) {\n", lanes, end, lanes)
	g.laneClash(l, lanes, "    ")
	g.laneChunk(l, lanes, "    ", laneAt{})
	g.Printf("  }\n")
	g.Printf("  for (; op2_n < %s; op2_n++) {\n", end)
	g.ElementBody(l, "op2_n", "    ", func(i int) string { return fmt.Sprintf("op2_r%d", i) })
	g.Printf("  }\n")
	if runs {
		g.Printf("  }\n")
	}
	g.Printf("  return 0;\n}\n\n")
}

// laneAt gives the elements of a chunk's lanes: lane j is element
// op2_n + j, or in an extruded loop (extruded) layer op2_layer + j of
// column op2_n.
type laneAt struct{ extruded bool }

// elem is the C expression of lane j's element (of its column, in an
// extruded loop).
func (at laneAt) elem(j int) string {
	if at.extruded {
		return "op2_n"
	}
	return fmt.Sprintf("op2_n + %d", j)
}

// sameRow reports whether every lane of a chunk reaches the same row
// through map entry c (as in row) of argument a: in an extruded loop,
// data without layers, or an entry whose layer does not move with the
// loop's.
func (at laneAt) sameRow(a *core.Arg, c int) bool {
	if !at.extruded {
		return false
	}
	return a.Ext == nil || a.Ext.Offset[entry(a, c)] == 0
}

// entry is the map entry argument a reaches: 0 for a direct argument,
// its index for an indirect one, c for a vector argument's entry c.
func entry(a *core.Arg, c int) int {
	switch a.Kind {
	case core.ArgDirect:
		return 0
	case core.ArgIndirect:
		return a.Idx
	}
	return c
}

// row is the C expression of the pointer to the first value that map
// entry c (a vector argument's; else ignored) of argument i reaches for
// lane j.
func (at laneAt) row(a *core.Arg, i, c, j int) string {
	off := ""
	if at.extruded && a.Ext != nil {
		off = fmt.Sprintf(" + (ptrdiff_t)(%s) * %d", a.Ext.Layer(entry(a, c), fmt.Sprintf("(op2_layer + %d)", j)), a.Data.LayerDim())
	}
	if a.Kind == core.ArgDirect {
		return fmt.Sprintf("op2_a%d + (ptrdiff_t)(%s) * %d%s", i, at.elem(j), a.Data.Dim, off)
	}
	return fmt.Sprintf("op2_a%d + (ptrdiff_t)op2_m%d[(ptrdiff_t)(%s) * %d + %d] * %d%s", i, i, at.elem(j), a.Map.Arity, entry(a, c), a.Data.Dim, off)
}

// extrudedLanes writes the rest of RangeLanes (or RunsRangeLanes) for a
// loop over an extruded set: in each column, chunks of lanes
// consecutive layers run in SIMD lanes, in increasing order, then the
// column's remaining layers run with the scalar code. A column's layers
// are its elements in order, so that a chunk's lanes are its layers as
// a plain loop's are its elements.
func (g *Gen) extrudedLanes(l *core.Loop, lanes int, runs bool) {
	g.ExtTables(l)
	if runs {
		g.rangeHead(l, ",\n    const int *restrict op2_ru")
		g.Printf("  for (long long op2_q = op2_first; op2_q < op2_last; op2_q++)\n")
		g.Printf("  for (long long op2_n = op2_ru[2 * op2_q]; op2_n < op2_ru[2 * op2_q + 1]; op2_n++) {\n")
	} else {
		g.rangeHead(l, "")
		g.Printf("  for (long long op2_n = op2_first; op2_n < op2_last; op2_n++) {\n")
	}
	first, end := "0", strconv.Itoa(l.Extruded.Layers)
	if h := l.RangeArg(); h >= 0 {
		first = fmt.Sprintf("op2_a%d[(ptrdiff_t)op2_n * 2]", h)
		end = fmt.Sprintf("op2_a%d[(ptrdiff_t)op2_n * 2 + 1]", h)
	}
	g.Printf("    int op2_layer = %s;\n    const int op2_lend = %s;\n", first, end)
	g.Printf("    for (; op2_layer + %d <= op2_lend; op2_layer += %d) {\n", lanes, lanes)
	g.laneChunk(l, lanes, "      ", laneAt{extruded: true})
	g.Printf("    }\n    for (; op2_layer < op2_lend; op2_layer++) {\n")
	g.elementBody(l, "op2_n", "      ", func(i int) string { return fmt.Sprintf("op2_r%d", i) })
	g.Printf("    }\n  }\n  return 0;\n}\n\n")
}

// laneChunk writes the body of a chunk of lanes elements at indent ind,
// its elements given by at: their lane arrays gathered, the lane kernel
// run under #pragma omp simd, and the results written back lane by lane
// in element order.
func (g *Gen) laneChunk(l *core.Loop, lanes int, ind string, at laneAt) {
	for i := range l.Args {
		a := &l.Args[i]
		if !laneParam(a) {
			continue
		}
		t := a.Data.Type.CName()
		shape := fmt.Sprintf("[%d][%d]", laneDim(a), lanes)
		if a.Kind == core.ArgVector {
			shape = fmt.Sprintf("[%d]", a.Map.Arity) + shape
		}
		g.Printf("%s%s op2_x%d%s __attribute__((aligned(64)));\n", ind, t, i, shape)
		if a.Kind == core.ArgMat {
			// The element matrices start from zero, as the scalar code's.
			g.Printf("%sfor (int op2_k = 0; op2_k < %d; op2_k++)\n%s  for (int op2_j = 0; op2_j < %d; op2_j++) op2_x%d[op2_k][op2_j] = 0;\n",
				ind, laneDim(a), ind, lanes, i)
			continue
		}
		if a.Kind == core.ArgGlobal || (a.Kind != core.ArgDirect && Combining(a.Access)) {
			// Every value starts from the identity.
			ents := 1
			if a.Kind == core.ArgVector {
				ents = a.Map.Arity
			}
			g.Printf("%sfor (int op2_c = 0; op2_c < %d; op2_c++)\n%s  for (int op2_k = 0; op2_k < %d; op2_k++)\n%s    for (int op2_j = 0; op2_j < %d; op2_j++) ",
				ind, ents, ind, a.Dim(), ind, lanes)
			if a.Kind == core.ArgVector {
				g.Printf("op2_x%d[op2_c][op2_k][op2_j] = %s;\n", i, HostIdentity(a.Access, a.Data.Type))
			} else {
				g.Printf("op2_x%d[op2_k][op2_j] = %s;\n", i, HostIdentity(a.Access, a.Data.Type))
			}
			if a.Kind == core.ArgGlobal {
				continue
			}
		}
		for c, sl := range slots(a, i) {
			if a.Access == core.Read && at.sameRow(a, c) {
				// One row for every lane: read once, broadcast.
				g.Printf("%s{\n%s  const %s *const op2_b = %s;\n", ind, ind, t, at.row(a, i, c, 0))
				g.Printf("%s  for (int op2_k = 0; op2_k < %d; op2_k++)\n%s    for (int op2_j = 0; op2_j < %d; op2_j++) %s[op2_k][op2_j] = op2_b[op2_k];\n%s}\n",
					ind, a.Dim(), ind, lanes, sl.arr, ind)
				continue
			}
			for j := 0; j < lanes; j++ {
				g.Printf("%s%s *const %s = %s;\n", ind, t, sl.row(j), at.row(a, i, c, j))
			}
			if a.Kind == core.ArgDirect || !Combining(a.Access) {
				// What the kernel reads, and what RW and WRITE leave
				// as it was where the kernel writes nothing.
				g.laneGather(a.Data.Type, a.Dim(), lanes, sl, ind)
			}
		}
	}
	g.Printf("%s#pragma omp simd\n%sfor (int op2_lane = 0; op2_lane < %d; op2_lane++)\n%s  %s(", ind, ind, lanes, ind, LaneName(l.Kernel.Name))
	for i := range l.Args {
		a := &l.Args[i]
		switch {
		case a.Hidden:
		case laneParam(a):
			g.Printf("op2_x%d, ", i)
		default:
			g.Printf("op2_a%d, ", i)
		}
	}
	g.Printf("op2_lane);\n")
	// Write back: rows transposed in registers, then stored lane by lane
	// in element order (increments through maps in the scalar order).
	var back []int
	for i := range l.Args {
		a := &l.Args[i]
		if a.Kind == core.ArgGlobal || a.Access == core.Read {
			continue
		}
		back = append(back, i)
		if a.Access == core.Min || a.Access == core.Max || a.Kind == core.ArgMat {
			continue // combined value by value below
		}
		for _, sl := range slots(a, i) {
			g.laneRows(a.Data.Type, a.Dim(), lanes, sl, ind)
		}
	}
	for j := 0; j < lanes; j++ {
		for _, i := range back {
			a := &l.Args[i]
			if a.Kind == core.ArgMat {
				g.matBack(a, i, at.elem(j), ind, func(k string) string { return fmt.Sprintf("op2_x%d[%s][%d]", i, k, j) })
				continue
			}
			for _, sl := range slots(a, i) {
				if a.Access == core.Min || a.Access == core.Max {
					for k := 0; k < a.Dim(); k++ {
						g.Printf("%s%s\n", ind, Combine(a.Access, fmt.Sprintf("%s[%d]", sl.row(j), k), fmt.Sprintf("%s[%d][%d]", sl.arr, k, j)))
					}
					continue
				}
				// A zeroed accumulator through a map is added; a direct
				// argument, and RW and WRITE through a map, were
				// gathered, and are stored.
				g.laneStore(a.Data.Type, a.Dim(), a.Kind != core.ArgDirect && a.Access == core.Inc, sl, j, ind)
			}
		}
	}
	for i := range l.Args {
		a := &l.Args[i]
		if a.IsReduction() {
			g.Printf("%sfor (int op2_j = 0; op2_j < %d; op2_j++)\n%s  for (int op2_k = 0; op2_k < %d; op2_k++) { %s }\n",
				ind, lanes, ind, a.Dim(), Combine(a.Access, fmt.Sprintf("op2_r%d[op2_k]", i), fmt.Sprintf("op2_x%d[op2_k][op2_j]", i)))
		}
	}
}

// laneClash writes, at the top of a chunk's body, the test whether two
// of its elements reach one target of a Dat that the loop modifies
// through a map with RW or WRITE: the lanes would read values gathered
// before the chunk where the scalar code reads what an earlier element
// wrote, or store rows that overwrite each other's components. Such a
// chunk runs its elements with the scalar code, in order, and the next
// chunk follows. Increments, MIN and MAX through maps combine in element
// order after the chunk and need no test. The targets are compared per
// Dat, every pair of every lane's map entries: a branch-free count that
// the compiler vectorises.
// ClashTested reports whether a chunk of lanes tests the targets of
// argument a for clashes (laneClash): a Dat changed through a map with RW
// or WRITE.
func ClashTested(a *core.Arg) bool {
	return (a.Kind == core.ArgIndirect || a.Kind == core.ArgVector) && (a.Access == core.RW || a.Access == core.Write)
}

func (g *Gen) laneClash(l *core.Loop, lanes int, ind string) {
	targets := map[int][]string{}
	var bases []int
	for i := range l.Args {
		a := &l.Args[i]
		if !ClashTested(a) {
			continue
		}
		b := l.Sig.Base[i]
		if _, ok := targets[b]; !ok {
			bases = append(bases, b)
		}
		entries := []int{a.Idx}
		if a.Kind == core.ArgVector {
			entries = make([]int, a.Map.Arity)
			for c := range entries {
				entries[c] = c
			}
		}
		for j := 0; j < lanes; j++ {
			for _, c := range entries {
				targets[b] = append(targets[b], fmt.Sprintf("op2_m%d[(ptrdiff_t)(op2_n + %d) * %d + %d]", i, j, a.Map.Arity, c))
			}
		}
	}
	if len(bases) == 0 {
		return
	}
	g.Printf("%sint op2_clash = 0;\n", ind)
	for _, b := range bases {
		t := targets[b]
		g.Printf("%s{\n%s  const int op2_t[%d] = {%s};\n", ind, ind, len(t), strings.Join(t, ", "))
		g.Printf("%s  for (int op2_u = 1; op2_u < %d; op2_u++)\n%s    for (int op2_v = 0; op2_v < op2_u; op2_v++) op2_clash += op2_t[op2_u] == op2_t[op2_v];\n%s}\n",
			ind, len(t), ind, ind)
	}
	g.Printf("%sif (op2_clash) {\n", ind)
	g.Printf("%s  for (long long op2_s = op2_n; op2_s < op2_n + %d; op2_s++) {\n", ind, lanes)
	g.ElementBody(l, "op2_s", ind+"    ", func(i int) string { return fmt.Sprintf("op2_r%d", i) })
	g.Printf("%s  }\n%s  continue;\n%s}\n", ind, ind, ind)
}

// scalarMath are the math.h functions a compiler does not vectorise
// without a vector math library, and their float forms (expf, powf...):
// each lane would call the scalar function. The others (sqrt, fabs,
// floor, ceil, trunc, rint, nearbyint, fmin, fmax, copysign, fma) are
// each an instruction of x86-64's and Arm's vector units (with
// -fno-math-errno for sqrt, which the host backends' default flags
// include).
var scalarMath = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(`acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1
	log log10 log1p log2 logb cbrt hypot pow erf erfc lgamma tgamma round fmod remainder nextafter fdim
	frexp ldexp modf scalbn scalbln ilogb lrint llrint lround llround remquo nan nexttoward sincos exp10`) {
		m[f], m[f+"f"] = true, true
	}
	return m
}()

// clonedMath are the functions of scalarMath that a C kernel's lane form
// calls through SIMD clones (mathClones): those that take and return
// double, and their float forms.
var clonedMath = func() map[string]mathFunc {
	m := map[string]mathFunc{}
	for _, f := range strings.Fields(`acos asin atan cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 exp10
	log log10 log1p log2 logb cbrt erf erfc tgamma round`) {
		m[f], m[f+"f"] = mathFunc{1, "double"}, mathFunc{1, "float"}
	}
	for _, f := range strings.Fields(`atan2 hypot pow fmod remainder nextafter fdim`) {
		m[f], m[f+"f"] = mathFunc{2, "double"}, mathFunc{2, "float"}
	}
	return m
}()

// mathFunc is a function of clonedMath: its number of parameters, and
// the C type of its parameters and result.
type mathFunc struct {
	params int
	typ    string
}

// clonesHere says GCC makes SIMD clones on this machine: x86-64 (on
// Arm, GCC before 14 makes none of 8 lanes).
const clonesHere = runtime.GOARCH == "amd64"

// laneCloneCalls returns the functions of clonedMath that the lane form
// of l's kernel calls through their SIMD clones (mathClones), or nil
// when it calls none so. It calls them so, on x86-64 (clonesHere), when
// the kernel is C, every function of scalarMath that it calls (in its
// body or in a function of its source that it calls, directly or through
// others: cfront.CountOps) is one of clonedMath, and
//
//   - those bodies have no branch (Ops.Branches: GCC before 14
//     vectorises no loop with a conditional call of a clone) and make no
//     such call in a for statement (Ops.LoopCalls: a loop GCC unrolls
//     late may make an argument a constant only after op2_lm_f has
//     chosen the clone, where the scalar code folds the call);
//   - every mention of such a function in the source is a call, in a
//     function's body, outside brackets and not of a member (s.exp(x)),
//     in a body with no static, enum or _Static_assert (whose constant
//     expressions GCC folds math calls into, not calls of op2_lm_f), and
//     in no preprocessor directive: mathClones' macro replaces the name
//     wherever it stands (a parameter or variable of that name, a
//     function pointer, #ifdef exp);
//   - the source does not include tgmath.h (whose macros the macro
//     would replace), and no constant has such a function's name.
//
// Each lane then calls the scalar function on its own value, as the
// scalar code does, while the rest of the kernel runs on vectors
// (MG-CFD's mg_calc_dt: cbrt).
func laneCloneCalls(l *core.Loop) map[string]bool {
	info := l.Kernel.Info
	if info == nil || l.Kernel.CXX || !clonesHere {
		return nil
	}
	m, err := cfront.Model(info)
	if err != nil || strings.Contains(m.Src, "tgmath") {
		return nil
	}
	ops := cfront.CountOps(info)
	if ops.Branches > 0 {
		return nil
	}
	out := map[string]bool{}
	for name := range ops.Calls {
		if !scalarMath[name] {
			continue
		}
		if clonedMath[name].params == 0 || ops.LoopCalls[name] > 0 {
			return nil
		}
		out[name] = true
	}
	if len(out) == 0 {
		return nil
	}
	for _, c := range l.Consts {
		if out[c.Name] {
			return nil // the constant's macro is the name's (Prelude)
		}
	}
	if !onlyCalled(m, out) {
		return nil
	}
	return out
}

// onlyCalled reports whether every mention in source m of a function of
// names is a call in a function's body as laneCloneCalls requires.
func onlyCalled(m *cfront.SourceModel, names map[string]bool) bool {
	toks := m.SrcTokens
	// constExpr[d]: function d's body has a static, enum or
	// _Static_assert.
	constExpr := make([]bool, len(m.Defs))
	for _, u := range toks {
		if u.Text != "static" && u.Text != "enum" && u.Text != "_Static_assert" {
			continue
		}
		if d := defAt(m, u.Start); d >= 0 {
			constExpr[d] = true
		}
	}
	bracket := 0
	for i, t := range toks {
		switch t.Text {
		case "[":
			bracket++
		case "]":
			bracket--
		}
		if strings.Contains(t.Text, ".") {
			// clex keeps a.b as one token: o.exp(v) is a member's call.
			if slices.ContainsFunc(strings.Split(t.Text, "."), func(n string) bool { return names[n] }) {
				return false
			}
			continue
		}
		if !names[t.Text] {
			continue
		}
		if t.Start >= len(m.Code) || m.Code[t.Start] != t.Text[0] {
			return false // in a directive (or an attribute)
		}
		if bracket > 0 || i == 0 || toks[i-1].Text == "." || toks[i-1].Text == "->" || i+1 >= len(toks) || toks[i+1].Text != "(" {
			return false
		}
		if d := defAt(m, t.Start); d < 0 || constExpr[d] {
			return false
		}
	}
	return true
}

// defAt returns the index in m.Defs of the function whose body holds
// offset at, or -1.
func defAt(m *cfront.SourceModel, at int) int {
	return slices.IndexFunc(m.Defs, func(d cfront.FuncDecl) bool { return d.BodyOpen >= 0 && d.BodyOpen < at && at < d.BodyClose })
}

// mathClones returns the C that declares, for each function f of calls,
// op2_simd_f, which calls f and has SIMD clones of lanes lanes (`#pragma
// omp declare simd`: GCC makes vector forms of it, which call f once per
// lane; of the lane count, so that a loop of floats and doubles finds one
// for each type), and op2_lm_f, which the lane form calls instead of f:
// f itself where the compiler may fold or simplify the call in the
// scalar code, so that it does so in the lanes too (every argument a
// constant; GCC 12 also makes pow(x, 2.0) x*x, pow(x, 1.0) x, pow(x,
// 0.0) 1, pow(x, -1.0) 1/x, pow(1.0, y) 1 and hypot(x, 0.0) fabs(x), but
// no other call with one constant argument), else op2_simd_f. A call of
// f itself is not vectorised, so other constant arguments (fmod(x,
// 61.0), pow(x, 0.5)) take the clones. GCC's rewrites of odd and even
// functions (-sin(-x) is sin(x), cos(fabs(x)) cos(x)) assume what glibc's
// functions give: the same bits either way. A macro f (object-like, so
// that the compiler, not the preprocessor, reads the arguments) then
// makes every call of f op2_lm_f's, in the kernel's source and its lane
// form (Prelude; mathUndefs ends it): in the source's functions the
// kernel calls, and in the scalar code of the elements after the last
// chunk, which calls f through op2_simd_f's scalar form, with the same
// results. All of it is under CloneGuard: other compilers' lanes call f
// itself.
func mathClones(calls map[string]bool, lanes int) string {
	names := slices.Sorted(maps.Keys(calls))
	var b strings.Builder
	for _, f := range names {
		t := clonedMath[f].typ
		params, args, constant := []string{t + " op2_a"}, "op2_a", "__builtin_constant_p(op2_a)"
		if clonedMath[f].params == 2 {
			params, args = append(params, t+" op2_b"), "op2_a, op2_b"
			constant = "(__builtin_constant_p(op2_a) && __builtin_constant_p(op2_b))"
			switch strings.TrimSuffix(f, "f") {
			case "pow":
				constant += " || (__builtin_constant_p(op2_b) && (op2_b == 0 || op2_b == 1 || op2_b == -1 || op2_b == 2)) || (__builtin_constant_p(op2_a) && op2_a == 1)"
			case "hypot":
				constant += " || (__builtin_constant_p(op2_a) && op2_a == 0) || (__builtin_constant_p(op2_b) && op2_b == 0)"
			}
		}
		p := strings.Join(params, ", ")
		fmt.Fprintf(&b, "#if %s\n#pragma omp declare simd simdlen(%d)\n", CloneGuard, lanes)
		fmt.Fprintf(&b, "static __attribute__((noinline)) %s op2_simd_%s(%s) { return %s(%s); }\n", t, f, p, f, args)
		fmt.Fprintf(&b, "static inline __attribute__((always_inline)) %s op2_lm_%s(%s) { return %s ? %s(%s) : op2_simd_%s(%s); }\n", t, f, p, constant, f, args, f, args)
		fmt.Fprintf(&b, "#define %s op2_lm_%s\n#endif\n", f, f)
	}
	return b.String()
}

// mathUndefs returns the C that ends mathClones' macros.
func mathUndefs(calls map[string]bool) string {
	if len(calls) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#if %s\n", CloneGuard)
	for _, f := range slices.Sorted(maps.Keys(calls)) {
		fmt.Fprintf(&b, "#undef %s\n", f)
	}
	b.WriteString("#endif\n")
	return b.String()
}

// Vectors are the widths, in bytes, of the vectors loops in lanes are
// built for on a machine: Loops for a loop without a matrix argument,
// Matrix for one with (see host.LaneBytes, which reads them from the
// CPU).
type Vectors struct {
	Loops, Matrix int
}

// CloneGuard is the preprocessor condition under which the lane form
// calls math functions through SIMD clones (mathClones): GCC on x86-64.
// Clang makes clones of `#pragma omp declare simd` functions but calls
// none (Clang 15: a loop calling one is not vectorised at all), and GCC
// before 14 makes none of 8 lanes on Arm.
const CloneGuard = "defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)"

// AutoLanes is the lane count of loop l under SIMD "auto" on a machine
// whose vectors hold v's bytes (v.Matrix for a loop with a matrix
// argument, else v.Loops): as many of the loop's widest values as a
// vector holds, bounded by LaneWidths, or 0 (the scalar code) where
// lanes measured slower than the scalar code. That is, when
// its kernel (or a function of its source that it calls, directly or
// through others: cfront.CountOps; not the other kernels of a source
// that defines several)
//
//   - calls a math.h function of scalarMath (exp, pow, cbrt, their
//     float forms, std::exp...), which glibc vectorises only under
//     -ffast-math, so that each lane calls the scalar function in turn
//     and nothing else of the kernel is vectorised, unless the lane form
//     calls them through SIMD clones (laneCloneCalls: a C kernel that
//     calls them outside branches; and clones, which reports whether
//     the C compiler calls SIMD clones, CloneGuard, asked only then;
//     nil: it does not). Then the rest of the kernel runs
//     on vectors and the other rules decide: MG-CFD's
//     mg_calc_dt (cbrt, 5 divisions, 2 square roots) ran in 12.8-14.5
//     ns per node in lanes against 15.6-16.0 ns with the scalar code
//     (AMD EPYC family 25, 8 lanes, op2bench -mgcfd-floor-only);
//   - or does too little work that vectors speed up: fewer than two
//     divisions and square roots (counted in those functions, macros
//     expanded), no sum into a Global and no matrix argument. Measured
//     on MG-CFD's loops (AMD EPYC, 65³ nodes): those that only move
//     values (mg_copy_vars, mg_residual, mg_restrict_sum, mg_min_dt, and
//     Airfoil's save_soln) or divide once per element (mg_time_step,
//     mg_restrict_mean, mg_step_factor) ran 0.47-0.95x as fast in lanes,
//     their gathers and transposes costing more than the arithmetic they
//     vectorise, while every loop with more (mg_flux_edge, mg_flux_bnd,
//     mg_volumes, Airfoil's adt_calc, res_calc, bres_calc) or with a sum
//     into a Global (mg_rms, Airfoil's update) ran faster; a loop writing
//     through a map that reaches one target from consecutive elements, as
//     mg_restrict_zero, would run each chunk with the scalar code after
//     its clash test (0.35x).
//
// A loop with a matrix argument gets lanes however little its kernel
// computes: internal/poisson's element matrices ran faster in lanes,
// the cheapest too (a family-26 AMD EPYC, AVX-512, 1 M elements, ns per
// element, scalar against 8 lanes, medians of 8 interleaved runs,
// sequential: the 2-D stiffness, one division, 7.85 / 5.09; the 3-D
// stiffness 15.42 / 10.85; a 2-D P1 mass matrix, a determinant and one
// division, 6.22 / 5.28; on openmp, 2 threads, 1.24-1.47x; 4 lanes as
// 8: docs/perf.md). (When the 2-D stiffness read a boundary flag per
// node, lanes had run it slower on a family-25 EPYC: 10.8-11.4 scalar,
// 11.6-13.1 with 8 lanes.)
//
// Whether l can have lanes at all is SIMDCheck's question, not this
// one's.
func AutoLanes(l *core.Loop, v Vectors, clones func() bool) int {
	mat, sums, work := false, false, 0 // a matrix argument; a sum into a Global; divisions and square roots
	for i := range l.Args {
		a := &l.Args[i]
		switch {
		case a.Kind == core.ArgMat:
			mat = true
		case a.Kind == core.ArgGlobal && a.Access == core.Inc:
			sums = true
		}
	}
	if info := l.Kernel.Info; info != nil {
		if _, err := cfront.Model(info); err != nil {
			return 0
		}
		// Calls as the tokens show them (std::exp too), in the kernel
		// and the functions it calls, macros expanded, counted once per
		// kernel (cfront.CountOps).
		ops := cfront.CountOps(info)
		cloned := laneCloneCalls(l)
		if cloned != nil && (clones == nil || !clones()) {
			cloned = nil
		}
		for name := range ops.Calls {
			if scalarMath[name] && !cloned[name] {
				return 0
			}
		}
		work = ops.Divisions + ops.Calls["sqrt"] + ops.Calls["sqrtf"]
	}
	if !mat && !sums && work < 2 {
		return 0
	}
	vectorBytes := v.Loops
	if mat {
		vectorBytes = v.Matrix
	}
	widest := 0
	for i := range l.Args {
		if d := l.Args[i].Data; d != nil {
			widest = max(widest, d.Type.Size())
		}
	}
	if widest == 0 {
		widest = 8
	}
	lanes := LaneWidths[0] // at least, however narrow the vectors
	for _, n := range LaneWidths {
		if n*widest <= vectorBytes {
			lanes = max(lanes, n)
		}
	}
	return lanes
}
