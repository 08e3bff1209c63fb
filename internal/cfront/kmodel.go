package cfront

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/core"
)

// This file is the kernel model's file-scope part: what the generators
// need to know of a kernel's source beyond its definition's parameters
// (csig.go) — the functions it defines and declares, the calls between
// them, its typedef names and declared types, the macros it defines, the
// headers it includes, its attributes and file-scope const tables — and
// its body with the macros expanded (KernelBody). Every position is a
// byte offset into the source read, so that generators can edit it in
// place and keep its lines. A kernel's model is read once, on first use,
// and kept with its KernelInfo (Model, Body, CountOps).

// FuncDecl is a function definition or prototype at the top level of the
// source.
type FuncDecl struct {
	Name                string
	NameAt              int
	ListStart, ListEnd  int      // Src[ListStart:ListEnd] is the text between the parentheses
	BodyOpen, BodyClose int      // Src[BodyOpen] is '{', Src[BodyClose] '}'; -1 for a prototype
	Params              []string // parameter names ("" when unnamed)
	EmptyList, Defined  bool
}

// Call is a call of a function the source defines (or, in
// SourceModel.MathCalls, of a math.h function): Src[NameAt:] starts with
// the name, Src[Open] is the '(' and Empty says there is nothing between
// the parentheses.
type Call struct {
	Name   string
	NameAt int
	Open   int
	Empty  bool
	// Outside says the call is outside the bodies of the file-scope
	// functions (C++: in a namespace or a member function).
	Outside bool
}

// Include is an #include directive naming a header: Src[Start:End] is
// the directive from its '#' to the header name's closing character.
type Include struct {
	Header     string
	Start, End int
}

// SourceModel is what the generators know about a kernel's source as a
// whole (ReadSource). Every directive counts, whatever branch of a
// conditional it is in: the generators edit the text, and an edit in a
// branch the compiler skips changes nothing.
type SourceModel struct {
	Src  string
	Code string // Src with comments, literals, directives and attributes blanked
	// Tokens are Code's tokens.
	Tokens []clex.Token
	// SrcTokens are the tokens of Src with comments, literals and
	// attributes blanked (directives kept).
	SrcTokens []clex.Token
	Defs      []FuncDecl
	Protos    []FuncDecl
	Calls     []Call
	// MathCalls are the calls, in function bodies, of math.h functions
	// whose parameters are all double (and that the source does not
	// define or declare itself).
	MathCalls []Call
	// MacroMathCalls are the names of the math.h functions (as
	// MathCalls) that #define replacement texts call.
	MacroMathCalls []string
	Defined        map[string]bool // names of the functions the source defines
	Typedefs       map[string]bool // the last name each typedef declares
	// DeclaredTypes are the type names the source declares: every name
	// its typedefs declare, the tags of the structs, unions, enums and
	// classes it defines and C++ aliases (using name = ...).
	DeclaredTypes []string
	// DeclaredAt[i] is the offset of the name DeclaredTypes[i] where it
	// is declared (a name declared twice is listed twice).
	DeclaredAt []int
	// Names are the identifiers of Code, the parts of a.b counted alone.
	Names  map[string]bool
	Macros []string // names the source #defines, in order, once each
	// MacroDefs are the source's #defines, in order: each name with the
	// offset of its directive's '#'.
	MacroDefs []MacroDef
	// Called are the identifiers followed by '(' anywhere in the source
	// but comments and literals (directives included).
	Called map[string]bool
	// Outside is Code with the file-scope functions' names, parameter
	// lists and bodies (and the prototypes' names and lists) blanked:
	// what C++ has outside them (namespaces, structs' member functions).
	Outside string
	// OutsideIdents are the identifiers of Outside.
	OutsideIdents map[string]bool
	// BodyIdents[i] are the identifiers of Defs[i]'s body; MacroIdents
	// those of every #define's replacement text.
	BodyIdents  []map[string]bool
	MacroIdents map[string]bool
	Includes    []Include
	StdAttrs    [][2]int // spans of [[...]] attributes
	// ConstTables are the positions of file-scope declarations of const
	// variables with initialisers (lookup tables).
	ConstTables []int
	// ConstPtrs are the positions just after the '*' of such declarations
	// that declare pointers (const char *msg = "...").
	ConstPtrs []int
}

// reading is what the front end keeps of a kernel's source on its
// KernelInfo (core.KernelInfo.Front): what the reader made of Source (its
// directives read; Source with comments blanked), which ExpandedBody
// reuses, and the rest of the kernel's model, read on first use (Model,
// Body, CountOps).
type reading struct {
	pp    *preprocessed
	lit   string
	model kernelModel
}

// readingOf returns the front end's reading kept on k, or nil for a
// KernelInfo that ParseKernel did not make.
func readingOf(k *core.KernelInfo) *reading {
	r, _ := k.Front.(*reading)
	return r
}

// kernelModel holds the parts of a kernel's model read on first use.
type kernelModel struct {
	srcOnce  sync.Once
	src      *SourceModel
	srcErr   error
	bodyOnce sync.Once
	body     *KernelBody
	bodyErr  error
	opsOnce  sync.Once
	ops      Ops
}

// Ops is what a kernel's code computes, counted in its source
// (CountOps): in the kernel's body and in the bodies of the
// functions its source defines that it calls, directly or through
// others, with their macros expanded. Functions it does not call (the
// other kernels of a source that defines several) do not count.
type Ops struct {
	// Divisions counts the / operators (in /= too).
	Divisions int
	// Calls counts the calls of each function the source neither
	// defines nor declares (math.h's; C++'s std::exp by its last name).
	Calls map[string]int
	// Branches counts the tokens that may make code conditional: if,
	// ?, switch, while, do, &&, || and goto.
	Branches int
	// LoopCalls counts, of Calls, those in a for statement (its header
	// or its body).
	LoopCalls map[string]int
}

// callLike are the keywords a parenthesis may follow that Ops.Calls does
// not count as calls.
var callLike = map[string]bool{"for": true, "return": true, "sizeof": true, "_Alignof": true, "alignof": true,
	"_Static_assert": true, "static_assert": true, "_Generic": true, "typeof": true, "__typeof__": true, "__attribute__": true}

