package archtest

import (
	"fmt"
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
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md")}
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
