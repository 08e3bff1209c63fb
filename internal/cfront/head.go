package cfront

import (
	"strings"

	"github.com/goop2/op2/internal/clex"
)

// This file reads what C++ lets a function's declaration have after its
// parameter list (noexcept, throw(), a trailing return type) and C++'s
// linkage-specification blocks (extern "C" { ... }), so that a function
// declared with them is found as it is without them.

// declTail is what follows a function declarator's parameter list up to
// the '{' of a definition's body or the ';' or ',' that ends a
// declaration (readDeclTail).
type declTail struct {
	// end is the offset of that '{', ';' or ',', or -1 when the text
	// after the list ends in none of them (a ')', ']', '}' or '=' first:
	// not a declaration's tail).
	end int
	// try says the tail is a function-try-block's try: the '{' is its
	// block's, and catch handlers follow it.
	try bool
	// unread is the offset of the first token that is neither noexcept,
	// noexcept(...), throw(...), try, nor in a trailing return type
	// (-> T): a macro, or what GoOP2 does not read; -1 if none.
	unread int
	// words are the identifiers at unread and after it, but those inside
	// parentheses and brackets and in a trailing return type.
	words []string
}

// readDeclTail reads code (comments, literals, directives and
// attributes blanked) from offset i, just after a parameter list's ')'.
func readDeclTail(code string, i int) declTail {
	t := declTail{end: -1, unread: -1}
	arrow := false
	mark := func(at int) {
		if t.unread < 0 && !arrow {
			t.unread = at
		}
	}
	for {
		i = clex.SkipSpace(code, i)
		if i >= len(code) {
			return declTail{end: -1, unread: -1}
		}
		c := code[i]
		switch {
		case c == '{' || c == ';' || c == ',':
			t.end = i
			return t
		case c == ')' || c == ']' || c == '}' || c == '=' && !arrow:
			return declTail{end: -1, unread: -1}
		case c == '(' || c == '[':
			close := clex.MatchParen(code, i)
			if c == '[' {
				close = clex.MatchBracket(code, i)
			}
			if close < 0 {
				return declTail{end: -1, unread: -1}
			}
			mark(i)
			i = close + 1
		case clex.IsIdentStart(c):
			j := i
			for j < len(code) && clex.IsIdentChar(code[j]) {
				j++
			}
			w := code[i:j]
			next := clex.SkipSpace(code, j)
			switch {
			case arrow:
			case w == "noexcept" && t.unread < 0 || w == "throw" && t.unread < 0 && next < len(code) && code[next] == '(':
				if next < len(code) && code[next] == '(' {
					close := clex.MatchParen(code, next)
					if close < 0 {
						return declTail{end: -1, unread: -1}
					}
					j = close + 1
				}
			case w == "try" && next < len(code) && code[next] == '{':
				t.try = true
			default:
				mark(i)
				t.words = append(t.words, w)
			}
			i = j
		case strings.HasPrefix(code[i:], "->") && t.unread < 0:
			arrow = true
			i += 2
		default:
			mark(i)
			i++
		}
	}
}

// blankLinkageBlocks returns code (comments and literals blanked, the
// literals' quotes kept) with the heads (extern "C" {) and closing braces
// of its linkage-specification blocks at file scope blanked: what they
// hold is at file scope, and reads as it would without them. The text
// keeps its length and lines. The offsets of the blocks' extern come
// with it.
func blankLinkageBlocks(code string) (string, []int) {
	if !strings.Contains(code, "extern") {
		return code, nil
	}
	var at []int
	b := []byte(code)
	depth := 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '{':
			depth++
			i++
		case c == '}':
			depth--
			i++
		case clex.IsIdentStart(c):
			j := i
			for j < len(b) && clex.IsIdentChar(b[j]) {
				j++
			}
			if depth != 0 || string(b[i:j]) != "extern" {
				i = j
				continue
			}
			q := clex.SkipSpace(code, j)
			if q >= len(b) || b[q] != '"' {
				i = j
				continue
			}
			e := clex.LiteralEnd(code, q)
			open := clex.SkipSpace(code, e+1)
			if e >= len(b) || b[e] != '"' || open >= len(b) || b[open] != '{' {
				i = j
				continue
			}
			close := clex.MatchBrace(string(b), open)
			if close < 0 {
				i = j
				continue
			}
			at = append(at, i)
			for k := i; k <= open; k++ {
				if b[k] != '\n' {
					b[k] = ' '
				}
			}
			b[close] = ' '
			i = open + 1
		case c >= '0' && c <= '9':
			for i < len(b) && (clex.IsIdentChar(b[i]) || b[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return string(b), at
}