// branchTokens are the tokens Ops.Branches counts.
var branchTokens = map[string]bool{"if": true, "?": true, "switch": true, "while": true, "do": true, "&&": true, "||": true, "goto": true}

// CountOps returns the Ops of the kernel k describes, read on the first
// call and kept. A source the model cannot read counts nothing. Where a body cannot be
// expanded (ExpandedBody's errors), the whole source counts as written:
// the kernel's body expanded when it can be, every function the source
// defines, and a call of each math.h function that a macro's replacement
// text calls (SourceModel.MacroMathCalls).
func CountOps(k *core.KernelInfo) Ops {
	r := readingOf(k)
	if r == nil {
		return readOps(k)
	}
	m := &r.model
	m.opsOnce.Do(func() { m.ops = readOps(k) })
	return m.ops
}

func readOps(k *core.KernelInfo) Ops {
	o := Ops{Calls: map[string]int{}, LoopCalls: map[string]int{}}
	m, err := Model(k)
	if err != nil {
		return o
	}
	count := func(toks []clex.Token) {
		loop := inForStatements(toks)
		for i, t := range toks {
			switch {
			case t.Text == "/":
				o.Divisions++
			case branchTokens[t.Text]:
				o.Branches++
			case i+1 < len(toks) && toks[i+1].Text == "(" && clex.IsIdentStart(t.Text[0]) && !callLike[t.Text] && !m.Defined[t.Text] && !m.Declares(t.Text):
				o.Calls[t.Text]++
				if loop[i] {
					o.LoopCalls[t.Text]++
				}
			}
		}
	}
	if bodies, ok := reachedBodies(k, m); ok {
		for _, toks := range bodies {
			count(toks)
		}
		return o
	}
	body, err := Body(k)
	if err == nil {
		count(body.Tokens)
	}
	for _, d := range m.Defs {
		if err == nil && d.BodyOpen == k.BodyOpen {
			continue // counted expanded
		}
		lo, _ := slices.BinarySearchFunc(m.Tokens, d.BodyOpen, func(t clex.Token, at int) int { return t.Start - at })
		hi, _ := slices.BinarySearchFunc(m.Tokens, d.BodyClose, func(t clex.Token, at int) int { return t.Start - at })
		count(m.Tokens[lo:hi])
	}
	for _, name := range m.MacroMathCalls {
		o.Calls[name]++
	}
	return o
}

// inForStatements reports, for each of toks, whether it is in a for
// statement: its header, or its body (a block, another for statement,
// or a statement up to its semicolon; an if, while or do body ends
// there too, which only makes the span shorter).
func inForStatements(toks []clex.Token) []bool {
	in := make([]bool, len(toks))
	// end returns the index of the last token of the statement that
	// starts at token i.
	var end func(i int) int
	end = func(i int) int {
		switch {
		case i >= len(toks):
			return len(toks) - 1
		case toks[i].Text == "{":
			if c := closeOf(toks, i); c >= 0 {
				return c
			}
			return len(toks) - 1
		case toks[i].Text == "for":
			if h := closeOf(toks, i+1); h >= 0 {
				return end(h + 1)
			}
			return len(toks) - 1
		}
		for j, depth := i, 0; j < len(toks); j++ {
			switch toks[j].Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case ";":
				if depth == 0 {
					return j
				}
			}
		}
		return len(toks) - 1
	}
	for i, t := range toks {
		if t.Text != "for" || in[i] {
			continue
		}
		last := end(i)
		for j := i; j <= last; j++ {
			in[j] = true
		}
	}
	return in
}

// closeOf returns the index of the token closing the bracket at toks[i]
// ('(', '[' or '{'), or -1.
func closeOf(toks []clex.Token, i int) int {
	if i >= len(toks) {
		return -1
	}
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// reachedBodies returns the tokens of the kernel's body and of the bodies
// of the functions source model m defines that it calls, directly or
// through others (every definition of a name that a call names, C++'s
// overloads too), each with its macros expanded; false when one cannot
// be expanded.
func reachedBodies(k *core.KernelInfo, m *SourceModel) ([][]clex.Token, bool) {
	body, err := Body(k)
	if err != nil {
		return nil, false
	}
	out := [][]clex.Token{body.Tokens}
	seen := map[int]bool{}
	for i, d := range m.Defs {
		seen[i] = d.BodyOpen == k.BodyOpen
	}
	for next := 0; next < len(out); next++ {
		toks := out[next]
		for i, t := range toks {
			if i+1 >= len(toks) || toks[i+1].Text != "(" || !m.Defined[t.Text] {
				continue
			}
			for j, d := range m.Defs {
				if d.Name != t.Text || seen[j] {
					continue
				}
				seen[j] = true
				text, err := expandedSpan(k, d.BodyOpen, d.BodyClose, d.Name+"'s body")
				if err != nil {
					return nil, false
				}
				out = append(out, clex.Tokenize(clex.Blank(text, true, nil)))
			}
		}
	}
	return out, true
}

// Model returns the model of the whole source of the kernel k describes
// (ReadSource of k.Source), read on the first call and kept.
func Model(k *core.KernelInfo) (*SourceModel, error) {
	r := readingOf(k)
	if r == nil {
		return ReadSource(k.Source)
	}
	m := &r.model
	m.srcOnce.Do(func() { m.src, m.srcErr = ReadSource(k.Source) })
	return m.src, m.srcErr
}

// KernelBody is the kernel's body as the compiler sees it.
type KernelBody struct {
	// Directive says a line of the body as written is a preprocessor
	// directive.
	Directive bool
	// Text is the body, from its opening brace to its closing one, with
	// every macro invocation expanded (ExpandedBody).
	Text string
	// Code is Text with comments and literals blanked, and Tokens its
	// tokens.
	Code   string
	Tokens []clex.Token
}

// Body returns the body (KernelBody) of the kernel k describes, read on
// the first call and kept. The error is ExpandedBody's.
func Body(k *core.KernelInfo) (*KernelBody, error) {
	r := readingOf(k)
	if r == nil {
		return readBody(k)
	}
	m := &r.model
	m.bodyOnce.Do(func() { m.body, m.bodyErr = readBody(k) })
	return m.body, m.bodyErr
}

func readBody(k *core.KernelInfo) (*KernelBody, error) {
	b := &KernelBody{}
	blanked := k.Blanked
	if len(blanked) != len(k.Source) {
		blanked = clex.Blank(k.Source, true, nil)
	}
	raw := blanked[k.BodyOpen : k.BodyClose+1]
	for _, line := range strings.Split(raw, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.Directive = true
			break
		}
	}
	text, err := ExpandedBody(k)
	if err != nil {
		return b, err
	}
	b.Text = text
	b.Code = clex.Blank(text, true, nil)
	b.Tokens = clex.Tokenize(b.Code)
	return b, nil
}

