package core

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestUndeclared: the identifiers that gcc, g++, clang (PoCL) and NVRTC
// report as undeclared are found when the kernel's source names them,
// and the error built from them names the loop, the kernel, each
// identifier and NewConst, and keeps the compiler's error.
func TestUndeclared(t *testing.T) {
	src := "void scale(double *h) { *h = 2 * *h; }\nvoid fall(double *u) { *u = *u - grav - drag[0]; }\n"
	// The identifiers of src, as cfront.ParseKernel reads them.
	info := &KernelInfo{Idents: map[string]bool{}}
	for _, id := range strings.Fields("void scale double h fall u grav drag") {
		info.Idents[id] = true
	}
	l := &Loop{Kernel: &Kernel{Name: "scale", Source: src, Info: info}, Set: &Set{Name: "cells"}}
	for _, c := range []struct {
		log  string
		want []string
	}{
		{"k.c: In function ‘fall’:\nk.c:2:34: error: ‘grav’ undeclared (first use in this function)\nk.c:2:41: error: ‘drag’ undeclared (first use in this function)", []string{"drag", "grav"}},
		{"k.c:2:34: error: 'grav' undeclared (first use in this function)", []string{"grav"}},
		{"k.cpp:2:34: error: ‘grav’ was not declared in this scope", []string{"grav"}},
		{"error: k.cl:14:43: use of undeclared identifier 'grav'\nerror: k.cl:14:43: use of undeclared identifier 'grav'", []string{"grav"}},
		{`k.cu(2): error: identifier "drag" is undefined`, []string{"drag"}},
		// Names of the generated code are not the kernel's.
		{"k.c:9:1: error: ‘op2_tmp’ undeclared (first use in this function)", nil},
		{"k.c:2:1: error: expected ‘;’ before ‘}’ token", nil},
	} {
		base := errors.New(c.log)
		if got := Undeclared(l, base); !slices.Equal(got, c.want) {
			t.Errorf("Undeclared(%q) = %q, want %q", c.log, got, c.want)
		}
		got := UndeclaredError(l, base)
		if !errors.Is(got, base) {
			t.Errorf("UndeclaredError(%q) does not wrap the compiler's error", c.log)
		}
		if c.want == nil {
			if got != base {
				t.Errorf("UndeclaredError(%q) = %v, want the error unchanged", c.log, got)
			}
			continue
		}
		msg := got.Error()
		for _, part := range append([]string{`loop "scale" over set "cells"`, `kernel "scale"`, "NewConst", "before the first loop that compiles"}, c.want...) {
			if !strings.Contains(msg, part) {
				t.Errorf("UndeclaredError(%q) = %q, does not mention %q", c.log, msg, part)
			}
		}
	}
}

// TestUndeclaredLeavesOutFunctions: a name the source declares at file
// scope (a function it defines, which a device compiler may not know as
// a value) and a library function a device build found missing are not
// reported as possibly undeclared Consts.
func TestUndeclaredLeavesOutFunctions(t *testing.T) {
	info := &KernelInfo{Idents: map[string]bool{}, Functions: map[string]bool{"first": true, "scale": true, "k": true}}
	for _, id := range strings.Fields("first k j0 grav zgam zscale") {
		info.Idents[id] = true
	}
	l := &Loop{Kernel: &Kernel{Name: "k", Info: info}, Set: &Set{Name: "s"}}
	log := "use of undeclared identifier 'first'\nuse of undeclared identifier 'j0'\nuse of undeclared identifier 'grav'\n" +
		"use of undeclared identifier 'zgam'\nuse of undeclared identifier 'zscale'"
	err := &DeviceBuildError{API: "OpenCL", Log: log, Missing: []string{"j0"}, Err: errors.New("build failed")}
	if got := Undeclared(l, err); !slices.Equal(got, []string{"grav", "zgam", "zscale"}) {
		t.Errorf("Undeclared = %q, want [grav zgam zscale]: the source's functions (cfront's KernelInfo.Functions) and a missing library function are left out, other names are not", got)
	}
}
