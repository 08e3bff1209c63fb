package device

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/goop2/op2/internal/core"
)

// tagRE finds the tags of structs, unions and enums a source declares or
// uses.
var tagRE = regexp.MustCompile(`\b(?:struct|union|enum)\s+([A-Za-z_][A-Za-z0-9_]*)`)

// cudaVectorRE matches CUDA's built-in vector types (vector_types.h,
// which NVRTC includes in every program).
var cudaVectorRE = regexp.MustCompile(`^(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$|^dim3$`)

// builtinType says why name, a type the user's source declares, clashes
// with a type the dialect has built in, or returns "".
func (d *Dialect) builtinType(name string) string {
	if d == CUDA {
		if cudaVectorRE.MatchString(name) {
			return "a CUDA built-in vector type"
		}
		return ""
	}
	// Only the vector types: a C source may redeclare a scalar one the
	// same way OpenCL C does (typedef unsigned int uint;), which C11
	// allows.
	if why := core.OpenCLNameProblem(name); why == "an OpenCL C vector type name" {
		return why
	}
	return ""
}

// typeClashes returns an error naming the types the kernel source
// declares (a typedef, a struct, union or enum tag, or a macro) whose
// names the dialect has built in as vector types: OpenCL C's double3,
// float4, uchar16..., CUDA's double3, int2, dim3... The device compiler
// would reject the redefinition with a message that does not say why.
func typeClashes(d *Dialect, kernel string, u *userSource) error {
	var clashes []string
	seen := map[string]bool{}
	note := func(kind, name string) {
		if why := d.builtinType(name); why != "" && !seen[name] {
			seen[name] = true
			clashes = append(clashes, fmt.Sprintf("%s %q is %s", kind, name, why))
		}
	}
	for name := range u.typedefs {
		note("the typedef", name)
	}
	for _, m := range tagRE.FindAllStringSubmatch(u.code, -1) {
		note("the tag", m[1])
	}
	for _, name := range u.macros {
		note("the macro", name)
	}
	if len(clashes) == 0 {
		return nil
	}
	return fmt.Errorf("kernel %q cannot be compiled for %s: %s, so the device compiler would see it defined twice; rename it in the kernel source (the host backends accept it)",
		kernel, d.Name, strings.Join(clashes, "; "))
}
