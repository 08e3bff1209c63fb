package cfront

import (
	"slices"
	"strings"

	"github.com/goop2/op2/internal/clex"
)

// What a kernel may do besides computing its arguments: write to the C
// library's streams (the generated code flushes them after its loop), or
// write a file, run a command or end the process (in lazy mode such a
// loop runs when it is issued, so that its effects come in program
// order). readEffects finds them in the source, as the names it uses.

// stdioNames are the functions and streams through which a kernel writes
// to the C library's streams (C++'s standard streams are synchronised
// with them): named anywhere, as a call, a function pointer or in a
// macro, they count.
var stdioNames = setOf(strings.Fields(`printf fprintf vprintf vfprintf puts fputs putchar fputc putc fwrite perror
	putchar_unlocked putc_unlocked fputc_unlocked fputs_unlocked fwrite_unlocked
	wprintf fwprintf vwprintf vfwprintf putwchar putwc fputwc fputws
	putwchar_unlocked putwc_unlocked fputwc_unlocked fputws_unlocked
	__builtin_printf __builtin_fprintf __builtin_vprintf __builtin_vfprintf __builtin_puts
	__builtin_fputs __builtin_putchar __builtin_fputc __builtin_putc __builtin_fwrite
	__builtin_printf_unlocked __builtin_fprintf_unlocked __builtin_puts_unlocked __builtin_putchar_unlocked
	__builtin_fputs_unlocked __builtin_fputc_unlocked __builtin_putc_unlocked __builtin_fwrite_unlocked
	warnx errx vwarn vwarnx verr verrx
	stdout stderr cout cerr wcout wcerr wclog`))

// effectNames are other functions with effects, named anywhere.
var effectNames = setOf(strings.Fields(`dprintf vdprintf fflush fopen freopen fdopen openat creat popen
	pwrite writev pwritev unlink _exit _Exit quick_exit __builtin_abort __builtin_trap __builtin_exit
	__builtin__exit __builtin__Exit __assert_fail __assert_perror_fail __assert_rtn _assert
	execv execve execvp execvpe execl execle execlp fexecve posix_spawn posix_spawnp vfork pthread_exit
	mkstemp mkostemp mkstemps mkostemps mkdtemp tmpfile tmpnam mkfifo mkdir mkdirat rmdir chdir fchdir symlink symlinkat
	linkat mknod unlinkat renameat ftruncate fchmod chown fchown lchown execveat thrd_exit killpg pthread_kill sigqueue
	tgkill open64 fopen64 creat64 setenv putenv unsetenv dup2 dup3 atexit at_quick_exit setlocale umask setsid daemon`))

// calledEffects are functions with effects whose names are ordinary words
// (a variable may be named err, a field open, a helper function
// truncate): unless the source declares the name (declares), they count
// when called,
// as name( or (name)( (qualified or not), or named in a macro's
// replacement text, or, when the source declares no object of the name,
// used as a value at all (a function pointer: = exit, &exit, a cast's
// operand, in an initializer, a conditional or a call's arguments), but
// as a member, a label or goto's target. clog is C++'s log stream but
// where it is called (<complex.h>'s logarithm) or the source declares an
// object of the name. assert, a macro, ends the process when its
// condition fails (NDEBUG is not defined).
var calledEffects = setOf(strings.Fields(`write open system exit abort raise kill remove rename err warn assert fork syscall link truncate chmod clone close signal`))

// fileStreams are C++'s file streams, which count where they are not the
// name of a header.
var fileStreams = setOf(strings.Fields(`ofstream wofstream fstream wfstream basic_ofstream basic_fstream`))

