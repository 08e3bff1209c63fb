package cfront

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/core"
)

// This file expands the macros of a kernel source where the kernel's
// definition comes from them: a function-like macro that writes the
// definition's head (#define DEF(name) void name(double *x), then
// DEF(k) { ... }), or parameters written by macros. The compiler reads
// the definition through the macros; so does the reader, by expanding the
// invocations with C's rules (argument pre-expansion, # and ##, rescanning
// with the names being expanded hidden, variadic arguments) and putting
// the expansion in the invocation's place in the source. The result is the
// program the compiler reads: an expansion is put in place only when it
// leaves no name of the source's macros, which the compiler would expand
// again (a macro that names itself); otherwise the kernel is refused with
// a message saying which macro and why.

// maxExpansionSteps bounds the macro replacements of one expansion.
const maxExpansionSteps = 10000

// mtok is a preprocessing token.
type mtok struct {
	s     string
	kind  byte // 'i' identifier, 'n' number, 's' string or character literal, 'p' punctuator, 'm' placemarker
	space bool // preceded by white space
	hide  []string
}

// punctuators are C's multi-character punctuators, longest first, and C++'s ::.
var punctuators = []string{"...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "::"}

// splitTokens splits s (comments already blanked) into preprocessing tokens.
func splitTokens(s string) []mtok {
	var out []mtok
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '\\':
			space = true
			i++
			continue
		case clex.IsIdentStart(c):
			j := i
			for j < len(s) && clex.IsIdentChar(s[j]) {
				j++
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') && slices.Contains([]string{"L", "u", "U", "u8"}, s[i:j]) || clex.RawStringEnd(s, j) > j {
				j = literalEnd(s, j)
				out = append(out, mtok{s: s[i:j], kind: 's', space: space})
			} else {
				out = append(out, mtok{s: s[i:j], kind: 'i', space: space})
			}
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i + 1
			for j < len(s) {
				if (s[j] == '+' || s[j] == '-') && strings.ContainsRune("eEpP", rune(s[j-1])) {
					j++
					continue
				}
				if !clex.IsIdentChar(s[j]) && s[j] != '.' && !clex.DigitSeparator(s, j) {
					break
				}
				j++
			}
			out = append(out, mtok{s: s[i:j], kind: 'n', space: space})
			i = j
		case c == '"' || c == '\'':
			j := literalEnd(s, i)
			out = append(out, mtok{s: s[i:j], kind: 's', space: space})
			i = j
		default:
			p := s[i : i+1]
			for _, q := range punctuators {
				if strings.HasPrefix(s[i:], q) {
					p = q
					break
				}
			}
			out = append(out, mtok{s: p, kind: 'p', space: space})
			i += len(p)
		}
		space = false
	}
	return out
}

// literalEnd returns the end of the string or character literal whose
// opening quote is s[i]: after what ends it (clex.LiteralEnd).
func literalEnd(s string, i int) int { return min(clex.LiteralEnd(s, i)+1, len(s)) }

// renderTokens writes tokens as C text: a space where the source had
// white space, and wherever two tokens would otherwise run into one.
func renderTokens(ts []mtok) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && (t.space || mergeable(ts[i-1], t)) {
			b.WriteByte(' ')
		}
		b.WriteString(t.s)
	}
	return b.String()
}

// mergeable reports whether a and b written without a space between them
// could read as other tokens.
func mergeable(a, b mtok) bool {
	if a.kind != 'p' && b.kind != 'p' {
		return true
	}
	if a.kind == 'p' && b.kind == 'p' {
		return !strings.ContainsAny(a.s, "()[]{},;") && !strings.ContainsAny(b.s, "()[]{},;")
	}
	return a.kind == 'p' && a.s == "." && b.kind == 'n' || a.kind == 'n' && b.kind == 'p' && (b.s == "." || b.s == "+" || b.s == "-")
}

// macroDef is a macro read from its #define: for a function-like one, the parameter
// names (the last one __VA_ARGS__ for a variadic macro); the replacement.
type macroDef struct {
	name     string
	funcLike bool
	params   []string
	variadic bool
	body     []mtok
}

