// Package clex holds the small lexical helpers of C source: those of the
// one kernel reader (internal/core: ParseKernel and the kernel model) and
// of the code that edits the text it models (internal/codegen/hostc's lane
// rewriter, internal/codegen/device's renames, internal/fuse), and
// Normalize for package op2.
package clex

import "strings"

// Identifiers lists the identifiers of C code s in order (numbers skipped).
func Identifiers(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case IsIdentStart(c):
			j := i
			for j < len(s) && IsIdentChar(s[j]) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		case c >= '0' && c <= '9':
			for i < len(s) && (IsIdentChar(s[i]) || s[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return out
}

// IndexIdent finds name in s as a whole identifier, or returns -1.
func IndexIdent(s, name string) int {
	for off := 0; ; {
		i := strings.Index(s[off:], name)
		if i < 0 {
			return -1
		}
		i += off
		before := i == 0 || !IsIdentChar(s[i-1])
		after := i+len(name) >= len(s) || !IsIdentChar(s[i+len(name)])
		if before && after {
			return i
		}
		off = i + 1
	}
}

// IsIdentChar reports whether c may continue a C identifier.
func IsIdentChar(c byte) bool { return IsIdentStart(c) || (c >= '0' && c <= '9') }

// IsIdentStart reports whether c may start a C identifier.
func IsIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// IsIdent reports whether s is a C identifier.
func IsIdent(s string) bool {
	if s == "" || !IsIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !IsIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// LineStart reports whether only blanks precede s[i] on its line.
func LineStart(s string, i int) bool {
	for k := i - 1; k >= 0 && s[k] != '\n'; k-- {
		if s[k] != ' ' && s[k] != '\t' {
			return false
		}
	}
	return true
}

// MatchBrace returns the index of the brace closing the one at s[open], or -1.
func MatchBrace(s string, open int) int { return matchPair(s, open, '{', '}') }

// MatchParen returns the index of the parenthesis closing the one at s[open], or -1.
func MatchParen(s string, open int) int { return matchPair(s, open, '(', ')') }

// MatchBracket returns the index of the bracket closing the one at s[open], or -1.
func MatchBracket(s string, open int) int { return matchPair(s, open, '[', ']') }

// matchPair returns the index of the closer matching the opener at
// s[open], counting nested pairs, or -1.
func matchPair(s string, open int, opener, closer byte) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case opener:
			depth++
		case closer:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// SkipSpace returns the index of the first non-blank byte of s at or after i.
func SkipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// Normalize returns C source s with its line continuations moved out of
// the tokens they split (JoinLines), its digraphs spelled as the
// characters they stand for (Digraphs), and a leading byte order mark (a
// file saved with one; a compiler skips it only at the start of a file,
// and the source is placed after generated code) made blanks. The result
// has the same length and the same number of lines, offsets of text that
// no continuation splits are unchanged, and a C compiler reads it as the
// same program.
func Normalize(s string) string {
	if rest, ok := strings.CutPrefix(s, "\ufeff"); ok {
		s = "   " + rest
	}
	return Digraphs(JoinLines(s))
}

// JoinLines returns s with every backslash-newline (line continuation)
// moved forward to the next blank or newline, so that no token, comment
// marker or directive name is split across lines while the text keeps its
// length and its number of lines. C splices continued lines before
// anything else, and a continuation just before a blank splices nothing
// but the blank's line with the next, so the compiler reads the same
// program. Continuations written as backslash, carriage return, newline
// are moved as well; those inside a raw string (RawStringEnd: one in the
// code, not in a comment or another literal) are left where they are.
func JoinLines(s string) string {
	if !strings.Contains(s, "\\\n") && !strings.Contains(s, "\\\r\n") {
		return s
	}
	out := make([]byte, 0, len(s))
	var pending []byte // continuations waiting for a blank
	// Where the spliced text is: code, a comment or a literal; prev is
	// the character before (0 after a comment).
	const (
		code = iota
		lineComment
		blockComment
		literal
	)
	state, quote, escaped, opened := code, byte(0), false, 0
	var prev byte
	for i := 0; i < len(s); {
		if s[i] == '\\' {
			n := 0
			switch {
			case strings.HasPrefix(s[i+1:], "\n"):
				n = 2
			case strings.HasPrefix(s[i+1:], "\r\n"):
				n = 3
			}
			if n > 0 {
				pending = append(pending, s[i:i+n]...)
				i += n
				continue
			}
		}
		c := s[i]
		if state == code && c == '"' {
			if e := RawStringEnd(s, i); e > i {
				// A raw string's continuations are its characters (C++
				// undoes the splicing there).
				out = append(append(out, pending...), s[i:e+1]...)
				pending = pending[:0]
				i, prev = e+1, '"'
				continue
			}
		}
		if len(pending) > 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			out = append(out, pending...)
			pending = pending[:0]
		}
		out = append(out, c)
		switch state {
		case code:
			switch {
			case c == '/' && prev == '/':
				state = lineComment
			case c == '*' && prev == '/':
				state, opened = blockComment, 0
			case c == '"' || c == '\'' && !splicedSeparator(out, s, i):
				state, quote, escaped = literal, c, false
			}
		case lineComment:
			if c == '\n' {
				state = code
			}
		case blockComment:
			if opened++; c == '/' && prev == '*' && opened > 1 {
				state, c = code, 0
			}
		case literal:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == quote || c == '\n':
				state = code
			}
		}
		prev = c
		i++
	}
	return string(append(out, pending...))
}

// Digraphs returns s with C's digraphs outside comments and literals
// replaced by the characters they stand for, padded with blanks to keep
// offsets: <: and :> become [ and ], <% and %> become { and }, %: becomes
// # and %:%: becomes ##.
func Digraphs(s string) string {
	if !strings.Contains(s, "<:") && !strings.Contains(s, ":>") && !strings.Contains(s, "<%") &&
		!strings.Contains(s, "%>") && !strings.Contains(s, "%:") {
		return s
	}
	b := []byte(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case strings.HasPrefix(s[i:], "//"):
			i = LineCommentEnd(s, i) - 1
		case strings.HasPrefix(s[i:], "/*"):
			e := strings.Index(s[i+2:], "*/")
			if e < 0 {
				return string(b)
			}
			i += e + 3
		case DigitSeparator(s, i):
			// A digit separator (1'000, C++14 and C23), not a literal.
		case c == '"' || c == '\'':
			i = LiteralEnd(s, i)
		case strings.HasPrefix(s[i:], "%:%:"):
			copy(b[i:], "##  ")
			i += 3
		default:
			var r string
			if i+1 < len(s) {
				switch s[i : i+2] {
				case "<:":
					r = "[ "
				case ":>":
					r = "] "
				case "<%":
					r = "{ "
				case "%>":
					r = "} "
				case "%:":
					r = "# "
				}
			}
			if r != "" {
				copy(b[i:], r)
				i++
			}
		}
	}
	return string(b)
}