// ReadSource reads C source src (see SourceModel). It returns an error
// when its parentheses or braces do not balance.
func ReadSource(src string) (*SourceModel, error) {
	withDirectives := clex.Blank(src, true, isIncludeName)
	plain := blankDirectives(withDirectives)
	code, _ := blankLinkageBlocks(clex.BlankAttributes(plain))
	u := &SourceModel{Src: src, Code: code, StdAttrs: stdAttributeSpans(plain), Defined: map[string]bool{}, Typedefs: map[string]bool{}, MacroIdents: map[string]bool{},
		Called: map[string]bool{}, Names: map[string]bool{}}
	u.Tokens = clex.Tokenize(code)
	u.SrcTokens = clex.Tokenize(clex.BlankAttributes(clex.Blank(src, true, nil)))
	for _, t := range clex.Tokenize(withDirectives) {
		if !clex.IsIdentStart(t.Text[0]) {
			continue
		}
		if k := clex.SkipSpace(withDirectives, t.End); k < len(withDirectives) && withDirectives[k] == '(' {
			// a.f( as one token: f is called.
			u.Called[t.Text[strings.LastIndexByte(t.Text, '.')+1:]] = true
		}
	}
	u.readTypes()

	// Directives: macros defined, headers included, and the identifiers
	// of macro replacement texts.
	seen := map[string]bool{}
	var macroBodies [][2]int
	for _, d := range directives(withDirectives) {
		line := withDirectives[d[0]:d[1]]
		dir := readDirective(line)
		switch dir.name {
		case "include":
			if dir.header >= 0 {
				u.Includes = append(u.Includes, Include{Header: line[dir.header:dir.headerEnd], Start: d[0] + dir.hash, End: d[0] + dir.headerEnd + 1})
			}
			continue
		case "define":
		default:
			continue
		}
		if dir.macro == "" {
			continue
		}
		if !seen[dir.macro] {
			seen[dir.macro] = true
			u.Macros = append(u.Macros, dir.macro)
		}
		u.MacroDefs = append(u.MacroDefs, MacroDef{Name: dir.macro, At: d[0] + dir.hash})
		body := dir.body
		if dir.funcLike { // skip the parameter list
			if e := strings.IndexByte(line[body:], ')'); e >= 0 {
				body += e + 1
			}
		}
		macroBodies = append(macroBodies, [2]int{d[0] + body, d[1]})
		for _, id := range clex.Identifiers(line[body:]) {
			u.MacroIdents[id] = true
		}
	}

	// Top-level declarations.
	stmt := 0       // where the current top-level declaration starts
	inInit := false // in a declarator's initializer: a name and '(' there is a call
	for i := 0; i < len(code); {
		c := code[i]
		switch {
		case c == '=':
			inInit = inInit || initializerAt(code, i)
			i++
		case c == ',':
			inInit = false
			i++
		case c == ';':
			inInit = false
			if isConstTable(code[stmt:i]) {
				u.ConstTables = append(u.ConstTables, clex.SkipSpace(code, stmt))
				if star := lastTopStar(code[stmt:i]); star >= 0 {
					// const char *msg = "...": the pointer itself is
					// declared too.
					u.ConstPtrs = append(u.ConstPtrs, stmt+star+1)
				}
			}
			i++
			stmt = i
		case clex.IsIdentStart(c):
			j := i
			for j < len(code) && clex.IsIdentChar(code[j]) {
				j++
			}
			name := code[i:j]
			if name == "template" {
				// template <int N = 3>: a default, not an initializer.
				if k := clex.SkipSpace(code, j); k < len(code) && code[k] == '<' {
					i = templateParamsEnd(code, k)
					continue
				}
			}
			if name == "typedef" {
				end, last := typedefEnd(code, j)
				if last != "" {
					u.Typedefs[last] = true
				}
				i, stmt = end, end
				continue
			}
			k := clex.SkipSpace(code, j)
			if inInit && k < len(code) && code[k] == '<' {
				// = T<int, int>::f(cbrt(1.0)): the commas of a template's
				// arguments end no initializer.
				if end := templateArgsEnd(code, k); end > 0 {
					i = end
					continue
				}
			}
			if k >= len(code) || code[k] != '(' {
				i = j
				continue
			}
			end := clex.MatchParen(code, k)
			if end < 0 {
				return nil, fmt.Errorf("unbalanced parentheses after %q", name)
			}
			if inInit {
				// static const double c = cbrt(3.0); calls cbrt and
				// declares nothing of that name. A body after the list
				// is a definition's: the initializer's end was missed (a
				// macro's ';', a default argument's '='), and ends here.
				if m := clex.SkipSpace(code, end+1); m >= len(code) || code[m] != '{' {
					i = end + 1
					continue
				}
				inInit = false
			}
			f := FuncDecl{Name: name, NameAt: i, ListStart: k + 1, ListEnd: end, BodyOpen: -1, BodyClose: -1}
			list := strings.TrimSpace(code[k+1 : end])
			f.EmptyList = list == "" || list == "void"
			f.Params = paramNames(code[k+1 : end])
			m := clex.SkipSpace(code, end+1)
			if m < len(code) && code[m] != '{' && code[m] != ';' && code[m] != ',' {
				// C++'s noexcept, throw(...) or -> T, or the source's
				// macros, before the body or the declaration's end.
				t := readDeclTail(code, end+1)
				known := t.end >= 0 && (t.unread < 0 || clex.IsIdentStart(code[t.unread])) &&
					!slices.ContainsFunc(t.words, func(w string) bool { return !seen[w] })
				switch {
				case t.try && known && code[t.end] == '{':
					// A function-try-block: no body of one block; it and
					// its handlers are read as code outside the
					// functions.
					if e := tryBlockEnd(code, t.end); e > 0 {
						i, stmt = e, e
						continue
					}
				case known && (t.unread < 0 || code[t.end] == '{'):
					m = t.end
				}
			}
			switch {
			case m < len(code) && code[m] == '{':
				close := clex.MatchBrace(code, m)
				if close < 0 {
					return nil, fmt.Errorf("unbalanced braces in the body of %q", name)
				}
				f.BodyOpen, f.BodyClose, f.Defined = m, close, true
				u.Defs = append(u.Defs, f)
				u.Defined[name] = true
				i, stmt = close+1, close+1
			case m < len(code) && (code[m] == ';' || code[m] == ','):
				u.Protos = append(u.Protos, f)
				i = m + 1
				if code[m] == ';' {
					stmt = i
				}
			default:
				i = end + 1 // e.g. __attribute__((...)) before a declaration
			}
		case c == '{':
			close := clex.MatchBrace(code, i)
			if close < 0 {
				return nil, fmt.Errorf("unbalanced braces")
			}
			i = close + 1
		case c >= '0' && c <= '9':
			for i < len(code) && (clex.IsIdentChar(code[i]) || code[i] == '.') {
				i++
			}
		default:
			i++
		}
	}

	// Calls of the defined functions, in bodies and in macro replacement
	// texts (where a macro is expanded inside a body).
	for _, f := range u.Defs {
		body := code[f.BodyOpen+1 : f.BodyClose]
		u.BodyIdents = append(u.BodyIdents, setOf(clex.Identifiers(body)))
		u.Calls = append(u.Calls, findCalls(code, f.BodyOpen+1, f.BodyClose, u.Defined)...)
		for _, c := range findCalls(code, f.BodyOpen+1, f.BodyClose, doubleMath) {
			if !u.Defined[c.Name] && !u.Declares(c.Name) {
				u.MathCalls = append(u.MathCalls, c)
			}
		}
	}
	// Calls at file scope outside the functions' bodies: in C++, in
	// namespaces' functions and structs' member functions.
	outside := []byte(code)
	blank := func(from, to int) {
		for i := max(from, 0); i < to && i < len(outside); i++ {
			if outside[i] != '\n' {
				outside[i] = ' '
			}
		}
	}
	for _, f := range append(slices.Clone(u.Defs), u.Protos...) {
		blank(f.NameAt, f.NameAt+len(f.Name))
		blank(f.ListStart, f.ListEnd)
		if f.BodyOpen >= 0 {
			blank(f.BodyOpen+1, f.BodyClose)
		}
	}
	u.Outside = string(outside)
	u.OutsideIdents = setOf(clex.Identifiers(u.Outside))
	for _, c := range findCalls(u.Outside, 0, len(outside), u.Defined) {
		if declaredAfterType(code, c.NameAt) {
			continue // a member function's declaration, named like a function of the file scope
		}
		c.Outside = true
		u.Calls = append(u.Calls, c)
	}
	for _, b := range macroBodies {
		u.Calls = append(u.Calls, findCalls(withDirectives, b[0], b[1], u.Defined)...)
		for _, c := range findCalls(withDirectives, b[0], b[1], doubleMath) {
			if !u.Defined[c.Name] && !u.Declares(c.Name) {
				u.MacroMathCalls = append(u.MacroMathCalls, c.Name)
			}
		}
	}
	return u, nil
}

