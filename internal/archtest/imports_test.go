package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tableRow is a row of ARCHITECTURE.md's package table: its packages
// (one or more in backquotes) and the module's packages they import.
var tableRow = regexp.MustCompile("^\\| ((?:`[^`]+`(?:, )?)+) \\| .* \\| ([^|]*) \\|$")

// TestPackageTable: ARCHITECTURE.md's package table has one row for
// every package of the module, with the module's packages it imports,
// as `go list` gives them (`internal/` left out, `op2` the root).
func TestPackageTable(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| package | its job | imports |\n")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no package table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	documented := map[string]string{} // package: its imports, as the table gives them
	for _, line := range strings.Split(table, "\n")[1:] {
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("ARCHITECTURE.md: a row of the package table not read: %s", line)
			continue
		}
		for _, p := range strings.Split(m[1], ", ") {
			documented[strings.Trim(p, "`")] = strings.TrimSpace(m[2])
		}
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/goop2/op2"
	short := func(path string) string {
		p := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if p == "" {
			return "op2"
		}
		return strings.TrimPrefix(p, "internal/")
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, ": ")
		var own []string
		for _, imp := range strings.Fields(imports) {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				own = append(own, short(imp))
			}
		}
		slices.Sort(own)
		want := "—"
		if len(own) > 0 {
			want = strings.Join(own, ", ")
		}
		p := short(path)
		listed[p] = true
		switch got, ok := documented[p]; {
		case !ok:
			t.Errorf("ARCHITECTURE.md's package table has no row for %s (imports: %s)", p, want)
		case got != want:
			t.Errorf("ARCHITECTURE.md's package table: %s imports %s, not %s", p, want, got)
		}
	}
	for p := range documented {
		if !listed[p] {
			t.Errorf("ARCHITECTURE.md's package table has a row for %s, which is not a package of the module", p)
		}
	}
}