// SplitList splits a comma-separated list (a parameter list, say) at
// the commas outside parentheses and brackets. It returns one part for an
// empty list.
func SplitList(list string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(list); i++ {
		switch list[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, list[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, list[start:])
}

// Blank returns src with its comments replaced by spaces and, when
// literals is set, the contents of its string and character literals
// (their quotes kept) but for those keep (if not nil) reports by the
// offset of their opening quote. Every other byte, and every newline,
// stays where it was, so offsets into the result are offsets into src.
// A comment left open blanks the rest of src.
func Blank(src string, literals bool, keep func(src string, i int) bool) string {
	b := []byte(src)
	clear := func(from, to int) {
		for k := from; k < to && k < len(b); k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	walk(src, func(from, to int, _ bool) { clear(from, to) }, func(from, to int) {
		if literals && (keep == nil || !keep(src, from)) {
			clear(from+1, to) // keep the quotes
		}
	})
	return string(b)
}

// OpenComment returns the offset of a /* comment src leaves open (no */
// ends it), or -1 when every comment is closed.
func OpenComment(src string) int {
	open := -1
	walk(src, func(from, _ int, closed bool) {
		if !closed {
			open = from
		}
	}, func(int, int) {})
	return open
}

// walk calls comment with the span [from, to) of each comment of src
// (its markers included; a // comment's ends before its newline, a /*
// comment no */ closes, at len(src), with closed false) and literal with
// the offsets of each string or character literal's quotes.
func walk(src string, comment func(from, to int, closed bool), literal func(from, to int)) {
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], "//"):
			e := LineCommentEnd(src, i)
			comment(i, e, true)
			i = e
		case strings.HasPrefix(src[i:], "/*"):
			e := strings.Index(src[i+2:], "*/")
			if e < 0 {
				comment(i, len(src), false)
				return
			}
			comment(i, i+e+4, true)
			i += e + 3
		case DigitSeparator(src, i):
			// A digit separator (1'000, C++14 and C23), not a literal.
		case c == '"' || c == '\'':
			j := LiteralEnd(src, i)
			literal(i, j)
			i = j
		}
	}
}

