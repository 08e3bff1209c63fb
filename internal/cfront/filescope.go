package cfront

import (
	"slices"
	"strings"

	"github.com/goop2/op2/internal/clex"
)

// declaringHeaders are headers that only declare functions, types and
// macros of reserved or standard names a source not including them
// cannot use without a compile error: a source that includes one
// changes nothing in code after it that compiles without it.
var declaringHeaders = setOf(strings.Fields(`math.h stdio.h stdlib.h string.h stdint.h stddef.h stdbool.h
	float.h limits.h inttypes.h stdarg.h errno.h complex.h`))

// readFileScope returns what in a kernel's source (code: its comments
// blanked) holds for the code after it in the same file, other than
// declarations and its own macros (core.KernelInfo.FileScope): each
// #pragma and _Pragma, each #include of a header other than
// declaringHeaders (<tgmath.h> turns cos into a type-generic macro,
// <assert.h> reads NDEBUG), and each #define or #undef before an
// #include (it may change what the header declares), one a line.
func readFileScope(code string) string {
	dirs := directives(code)
	lastInclude := -1
	for i, d := range dirs {
		if readDirective(code[d[0]:d[1]]).name == "include" {
			lastInclude = i
		}
	}
	var out []string
	for i, d := range dirs {
		line := code[d[0]:d[1]]
		r := readDirective(line)
		text := strings.Join(strings.Fields(line), " ")
		switch r.name {
		case "pragma":
			out = append(out, text)
		case "include":
			if r.header < 0 || !declaringHeaders[line[r.header:r.headerEnd]] || line[r.header-1] != '<' {
				out = append(out, text)
			}
		case "define", "undef":
			if i < lastInclude {
				out = append(out, text)
			}
		}
	}
	if strings.Contains(code, "_Pragma") || strings.Contains(code, "__pragma") {
		out = append(out, "_Pragma")
	}
	return strings.Join(slices.Compact(out), "\n")
}

// FileScopeNames returns the names the source declares at file scope:
// the functions it defines or declares, typedef names, enumerators and
// variables; not names it only uses (an initializer's random) or
// members of its structs.
func (m *SourceModel) FileScopeNames() map[string]bool {
	out := declaredNames(m.Outside)
	for _, f := range append(slices.Clip(m.Defs), m.Protos...) {
		out[f.Name] = true
	}
	for n := range m.Typedefs {
		out[n] = true
	}
	return out
}

// declaredNames returns the names the declarations of code (C at file
// scope, functions blanked: SourceModel.Outside) declare: each declarator's name (after a
// type word, a *, a ( * or a declaration's ,; before =, ;, [, , or )),
// and enumerators; not struct or union members, nor names in
// initializers.
func declaredNames(code string) map[string]bool {
	toks := clex.Tokenize(code)
	out := map[string]bool{}
	text := func(i int) string {
		if i < 0 || i >= len(toks) {
			return ""
		}
		return toks[i].Text
	}
	// Brace and parenthesis depth; after = in a declaration at depth 0.
	depth, parens, inInit := 0, 0, false
	for i := 0; i < len(toks); i++ {
		t := toks[i].Text
		switch {
		case t == "(":
			parens++
			continue
		case t == ")":
			parens--
		}
		switch {
		case (t == "struct" || t == "union") && (text(i+1) == "{" || text(i+2) == "{"):
			// Members are not file-scope names: skip the body.
			open := i + 1
			if text(open) != "{" {
				open++
			}
			d := 0
			for i = open; i < len(toks); i++ {
				if toks[i].Text == "{" {
					d++
				} else if toks[i].Text == "}" {
					if d--; d == 0 {
						break
					}
				}
			}
		case t == "enum" && (text(i+1) == "{" || text(i+2) == "{"):
			open := i + 1
			if text(open) != "{" {
				open++
			}
			for i = open + 1; i < len(toks) && toks[i].Text != "}"; i++ {
				if p := toks[i-1].Text; (p == "{" || p == ",") && clex.IsIdent(toks[i].Text) {
					out[toks[i].Text] = true
				}
			}
		case t == "{":
			depth++
		case t == "}":
			depth--
		case t == "=" && depth == 0:
			inInit = true
		case t == ";" && depth == 0:
			inInit = false
		case t == "," && depth == 0 && parens == 0:
			inInit = false
		case depth == 0 && !inInit && clex.IsIdent(t):
			prev, next := text(i-1), text(i+1)
			after := prev == "*" || prev == "," || prev == "}" || clex.Declares(prev)
			before := next == "=" || next == ";" || next == "[" || next == "," || next == ")"
			if after && before {
				out[t] = true
			}
		}
	}
	return out
}
