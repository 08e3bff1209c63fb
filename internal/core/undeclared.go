package core

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// undeclaredRE finds the identifiers a compiler's messages say are not
// declared: gcc (‘x’ undeclared), g++ (‘x’ was not declared in this
// scope), clang and PoCL (use of undeclared identifier 'x') and NVRTC
// (identifier "x" is undefined). gcc quotes with ‘ and ’, or with ' in the C
// locale.
var undeclaredRE = regexp.MustCompile(`(?:[‘']([A-Za-z_][A-Za-z0-9_]*)[’'] (?:undeclared|was not declared)` +
	`|undeclared identifier [‘']([A-Za-z_][A-Za-z0-9_]*)[’']` +
	`|identifier "([A-Za-z_][A-Za-z0-9_]*)" is undefined)`)

// Undeclared returns, sorted and once each, the identifiers that the
// compiler's messages in err say are not declared and that loop l's
// kernel source itself names (identifiers of the generated code are not
// the user's to declare). A loop's program compiles the kernel's whole
// source, every function in it, with the Consts declared when the loop
// was bound; a Const one of them reads that was declared later (or not at
// all) is such an identifier. The functions the source declares or
// defines (a device compiler may not know one used as a value) and the
// library functions a device build found missing
// (DeviceBuildError.Missing) are not; a file-scope variable's initializer
// or a default argument naming a Const is.
func Undeclared(l *Loop, err error) []string {
	if err == nil || l.Kernel.Info == nil {
		return nil
	}
	var missing []string
	var de *DeviceBuildError
	if errors.As(err, &de) {
		missing = de.Missing
	}
	info := l.Kernel.Info
	var names []string
	for _, m := range undeclaredRE.FindAllStringSubmatch(err.Error(), -1) {
		name := m[1] + m[2] + m[3]
		if info.Idents[name] && !info.Functions[name] && !slices.Contains(missing, name) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// UndeclaredError wraps a failed build of loop l whose compiler messages
// (err) say that identifiers of the kernel's source are not declared
// (Undeclared) in an error that names them and says how Consts reach
// the compiler; it returns err itself when there are none.
func UndeclaredError(l *Loop, err error) error {
	names := Undeclared(l, err)
	if len(names) == 0 {
		return err
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	what, it := "identifier "+quoted[0]+" that is", "it is a Const, declare it"
	if len(names) > 1 {
		what, it = "identifiers "+strings.Join(quoted, ", ")+" that are", "they are Consts, declare them"
	}
	return fmt.Errorf("%s: kernel %q: its source uses %s not declared: if %s with NewConst before the first loop that compiles this source "+
		"(a loop compiles the kernel's whole source, its other functions too, with the Consts declared at that moment; no Const of that name was declared then); the compiler's messages:\n%w",
		l.Name(), l.Kernel.Name, what, it, err)
}
