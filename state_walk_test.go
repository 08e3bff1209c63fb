package op2_test

import (
	"go/ast"
	"go/token"
	"testing"
)

// TestOnlyTheDefaultRuntimeIsMutable checks the package's source: its only
// mutable package-level variable is rt, the default runtime; what every
// runtime shares lives in the process value it holds (internal/engine's
// Process and the root's process). The other variables are values that
// never change, each listed with what it is.
func TestOnlyTheDefaultRuntimeIsMutable(t *testing.T) {
	fixed := map[string]string{
		"rt":                     "the default runtime",
		"ErrBackendUnavailable":  "sentinel error",
		"ErrNoCompiler":          "sentinel error",
		"ErrMPIUnavailable":      "sentinel error",
		"ErrMETISUnavailable":    "sentinel error",
		"ErrPTScotchUnavailable": "sentinel error",
		"ErrPETScUnavailable":    "sentinel error",
		"forNoData":              "lock mode",
		"forData":                "lock mode",
		"forStatus":              "lock mode",
		"forCollective":          "lock mode",
		"_":                      "compile-time size checks",
	}
	_, files := parsePackage(t)
	seen := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					seen[n.Name] = true
					if _, ok := fixed[n.Name]; !ok {
						t.Errorf("package-level variable %s: process-wide state belongs in the process value (op2.go process, internal/engine Process); a value that never changes is listed here with what it is", n.Name)
					}
				}
			}
		}
	}
	for name := range fixed {
		if !seen[name] {
			t.Errorf("the list names %s, which is no longer a package-level variable", name)
		}
	}
}