// tryBlockEnd returns the offset after the last handler of the
// function-try-block whose block opens at code[open] ('{'): after the
// block, catch (...) { ... } as many times as written; -1 when a brace
// or parenthesis does not close.
func tryBlockEnd(code string, open int) int {
	end := clex.MatchBrace(code, open)
	if end < 0 {
		return -1
	}
	for {
		k := clex.SkipSpace(code, end+1)
		if !strings.HasPrefix(code[k:], "catch") || k+5 < len(code) && clex.IsIdentChar(code[k+5]) {
			return end + 1
		}
		p := clex.SkipSpace(code, k+5)
		if p >= len(code) || code[p] != '(' {
			return end + 1
		}
		q := clex.MatchParen(code, p)
		if q < 0 {
			return -1
		}
		b := clex.SkipSpace(code, q+1)
		if b >= len(code) || code[b] != '{' {
			return end + 1
		}
		if end = clex.MatchBrace(code, b); end < 0 {
			return -1
		}
	}
}

// initializerAt reports whether the '=' at code[i], at file scope,
// starts a declarator's initializer: not part of ==, >=, += and the like,
// nor C++'s operator= (whose definition's body follows).
func initializerAt(code string, i int) bool {
	if i+1 < len(code) && code[i+1] == '=' || i > 0 && strings.IndexByte("=!<>+-*/%&|^", code[i-1]) >= 0 {
		return false
	}
	before := strings.TrimRight(code[:i], " \t\n\r")
	name := strings.TrimSuffix(before, "operator")
	return len(name) == len(before) || name != "" && clex.IsIdentChar(name[len(name)-1])
}

// templateParamsEnd returns the offset after the '>' that closes the
// template parameter list opening at code[open] ('<'), counting nested
// angle brackets (each '>' of a ">>" closes one; "<<" and "<=" open
// none) outside parentheses, or open+1 when none closes it.
func templateParamsEnd(code string, open int) int {
	depth := 0
	for i := open; i < len(code); i++ {
		switch code[i] {
		case '<':
			if i > open && i+1 < len(code) && (code[i+1] == '<' || code[i+1] == '=') {
				i++ // << and <= (and <<=)
				continue
			}
			depth++
		case '>':
			if depth--; depth == 0 {
				return i + 1
			}
		case '(':
			if end := clex.MatchParen(code, i); end > i {
				i = end
			}
		}
	}
	return open + 1
}

