package clex

import "strings"

// Token is a token of C source: its text and its offsets.
type Token struct {
	Text       string
	Start, End int
}

// Tokenize splits code (comments and literals blanked, see Blank) into
// tokens: identifiers and numbers, the punctuators -> ++ -- && || and
// (C++) :: as one token each, and every other non-space byte as a token
// of its own.
func Tokenize(code string) []Token {
	var out []Token
	for i := 0; i < len(code); {
		c := code[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case IsIdentChar(c) || (c == '.' && i+1 < len(code) && code[i+1] >= '0' && code[i+1] <= '9'):
			j := i + 1
			for j < len(code) && (IsIdentChar(code[j]) || code[j] == '.' ||
				((code[j] == '+' || code[j] == '-') && strings.ContainsRune("eEpP", rune(code[j-1])) && !IsIdentStart(code[i])) ||
				DigitSeparator(code, j)) {
				j++
			}
			out = append(out, Token{code[i:j], i, j})
			i = j
			continue
		}
		n := 1
		if i+1 < len(code) {
			switch code[i : i+2] {
			case "->", "++", "--", "&&", "||", "::":
				n = 2
			}
		}
		out = append(out, Token{code[i : i+n], i, i + n})
		i += n
	}
	return out
}

// prefixKeywords are the keywords after which an identifier or * starts
// an expression (not a declaration).
var prefixKeywords = map[string]bool{"return": true, "sizeof": true, "else": true, "do": true, "case": true}

// OperandEnd reports whether token t can end an operand, so that a * or &
// after it is a binary operator.
func OperandEnd(t string) bool {
	if t == ")" || t == "]" || t == "++" || t == "--" {
		return true
	}
	return t != "" && IsIdentChar(t[0]) && !prefixKeywords[t]
}

// Declares reports whether token text t, before a name (or before the *
// before it), makes the name part of a declaration: a type name, not a
// keyword that starts an expression.
func Declares(t string) bool { return t != "" && IsIdentStart(t[0]) && !prefixKeywords[t] }