// readMacro reads the definition of macro name from what follows the
// name in its #define (m.body: the parameter list of a function-like
// macro, then the replacement).
func readMacro(name string, m macro) (*macroDef, error) {
	d := &macroDef{name: name, funcLike: m.funcLike}
	body := m.body
	if m.funcLike {
		end := strings.IndexByte(body, ')')
		if !strings.HasPrefix(body, "(") || end < 0 {
			return nil, fmt.Errorf("macro %s: its parameter list is not closed", name)
		}
		for _, p := range strings.Split(body[1:end], ",") {
			p = strings.TrimSpace(p)
			switch {
			case p == "" && strings.TrimSpace(body[1:end]) == "":
			case p == "...":
				d.params, d.variadic = append(d.params, "__VA_ARGS__"), true
			case isIdentifier(p) && !d.variadic:
				d.params = append(d.params, p)
			default:
				return nil, fmt.Errorf("macro %s: GoOP2 cannot read its parameter %q", name, p)
			}
		}
		body = body[end+1:]
	}
	d.body = splitTokens(body)
	if len(d.body) > 0 {
		d.body[0].space = false
	}
	for _, t := range d.body {
		if t.s == "__VA_OPT__" {
			return nil, fmt.Errorf("macro %s uses __VA_OPT__, which GoOP2 does not expand", name)
		}
	}
	return d, nil
}

// expander expands macros with the definitions in force at one point of
// the source.
type expander struct {
	macros map[string]macro
	defs   map[string]*macroDef
	steps  int
}

// errUncertainMacro marks an expansion that depends on a macro defined
// under a condition the reader cannot evaluate.
var errUncertainMacro = errors.New("uncertain macro")

// lookup returns the definition of name if it is a macro here.
func (e *expander) lookup(name string) (*macroDef, error) {
	m, ok := e.macros[name]
	if !ok || m.state == undefined {
		return nil, nil
	}
	if m.state == maybeDefined {
		return nil, fmt.Errorf("%w: macro %s is defined under a condition GoOP2 cannot evaluate", errUncertainMacro, name)
	}
	if d, ok := e.defs[name]; ok {
		return d, nil
	}
	d, err := readMacro(name, m)
	if err != nil {
		return nil, err
	}
	e.defs[name] = d
	return d, nil
}

// expand returns ts with every macro invocation replaced, as the
// preprocessor does (C11 6.10.3).
func (e *expander) expand(ts []mtok) ([]mtok, error) {
	ts = slices.Clone(ts)
	var out []mtok
	for len(ts) > 0 {
		t := ts[0]
		if t.kind != 'i' || slices.Contains(t.hide, t.s) {
			out = append(out, t)
			ts = ts[1:]
			continue
		}
		d, err := e.lookup(t.s)
		if err != nil {
			return nil, err
		}
		if d == nil || d.funcLike && (len(ts) < 2 || ts[1].s != "(") {
			out = append(out, t)
			ts = ts[1:]
			continue
		}
		if e.steps++; e.steps > maxExpansionSteps {
			return nil, fmt.Errorf("macro %s: more than %d replacements", t.s, maxExpansionSteps)
		}
		var repl []mtok
		rest := ts[1:]
		if !d.funcLike {
			repl, err = e.subst(d, nil, withHide(t.hide, t.s))
		} else {
			var args [][]mtok
			var close int
			args, close, err = collectArgs(d, ts)
			if err != nil {
				return nil, err
			}
			hide := withHide(intersect(t.hide, ts[close].hide), t.s)
			repl, err = e.subst(d, args, hide)
			rest = ts[close+1:]
		}
		if err != nil {
			return nil, err
		}
		if len(repl) > 0 {
			repl[0].space = t.space
		}
		ts = append(repl, rest...)
	}
	return out, nil
}

