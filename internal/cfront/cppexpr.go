package cfront

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/clex"
)

// This file evaluates the controlling expressions of #if and #elif the
// way a C compiler does (C11 6.10.1): after macro replacement, `defined X`
// and `defined(X)` are 1 or 0, identifiers that are no macro are 0, and
// the integer constant expression is evaluated in intmax_t / uintmax_t (64
// bits) with C's usual arithmetic conversions: an unsigned operand (a
// literal with a u or U suffix, or one too large for intmax_t) makes the
// other unsigned too, so `-1 > 0u` is true. Comparisons, !, && and || give
// a signed 0 or 1. A division by zero in an operand that is evaluated is
// an error, as it is for the compiler; && , || and ?: do not evaluate the
// operands C skips.
//
// Values can also be unknown: a macro that headers or compiler flags may
// define, a function-like macro call, __has_include. An unknown value
// makes the result unknown unless C's rules make it irrelevant (0 && x).

// ppIdent says what an identifier in a #if expression is.
type ppIdent uint8

const (
	ppNotMacro   ppIdent = iota // certainly no macro: 0
	ppObject                    // an object-like macro with a known body
	ppFunction                  // a function-like macro with a known body
	ppUnknown                   // may or may not be a macro (headers, flags, compiler)
	ppPredefined                // certainly a macro, of a value GoOP2 does not know (a compiler's own)
)

// ppLookup tells the evaluator about an identifier: what it is and, for a
// macro, its replacement text.
type ppLookup func(name string) (ppIdent, string)

// ppVal is the value of a #if (sub)expression.
type ppVal struct {
	v        uint64 // two's complement bits of the value
	unsigned bool   // of type uintmax_t rather than intmax_t
	known    bool
}

func (v ppVal) signed() int64 { return int64(v.v) }

func (v ppVal) isTrue() bool { return v.v != 0 }

func ppBool(b bool) ppVal {
	if b {
		return ppVal{v: 1, known: true}
	}
	return ppVal{v: 0, known: true}
}

// evalIf evaluates the expression of a #if or #elif at line line. The
// result is yes, no or maybe (unknown). The error reports what makes the
// directive invalid C (a division by zero, a malformed expression), with
// the line.
func evalIf(expr string, line int, lookup ppLookup) (tri, error) {
	toks, err := ppTokens(expr)
	if err == nil {
		toks = ppExpand(toks, lookup, map[string]bool{}, 0)
		p := &ppParser{toks: toks, lookup: lookup}
		v := p.cond(yes)
		switch {
		case p.err != nil:
			err = p.err
		case p.pos < len(p.toks):
			err = fmt.Errorf("unexpected %q", p.toks[p.pos].text)
		case !v.known:
			return maybe, nil
		case v.isTrue():
			return yes, nil
		default:
			return no, nil
		}
	}
	return maybe, fmt.Errorf("#if at line %d: %v", line, err)
}

type ppTokKind uint8

const (
	ppNum ppTokKind = iota
	ppChar
	ppIdentTok
	ppOp
	ppUnknownTok // a value GoOP2 cannot know (a function-like macro call)
)

type ppTok struct {
	kind ppTokKind
	text string
}

