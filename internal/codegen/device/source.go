package device

import (
	"fmt"
	"github.com/goop2/op2/internal/clex"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// This file reads the user's kernel source as far as the OpenCL generator
// needs to adapt it: the functions it defines and declares, the calls
// between them, its typedef names, the macros it defines and the standard
// headers it includes. Every position is an offset into the original
// source, so the source can be edited in place and keeps its lines.

// funcDecl is a function definition or prototype at the top level of the
// source.
type funcDecl struct {
	name                 string
	nameAt               int
	listStart, listEnd   int      // src[listStart:listEnd] is the text between the parentheses
	bodyOpen, bodyClose  int      // src[bodyOpen] is '{', src[bodyClose] '}'; -1 for a prototype
	params               []string // parameter names ("" when unnamed)
	emptyList, isDefined bool
}

// call is a call of a function the source defines: src[nameAt:] starts
// with the name, src[open] is the '(' and empty says there is nothing
// between the parentheses.
type call struct {
	name   string
	nameAt int
	open   int
	empty  bool
	// outside says the call is outside the bodies of the file-scope
	// functions (C++: in a namespace or a member function).
	outside bool
}

// userSource is what the generator knows about a kernel's source.
type userSource struct {
	src    string
	code   string // src with comments, literals and directives blanked
	defs   []funcDecl
	protos []funcDecl
	calls  []call
	// mathCalls are the calls, in function bodies, of math.h functions
	// whose parameters are all double (and that the source does not
	// define itself).
	mathCalls []call
	defined   map[string]bool // names of the functions the source defines
	typedefs  map[string]bool
	macros    []string // names the source #defines, in order, once each
	// outside is code with the file-scope functions' names, parameter
	// lists and bodies (and the prototypes' names and lists) blanked:
	// what C++ has outside them (namespaces, structs' member functions).
	outside string
	// bodyIdents[i] are the identifiers of defs[i]'s body; macroIdents
	// those of every #define's replacement text.
	bodyIdents  []map[string]bool
	macroIdents map[string]bool
	includes    [][2]int // spans of #include directives of headers OpenCL C provides
	stdAttrs    [][2]int // spans of [[...]] attributes, which OpenCL C does not accept
	// constTables are the positions of file-scope declarations of const
	// variables with initialisers (lookup tables): OpenCL C 1.2 wants
	// them in the __constant address space.
	constTables []int
	// constPtrs are the positions just after the '*' of such declarations
	// that declare pointers (const char *msg = "..."): the variable itself
	// must be in __constant, not only what it points to.
	constPtrs []int
	// renamed are the names the source declares that the dialect has
	// built in, which the device code renames (renameBuiltins).
	renamed map[string]bool
	// reserved are the names the source uses that the dialect reserves
	// (Dialect.Reserved), renamed everywhere (renameBuiltins).
	reserved map[string]bool
}

// builtinHeaders are the C headers whose content OpenCL C has built in (or
// the generated prelude supplies): their #include directives are dropped.
var builtinHeaders = map[string]bool{
	"math.h": true, "stdio.h": true, "stdint.h": true, "stdlib.h": true,
	"string.h": true, "stdbool.h": true, "float.h": true, "limits.h": true,
	"stddef.h": true,
	// Their C++ forms, included by C++ kernels (cuda; opencl refuses
	// C++), whose std:: names the CUDA prelude of C++ kernels declares.
	"cmath": true, "cstdio": true, "cstdint": true, "cstdlib": true,
	"cstring": true, "cfloat": true, "climits": true, "cstddef": true,
}

var (
	defineRE  = regexp.MustCompile(`^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)(\()?`)
	includeRE = regexp.MustCompile(`^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]*)[>"]`)
)

// scanSource reads src.
func scanSource(src string) (*userSource, error) {
	withDirectives := blankComments(src)
	plain := blankDirectives(withDirectives)
	code := clex.BlankAttributes(plain)
	u := &userSource{src: src, code: code, stdAttrs: stdAttributeSpans(plain, code), defined: map[string]bool{}, typedefs: map[string]bool{}, macroIdents: map[string]bool{}}

	// Directives: macros defined, standard headers included, and the
	// identifiers of macro replacement texts.
	seen := map[string]bool{}
	for _, d := range directives(withDirectives) {
		line := withDirectives[d[0]:d[1]]
		if m := includeRE.FindStringSubmatchIndex(line); m != nil {
			if builtinHeaders[line[m[2]:m[3]]] {
				u.includes = append(u.includes, [2]int{d[0] + m[0] + strings.IndexByte(line[m[0]:], '#'), d[0] + m[1]})
			}
			continue
		}
		m := defineRE.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		name := line[m[2]:m[3]]
		if !seen[name] {
			seen[name] = true
			u.macros = append(u.macros, name)
		}
		body := m[1]
		if m[4] >= 0 { // function-like: skip the parameter list
			if e := strings.IndexByte(line[body:], ')'); e >= 0 {
				body += e + 1
			}
		}
		for _, id := range clex.Identifiers(line[body:]) {
			u.macroIdents[id] = true
		}
	}

	// Top-level declarations.
	stmt := 0 // where the current top-level declaration starts
	for i := 0; i < len(code); {
		c := code[i]
		switch {
		case c == ';':
			if isConstTable(code[stmt:i]) {
				u.constTables = append(u.constTables, clex.SkipSpace(code, stmt))
				if star := lastTopStar(code[stmt:i]); star >= 0 {
					// const char *msg = "...": the pointer itself must be
					// in __constant too.
					u.constPtrs = append(u.constPtrs, stmt+star+1)
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
			if name == "typedef" {
				end, last := typedefEnd(code, j)
				if last != "" {
					u.typedefs[last] = true
				}
				i, stmt = end, end
				continue
			}
			k := clex.SkipSpace(code, j)
			if k >= len(code) || code[k] != '(' {
				i = j
				continue
			}
			end := clex.MatchParen(code, k)
			if end < 0 {
				return nil, fmt.Errorf("unbalanced parentheses after %q", name)
			}
			f := funcDecl{name: name, nameAt: i, listStart: k + 1, listEnd: end, bodyOpen: -1, bodyClose: -1}
			list := strings.TrimSpace(code[k+1 : end])
			f.emptyList = list == "" || list == "void"
			f.params = paramNames(code[k+1 : end])
			m := clex.SkipSpace(code, end+1)
			switch {
			case m < len(code) && code[m] == '{':
				close := clex.MatchBrace(code, m)
				if close < 0 {
					return nil, fmt.Errorf("unbalanced braces in the body of %q", name)
				}
				f.bodyOpen, f.bodyClose, f.isDefined = m, close, true
				u.defs = append(u.defs, f)
				u.defined[name] = true
				i, stmt = close+1, close+1
			case m < len(code) && (code[m] == ';' || code[m] == ','):
				u.protos = append(u.protos, f)
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
	for _, f := range u.defs {
		body := code[f.bodyOpen+1 : f.bodyClose]
		u.bodyIdents = append(u.bodyIdents, setOf(clex.Identifiers(body)))
		u.calls = append(u.calls, findCalls(code, f.bodyOpen+1, f.bodyClose, u.defined)...)
		for _, c := range findCalls(code, f.bodyOpen+1, f.bodyClose, doubleMath) {
			if !u.defined[c.name] && !u.declares(c.name) {
				u.mathCalls = append(u.mathCalls, c)
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
	for _, f := range append(slices.Clone(u.defs), u.protos...) {
		blank(f.nameAt, f.nameAt+len(f.name))
		blank(f.listStart, f.listEnd)
		if f.bodyOpen >= 0 {
			blank(f.bodyOpen+1, f.bodyClose)
		}
	}
	u.outside = string(outside)
	for _, c := range findCalls(u.outside, 0, len(outside), u.defined) {
		if declaredAfterType(code, c.nameAt) {
			continue // a member function's declaration, named like a function of the file scope
		}
		c.outside = true
		u.calls = append(u.calls, c)
	}
	for _, d := range directives(withDirectives) {
		line := withDirectives[d[0]:d[1]]
		m := defineRE.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		body := m[1]
		if m[4] >= 0 {
			if e := strings.IndexByte(line[body:], ')'); e >= 0 {
				body += e + 1
			}
		}
		u.calls = append(u.calls, findCalls(withDirectives, d[0]+body, d[1], u.defined)...)
	}
	return u, nil
}

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

// passedOn reports, for each parameter name of definition f, whether its
// body uses the parameter other than by reading or writing the values it
// points to: passing it (or a row of it) to a function or macro, taking
// an address, copying it into a pointer variable, pointer arithmetic. A
// parameter named in a macro's replacement text counts as passed on.
// depth is each parameter's pointer depth (2 for a vector argument).
func (u *userSource) passedOn(f *funcDecl, names []string, depth []int) []bool {
	out := make([]bool, len(names))
	body := u.code[f.bodyOpen+1 : f.bodyClose]
	for i, name := range names {
		if name == "" {
			continue
		}
		if u.macroIdents[name] {
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
				c := matchBracket(body, e)
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

func matchBracket(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// doubleMath are the math.h functions whose parameters are all double. In
// C an int or float argument is converted to double; OpenCL C overloads
// them for float and double, and a call with int arguments (hypot(3, 4))
// is ambiguous there. The adapter converts their arguments to double, so
// they mean what they mean in C.
var doubleMath = setOf(strings.Fields(`acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh
	exp exp2 expm1 log log10 log1p log2 logb cbrt fabs hypot pow sqrt erf erfc lgamma tgamma
	ceil floor nearbyint rint round trunc fmod remainder copysign nextafter fdim fmax fmin fma`))

// argSpans returns the argument spans [start, end) of the call whose
// opening parenthesis is at s[open] (trimmed of blanks).
func argSpans(s string, open int) [][2]int {
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
func findCalls(s string, from, to int, names map[string]bool) []call {
	var out []call
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
					out = append(out, call{name: s[i:j], nameAt: i, open: k, empty: e < len(s) && s[e] == ')'})
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

// uses reports whether the source uses identifier id in a function body
// or a macro.
func (u *userSource) uses(id string) bool {
	if u.macroIdents[id] {
		return true
	}
	return slices.ContainsFunc(u.bodyIdents, func(m map[string]bool) bool { return m[id] })
}

// declares reports whether the source defines id as a macro, a function
// (defined or declared) or a typedef name.
func (u *userSource) declares(id string) bool {
	if slices.Contains(u.macros, id) || u.defined[id] || u.typedefs[id] {
		return true
	}
	return slices.ContainsFunc(u.protos, func(f funcDecl) bool { return f.name == id })
}

// edit replaces src[at:end] with text.
type edit struct {
	at, end int
	text    string
}

// applyEdits applies non-overlapping edits to s.
func applyEdits(s string, edits []edit) string {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	var b strings.Builder
	pos := 0
	for _, e := range edits {
		b.WriteString(s[pos:e.at])
		b.WriteString(e.text)
		pos = e.end
	}
	b.WriteString(s[pos:])
	return b.String()
}

// blankComments returns src with comments and the contents of string and
// character literals replaced by spaces, but for #include file names;
// every other byte, and every newline, stays where it was.
func blankComments(src string) string { return clex.Blank(src, true, isIncludeName) }

// isIncludeName reports whether src[i] is the '"' that opens the file name
// of an #include directive.
func isIncludeName(src string, i int) bool {
	if src[i] != '"' {
		return false
	}
	start := strings.LastIndexByte(src[:i], '\n') + 1
	return includePrefixRE.MatchString(src[start:i])
}

var includePrefixRE = regexp.MustCompile(`^[ \t]*#[ \t]*include[ \t]*$`)

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

// stdAttributeSpans returns the spans of the [[...]] attributes of plain
// that clex.BlankAttributes blanked in code.
func stdAttributeSpans(plain, code string) [][2]int {
	var out [][2]int
	for i := 0; i+1 < len(plain); i++ {
		if plain[i] != '[' || plain[i+1] != '[' || code[i] != ' ' {
			continue
		}
		depth, j := 0, i
		for ; j < len(plain); j++ {
			if plain[j] == '[' {
				depth++
			} else if plain[j] == ']' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		if j >= len(plain) {
			break
		}
		out = append(out, [2]int{i, j + 1})
		i = j
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
