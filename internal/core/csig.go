package core

import (
	"fmt"
	"strings"
)

// Param is one parameter of a kernel's C signature as far as GoOP2 can read it.
type Param struct {
	Text  string     // the declaration as written
	Name  string     // parameter name, "" if unnamed
	Type  ScalarType // 0 when the base type is not one GoOP2 knows (a typedef, a struct)
	Depth int        // pointer depth: '*' and '[]' counted together
}

// KernelInfo is what GoOP2 reads from a kernel's source once.
type KernelInfo struct {
	Params []Param
	Idents map[string]bool // every identifier in the source, to find the constants it uses
	// Positions in the source of the definition's name, of its parameter
	// list (Source[ListStart:ListEnd] is the text between the parentheses)
	// and of its body's braces (Source[BodyOpen] is '{', Source[BodyClose]
	// '}'). Backends adapt the definition with them.
	NameStart, ListStart, ListEnd, BodyOpen, BodyClose int
}

// ParseKernel finds the definition of function name in src and reads its
// parameters. It returns an error when no definition is found.
func ParseKernel(src, name string) (*KernelInfo, error) {
	clean := blank(src, true)
	info := &KernelInfo{Idents: map[string]bool{}}
	// Identifiers in macro bodies count: a macro may use a constant.
	for _, id := range identifiers(blank(src, false)) {
		info.Idents[id] = true
	}
	pos := 0
	for {
		i := indexIdent(clean[pos:], name)
		if i < 0 {
			return nil, fmt.Errorf("kernel source has no definition of function %q", name)
		}
		i += pos
		pos = i + len(name)
		j := skipSpace(clean, pos)
		if j >= len(clean) || clean[j] != '(' {
			continue
		}
		end := matchParen(clean, j)
		if end < 0 {
			return nil, fmt.Errorf("kernel %q: unbalanced parentheses in its parameter list", name)
		}
		k := skipSpace(clean, end+1)
		if k >= len(clean) || clean[k] != '{' {
			continue // a call or a prototype
		}
		close := matchBrace(clean, k)
		if close < 0 {
			return nil, fmt.Errorf("kernel %q: unbalanced braces in its body", name)
		}
		info.Params = parseParams(clean[j+1 : end])
		info.NameStart, info.ListStart, info.ListEnd, info.BodyOpen, info.BodyClose = i, j+1, end, k, close
		return info, nil
	}
}

// blank returns src with comments and the contents of string and character
// literals replaced by spaces, and also preprocessor lines when directives
// is set. Every other byte, and every newline, stays where it was, so
// offsets into the result are offsets into src.
func blank(src string, directives bool) string {
	b := []byte(src)
	clear := func(from, to int) {
		for k := from; k < to && k < len(b); k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], "//"):
			e := strings.IndexByte(src[i:], '\n')
			if e < 0 {
				e = len(src) - i
			}
			clear(i, i+e)
			i += e
		case strings.HasPrefix(src[i:], "/*"):
			e := strings.Index(src[i+2:], "*/")
			if e < 0 {
				clear(i, len(src))
				return string(b)
			}
			clear(i, i+e+4)
			i += e + 3
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			clear(i+1, j) // keep the quotes
			i = j
		case directives && c == '#' && lineStart(src, i):
			j := i
			for j < len(src) && src[j] != '\n' {
				if src[j] == '\\' && j+1 < len(src) && src[j+1] == '\n' {
					j++
				}
				j++
			}
			clear(i, j)
			i = j
		}
	}
	return string(b)
}

// lineStart reports whether only blanks precede position i on its line.
func lineStart(s string, i int) bool {
	for k := i - 1; k >= 0 && s[k] != '\n'; k-- {
		if s[k] != ' ' && s[k] != '\t' {
			return false
		}
	}
	return true
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func identifiers(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		case c >= '0' && c <= '9':
			for i < len(s) && (isIdentChar(s[i]) || s[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return out
}

// indexIdent finds name in s as a whole identifier.
func indexIdent(s, name string) int {
	for off := 0; ; {
		i := strings.Index(s[off:], name)
		if i < 0 {
			return -1
		}
		i += off
		before := i == 0 || !isIdentChar(s[i-1])
		after := i+len(name) >= len(s) || !isIdentChar(s[i+len(name)])
		if before && after {
			return i
		}
		off = i + 1
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func matchParen(s string, open int) int {
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

func matchBrace(s string, open int) int {
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

func parseParams(list string) []Param {
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
	parts = append(parts, list[start:])
	if len(parts) == 1 && (strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[0]) == "void") {
		return nil
	}
	params := make([]Param, len(parts))
	for i, p := range parts {
		params[i] = parseParam(strings.TrimSpace(p))
	}
	return params
}

var qualifiers = map[string]bool{
	"const": true, "volatile": true, "restrict": true, "__restrict": true,
	"__restrict__": true, "register": true, "static": true,
}

func parseParam(text string) Param {
	p := Param{Text: text}
	p.Depth = strings.Count(text, "*") + strings.Count(text, "[")
	// Identifiers before any '[' form the type and the name.
	head := text
	if i := strings.IndexByte(head, '['); i >= 0 {
		head = head[:i]
	}
	var words []string
	for _, w := range identifiers(head) {
		if !qualifiers[w] {
			words = append(words, w)
		}
	}
	if len(words) >= 2 {
		if _, known := baseTypes[strings.Join(words, " ")]; !known {
			p.Name = words[len(words)-1]
			words = words[:len(words)-1]
		}
	}
	p.Type = baseTypes[strings.Join(words, " ")]
	return p
}

var baseTypes = map[string]ScalarType{
	"double":           Float64,
	"float":            Float32,
	"int":              Int32,
	"signed":           Int32,
	"signed int":       Int32,
	"int32_t":          Int32,
	"long":             Int64,
	"long int":         Int64,
	"signed long":      Int64,
	"long long":        Int64,
	"long long int":    Int64,
	"signed long long": Int64,
	"int64_t":          Int64,
	"unsigned":         Uint32,
	"unsigned int":     Uint32,
	"uint32_t":         Uint32,
}
