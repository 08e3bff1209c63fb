package cfront

import (
	"strings"
	"testing"
)

// TestEvalIf: #if expressions are evaluated as a C compiler does, with
// intmax_t/uintmax_t arithmetic and C's conversions; unknown macros make
// the result unknown unless C's rules make them irrelevant; errors name
// the line.
func TestEvalIf(t *testing.T) {
	macros := map[string]macro{
		"ONE":   {state: defined, body: "1"},
		"TWO":   {state: defined, body: "ONE + ONE"},
		"SUM":   {state: defined, body: "1 + 1"},
		"NEG":   {state: defined, body: "-1"},
		"BIG":   {state: defined, body: "0xffffffffffffffff"},
		"SELF":  {state: defined, body: "SELF + 1"},
		"EMPTY": {state: defined, body: ""},
		"F":     {state: defined, funcLike: true, body: "(x) x"},
		"GONE":  {state: undefined},
		"MAYBE": {state: maybeDefined, body: "1"},
	}
	cases := []struct {
		expr string
		want tri
		err  string // substring of the error; "" for none
	}{
		// Literals and C's integer conversions.
		{"1", yes, ""}, {"0", no, ""}, {"0x10 == 16", yes, ""}, {"010 == 8", yes, ""}, {"0b101 == 5", yes, ""},
		{"10UL == 10", yes, ""}, {"1'000 == 1000", yes, ""}, {"'a' == 97", yes, ""}, {"'\\n' == 10", yes, ""},
		{"'\\xff' < 0", yes, ""}, {"'\\0' == 0", yes, ""},
		{"-1 > 0u", yes, ""}, {"-1 > 0", no, ""}, {"-1 < 0U", no, ""}, {"0u - 1 > 0", yes, ""},
		{"18446744073709551615 == -1", yes, ""}, {"9223372036854775807 > 0", yes, ""},
		{"9223372036854775808 > 0", yes, ""}, {"-9223372036854775807 - 1 < 0", yes, ""},
		{"(-1) / 2 == 0", yes, ""}, {"-7 % 3 == -1", yes, ""}, {"-7u % 3 == 0", yes, ""},
		{"-1 >> 1 == -1", yes, ""}, {"1 << 63 < 0", yes, ""}, {"1u << 63 > 0", yes, ""}, {"~0 == -1", yes, ""}, {"~0u > 0", yes, ""},
		{"(0 ? 1u : -1) > 0", yes, ""}, {"(1 ? -1 : 0) < 0", yes, ""},
		{"!0 + !5 == 1", yes, ""}, {"(3 > 2) == 1", yes, ""}, {"(2, 3) == 3", yes, ""},
		// Precedence and associativity.
		{"1 + 2 * 3 == 7", yes, ""}, {"10 - 4 - 3 == 3", yes, ""}, {"1 | 2 ^ 3 & 1 == 3", yes, ""},
		{"1 ? 2 : 0 ? 3 : 4", yes, ""}, {"0 ? 1 : 0 ? 1 : 0", no, ""}, {"2 < 3 == 1", yes, ""},
		// Macros, defined, and identifiers that are no macro.
		{"ONE", yes, ""}, {"TWO == 2", yes, ""}, {"SUM * 2 == 3", yes, ""}, {"NEG < 0", yes, ""}, {"BIG > 0", yes, ""},
		{"SELF == 1", yes, ""}, {"EMPTY 1", yes, ""}, {"defined ONE", yes, ""}, {"defined(F)", yes, ""},
		{"defined GONE", no, ""}, {"defined NOWHERE", no, ""}, {"NOWHERE", no, ""}, {"NOWHERE + 1 == 1", yes, ""},
		{"GONE == 0", yes, ""}, {"F == 0", yes, ""}, {"!defined(ONE) || ONE", yes, ""},
		// Unknown values.
		{"MAYBE", maybe, ""}, {"defined MAYBE", maybe, ""}, {"__GNUC__", maybe, ""}, {"defined(__OPENCL_VERSION__)", maybe, ""},
		{"F(1)", maybe, ""}, {"__has_include(<math.h>)", maybe, ""}, {"cl_khr_fp64", maybe, ""},
		{"0 && __GNUC__", no, ""}, {"1 || MAYBE", yes, ""}, {"__GNUC__ && 0", no, ""}, {"MAYBE ? 1 : 1", yes, ""},
		// Errors, with the line; none in operands C does not evaluate.
		{"1 / 0", maybe, "line 7: division by zero"}, {"1 % 0", maybe, "division by zero"},
		{"ONE / (ONE - 1)", maybe, "division by zero"}, {"0 && 1 / 0", no, ""}, {"1 || 1 % 0", yes, ""},
		{"0 ? 1 / 0 : 2", yes, ""}, {"1 ? 2 : 1 / 0", yes, ""}, {"MAYBE && 1 / 0", maybe, ""},
		{"", maybe, "missing operand"}, {"1 +", maybe, "missing operand"}, {"(1", maybe, `expected ")"`}, {"1 2", maybe, "unexpected"},
		{"1.5 > 1", maybe, "floating constant"}, {"99999999999999999999", maybe, "too large"}, {"\"s\"", maybe, "string literal"},
		{"defined", maybe, "without a macro name"}, {"1 ? 2", maybe, `expected ":"`}, {"1 @ 2", maybe, "unexpected"},
	}
	st := &ppState{macros: macros, included: no}
	for _, c := range cases {
		got, err := evalIf(c.expr, 7, st.lookup)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("#if %s: error %v, want %q", c.expr, err, c.err)
			continue
		}
		if err == nil && got != c.want {
			t.Errorf("#if %s = %v, want %v", c.expr, got, c.want)
		}
	}
}

