package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link or image: [text](target) or
// [text](target "title"), target without blanks.
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)

// TestDocLinks: every relative link in README.md, CHANGELOG.md and docs/
// (history left out: it keeps what was true then) names a file of the
// repository, and an anchor (file.md#heading) one of that file's
// headings as GitHub makes anchors of them, but in CHANGELOG.md, whose
// entries point where the figures were on their day.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files := append(docFiles(t, root), filepath.Join(root, "CHANGELOG.md"))
	anchors := map[string]map[string]bool{} // by file
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path], nil
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, file)
		for i, line := range strings.Split(outsideCode(string(b)), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				}
				fi, err := os.Stat(resolved)
				if err != nil {
					t.Errorf("%s:%d: link %s: no such file", name, i+1, target)
					continue
				}
				if anchor == "" || fi.IsDir() || !strings.HasSuffix(resolved, ".md") || name == "CHANGELOG.md" {
					continue
				}
				a, err := anchorsOf(resolved)
				if err != nil {
					t.Fatal(err)
				}
				if !a[anchor] {
					t.Errorf("%s:%d: link %s: no heading of %s has the anchor %q", name, i+1, target, filepath.Base(resolved), anchor)
				}
			}
		}
	}
}

// inlineCode is a code span of one line.
var inlineCode = regexp.MustCompile("`[^`\n]*`")

// outsideCode returns md with its fenced code blocks' lines and its code
// spans blanked (lines kept, so that line numbers hold).
func outsideCode(md string) string {
	return inlineCode.ReplaceAllString(outsideFences(md), "``")
}

// outsideFences returns md with its fenced code blocks' lines blanked.
func outsideFences(md string) string {
	lines := strings.Split(md, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// headingAnchors returns the anchors GitHub gives md's headings: the
// heading's text without its markup, lower case, without punctuation but
// hyphens and underscores, blanks made hyphens; a repeated one gets -1,
// -2 and so on.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range strings.Split(outsideFences(md), "\n") {
		text, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " ")
		if !ok || !strings.HasPrefix(l, "#") {
			continue
		}
		text = mdLink.ReplaceAllString(text, "]") // [text](url): text
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

// docPackages are the packages the docs name by their short name, by
// directory under the module's root.
var docPackages = map[string]string{
	"op2": ".", "hdf5": "hdf5", "vtk": "vtk", "vtkfile": "vtk/vtkfile", "mesh": "mesh",
	"gmsh": "mesh/gmsh", "unstructured": "mesh/unstructured", "cgns": "mesh/cgns", "topology": "mesh/topology",
}

// docName is a code span naming a package's exported name: op2.NewSet,
// hdf5.File.WriteMap.
var docName = regexp.MustCompile("`(" + `op2|hdf5|vtk|vtkfile|mesh|gmsh|unstructured|cgns|topology)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// TestDocNames: every exported name the docs (README.md and docs/ but
// history) write as pkg.Name or pkg.Type.Method in a code span is one of
// the package's: a function, type, variable or constant, or a type's
// method or field (hdf5.WriteMap(out, m) does not compile: it is
// File.WriteMap).
func TestDocNames(t *testing.T) {
	root := filepath.Join("..", "..")
	names := map[string]map[string]bool{} // package: Name and Type.Member
	for pkg, dir := range docPackages {
		names[pkg] = exportedNames(t, filepath.Join(root, dir))
	}
	files := docFiles(t, root)
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, file)
		for i, line := range strings.Split(string(b), "\n") {
			if name == filepath.Join("docs", "guide", "porting.md") && strings.HasPrefix(line, "|") {
				// A table's first column there is PyOP2's or OP2's API.
				if _, rest, ok := strings.Cut(line[1:], "|"); ok {
					line = rest
				}
			}
			for _, m := range docName.FindAllStringSubmatch(line, -1) {
				pkg, first, member := m[1], m[2], m[3]
				if !names[pkg][first] {
					t.Errorf("%s:%d: %s.%s: package %s has no exported %s", name, i+1, pkg, first, pkg, first)
					continue
				}
				if member != "" && names[pkg][first+".type"] && !names[pkg][first+"."+member] {
					t.Errorf("%s:%d: %s.%s.%s: %s has no method or field %s", name, i+1, pkg, first, member, first, member)
				}
			}
		}
	}
}

// exportedNames returns the exported package-level names of the Go
// package in dir (tests left out), each type also as "T.type" (but an
// alias), and its types' exported methods and fields as "T.Member".
func exportedNames(t *testing.T, dir string) map[string]bool {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						out[d.Name.Name] = true
						continue
					}
					recv := d.Recv.List[0].Type
					for {
						switch r := recv.(type) {
						case *ast.StarExpr:
							recv = r.X
							continue
						case *ast.IndexExpr:
							recv = r.X
							continue
						case *ast.IndexListExpr:
							recv = r.X
							continue
						}
						break
					}
					if id, ok := recv.(*ast.Ident); ok {
						out[id.Name+"."+d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							out[s.Name.Name] = true
							if s.Assign.IsValid() {
								continue // an alias: its members are another package's
							}
							out[s.Name.Name+".type"] = true
							if st, ok := s.Type.(*ast.StructType); ok {
								for _, fl := range st.Fields.List {
									for _, n := range fl.Names {
										out[s.Name.Name+"."+n.Name] = true
									}
								}
							}
							if it, ok := s.Type.(*ast.InterfaceType); ok {
								for _, m := range it.Methods.List {
									for _, n := range m.Names {
										out[s.Name.Name+"."+n.Name] = true
									}
								}
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								out[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return out
}

// docFiles returns README.md and the pages under docs/ but history's,
// which keeps what was true then.
func docFiles(t *testing.T, root string) []string {
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "history" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