// readEffects reports whether code (a kernel's source with comments and
// literals blanked) names a way to write to the C library's streams
// (stdio), and one to act outside its arguments at all, stdio included
// (effects), outside the spans skipped (in order: the lines the
// preprocessor skips, preprocessed.skipped); maybe are the directives
// that may not be compiled (preprocessed.maybe).
func readEffects(code string, skipped [][2]int, maybe []int) (stdio, effects bool) {
	dirs := directives(code)
	in := func(at int) string { // the directive at offset at: "define", "include"... or ""
		for _, d := range dirs {
			if at >= d[0] && at < d[1] {
				return readDirective(code[d[0]:d[1]]).name
			}
			if d[0] > at {
				break
			}
		}
		return ""
	}
	macros := ownMacros(code, dirs, skipped, maybe)
	toks := clex.Tokenize(code)
	if len(skipped) > 0 {
		toks = slices.DeleteFunc(toks, func(t clex.Token) bool { // tokens and spans in order
			for len(skipped) > 0 && t.Start >= skipped[0][1] {
				skipped = skipped[1:]
			}
			return len(skipped) > 0 && t.Start >= skipped[0][0]
		})
	}
	// Names the source declares (after a type's name) or assigns to
	// (name = ...): a variable named err or clog is no function or
	// stream where it is used as a value, and a function the source
	// defines (with its body) is its own where it is called too. A call
	// of a name declared only as an object is the library's: an object
	// cannot be called in its own scope.
	declared := map[string]bool{}
	defined := map[string]bool{}
	for i := 1; i < len(toks); i++ {
		if w := toks[i].Text; (calledEffects[w] || w == "clog") && !declared[w] &&
			(declares(toks, i) && !prototype(toks, i) || next(toks, i+1) == "=" && next(toks, i+2) != "=") {
			declared[w] = true
			defined[w] = next(toks, i+1) == "("
		}
	}
	for i, t := range toks {
		name := t.Text[strings.LastIndexByte(t.Text, '.')+1:] // o.f: f
		switch {
		case stdioNames[name]:
			return true, true
		case effectNames[name]:
			effects = true
		case name == "clog":
			if next(toks, i+1) != "(" && !declared[name] {
				return true, true
			}
		case calledEffects[name] && (!defined[name] || libraryScope(toks, i)):
			n := next(toks, i+1)
			called := n == "(" || n == ")" && next(toks, i+2) == "(" && parenthesised(toks, i)
			switch in(t.Start) {
			case "define": // in a macro's text: it calls what it names
				if !macros.names[t.Start] {
					effects = true
				}
			case "": // code, not #undef assert or #ifdef exit
				if name == t.Text && macros.own(name, t.Start, n == "(") {
					break // the source's macro of the name
				}
				if called || !declared[name] && name == t.Text && valueUse(toks, i) {
					effects = true
				}
			}
		case fileStreams[name]:
			if in(t.Start) != "include" {
				effects = true
			}
		}
	}
	return false, effects
}

// libraryScope reports whether token i of toks, a name, is qualified as
// the C library's, ::close or std::exit: a function the source defines
// of that name (a member's) is not the one it names.
func libraryScope(toks []clex.Token, i int) bool {
	if next(toks, i-1) != "::" {
		return false
	}
	scope := next(toks, i-2)
	return scope == "std" || scope == "" || !clex.IsIdentStart(scope[0]) || expressionStarts[scope]
}

// inSpan reports whether offset at is in one of spans (in order).
func inSpan(spans [][2]int, at int) bool {
	for _, sp := range spans {
		if at >= sp[0] && at < sp[1] {
			return true
		}
	}
	return false
}

// parenthesised reports whether token i of toks is a name in parentheses
// of its own, (name) or (*name), as a call (name)(...) puts it, rather
// than the condition of if (name) or a call's argument, f(name).
func parenthesised(toks []clex.Token, i int) bool {
	k := i - 1
	for next(toks, k) == "*" || next(toks, k) == "&" {
		k--
	}
	if next(toks, k) != "(" {
		return false
	}
	before := next(toks, k-1)
	return before == "" || !clex.IsIdentStart(before[0]) || expressionStarts[before]
}

// expressionStarts are the keywords an expression may follow.
var expressionStarts = setOf(strings.Fields(`return case else do`))

// macroSpans are, for each name the source defines as a macro of its own,
// the spans of the source where that definition holds, and where each
// #define names it.
type macroSpans struct {
	spans map[string][]macroSpan
	names map[int]bool // offsets of the names in #define lines
}

// macroSpan is where a definition of the source's own holds, and whether
// the macro is function-like (it replaces only name( ... )).
type macroSpan struct {
	start, end int
	funcLike   bool
}