// TestParseKernelConditionalSignatures: the parameter list the reader
// finds is the one in the branch the compiler compiles, decided by
// macros, #if arithmetic and #ifdef; errors name the directive's line.
func TestParseKernelConditionalSignatures(t *testing.T) {
	two := "void k(double *a, float *b) {}"
	one := "void k(int *a) {}"
	cases := []struct {
		name, src string
		n         int    // number of parameters; 0 when an error is wanted
		err       string // substring of the error
	}{
		{"#if arithmetic", "#define N 3\n#if N * 2 > 5\n" + two + "\n#else\n" + one + "\n#endif", 2, ""},
		{"unsigned comparison", "#if -1 > 0u\n" + two + "\n#else\n" + one + "\n#endif", 2, ""},
		{"signed comparison", "#if -1 > 0\n" + two + "\n#else\n" + one + "\n#endif", 1, ""},
		{"undefined macro is 0", "#if VARIANT == 2\n" + two + "\n#else\n" + one + "\n#endif", 1, ""},
		{"#ifdef undefined", "#ifdef VARIANT\n" + two + "\n#else\n" + one + "\n#endif", 1, ""},
		{"#ifndef undefined", "#ifndef VARIANT\n" + two + "\n#else\n" + one + "\n#endif", 2, ""},
		{"#elif chain", "#define V 3\n#if V == 1\n" + one + "\n#elif V == 2\n" + one + "\n#elif V == 3\n" + two + "\n#else\n" + one + "\n#endif", 2, ""},
		{"#elif after a taken branch is not evaluated", "#if 1\n" + two + "\n#elif 1 / 0\n" + one + "\n#endif", 2, ""},
		{"division by zero in a skipped group", "#if 0\n#if 1 / 0\n#endif\n#endif\n" + two, 2, ""},
		{"character constant", "#if 'A' == 65\n" + two + "\n#else\n" + one + "\n#endif", 2, ""},
		{"continued #if", "#if 1 + \\\n 1 == 2\n" + two + "\n#else\n" + one + "\n#endif", 2, ""},
		{"ternary picks the list", "#define D 0\n#if D ? 0 : 1\n" + two + "\n#else\n" + one + "\n#endif", 2, ""},
		{"macro defined in a branch", "#if 0\n#define W\n#endif\n#ifdef W\n" + one + "\n#else\n" + two + "\n#endif", 2, ""},
		{"list split by #if inside the parentheses", "void k(double *a\n#if 2 > 1\n, float *b\n#endif\n) {}", 2, ""},
		{"division by zero", "\n\n#if 4 / (2 - 2)\n" + two + "\n#endif", 0, "#if at line 3: division by zero"},
		{"division by zero in #elif", "#if 0\n#elif 1 % 0\n#endif\n" + two, 0, "line 2: division by zero"},
		{"malformed #if", "#if (1\n#endif\n" + two, 0, "#if at line 1"},
		{"#endif without #if", two + "\n#endif", 0, "#endif at line 2 without #if"},
		{"#else without #if", "#else\n" + two, 0, "#else at line 1 without #if"},
		{"unterminated #if", "#if 1\n" + two, 0, "unterminated #if 1 (line 1)"},
		{"unknown after #include", "#include <stdio.h>\n#ifdef EOF\n" + two + "\n#else\n" + one + "\n#endif", 0, "cannot evaluate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, err := ParseKernel(c.src, "k")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Params) != c.n {
				t.Errorf("params %+v, want %d", info.Params, c.n)
			}
		})
	}
}
