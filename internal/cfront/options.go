package cfront

import (
	"regexp"
	"strings"

	"github.com/goop2/op2/internal/clex"
)

// readOptions returns what in a kernel's source src (blanked: src with
// its comments and literals blanked) changes GCC's options for the
// functions after it or for one function, or "": an optimize or target
// pragma (#pragma GCC, or in a source using _Pragma the words GCC
// optimize... anywhere, as macros may build the pragma; and
// push_options, pop_options, reset_options) outside comments, or an
// optimize, target or target_clones attribute
// (core.KernelInfo.SetsOptions).
func readOptions(src, blanked string) string {
	// Comments out, lines spliced (the source keeps its continuations,
	// moved to the next blank).
	code := strings.NewReplacer("\\\r\n", "", "\\\n", "").Replace(clex.Blank(src, false, nil))
	if m := optionPragma.FindString(code); m != "" {
		return strings.TrimSpace(m)
	}
	if strings.Contains(code, "_Pragma") {
		// Macros may build the pragma from parts on several lines
		// (GCC's manual's DO_PRAGMA): any GCC option pragma's words
		// count.
		if m := optionWords.FindString(code); m != "" {
			return "_Pragma ... " + m
		}
	}
	for _, sp := range clex.AttributeSpans(blanked) {
		if a := blanked[sp.From:sp.To]; optionAttribute.MatchString(a) {
			return a
		}
	}
	return ""
}

var (
	optionPragma    = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*pragma\s*GCC\s+(optimize|target|push_options|pop_options|reset_options)\b`)
	optionWords     = regexp.MustCompile(`\bGCC\s+(optimize|target|push_options|pop_options|reset_options)\b`)
	optionAttribute = regexp.MustCompile(`\b(__)?(optimize|target|target_clones)(__)?\s*\(`)
)