// own reports whether name at offset at in code, followed by '(' or not
// (call), is a use of a macro of the source's own: where its definition
// holds, and for a function-like macro as name( ... ) only ((exit)(1)
// and a pointer = exit name the library's).
func (m macroSpans) own(name string, at int, call bool) bool {
	for _, sp := range m.spans[name] {
		if at >= sp.start && at < sp.end {
			return call || !sp.funcLike
		}
	}
	return false
}

// ownMacros finds the macros code (with directives dirs) defines of its
// own, outside the spans skipped: a #define NAME holds from its line to
// an #undef NAME (or, for assert, an #include of <assert.h> or
// <cassert>, which defines it again) or the end. A macro whose
// replacement text names itself (#define exit(c) do { ...; exit(c); }
// while (0)) or pastes tokens (ex##it) may call what it is named, and is
// not its own; one that names itself through another macro does so in
// that macro's text, which counts where it is. A #define that may not be
// compiled (at an offset of maybe: #ifdef NDEBUG ... #define assert(c))
// holds nowhere, and ends the one before it: the name may be the
// library's.
func ownMacros(code string, dirs [][2]int, skipped [][2]int, maybe []int) macroSpans {
	m := macroSpans{spans: map[string][]macroSpan{}, names: map[int]bool{}}
	open := map[string]macroSpan{} // a definition in force: its start
	end := func(name string, at int) {
		if sp, ok := open[name]; ok {
			sp.end = at
			m.spans[name] = append(m.spans[name], sp)
			delete(open, name)
		}
	}
	for _, d := range dirs {
		if inSpan(skipped, d[0]) {
			continue
		}
		line := code[d[0]:d[1]]
		rd := readDirective(line)
		switch rd.name {
		case "define":
			if rd.macro == "" {
				continue
			}
			nameEnd := rd.body
			if rd.funcLike {
				nameEnd--
			}
			end(rd.macro, d[0])
			m.names[d[0]+nameEnd-len(rd.macro)] = true
			if _, uncertain := slices.BinarySearch(maybe, d[0]); uncertain {
				continue
			}
			selfNamed := strings.Contains(line[rd.body:], "##")
			for _, t := range clex.Tokenize(line[rd.body:]) {
				selfNamed = selfNamed || t.Text == rd.macro
			}
			if !selfNamed {
				open[rd.macro] = macroSpan{start: d[1], funcLike: rd.funcLike}
			}
		case "undef":
			if f := strings.Fields(line[strings.Index(line, "undef")+len("undef"):]); len(f) > 0 {
				end(f[0], d[0])
			}
		case "include":
			// A quoted header's name is blanked with the literals: it
			// may be <assert.h>'s.
			if h := rd.header; h >= 0 && (line[h:rd.headerEnd] == "assert.h" || line[h:rd.headerEnd] == "cassert" || line[h-1] == '"') {
				end("assert", d[0])
			}
		}
	}
	for name := range open {
		end(name, len(code))
	}
	return m
}

// prototype reports whether token i of toks, a name a declaration
// declares, is a function's declared without its body (void exit(int);):
// the library's function, not the source's own.
func prototype(toks []clex.Token, i int) bool {
	if next(toks, i+1) != "(" {
		return false
	}
	depth := 0
	for k := i + 1; k < len(toks); k++ {
		switch toks[k].Text {
		case "(":
			depth++
		case ")":
			if depth--; depth == 0 {
				return next(toks, k+1) != "{"
			}
		}
	}
	return true
}

// next returns the text of token k of toks, or "".
func next(toks []clex.Token, k int) string {
	if k < len(toks) && k >= 0 {
		return toks[k].Text
	}
	return ""
}

// objectTypes are, besides C's type specifier keywords (specifierWords),
// the type names after which a name is an object's: a variable's or a
// parameter's.
var objectTypes = setOf(strings.Fields(`auto bool size_t int32_t int64_t uint32_t uint64_t complex`))