// collectArgs reads the arguments of the invocation of d that starts at
// ts[0] (ts[1] is its '('), returning them and the index of the ')'.
func collectArgs(d *macroDef, ts []mtok) ([][]mtok, int, error) {
	var args [][]mtok
	var cur []mtok
	depth := 0
	for i := 2; i < len(ts); i++ {
		t := ts[i]
		switch {
		case t.s == "(":
			depth++
		case t.s == ")" && depth > 0:
			depth--
		case t.s == ")":
			args = append(args, cur)
			if len(d.params) == 0 && len(args) == 1 && len(args[0]) == 0 {
				args = nil
			}
			if d.variadic && len(args) == len(d.params)-1 {
				args = append(args, nil) // no variadic arguments
			}
			if len(args) != len(d.params) {
				return nil, 0, fmt.Errorf("macro %s takes %d arguments, given %d", d.name, len(d.params), len(args))
			}
			return args, i, nil
		case t.s == "," && depth == 0 && !(d.variadic && len(args) == len(d.params)-1):
			args = append(args, cur)
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	return nil, 0, fmt.Errorf("the invocation of macro %s is not closed", d.name)
}

// subst returns d's replacement with the arguments substituted (expanded,
// except next to # and ##), # and ## applied and hide added to every
// token's hide set.
func (e *expander) subst(d *macroDef, args [][]mtok, hide []string) ([]mtok, error) {
	param := func(t mtok) int {
		if t.kind != 'i' || !d.funcLike {
			return -1
		}
		return slices.Index(d.params, t.s)
	}
	raw := func(p int) []mtok {
		if len(args[p]) == 0 {
			return []mtok{{kind: 'm'}} // a placemarker
		}
		return slices.Clone(args[p])
	}
	var res []mtok
	body := d.body
	for i := 0; i < len(body); i++ {
		b := body[i]
		switch {
		case d.funcLike && b.s == "#" && i+1 < len(body) && param(body[i+1]) >= 0:
			res = append(res, mtok{s: stringize(args[param(body[i+1])]), kind: 's', space: b.space})
			i++
		case b.s == "##" && i+1 < len(body) && len(res) > 0:
			next := []mtok{body[i+1]}
			if p := param(body[i+1]); p >= 0 {
				if d.variadic && p == len(d.params)-1 && len(args[p]) == 0 && res[len(res)-1].s == "," {
					res = res[:len(res)-1] // GNU's , ## __VA_ARGS__ with no arguments
					i++
					continue
				}
				next = raw(p)
			}
			left := &res[len(res)-1]
			switch {
			case next[0].kind == 'm':
			case left.kind == 'm':
				*left = next[0]
			default:
				pasted := splitTokens(left.s + next[0].s)
				if len(pasted) != 1 {
					return nil, fmt.Errorf("macro %s: pasting %q and %q does not give one token", d.name, left.s, next[0].s)
				}
				pasted[0].space = left.space
				*left = pasted[0]
			}
			res = append(res, next[1:]...)
			i++
		case param(b) >= 0:
			p := param(b)
			if i+1 < len(body) && body[i+1].s == "##" {
				res = append(res, raw(p)...)
				continue
			}
			x, err := e.expand(args[p])
			if err != nil {
				return nil, err
			}
			if len(x) > 0 {
				x[0].space = b.space
			}
			res = append(res, x...)
		default:
			res = append(res, b)
		}
	}
	out := res[:0]
	for _, t := range res {
		if t.kind == 'm' {
			continue
		}
		t.hide = union(t.hide, hide)
		out = append(out, t)
	}
	return out, nil
}

// stringize is the string literal of an argument (the # operator).
func stringize(arg []mtok) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, t := range arg {
		if i > 0 && t.space {
			b.WriteByte(' ')
		}
		if t.kind == 's' {
			b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(t.s))
		} else {
			b.WriteString(t.s)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func withHide(hide []string, name string) []string {
	if slices.Contains(hide, name) {
		return hide
	}
	return append(slices.Clone(hide), name)
}

func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// macroSplice is an expansion to put in the source in place of
// src[from:to].
type macroSplice struct {
	from, to int
	text     string
}

// expandKernelMacros returns src with the file-scope macro invocations
// that write the kernel's definition (their expansion names the kernel)
// or the parameters of its definition (invocations in its parameter
// list: function-like macros, and object-like macros that are more than
// type names), or that stand in the span tail (between the list and the
// body: every invocation) expanded in place, and whether it changed
// anything. Invocations in the spans more (what may be a prototype's
// between its list and its end) are expanded too, their errors being
// those of invocations elsewhere. code
// is src as the compiler sees it (comments, literals, directives and
// dead branches blanked), lit src with only comments blanked, and
// pp the directives read. It returns an error naming the macro when an
// invocation cannot be expanded (a macro defined under a condition
// GoOP2 cannot evaluate, an expansion that names a macro again).
func expandKernelMacros(src, code, lit string, pp *preprocessed, name string, list, tail [2]int, more [][2]int) (string, bool, error) {
	var splices []macroSplice
	var firstErr error
	depth := 0
	for i := 0; i < len(code); {
		c := code[i]
		inTail := tail[1] > tail[0] && i >= tail[0] && i < tail[1]
		inMore := slices.ContainsFunc(more, func(t [2]int) bool { return i >= t[0] && i < t[1] })
		inList := list[1] > list[0] && i >= list[0] && i < list[1] || inTail
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
			id := code[i:j]
			m, ok := pp.macrosAt(i)[id]
			if depth != 0 || !ok || m.state == undefined {
				i = j
				continue
			}
			end := j
			if m.funcLike {
				open := clex.SkipSpace(code, j)
				if open >= len(code) || code[open] != '(' {
					i = j
					continue
				}
				if end = clex.MatchParen(code, open) + 1; end == 0 {
					return "", false, fmt.Errorf("line %d: the invocation of macro %s is not closed", lineOf(src, i), id)
				}
			} else if inList && !inTail && plainTypeMacro(m) {
				i = j
				continue
			}
			sp, names, err := expandInvocation(src, lit, pp, i, end, name)
			switch {
			case err != nil && (names || inList):
				return "", false, fmt.Errorf("the definition of %q comes from macro %s at line %d, which GoOP2 cannot expand: %w", name, id, lineOf(src, i), err)
			case err != nil:
				if firstErr == nil {
					firstErr = fmt.Errorf("macro %s at line %d may write it, but GoOP2 cannot expand it: %w", id, lineOf(src, i), err)
				}
			case names || inList || inMore:
				splices = append(splices, sp)
			}
			i = end
		case c >= '0' && c <= '9':
			for i < len(code) && (clex.IsIdentChar(code[i]) || code[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	if len(splices) == 0 {
		return src, false, firstErr
	}
	var b strings.Builder
	pos := 0
	for _, sp := range splices {
		b.WriteString(src[pos:sp.from])
		b.WriteString(sp.text)
		pos = sp.to
	}
	b.WriteString(src[pos:])
	return b.String(), true, nil
}

// plainTypeMacro reports whether object-like macro m stands for type
// words only (#define real double), which the type resolver reads
// without expanding.
func plainTypeMacro(m macro) bool {
	body := strings.TrimSpace(m.body)
	return !m.funcLike && body != "" && strings.Join(clex.Identifiers(body), " ") == strings.Join(strings.Fields(body), " ")
}

// expandInvocation expands the macro invocation src[from:to] with the
// macros in force there, reporting whether the expansion names the
// kernel. The splice keeps the source's lines: the expansion is followed
// by the newlines the invocation spanned.
func expandInvocation(src, lit string, pp *preprocessed, from, to int, name string) (macroSplice, bool, error) {
	macros := pp.macrosAt(from)
	e := &expander{macros: macros, defs: map[string]*macroDef{}}
	out, err := e.expand(splitTokens(lit[from:to]))
	if err != nil {
		return macroSplice{}, false, err
	}
	names := slices.ContainsFunc(out, func(t mtok) bool { return t.kind == 'i' && t.s == name })
	for _, t := range out {
		if m, ok := macros[t.s]; t.kind == 'i' && ok && m.state != undefined {
			return macroSplice{}, names, fmt.Errorf("its expansion %q names macro %s again, which the compiler would not expand there but would in the expansion's place", renderTokens(out), t.s)
		}
	}
	text := renderTokens(out) + strings.Repeat("\n", strings.Count(src[from:to], "\n"))
	return macroSplice{from: from, to: to, text: text}, names, nil
}

// ExpandedBody returns the body of the kernel info describes (from its
// opening brace to its closing one) with every macro invocation in it
// expanded with the definitions in force there, as the compiler sees it,
// on one line. It returns an error when an invocation cannot be expanded
// (a macro defined under a condition GoOP2 cannot evaluate, an expansion
// that names a macro again).
func ExpandedBody(info *core.KernelInfo) (string, error) {
	return expandedSpan(info, info.BodyOpen, info.BodyClose, "the kernel's body")
}

// expandedSpan is ExpandedBody for the text of info's source from
// position from to position to (included), which errors call what:
// another function's body.
func expandedSpan(info *core.KernelInfo, from, to int, what string) (string, error) {
	// The reader's directives, read once (ParseKernel).
	var pp *preprocessed
	var lit string
	if r := readingOf(info); r != nil {
		pp, lit = r.pp, r.lit
	}
	if pp == nil || len(lit) != len(info.Source) {
		src := info.Source
		lit = clex.Blank(src, false, nil)
		var err error
		pp, err = preprocess(clex.Blank(src, true, nil), lit)
		if err != nil {
			return "", err
		}
	}
	macros := pp.macrosAt(from)
	e := &expander{macros: macros, defs: map[string]*macroDef{}}
	out, err := e.expand(splitTokens(lit[from : to+1]))
	if err != nil {
		return "", err
	}
	for _, t := range out {
		if m, ok := macros[t.s]; t.kind == 'i' && ok && m.state != undefined {
			return "", fmt.Errorf("the expansion of %s names macro %s again", what, t.s)
		}
	}
	return renderTokens(out), nil
}