// templateArgsEnd returns the offset after the '>' that closes the
// template argument list opening at code[open] ('<') in an initializer,
// when what follows it is "::", '(' or '{' (a template's name, not a
// comparison), and no ';', brace or initializer's '=' (b = m > (n): the
// '<' was a comparison) comes before it; otherwise -1.
func templateArgsEnd(code string, open int) int {
	if open+1 < len(code) && (code[open+1] == '<' || code[open+1] == '=') {
		return -1 // << and <=
	}
	end := templateParamsEnd(code, open)
	if end == open+1 || strings.ContainsAny(code[open:end], ";{}") {
		return -1
	}
	for i := open + 1; i < end-1; i++ {
		if code[i] == '=' && initializerAt(code, i) {
			return -1
		}
	}
	m := clex.SkipSpace(code, end)
	if m < len(code) && (code[m] == '(' || code[m] == '{') || strings.HasPrefix(code[m:], "::") {
		return end
	}
	return -1
}

// directive is what readDirective finds in a directive's line: offsets
// into the line.
type directive struct {
	hash int    // the '#'
	name string // "define", "include" or another directive's name
	// For #define: the macro's name, whether it is function-like (a '('
	// right after the name) and where what follows the name (and the
	// '(') starts.
	macro    string
	funcLike bool
	body     int
	// For #include: the span of the header's name between its < > or
	// quotes (header -1 when there is none).
	header, headerEnd int
}

// readDirective reads a directive's line (comments and literals but
// #include names blanked): blanks, '#', blanks and the directive's name;
// for #define, at least one blank and the macro's name; for #include,
// blanks and the header's name in < > or quotes.
func readDirective(line string) directive {
	d := directive{header: -1}
	i := skipBlanksTabs(line, 0)
	if i >= len(line) || line[i] != '#' {
		return d
	}
	d.hash = i
	i = skipBlanksTabs(line, i+1)
	j := i
	for j < len(line) && clex.IsIdentChar(line[j]) {
		j++
	}
	switch {
	case strings.HasPrefix(line[i:], "include"):
		d.name = "include"
		k := skipBlanksTabs(line, i+len("include"))
		if k < len(line) && (line[k] == '<' || line[k] == '"') {
			e := strings.IndexAny(line[k+1:], `>"`)
			if e >= 0 {
				d.header, d.headerEnd = k+1, k+1+e
			}
		}
	case line[i:j] == "define":
		d.name = "define"
		k := skipBlanksTabs(line, j)
		if k == j || k >= len(line) || !clex.IsIdentStart(line[k]) {
			return d
		}
		e := k
		for e < len(line) && clex.IsIdentChar(line[e]) {
			e++
		}
		d.macro, d.body = line[k:e], e
		if e < len(line) && line[e] == '(' {
			d.funcLike, d.body = true, e+1
		}
	default:
		d.name = line[i:j]
	}
	return d
}

// readTypes records the type names the source declares (DeclaredTypes)
// and the names it uses (Names).
func (u *SourceModel) readTypes() {
	toks := u.Tokens
	for _, t := range toks {
		for _, name := range strings.Split(t.Text, ".") { // a.b as one token: a, then a member
			if isIdentToken(name) {
				u.Names[name] = true
			}
		}
	}
	text := func(i int) string {
		if i < 0 || i >= len(toks) {
			return ""
		}
		return toks[i].Text
	}
	for i, t := range toks {
		switch t.Text {
		case "typedef":
			for _, j := range typedefNames(toks[i+1:]) {
				u.declare(toks[i+1+j])
			}
		case "struct", "union", "enum", "class":
			// A definition: the tag, then the body or (C++) a base
			// class or an enum's underlying type.
			if name, next := text(i+1), text(i+2); isIdentToken(name) && (next == "{" || next == ":" && text(i+3) != ":") {
				u.declare(toks[i+1])
			}
		case "using":
			if name := text(i + 1); isIdentToken(name) && text(i+2) == "=" {
				u.declare(toks[i+1])
			}
		}
	}
}

// declare records the type name t declares.
func (u *SourceModel) declare(t clex.Token) {
	u.DeclaredTypes = append(u.DeclaredTypes, t.Text)
	u.DeclaredAt = append(u.DeclaredAt, t.Start)
}

// typedefNames returns the indices in toks of the names the typedef
// declaration whose tokens follow its typedef keyword declares: the
// declarators' identifiers outside any braces, each followed by ',', ';',
// '[' or '=' outside parentheses, or by ')' after a '*' (a pointer to a
// function). A type the declaration only uses (typedef double3 vec;) is
// not one.
func typedefNames(toks []clex.Token) []int {
	var names []int
	braces, parens := 0, 0
	for j, t := range toks {
		switch t.Text {
		case "{":
			braces++
		case "}":
			braces--
		case "(", "[":
			parens++
		case ")", "]":
			parens--
		case ";":
			if braces == 0 && parens == 0 {
				return names
			}
		}
		if braces != 0 || !isIdentToken(t.Text) || j+1 >= len(toks) {
			continue
		}
		next := toks[j+1].Text
		switch {
		case parens == 0 && (next == "," || next == ";" || next == "[" || next == "="):
			names = append(names, j)
		case next == ")" && j > 0 && toks[j-1].Text == "*":
			names = append(names, j)
		}
	}
	return names
}

// isIdentToken reports whether token text t is an identifier.
func isIdentToken(t string) bool { return t != "" && clex.IsIdentStart(t[0]) }