// splicedSeparator is DigitSeparator for the quote s[i], the last byte
// of out (JoinLines' output so far, whose continuations are moved out of
// the tokens), and the character after it past continuations:
// 1\<newline>'000 and 1'\<newline>000 are 1'000.
func splicedSeparator(out []byte, s string, i int) bool {
	tail := out[max(0, len(out)-64):]
	next := byte(' ')
	for j := i + 1; j < len(s); j++ {
		if s[j] == '\\' && (strings.HasPrefix(s[j+1:], "\n") || strings.HasPrefix(s[j+1:], "\r\n")) {
			j += strings.IndexByte(s[j:], '\n')
			continue // a continuation: the character after it
		}
		next = s[j]
		break
	}
	probe := string(tail) + string(next)
	return DigitSeparator(probe, len(tail)-1)
}

// LiteralEnd returns the offset of what ends the string or character
// literal whose opening quote is src[i]: its closing quote (a raw
// string's through RawStringEnd; an escaped quote closes none), or, for
// one unterminated, the newline ending its line or len(src).
func LiteralEnd(src string, i int) int {
	if e := RawStringEnd(src, i); e > i {
		return e
	}
	j := i + 1
	for j < len(src) && src[j] != src[i] && src[j] != '\n' {
		if src[j] == '\\' {
			j++
		}
		j++
	}
	return min(j, len(src))
}

// RawStringEnd returns the offset of the '"' that closes the raw string
// literal whose opening quote is src[i] (R"delim(...)delim", C++11, and
// GCC's C from gnu99 on; prefixed R, u8R, uR, UR or LR), or -1 when
// src[i] opens no raw string: no such prefix before it, or no delimiter
// of at most 16 characters and '(' after it, or no ')', delimiter and
// '"' closing it.
func RawStringEnd(src string, i int) int {
	if i >= len(src) || src[i] != '"' || i == 0 || src[i-1] != 'R' {
		return -1
	}
	s := i - 1
	for s > 0 && IsIdentChar(src[s-1]) {
		s--
	}
	switch src[s : i-1] {
	case "", "u8", "u", "U", "L":
	default:
		return -1
	}
	open := strings.IndexByte(src[i+1:min(len(src), i+18)], '(')
	if open < 0 {
		return -1
	}
	delim := src[i+1 : i+1+open]
	if strings.ContainsAny(delim, " ()\\\t\v\f\n\"") {
		return -1
	}
	end := strings.Index(src[i+2+open:], ")"+delim+"\"")
	if end < 0 {
		return -1
	}
	return i + 2 + open + end + len(delim) + 1
}

