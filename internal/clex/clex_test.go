package clex

import (
	"slices"
	"strings"
	"testing"
)

func TestHelpers(t *testing.T) {
	src := "int f(int a) { return g(a[0], (b)) + x1; }"
	if got, want := Identifiers(src), []string{"int", "f", "int", "a", "return", "g", "a", "b", "x1"}; !slices.Equal(got, want) {
		t.Errorf("Identifiers = %q, want %q", got, want)
	}
	for _, c := range []struct {
		name string
		want int
	}{{"a", 10}, {"g", 22}, {"x", -1}, {"x1", 37}} {
		if got := IndexIdent(src, c.name); got != c.want {
			t.Errorf("IndexIdent(%q) = %d, want %d", c.name, got, c.want)
		}
	}
	open := 5 // "(int a)"
	if got := MatchParen(src, open); got != 11 {
		t.Errorf("MatchParen = %d, want 11", got)
	}
	if got := MatchBrace(src, 13); got != len(src)-1 {
		t.Errorf("MatchBrace = %d, want %d", got, len(src)-1)
	}
	if MatchParen("(()", 0) != -1 {
		t.Error("an unclosed parenthesis matched")
	}
	if got := SkipSpace("  \t\n x", 0); got != 5 {
		t.Errorf("SkipSpace = %d, want 5", got)
	}
	if !LineStart("a\n   #define", 5) || LineStart("a #", 2) {
		t.Error("LineStart")
	}
	if !IsIdentStart('_') || IsIdentStart('1') || !IsIdentChar('1') || IsIdentChar('-') {
		t.Error("IsIdentStart/IsIdentChar")
	}
	for s, want := range map[string]bool{"res_calc": true, "_x1": true, "": false, "1x": false, "a-b": false, "a b": false} {
		if IsIdent(s) != want {
			t.Errorf("IsIdent(%q) = %v, want %v", s, !want, want)
		}
	}
}

func TestJoinLines(t *testing.T) {
	cases := []struct{ in, want string }{
		{"no continuation\n", "no continuation\n"},
		{"dou\\\nble x;", "double\\\n x;"},
		{"a-\\\n>b;\n", "a->b;\\\n\n"},
		{"#def\\\nine X 1\n", "#define\\\n X 1\n"},
		{"#define X 1 \\\n + 2\n", "#define X 1 \\\n + 2\n"},
		{"// c\\\nomment\nint x;", "// comment\\\n\nint x;"},
		{"\"ab\\\ncd\" x", "\"abcd\"\\\n x"},
		{"do\\\r\nuble x", "double\\\r\n x"},
		{"a\\\nb\\\nc d", "abc\\\n\\\n d"},
		{"end\\\n", "end\\\n"},
		{"a \\ b\n", "a \\ b\n"},
		// A raw string's continuations are its own; one after it moves.
		{"s = R\"(a\\\nb c)\"; x\\\ny", "s = R\"(a\\\nb c)\"; xy\\\n"},
		// R"( in a comment, a string or a character literal starts none.
		{"/* R\"( */ ke\\\nrn(\"(%d)\")", "/* R\"( */ kern(\"(%d)\")\\\n"},
		{"// R\"(\nke\\\nrn(\"(%d)\")", "// R\"(\nkern(\"(%d)\")\\\n"},
		{"s = \"R\\\"(\"; ke\\\nrn(\")\\\"\")", "s = \"R\\\"(\"; kern(\")\\\"\")\\\n"},
		{"c = 'R'; d = R\"(x\\\ny)\"", "c = 'R'; d = R\"(x\\\ny)\""},
		{"e = 1\\\n'000; d = R\"(x\\\ny)\"", "e = 1'000;\\\n d = R\"(x\\\ny)\""},
		{"e = 1'\\\n000; d = R\"(x\\\ny)\"", "e = 1'000;\\\n d = R\"(x\\\ny)\""},
	}
	for _, c := range cases {
		got := JoinLines(c.in)
		if got != c.want {
			t.Errorf("JoinLines(%q) = %q, want %q", c.in, got, c.want)
		}
		if len(got) != len(c.in) || strings.Count(got, "\n") != strings.Count(c.in, "\n") {
			t.Errorf("JoinLines(%q) changed the length or the number of lines: %q", c.in, got)
		}
	}
}

