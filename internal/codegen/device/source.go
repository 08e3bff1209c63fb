package device

import (
	"sort"
	"strings"

	"github.com/goop2/op2/internal/cfront"
)

// The generator adapts the user's kernel source with what the kernel
// model (cfront.SourceModel, read once per kernel: cfront.Model) says
// of it: the functions it defines and declares, the calls between them,
// its typedef names, the macros it defines and the headers it includes.
// Every position is an offset into the original source, so the source
// can be edited in place and keeps its lines.

// userSource is what the generator knows about a kernel's source: the
// kernel model, and the names the dialect makes it rename.
type userSource struct {
	*cfront.SourceModel
	// includes are the spans of the #include directives of headers
	// OpenCL C provides (builtinHeaders), which are dropped.
	includes [][2]int
	// renamed are the names the source declares that the dialect has
	// built in, which the device code renames (renameBuiltins).
	renamed map[string]bool
	// reserved are the names the source uses that the dialect reserves
	// (Dialect.Reserved), renamed everywhere (renameBuiltins).
	reserved map[string]bool
}

// newUserSource is the generator's view of model m.
func newUserSource(m *cfront.SourceModel) *userSource {
	u := &userSource{SourceModel: m}
	for _, in := range m.Includes {
		if builtinHeaders[in.Header] {
			u.includes = append(u.includes, [2]int{in.Start, in.End})
		}
	}
	return u
}

// scanSource reads src, which need not define a kernel.
func scanSource(src string) (*userSource, error) {
	m, err := cfront.ReadSource(src)
	if err != nil {
		return nil, err
	}
	return newUserSource(m), nil
}

// builtinHeaders are the C headers whose content OpenCL C has built in (or
// the generated prelude supplies): their #include directives are dropped.
var builtinHeaders = map[string]bool{
	"math.h": true, "stdio.h": true, "stdint.h": true, "stdlib.h": true,
	"string.h": true, "stdbool.h": true, "float.h": true, "limits.h": true,
	"stddef.h": true,
	// Their C++ forms, included by C++ kernels (cuda; opencl refuses
	// C++), whose std:: names the CUDA prelude of C++ kernels declares.
	"cmath": true, "cstdio": true, "cstdint": true, "cstdlib": true,
	"cstring": true, "cfloat": true, "climits": true, "cstddef": true,
	// <algorithm>, for the std::min and std::max of OP2's C++ kernels
	// (apps/c/min), which the prelude declares too: NVRTC has no C++
	// standard library headers, so the #include alone failed the build.
	// Another name of it fails, named by NVRTC.
	"algorithm": true,
}

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// edit replaces src[at:end] with text.
type edit struct {
	at, end int
	text    string
}

// applyEdits applies non-overlapping edits to s.
func applyEdits(s string, edits []edit) string {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	var b strings.Builder
	pos := 0
	for _, e := range edits {
		b.WriteString(s[pos:e.at])
		b.WriteString(e.text)
		pos = e.end
	}
	b.WriteString(s[pos:])
	return b.String()
}