// isConstTable reports whether the top-level declaration decl (without
// its ';') declares const variables with initialisers, outside any
// address space.
func isConstTable(decl string) bool {
	head, _, ok := strings.Cut(decl, "=")
	if !ok {
		return false
	}
	isConst := false
	depth := 0
	for i := 0; i < len(head); {
		switch c := head[i]; {
		case c == '{' || c == '(':
			depth++
		case c == '}' || c == ')':
			depth--
		case clex.IsIdentStart(c):
			j := i
			for j < len(head) && clex.IsIdentChar(head[j]) {
				j++
			}
			switch w := head[i:j]; {
			case depth > 0:
			case w == "const":
				isConst = true
			case w == "typedef" || w == "extern" || strings.Contains(w, "constant") || strings.Contains(w, "global") || strings.Contains(w, "local") || strings.Contains(w, "private"):
				return false
			}
			i = j
			continue
		}
		i++
	}
	return isConst
}

// PassedOn reports, for each parameter name of definition f, whether its
// body uses the parameter other than by reading or writing the values it
// points to: passing it (or a row of it) to a function or macro, taking
// an address, copying it into a pointer variable, pointer arithmetic. A
// parameter named in a macro's replacement text counts as passed on.
// depth is each parameter's pointer depth (2 for a vector argument).
func (u *SourceModel) PassedOn(f *FuncDecl, names []string, depth []int) []bool {
	out := make([]bool, len(names))
	body := u.Code[f.BodyOpen+1 : f.BodyClose]
	for i, name := range names {
		if name == "" {
			continue
		}
		if u.MacroIdents[name] {
			out[i] = true
			continue
		}
		for off := 0; !out[i]; {
			j := clex.IndexIdent(body[off:], name)
			if j < 0 {
				break
			}
			j += off
			off = j + len(name)
			// Dereferences before the name, subscripts after it.
			derefs := 0
			leftmost := byte(0) // the leftmost '*' or '(' before the name
			k := j - 1
			for k >= 0 && (body[k] == ' ' || body[k] == '\t' || body[k] == '\n' || body[k] == '\r' || body[k] == '*' || body[k] == '(') {
				if body[k] == '*' {
					derefs++
				}
				if body[k] == '*' || body[k] == '(' {
					leftmost = body[k]
				}
				k--
			}
			if k >= 0 && body[k] == '&' {
				out[i] = true // an address (or a logical and: be safe)
				break
			}
			if leftmost == '*' && k >= 0 && (body[k] == ')' && !endsCondition(body, k) || body[k] == ']' || clex.IsIdentChar(body[k]) && !unaryBefore[wordBefore(body, k+1)]) {
				derefs-- // the first '*' multiplies: x * *p, f() * p
			}
			subs := 0
			e := clex.SkipSpace(body, off)
			for e < len(body) && body[e] == '[' {
				c := clex.MatchBracket(body, e)
				if c < 0 {
					break
				}
				subs++
				e = clex.SkipSpace(body, c+1)
			}
			if derefs+subs < depth[i] {
				out[i] = true
			}
		}
	}
	return out
}

// unaryBefore are the keywords after which '*' is a dereference.
var unaryBefore = map[string]bool{"return": true, "sizeof": true, "case": true, "else": true, "do": true}

// endsCondition reports whether the ')' at s[close] closes the condition of
// an if, while, for or switch, after which '*' starts a statement.
func endsCondition(s string, close int) bool {
	depth := 0
	for i := close; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				k := i
				for k > 0 && (s[k-1] == ' ' || s[k-1] == '\t' || s[k-1] == '\n' || s[k-1] == '\r') {
					k--
				}
				switch wordBefore(s, k) {
				case "if", "while", "for", "switch":
					return true
				}
				return false
			}
		}
	}
	return false
}

// wordBefore is the identifier or number that ends at s[end].
func wordBefore(s string, end int) string {
	start := end
	for start > 0 && clex.IsIdentChar(s[start-1]) {
		start--
	}
	return s[start:end]
}

// doubleMath are the math.h functions whose parameters are all double. In
// C an int or float argument is converted to double; OpenCL C overloads
// them for float and double, and a call with int arguments (hypot(3, 4))
// is ambiguous there.
var doubleMath = setOf(strings.Fields(`acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh
	exp exp2 expm1 log log10 log1p log2 logb cbrt fabs hypot pow sqrt erf erfc lgamma tgamma
	ceil floor nearbyint rint round trunc fmod remainder copysign nextafter fdim fmax fmin fma`))

// ArgSpans returns the argument spans [start, end) of the call whose
// opening parenthesis is at Code[open] (trimmed of blanks).
func (u *SourceModel) ArgSpans(open int) [][2]int {
	s := u.Code
	close := clex.MatchParen(s, open)
	if close < 0 {
		return nil
	}
	var spans [][2]int
	depth, start := 0, open+1
	add := func(end int) {
		a, b := clex.SkipSpace(s, start), end
		for b > a && (s[b-1] == ' ' || s[b-1] == '\t' || s[b-1] == '\n' || s[b-1] == '\r') {
			b--
		}
		if b > a {
			spans = append(spans, [2]int{a, b})
		}
	}
	for i := open + 1; i < close; i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				add(i)
				start = i + 1
			}
		}
	}
	add(close)
	return spans
}