func TestDigraphs(t *testing.T) {
	cases := []struct{ in, want string }{
		{"void k(double x<:3:>) <% x<:0:> = 1; %>", "void k(double x[ 3] ) {  x[ 0]  = 1; } "},
		{"%:define N 3\n", "# define N 3\n"},
		{"%:define CAT(a, b) a %:%: b\n", "# define CAT(a, b) a ##   b\n"},
		{"char *s = \"<% %>\"; // <:\n/* :> */ c = '%';", "char *s = \"<% %>\"; // <:\n/* :> */ c = '%';"},
		{"a ? b :> c", "a ? b ]  c"},
		{"x % y < z", "x % y < z"},
	}
	for _, c := range cases {
		if got := Digraphs(c.in); got != c.want {
			t.Errorf("Digraphs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLineCommentEnd(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"// a\nb", 4}, {"// a\\\nb\nc", 7}, {"// a\\\r\nb\nc", 8}, {"// a", 4}, {"// a\\\n", 6},
	}
	for _, c := range cases {
		if got := LineCommentEnd(c.in, 0); got != c.want {
			t.Errorf("LineCommentEnd(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestBlank: comments always become spaces, literals' contents only when
// asked and not where keep says so; newlines and every other byte stay
// where they were.
func TestBlank(t *testing.T) {
	keepQuoted := func(src string, i int) bool { return strings.HasPrefix(src[i:], `"keep`) }
	cases := []struct {
		in       string
		literals bool
		keep     func(string, int) bool
		want     string
	}{
		{"a // c\nb", false, nil, "a     \nb"},
		{"a /* c\nd */ b", false, nil, "a     \n     b"},
		{"a /* open", true, nil, "a        "},
		{"// c \\\nd\ne", false, nil, "      \n \ne"},
		{`s = "x // y"; t`, false, nil, `s = "x // y"; t`},
		{`s = "x // y"; t`, true, nil, `s = "      "; t`},
		{`c = '\''; d /* e */`, true, nil, `c = '  '; d        `},
		{"s = \"open\nt\"", true, nil, "s = \"    \nt\""},
		{`"keep" "drop" // c`, true, keepQuoted, `"keep" "    "     `},
		{`"keep" /* c */ "drop"`, false, keepQuoted, `"keep"         "drop"`},
		{"#include \"keep.h\" /* c\nd */ e", true, keepQuoted, "#include \"keep.h\"     \n     e"},
		// Digit separators (C++14, C23) are no literals; u8'a' and
		// L'a' are.
		{"n = 1'000; m = 0x1'ff, .5'0; c = u8'a' + L'b'; /* x */", true, nil, "n = 1'000; m = 0x1'ff, .5'0; c = u8' ' + L' ';        "},
		// Raw strings (C++11; GCC's C): quotes and comment marks inside
		// them are theirs; R"x" without a '(' is none.
		{"s = R\"d(a \" // b)\" x)d\"; t /* c */", true, nil, "s = R\"                \"; t        "},
		{"s = u8R\"(p[0]\n)\" + LR\"(q)\" + R\"x\"; // c", true, nil, "s = u8R\"     \n \" + LR\"   \" + R\" \";     "},
		{"s = AR\"(a)\"; // c", true, nil, "s = AR\"   \";     "},
	}
	for _, c := range cases {
		if got := Blank(c.in, c.literals, c.keep); got != c.want {
			t.Errorf("Blank(%q, %v) = %q, want %q", c.in, c.literals, got, c.want)
		}
	}
}

func TestLogicalLineEnd(t *testing.T) {
	cases := []struct {
		in   string
		i    int
		want int
	}{
		{"#define A 1\nb", 0, 11}, {"#define A \\\n 1\nb", 0, 14}, {"#x", 0, 2}, {"a\n#if 1\\", 2, 8}, {"\n", 0, 0},
	}
	for _, c := range cases {
		if got := LogicalLineEnd(c.in, c.i); got != c.want {
			t.Errorf("LogicalLineEnd(%q, %d) = %d, want %d", c.in, c.i, got, c.want)
		}
	}
}

func TestSplitList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"void", []string{"void"}},
		{"int a, double *b", []string{"int a", " double *b"}},
		{"int (*f)(int, int), double m[2][3], ...", []string{"int (*f)(int, int)", " double m[2][3]", " ..."}},
		{"a,", []string{"a", ""}},
	} {
		if got := SplitList(c.in); !slices.Equal(got, c.want) {
			t.Errorf("SplitList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAttributeSpans(t *testing.T) {
	for _, c := range []struct {
		code string
		want []AttributeSpan
	}{
		{"void f(double *x) { *x = 1; }", nil},
		{"[[maybe_unused]] int a;", []AttributeSpan{{0, 16, true}}},
		{"int b __attribute__((aligned(8)));", []AttributeSpan{{6, 33, false}}},
		{"[[a]] int c __attribute((x)); [[b]]", []AttributeSpan{{0, 5, true}, {12, 28, false}, {30, 35, true}}},
		{"int d; [[unterminated", nil},
		{"int my__attribute__x;", nil},
	} {
		if got := AttributeSpans(c.code); !slices.Equal(got, c.want) {
			t.Errorf("AttributeSpans(%q) = %v, want %v", c.code, got, c.want)
		}
	}
}

// TestLiteralEnd: a literal ends at its closing quote (not an escaped
// one; a raw string's after its delimiter), or, unterminated, at its
// line's newline or the end of the text.
func TestLiteralEnd(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{`"ab" x`, 3},
		{`"a\"b" x`, 5},
		{`'\'' x`, 3},
		{"\"open\nx\"", 5},
		{`"open`, 5},
		{`"a\`, 3},
		{`R"d(")")d" x`, 9},
	} {
		at := strings.IndexByte(c.src, '"')
		if at < 0 {
			at = strings.IndexByte(c.src, '\'')
		}
		if got := LiteralEnd(c.src, at); got != c.want {
			t.Errorf("LiteralEnd(%q, %d) = %d, want %d", c.src, at, got, c.want)
		}
	}
}

// TestNormalizeByteOrderMark: a leading byte order mark becomes blanks
// (the same length), one elsewhere stays.
func TestNormalizeByteOrderMark(t *testing.T) {
	for in, want := range map[string]string{
		"\ufeffvoid k(double *x) { *x = 1; }":     "   void k(double *x) { *x = 1; }",
		"void k(double *x) { *x = 1; } // \ufeff": "void k(double *x) { *x = 1; } // \ufeff",
	} {
		if got := Normalize(in); got != want || len(got) != len(in) {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenComment(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{"int x; /* closed */", -1},
		{"/**/", -1},
		{"int x; /* open", 7},
		{"/*/", 0},
		{"// a line comment /*", -1},
		{`char *s = "/*";`, -1},
		{"int y; /* a */ int z; /* b *", 22},
	} {
		if got := OpenComment(c.src); got != c.want {
			t.Errorf("OpenComment(%q) = %d, want %d", c.src, got, c.want)
		}
	}
}
