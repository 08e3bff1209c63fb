package clex

import (
	"slices"
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
}