// findCalls finds, in s[from:to], the identifiers in names followed by '('.
func findCalls(s string, from, to int, names map[string]bool) []Call {
	var out []Call
	for i := from; i < to; {
		c := s[i]
		switch {
		case clex.IsIdentStart(c):
			j := i
			for j < to && clex.IsIdentChar(s[j]) {
				j++
			}
			if names[s[i:j]] && !qualified(s, i) {
				if k := clex.SkipSpace(s, j); k < to && s[k] == '(' {
					e := clex.SkipSpace(s, k+1)
					out = append(out, Call{Name: s[i:j], NameAt: i, Open: k, Empty: e < len(s) && s[e] == ')'})
				}
			}
			i = j
		case c >= '0' && c <= '9':
			for i < to && (clex.IsIdentChar(s[i]) || s[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return out
}

// declaredAfterType reports whether the name at s[i] follows a type name
// (an identifier that is not a keyword a call may follow, such as return),
// which makes name(...) a declaration rather than a call.
func declaredAfterType(s string, i int) bool {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t' || s[j-1] == '\n') {
		j--
	}
	k := j
	for k > 0 && clex.IsIdentChar(s[k-1]) {
		k--
	}
	if k == j || !clex.IsIdentStart(s[k]) {
		return false
	}
	switch s[k:j] {
	case "return", "case", "else", "do", "throw", "co_return", "co_yield", "sizeof":
		return false
	}
	return true
}

// qualified reports whether the identifier at s[i] is a member (after .
// or ->) or qualified by a namespace or class (after ns:: or T<...>::),
// so that it does not name a function of the source's file scope.
func qualified(s string, i int) bool {
	j := i - 1
	for j >= 0 && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n') {
		j--
	}
	switch {
	case j >= 0 && s[j] == '.':
		return true
	case j >= 1 && s[j] == '>' && s[j-1] == '-':
		return true
	case j >= 1 && s[j] == ':' && s[j-1] == ':':
		k := j - 2
		for k >= 0 && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n') {
			k--
		}
		return k >= 0 && (clex.IsIdentChar(s[k]) || s[k] == '>')
	}
	return false
}

// typedefEnd returns the end of the typedef declaration that continues at
// i (just after the ';') and the last identifier declared at its top
// level: the new type's name.
func typedefEnd(s string, i int) (int, string) {
	depth := 0
	last := ""
	for i < len(s) {
		c := s[i]
		switch {
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ';' && depth == 0:
			return i + 1, last
		case clex.IsIdentStart(c):
			j := i
			for j < len(s) && clex.IsIdentChar(s[j]) {
				j++
			}
			if depth == 0 {
				last = s[i:j]
			}
			i = j
			continue
		}
		i++
	}
	return len(s), last
}

var paramQualifiers = map[string]bool{
	"const": true, "volatile": true, "restrict": true, "__restrict": true,
	"__restrict__": true, "register": true,
}

// paramNames returns the names of the parameters in a parameter list.
func paramNames(list string) []string {
	parts := clex.SplitList(list)
	var names []string
	for _, p := range parts {
		if i := strings.IndexByte(p, '['); i >= 0 {
			p = p[:i]
		}
		var words []string
		for _, w := range clex.Identifiers(p) {
			if !paramQualifiers[w] {
				words = append(words, w)
			}
		}
		if len(words) >= 2 {
			names = append(names, words[len(words)-1])
		} else {
			names = append(names, "")
		}
	}
	return names
}

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// Uses reports whether the source uses identifier id in a function body
// or a macro.
func (u *SourceModel) Uses(id string) bool {
	if u.MacroIdents[id] {
		return true
	}
	return slices.ContainsFunc(u.BodyIdents, func(m map[string]bool) bool { return m[id] })
}

// Declares reports whether the source defines id as a macro, a function
// (defined or declared) or a typedef name.
func (u *SourceModel) Declares(id string) bool {
	if slices.Contains(u.Macros, id) || u.Defined[id] || u.Typedefs[id] {
		return true
	}
	return slices.ContainsFunc(u.Protos, func(f FuncDecl) bool { return f.Name == id })
}

// MacroDef is a #define of the source: the macro's name and the offset
// of the directive's '#'.
type MacroDef struct {
	Name string
	At   int
}

// Predefined is what a compiler defines itself, as far as GoOP2 knows:
// the macros it certainly defines (whatever their values) and those it
// certainly does not. Other names reserved for the implementation
// (__GNUC__...) stay unknown.
type Predefined struct {
	Defined, Undefined []string
}

// Skipped returns the spans of the source (offsets into Src, in order)
// that a compiler defining p's macros does not compile: the lines of the
// groups of #if, #ifdef, #elif and #else whose conditions are false
// there, given the source's own #defines and #undefs before them, and
// the #defines and #undefs on those lines. Code in a group whose
// condition GoOP2 cannot evaluate (a macro a header may define) is not
// skipped. The error is a directive such a compiler would refuse in code
// it compiles.
func (u *SourceModel) Skipped(p Predefined) ([][2]int, error) {
	predef := make(map[string]ppIdent, len(p.Defined)+len(p.Undefined))
	for _, name := range p.Undefined {
		predef[name] = ppNotMacro
	}
	for _, name := range p.Defined {
		predef[name] = ppPredefined
	}
	pp, err := preprocessWith(clex.Blank(u.Src, true, nil), clex.Blank(u.Src, false, nil), predef)
	if err != nil {
		return nil, err
	}
	return pp.skipped, nil
}

// InSpans reports whether offset at is in one of spans (in order, as
// Skipped returns them).
func InSpans(spans [][2]int, at int) bool {
	i, _ := slices.BinarySearchFunc(spans, at, func(s [2]int, at int) int {
		switch {
		case s[1] <= at:
			return -1
		case s[0] > at:
			return 1
		}
		return 0
	})
	return i < len(spans) && spans[i][0] <= at && at < spans[i][1]
}

// isIncludeName reports whether src[i] is the '"' that opens the file name
// of an #include directive.
func isIncludeName(src string, i int) bool {
	if src[i] != '"' {
		return false
	}
	start := strings.LastIndexByte(src[:i], '\n') + 1
	// Blanks, '#', blanks, include, blanks: nothing else.
	line := src[start:i]
	k := skipBlanksTabs(line, 0)
	if k >= len(line) || line[k] != '#' {
		return false
	}
	k = skipBlanksTabs(line, k+1)
	if !strings.HasPrefix(line[k:], "include") {
		return false
	}
	return skipBlanksTabs(line, k+len("include")) == len(line)
}

// skipBlanksTabs returns the index of the first byte of s at or after i
// that is neither a space nor a tab.
func skipBlanksTabs(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// directives returns the spans of the preprocessor directives of s (whose
// comments are blanked), continuation lines included.
func directives(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); i++ {
		if s[i] != '#' || !clex.LineStart(s, i) {
			continue
		}
		j := clex.LogicalLineEnd(s, i)
		start := strings.LastIndexByte(s[:i], '\n') + 1
		out = append(out, [2]int{start, j})
		i = j
	}
	return out
}

// blankDirectives returns s with its preprocessor directives replaced by
// spaces.
func blankDirectives(s string) string {
	b := []byte(s)
	for _, d := range directives(s) {
		for k := d[0]; k < d[1]; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	return string(b)
}

// stdAttributeSpans returns the spans of the [[...]] attributes of code
// (clex.AttributeSpans).
func stdAttributeSpans(code string) [][2]int {
	var out [][2]int
	for _, sp := range clex.AttributeSpans(code) {
		if sp.Std {
			out = append(out, [2]int{sp.From, sp.To})
		}
	}
	return out
}

// lastTopStar returns the offset of the last '*' outside parentheses and
// braces before the '=' of declaration decl, or -1.
func lastTopStar(decl string) int {
	head, _, _ := strings.Cut(decl, "=")
	depth, star := 0, -1
	for i := 0; i < len(head); i++ {
		switch head[i] {
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
		case '*':
			if depth == 0 {
				star = i
			}
		}
	}
	return star
}

// HelperParams returns the parameters of def, a function the source of
// the kernel k describes defines (one of Model's Defs), read as the
// kernel's own are: types through the typedefs and macros in force at its
// definition.
func HelperParams(k *core.KernelInfo, def FuncDecl) []core.Param {
	rd := readingOf(k)
	if rd == nil || def.ListEnd > len(rd.pp.code) {
		return nil
	}
	pp := rd.pp
	code := clex.BlankAttributes(pp.code)
	r := &typeResolver{macros: pp.macrosAt(def.NameAt), typedefs: typedefs(code[:def.NameAt], pp)}
	return parseParams(code[def.ListStart:def.ListEnd], def.ListStart, r)
}

// memberIn reports whether every occurrence of identifier id in text
// follows '.' or "->" (a member's name, no function).
func memberIn(text, id string) bool {
	found := false
	for i := 0; ; {
		j := clex.IndexIdent(text[i:], id)
		if j < 0 {
			return found
		}
		j += i
		if before := strings.TrimRight(text[:j], " \t"); !strings.HasSuffix(before, ".") && !strings.HasSuffix(before, "->") {
			return false
		}
		found = true
		i = j + len(id)
	}
}

// Recursion returns a cycle of calls among the functions the source
// defines (["f", "g", "f"]: f calls g, which calls f), or nil. The calls
// are those its text spells (Calls) and those of the macros a function's
// body uses (their replacement texts naming a function, through other
// macros too, their parameters, members and literals aside). What lies
// in skipped (spans of groups the compiler skips, Skipped) is left out;
// definitions of one name in groups that cannot be decided are one
// function. A function pointer's calls are not seen.
func (m *SourceModel) Recursion(skipped [][2]int) []string {
	index := map[string]int{}
	var names []string
	live := func(at int) bool { return !InSpans(skipped, at) }
	for i := range m.Defs {
		if !live(m.Defs[i].NameAt) {
			continue
		}
		if _, ok := index[m.Defs[i].Name]; !ok {
			index[m.Defs[i].Name] = len(names)
			names = append(names, m.Defs[i].Name)
		}
	}
	calls := make([][]int, len(names))
	add := func(from, to int) {
		if !slices.Contains(calls[from], to) {
			calls[from] = append(calls[from], to)
		}
	}
	for _, c := range m.Calls {
		j, ok := index[c.Name]
		if !ok || c.Outside || !live(c.NameAt) {
			continue
		}
		for i := range m.Defs {
			if d := &m.Defs[i]; d.BodyOpen < c.NameAt && c.NameAt < d.BodyClose {
				add(index[d.Name], j)
			}
		}
	}
	// The functions each macro's replacement text names, through the
	// macros it names.
	macroText := map[string][]string{}
	for _, md := range m.MacroDefs {
		if !live(md.At) {
			continue
		}
		line := clex.Blank(m.Src[md.At:clex.LogicalLineEnd(m.Src, md.At)], true, nil)
		// The replacement text: after the name and any parameter list,
		// whose names are no calls.
		var params []string
		if k := strings.Index(line, md.Name); k >= 0 {
			line = line[k+len(md.Name):]
			if strings.HasPrefix(line, "(") {
				if e := strings.IndexByte(line, ')'); e >= 0 {
					params, line = clex.Identifiers(line[:e]), line[e+1:]
				}
			}
		}
		for _, id := range clex.Identifiers(line) {
			if !slices.Contains(params, id) && !memberIn(line, id) {
				macroText[md.Name] = append(macroText[md.Name], id)
			}
		}
	}
	var reach func(macro string, seen map[string]bool) []int
	reach = func(macro string, seen map[string]bool) []int {
		if seen[macro] {
			return nil
		}
		seen[macro] = true
		var out []int
		for _, id := range macroText[macro] {
			if j, ok := index[id]; ok {
				out = append(out, j)
			} else if _, ok := macroText[id]; ok && id != macro {
				out = append(out, reach(id, seen)...)
			}
		}
		return out
	}
	for i := range m.Defs {
		if !live(m.Defs[i].NameAt) {
			continue
		}
		for id := range m.BodyIdents[i] {
			if _, ok := macroText[id]; ok {
				for _, j := range reach(id, map[string]bool{}) {
					add(index[m.Defs[i].Name], j)
				}
			}
		}
	}
	callees := func(i int) []int {
		slices.Sort(calls[i])
		return calls[i]
	}
	// Depth-first search for a back edge; state 1 on the path, 2 done.
	state := make([]int, len(names))
	var path []int
	var visit func(i int) []string
	visit = func(i int) []string {
		state[i] = 1
		path = append(path, i)
		for _, j := range callees(i) {
			switch state[j] {
			case 1:
				var cycle []string
				for k := slices.Index(path, j); k < len(path); k++ {
					cycle = append(cycle, names[path[k]])
				}
				return append(cycle, names[j])
			case 0:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = 2
		return nil
	}
	for i := range names {
		if state[i] == 0 {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}