var ppOps = []string{"<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "~", "!", "?", ":", "(", ")", ","}

// ppTokens splits a #if expression (comments already removed) into tokens.
func ppTokens(s string) ([]ppTok, error) {
	var out []ppTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f':
			i++
		case c == '\\' && i+1 < len(s) && (s[i+1] == '\n' || s[i+1] == '\r'):
			i++
		case clex.IsIdentStart(c):
			j := i
			for j < len(s) && clex.IsIdentChar(s[j]) {
				j++
			}
			// An identifier directly followed by a quote is a literal
			// prefix (L'x', u8"..."): treat it as part of the literal.
			if j < len(s) && s[j] == '\'' {
				k, err := charEnd(s, j)
				if err != nil {
					return nil, err
				}
				out = append(out, ppTok{ppChar, s[i:k]})
				i = k
				continue
			}
			if name := s[i:j]; name == "__has_include" || name == "__has_include_next" {
				// Its operand is a header name, not an expression.
				k := clex.SkipSpace(s, j)
				if k < len(s) && s[k] == '(' {
					if e := strings.IndexByte(s[k:], ')'); e >= 0 {
						out = append(out, ppTok{ppUnknownTok, name})
						i = k + e + 1
						continue
					}
				}
			}
			out = append(out, ppTok{ppIdentTok, s[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			// A preprocessing number: digits, letters, _, ., and e+ e- p+ p-.
			j := i + 1
			for j < len(s) {
				d := s[j]
				if clex.IsIdentChar(d) || d == '.' || d == '\'' && j+1 < len(s) && clex.IsIdentChar(s[j+1]) {
					j++
					continue
				}
				if (d == '+' || d == '-') && strings.ContainsRune("eEpP", rune(s[j-1])) {
					j++
					continue
				}
				break
			}
			out = append(out, ppTok{ppNum, s[i:j]})
			i = j
		case c == '\'':
			k, err := charEnd(s, i)
			if err != nil {
				return nil, err
			}
			out = append(out, ppTok{ppChar, s[i:k]})
			i = k
		case c == '"':
			return nil, fmt.Errorf("string literal in a preprocessor expression")
		default:
			op := ""
			for _, o := range ppOps {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, fmt.Errorf("unexpected %q", string(c))
			}
			out = append(out, ppTok{ppOp, op})
			i += len(op)
		}
	}
	return out, nil
}

// charEnd returns the offset after the character literal opening at s[i].
func charEnd(s string, i int) (int, error) {
	for j := i + 1; j < len(s) && s[j] != '\n'; j++ {
		switch s[j] {
		case '\\':
			j++
		case '\'':
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("missing terminating ' character")
}

// ppExpand replaces the macros of toks by their replacement text (object-
// like macros; a function-like macro's call becomes an unknown value),
// leaving the operand of `defined` alone and not expanding a macro inside
// its own replacement (C's rule: the name then stays an identifier).
func ppExpand(toks []ppTok, lookup ppLookup, active map[string]bool, depth int) []ppTok {
	var out []ppTok
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != ppIdentTok {
			out = append(out, t)
			continue
		}
		if t.text == "defined" {
			out = append(out, t)
			if i+1 < len(toks) && toks[i+1].text == "(" {
				n := min(i+3, len(toks)-1)
				out = append(out, toks[i+1:n+1]...)
				i = n
			} else if i+1 < len(toks) {
				out = append(out, toks[i+1])
				i++
			}
			continue
		}
		call := i+1 < len(toks) && toks[i+1].text == "("
		kind, body := lookup(t.text)
		if active[t.text] || depth > 64 {
			kind = ppNotMacro
		}
		switch {
		case kind == ppObject:
			sub, err := ppTokens(body)
			if err != nil {
				out = append(out, ppTok{ppUnknownTok, t.text})
				continue
			}
			active[t.text] = true
			out = append(out, ppExpand(sub, lookup, active, depth+1)...)
			delete(active, t.text)
		case call && (kind == ppFunction || kind == ppUnknown || kind == ppPredefined || strings.HasPrefix(t.text, "__has_")):
			// A call GoOP2 does not evaluate: skip its arguments.
			level := 0
			for i++; i < len(toks); i++ {
				if toks[i].text == "(" {
					level++
				} else if toks[i].text == ")" {
					if level--; level == 0 {
						break
					}
				}
			}
			out = append(out, ppTok{ppUnknownTok, t.text})
		case kind == ppUnknown || kind == ppPredefined:
			out = append(out, ppTok{ppUnknownTok, t.text})
		default:
			out = append(out, t) // no macro: 0
		}
	}
	return out
}

// ppParser evaluates a macro-expanded #if expression by precedence
// climbing. Each level takes ev: whether its operands are evaluated (yes),
// skipped by && || ?: (no), or may be (maybe); errors are reported only
// for operands that are certainly evaluated.
type ppParser struct {
	toks   []ppTok
	pos    int
	lookup ppLookup
	err    error
}

func (p *ppParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].text
	}
	return ""
}

func (p *ppParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

func (p *ppParser) expect(s string) {
	if p.peek() != s {
		if p.pos < len(p.toks) {
			p.fail("expected %q, found %q", s, p.peek())
		} else {
			p.fail("expected %q at the end of the expression", s)
		}
		return
	}
	p.pos++
}

// cond parses a conditional expression (?:); the comma operator is not
// allowed in a #if expression outside parentheses.
func (p *ppParser) cond(ev tri) ppVal {
	c := p.binary(1, ev)
	if p.peek() != "?" {
		return c
	}
	p.pos++
	evA, evB := maybe, maybe
	if c.known {
		evA, evB = no, yes
		if c.isTrue() {
			evA, evB = yes, no
		}
	}
	a := p.comma(and3(ev, evA))
	p.expect(":")
	b := p.cond(and3(ev, evB))
	unsigned := a.unsigned || b.unsigned
	switch {
	case !c.known:
		if a.known && b.known && a.v == b.v {
			return ppVal{v: a.v, unsigned: unsigned, known: true}
		}
		return ppVal{}
	case c.isTrue():
		a.unsigned = unsigned
		return a
	}
	b.unsigned = unsigned
	return b
}

// comma parses an expression with commas (inside parentheses).
func (p *ppParser) comma(ev tri) ppVal {
	v := p.cond(ev)
	for p.peek() == "," {
		p.pos++
		v = p.cond(ev)
	}
	return v
}

var ppPrec = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
	"<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

func (p *ppParser) binary(min int, ev tri) ppVal {
	l := p.unary(ev)
	for {
		op := p.peek()
		prec, ok := ppPrec[op]
		if !ok || prec < min || p.pos >= len(p.toks) || p.toks[p.pos].kind != ppOp {
			return l
		}
		p.pos++
		evR := ev
		switch {
		case op == "&&" && l.known:
			evR = and3(ev, ppTri(l.isTrue()))
		case op == "||" && l.known:
			evR = and3(ev, ppTri(!l.isTrue()))
		case op == "&&" || op == "||":
			evR = and3(ev, maybe)
		}
		r := p.binary(prec+1, evR)
		l = p.apply(op, l, r, evR)
	}
}

func ppTri(b bool) tri {
	if b {
		return yes
	}
	return no
}

func (p *ppParser) apply(op string, l, r ppVal, ev tri) ppVal {
	switch op {
	case "||":
		if l.known && l.isTrue() || r.known && r.isTrue() {
			return ppBool(true)
		}
		if l.known && r.known {
			return ppBool(false)
		}
		return ppVal{}
	case "&&":
		if l.known && !l.isTrue() || r.known && !r.isTrue() {
			return ppBool(false)
		}
		if l.known && r.known {
			return ppBool(true)
		}
		return ppVal{}
	}
	if !l.known || !r.known {
		return ppVal{}
	}
	if op == "<<" || op == ">>" {
		// The result has the left operand's type; a negative or too large
		// shift count is undefined (gcc: 0 or the sign for >>).
		n := r.v
		if !r.unsigned && r.signed() < 0 {
			n, op = uint64(-r.signed()), map[string]string{"<<": ">>", ">>": "<<"}[op]
		}
		out := ppVal{unsigned: l.unsigned, known: true}
		switch {
		case op == "<<" && n < 64:
			out.v = l.v << n
		case op == ">>" && n < 64 && l.unsigned:
			out.v = l.v >> n
		case op == ">>" && n < 64:
			out.v = uint64(l.signed() >> n)
		case op == ">>" && !l.unsigned && l.signed() < 0:
			out.v = math.MaxUint64
		}
		return out
	}
	unsigned := l.unsigned || r.unsigned
	out := ppVal{unsigned: unsigned, known: true}
	switch op {
	case "|":
		out.v = l.v | r.v
	case "^":
		out.v = l.v ^ r.v
	case "&":
		out.v = l.v & r.v
	case "+":
		out.v = l.v + r.v
	case "-":
		out.v = l.v - r.v
	case "*":
		out.v = l.v * r.v
	case "/", "%":
		if r.v == 0 {
			if ev == yes {
				p.fail("division by zero")
			}
			return ppVal{}
		}
		switch {
		case unsigned && op == "/":
			out.v = l.v / r.v
		case unsigned:
			out.v = l.v % r.v
		case op == "/":
			out.v = uint64(l.signed() / r.signed())
		default:
			out.v = uint64(l.signed() % r.signed())
		}
	case "==":
		return ppBool(l.v == r.v)
	case "!=":
		return ppBool(l.v != r.v)
	case "<", ">", "<=", ">=":
		var lt, eq bool
		if unsigned {
			lt, eq = l.v < r.v, l.v == r.v
		} else {
			lt, eq = l.signed() < r.signed(), l.v == r.v
		}
		switch op {
		case "<":
			return ppBool(lt)
		case ">":
			return ppBool(!lt && !eq)
		case "<=":
			return ppBool(lt || eq)
		}
		return ppBool(!lt)
	}
	return out
}

func (p *ppParser) unary(ev tri) ppVal {
	switch t := p.peek(); t {
	case "!", "-", "+", "~":
		if p.toks[p.pos].kind != ppOp {
			break
		}
		p.pos++
		v := p.unary(ev)
		if !v.known {
			return ppVal{}
		}
		switch t {
		case "!":
			return ppBool(!v.isTrue())
		case "-":
			v.v = -v.v
		case "~":
			v.v = ^v.v
		}
		return v
	case "(":
		p.pos++
		v := p.comma(ev)
		p.expect(")")
		return v
	}
	return p.primary(ev)
}

func (p *ppParser) primary(ev tri) ppVal {
	if p.pos >= len(p.toks) {
		p.fail("missing operand at the end of the expression")
		return ppVal{}
	}
	t := p.toks[p.pos]
	p.pos++
	switch t.kind {
	case ppNum:
		v, err := ppNumber(t.text)
		if err != nil {
			p.fail("%v", err)
		}
		return v
	case ppChar:
		return ppCharValue(t.text)
	case ppUnknownTok:
		return ppVal{}
	case ppIdentTok:
		if t.text != "defined" {
			return ppVal{known: true} // an identifier that is no macro is 0
		}
		paren := p.peek() == "("
		if paren {
			p.pos++
		}
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != ppIdentTok {
			p.fail("`defined` without a macro name")
			return ppVal{}
		}
		name := p.toks[p.pos].text
		p.pos++
		if paren {
			p.expect(")")
		}
		switch kind, _ := p.lookup(name); kind {
		case ppNotMacro:
			return ppBool(false)
		case ppObject, ppFunction, ppPredefined:
			return ppBool(true)
		}
		return ppVal{}
	}
	p.fail("unexpected %q", t.text)
	return ppVal{}
}

// ppNumber reads an integer constant: decimal, octal, hexadecimal or
// binary, with u/U and l/L/ll/LL suffixes. A value too large for intmax_t
// is unsigned, as in gcc.
func ppNumber(s string) (ppVal, error) {
	digits := strings.ReplaceAll(s, "'", "")
	lower := strings.ToLower(digits)
	unsigned := false
	for {
		switch {
		case strings.HasSuffix(lower, "u"):
			unsigned = true
			lower = lower[:len(lower)-1]
			continue
		case strings.HasSuffix(lower, "ll"):
			lower = lower[:len(lower)-2]
			continue
		case strings.HasSuffix(lower, "l") || strings.HasSuffix(lower, "z"):
			lower = lower[:len(lower)-1]
			continue
		}
		break
	}
	base, body := 10, lower
	switch {
	case strings.HasPrefix(lower, "0x"):
		base, body = 16, lower[2:]
	case strings.HasPrefix(lower, "0b"):
		base, body = 2, lower[2:]
	case len(lower) > 1 && lower[0] == '0':
		base, body = 8, lower[1:]
	}
	if base != 16 && strings.ContainsAny(body, ".e") || base == 16 && strings.ContainsAny(body, ".p") {
		return ppVal{}, fmt.Errorf("floating constant %s in a preprocessor expression", s)
	}
	v, err := strconv.ParseUint(body, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return ppVal{}, fmt.Errorf("integer constant %s is too large", s)
		}
		return ppVal{}, fmt.Errorf("invalid integer constant %s", s)
	}
	return ppVal{v: v, unsigned: unsigned || v > math.MaxInt64, known: true}, nil
}

// ppCharValue is the value of a character literal: an int (a plain char is
// signed, as on x86-64). Multi-character and wide literals are unknown.
func ppCharValue(s string) ppVal {
	if !strings.HasPrefix(s, "'") || len(s) < 3 {
		return ppVal{} // L'x', u'x', U'x', u8'x'
	}
	body := s[1 : len(s)-1]
	var c uint64
	switch {
	case len(body) == 1:
		c = uint64(body[0])
	case body[0] != '\\':
		return ppVal{} // multi-character constant
	case len(body) == 2 && strings.IndexByte(`abfnrtv\'"?`, body[1]) >= 0:
		c = uint64(map[byte]byte{'a': 7, 'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11, '\\': '\\', '\'': '\'', '"': '"', '?': '?'}[body[1]])
	case body[1] == 'x':
		v, err := strconv.ParseUint(body[2:], 16, 64)
		if err != nil {
			return ppVal{}
		}
		c = v & 0xff
	default:
		v, err := strconv.ParseUint(body[1:], 8, 64)
		if err != nil || len(body) > 4 {
			return ppVal{}
		}
		c = v & 0xff
	}
	return ppVal{v: uint64(int64(int8(c))), known: true}
}
