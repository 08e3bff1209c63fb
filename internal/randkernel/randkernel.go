// Package randkernel writes the C kernels of the randomised loop tests
// (the root package's random MPI sequences, the probe suites): each value
// a kernel reads adds to a sum s; each value it writes is a small integer
// made from s, or, where several elements meet through a map, a
// contribution whose result does not depend on their order, so that runs
// that order elements differently (ranks, threads, tiles) give the same
// bits.
package randkernel

import (
	"fmt"
	"strings"
)

// Arg is one argument of a kernel.
type Arg struct {
	// Kind is "direct", "indirect" (one map column), "vector" (every
	// column), "global", "idx" (the element's index) or "mapidx" (a map
	// target's index).
	Kind string
	// Access is "Read", "Write", "RW", "Inc", "Min" or "Max".
	Access string
	// Type is the C type of the values and Dim their number per element
	// (per map target for "vector", whose map has Arity targets).
	Type       string
	Dim, Arity int
	// Opt marks an optional argument: the kernel touches it only when
	// its pointer is not null.
	Opt bool
}

// Source returns the C source of kernel name with parameters p0, p1, ...
// for args. prelude is C code run first, which may add to s (for
// example, a constant's value). An "indirect" argument with Access
// "Write" must be followed by the "mapidx" argument of its target: every
// element writing a target writes the same value, made from the target's
// number.
func Source(name string, args []Arg, prelude string) string {
	var params []string
	var reads, writes strings.Builder
	reads.WriteString(prelude)
	for i, a := range args {
		p := fmt.Sprintf("p%d", i)
		typ, dim := a.Type, a.Dim
		cnst := ""
		if a.Access == "Read" || a.Kind == "idx" || a.Kind == "mapidx" {
			cnst = "const "
		}
		star := "*"
		if a.Kind == "vector" {
			star = "**"
		}
		params = append(params, fmt.Sprintf("%s%s %s%s", cnst, typ, star, p))
		arity := 1
		if a.Kind == "vector" {
			arity = a.Arity
		}
		var r, w string
		for j := range arity {
			for c := range dim {
				x := fmt.Sprintf("%s[%d]", p, c)
				if a.Kind == "vector" {
					x = fmt.Sprintf("%s[%d][%d]", p, j, c)
				}
				switch {
				case a.Kind == "idx" || a.Kind == "mapidx":
					r += fmt.Sprintf("s += %s %% 13; ", x)
				case a.Access == "Read" || (a.Access == "RW" && a.Kind == "direct"):
					r += fmt.Sprintf("s += %s; ", x)
				}
				switch a.Access {
				case "Write":
					if a.Kind == "indirect" {
						// The next argument is the target's number.
						w += fmt.Sprintf("%s = (%s)(p%d[0] %% 17 + %d); ", x, typ, i+1, c)
					} else {
						w += fmt.Sprintf("%s = (%s)(t + %d); ", x, typ, c)
					}
				case "RW":
					if a.Kind == "direct" {
						w += fmt.Sprintf("%s = (%s)fmod(%s + t, 101.0); ", x, typ, x)
					} else {
						w += fmt.Sprintf("%s += 1; ", x)
					}
				case "Inc":
					w += fmt.Sprintf("%s += (%s)(fmod(t, 7.0) - 3); ", x, typ)
				case "Min":
					w += fmt.Sprintf("if (t - %d < %s) %s = (%s)(t - %d); ", 20+c+j, x, x, typ, 20+c+j)
				case "Max":
					w += fmt.Sprintf("if (t + %d > %s) %s = (%s)(t + %d); ", 5-c-j, x, x, typ, 5-c-j)
				}
			}
		}
		if a.Opt {
			if r != "" {
				r = fmt.Sprintf("if (%s) { %s}", p, r)
			}
			if w != "" {
				w = fmt.Sprintf("if (%s) { %s}", p, w)
			}
		}
		reads.WriteString("  " + r + "\n")
		writes.WriteString("  " + w + "\n")
	}
	return fmt.Sprintf("void %s(%s) {\n  double s = 1;\n%s  double t = fmod(fabs(s), 61.0);\n%s}\n",
		name, strings.Join(params, ", "), reads.String(), writes.String())
}