// declares reports whether token i of toks is the name a declaration
// declares: after a type's name (a specifier keyword, a type name of
// objectTypes, or another identifier at the start of a declaration: a
// typedef's name, a struct's tag), past the declarator's pointers and
// qualifiers (double *const x, vec3 *x); a later declarator of a list
// whose statement starts with a type (double a, err[2]; a struct's
// double open, write;); or an enumerator.
func declares(toks []clex.Token, i int) bool {
	j := i - 1
	for j >= 0 && (toks[j].Text == "*" || toks[j].Text == "&" || toks[j].Text == "&&" || qualifiers[toks[j].Text]) {
		j--
	}
	if j < 0 {
		return false
	}
	w := toks[j].Text
	switch {
	case specifierWords[w] || objectTypes[w]:
		return true
	case w == "," || w == "{":
		s, open := statementStart(toks, i)
		switch {
		case open == "{" && (next(toks, s-2) == "enum" || next(toks, s-3) == "enum"):
			return true // an enumerator
		case open == "(" || open == "[" || open == "{" && strings.Contains("=,()?:", next(toks, s-2)):
			// A call's arguments or a parameter list (each parameter
			// has its own type), an index, an initializer.
			return false
		}
		return s < i && startsType(toks, s)
	case !clex.IsIdentStart(w[0]) || notTypes[w]:
		return false
	}
	switch next(toks, j-1) {
	case "", ";", "{", "}", "(", ",", "::", ">", "struct", "union", "enum", "extern", "const", "static", "volatile", "register":
		return true
	}
	return false
}

// statementStart returns the index of the first token of the statement
// (or list: a block's, parameters', initializer's, enumerators') that
// token i is in, skipping what brackets enclose before it, and the token
// that opened it ("{", "(", "[", or "" after a ';', a block or the
// start).
func statementStart(toks []clex.Token, i int) (int, string) {
	for k := i - 1; k >= 0; k-- {
		switch t := toks[k].Text; t {
		case ";":
			return k + 1, ""
		case "(", "[", "{":
			return k + 1, t
		case ")", "]", "}":
			open := "("
			switch t {
			case "]":
				open = "["
			case "}":
				open = "{"
			}
			depth := 0
			m := k
			for ; m >= 0; m-- {
				switch toks[m].Text {
				case t:
					depth++
				case open:
					depth--
				}
				if depth == 0 {
					break
				}
			}
			if m < 0 {
				return 0, ""
			}
			if t == "}" && !strings.Contains("=,(", next(toks, m-1)) {
				return k + 1, "" // after a block
			}
			k = m
		}
	}
	return 0, ""
}

// startsType reports whether the statement starting at token s starts
// with a type: a specifier keyword, qualifier or storage class, an
// objectTypes name, or a name followed by another, a '*', a '::' or a
// '<' (a typedef's name, C++'s std::array<double, 2>).
func startsType(toks []clex.Token, s int) bool {
	w := toks[s].Text
	if specifierWords[w] || objectTypes[w] || qualifiers[w] || w == "extern" || w == "typedef" {
		return true
	}
	if !clex.IsIdentStart(w[0]) || notTypes[w] {
		return false
	}
	n := next(toks, s+1)
	return n == "*" || n == "::" || n == "<" || n != "" && clex.IsIdentStart(n[0])
}

// notTypes are the keywords after which a name is an expression's, not a
// declaration's.
var notTypes = setOf(strings.Fields(`return sizeof case goto else do throw new delete co_return co_yield typedef`))

// valueUse reports whether token i, a name not called, is used as a
// function's value: followed by what ends an expression (';', ',', ')',
// '}', a conditional's ':'), not after a member access (p->f, o.f), a
// comparison or goto, not in (*name), and not a label.
func valueUse(toks []clex.Token, i int) bool {
	p, n := next(toks, i-1), next(toks, i+1)
	switch {
	case p == "->" || p == "." || p == "goto" || p == "==" || p == "!=":
		return false
	case p == "*" && n == ")":
		return false // a declarator, (*err)[2], or data, (*err)[0]
	case n == ":" && (p == "" || p == ";" || p == "{" || p == "}"):
		return false // a label
	}
	switch n {
	case ";", ",", ")", "}", ":", "":
		return true
	}
	return false
}
