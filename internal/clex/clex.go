// Package clex holds the small lexical helpers shared by the readers of C
// source: the kernel reader (internal/core) and the device generator's
// source adapter (internal/codegen/device).
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
func MatchBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// MatchParen returns the index of the parenthesis closing the one at s[open], or -1.
func MatchParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
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