// DigitSeparator reports whether src[i] is a quote separating digits of
// a numeric literal (1'000, 0x1'ff: C++14 and C23), not one opening a
// character literal (u8'a', L'a'): the token it ends starts with a digit
// (or a '.' and a digit), and a digit or letter follows it.
func DigitSeparator(src string, i int) bool {
	return i+1 < len(src) && src[i] == '\'' && IsIdentChar(src[i+1]) && inNumber(src, i)
}

// inNumber reports whether the token src[i] ends starts with a digit
// (or a '.' and a digit).
func inNumber(src string, i int) bool {
	s := i
	for s > 0 && (IsIdentChar(src[s-1]) || src[s-1] == '.' || src[s-1] == '\'') {
		s--
	}
	if s == i {
		return false
	}
	return src[s] >= '0' && src[s] <= '9' || src[s] == '.' && s+1 < i && src[s+1] >= '0' && src[s+1] <= '9'
}

// LogicalLineEnd returns the end of the logical line (a preprocessor
// directive's, say) that goes on from s[i]: the offset of its final
// newline, or len(s), following backslash-newline continuations.
func LogicalLineEnd(s string, i int) int {
	j := i
	for j < len(s) && s[j] != '\n' {
		if s[j] == '\\' && j+1 < len(s) && s[j+1] == '\n' {
			j++
		}
		j++
	}
	return j
}

// LineCommentEnd returns the offset of the newline ending the // comment
// that starts at s[i] (or len(s)), following line continuations: a
// comment whose line ends with a backslash goes on on the next line.
func LineCommentEnd(s string, i int) int {
	for {
		e := strings.IndexByte(s[i:], '\n')
		if e < 0 {
			return len(s)
		}
		e += i
		k := e
		if k > 0 && s[k-1] == '\r' {
			k--
		}
		if k == 0 || s[k-1] != '\\' {
			return e
		}
		i = e + 1
	}
}

// BlankAttributes returns code with its attributes, GNU
// (__attribute__((...)), __attribute((...))) and standard ([[...]]),
// replaced by blanks: they do not change how arguments are passed, and
// left in place they would hide a definition's body or count as array
// declarators.
func BlankAttributes(code string) string {
	spans := AttributeSpans(code)
	if len(spans) == 0 {
		return code
	}
	b := []byte(code)
	for _, sp := range spans {
		for k := sp.From; k < sp.To; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	return string(b)
}

// AttributeSpan is an attribute in source: code[From:To], Std for a
// standard one ([[...]]), else GNU (__attribute__((...))).
type AttributeSpan struct {
	From, To int
	Std      bool
}

// AttributeSpans returns the attributes of code in order, as
// BlankAttributes blanks them. An unterminated [[ ends the scan.
func AttributeSpans(code string) []AttributeSpan {
	if !strings.Contains(code, "__attribute") && !strings.Contains(code, "[[") {
		return nil
	}
	var out []AttributeSpan
	for i := 0; i < len(code); i++ {
		switch {
		case strings.HasPrefix(code[i:], "[["):
			depth, j := 0, i
			for ; j < len(code); j++ {
				if code[j] == '[' {
					depth++
				} else if code[j] == ']' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			if j >= len(code) {
				return out
			}
			out = append(out, AttributeSpan{From: i, To: j + 1, Std: true})
			i = j
		case IsIdentStart(code[i]) && (i == 0 || !IsIdentChar(code[i-1])):
			j := i
			for j < len(code) && IsIdentChar(code[j]) {
				j++
			}
			if w := code[i:j]; w == "__attribute__" || w == "__attribute" {
				open := SkipSpace(code, j)
				if open < len(code) && code[open] == '(' {
					if close := MatchParen(code, open); close >= 0 {
						out = append(out, AttributeSpan{From: i, To: close + 1})
						j = close + 1
					}
				}
			}
			i = j - 1
		}
	}
	return out
}
