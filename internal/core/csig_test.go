package core

import "testing"

func TestParseKernel(t *testing.T) {
	cases := []struct {
		name, src, fn string
		want          []Param // Text is not compared
		err           bool
	}{
		{"plain", "void k(double *a, const float *b, int c[4]) { }", "k",
			[]Param{{Name: "a", Type: Float64, Depth: 1}, {Name: "b", Type: Float32, Depth: 1}, {Name: "c", Type: Int32, Depth: 1}}, false},
		{"vector and qualifiers", "static inline void k(const double *restrict *x, double *y[3], unsigned int *__restrict__ u)\n{}", "k",
			[]Param{{Name: "x", Type: Float64, Depth: 2}, {Name: "y", Type: Float64, Depth: 2}, {Name: "u", Type: Uint32, Depth: 1}}, false},
		{"integer spellings", "void k(long long *a, long *b, unsigned *c, int64_t *d, uint32_t *e) {}", "k",
			[]Param{{Name: "a", Type: Int64, Depth: 1}, {Name: "b", Type: Int64, Depth: 1}, {Name: "c", Type: Uint32, Depth: 1},
				{Name: "d", Type: Int64, Depth: 1}, {Name: "e", Type: Uint32, Depth: 1}}, false},
		{"unknown type", "typedef double real;\nvoid k(real *a) {}", "k", []Param{{Name: "a", Type: 0, Depth: 1}}, false},
		{"prototype and call before the definition", "void k(double *a);\nvoid g(double *b) { k(b); }\nvoid k(double *a) { *a = 1; }", "k",
			[]Param{{Name: "a", Type: Float64, Depth: 1}}, false},
		{"comments and preprocessor", "#define N 3\n/* void k(float *z) {} */\n// void k(int *q) {}\nvoid k(double *a) {}", "k",
			[]Param{{Name: "a", Type: Float64, Depth: 1}}, false},
		{"no parameters", "void k(void) {}", "k", nil, false},
		{"longer name is not a match", "void kk(double *a) {}", "k", nil, true},
		{"missing", "void other(double *a) {}", "k", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, err := ParseKernel(c.src, c.fn)
			if c.err {
				if err == nil {
					t.Fatalf("no error; params %+v", info.Params)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Params) != len(c.want) {
				t.Fatalf("%d params %+v, want %d", len(info.Params), info.Params, len(c.want))
			}
			for i, w := range c.want {
				g := info.Params[i]
				if g.Name != w.Name || g.Type != w.Type || g.Depth != w.Depth {
					t.Errorf("param %d = %+v, want name %q type %v depth %d", i, g, w.Name, w.Type, w.Depth)
				}
			}
		})
	}
}

func TestKernelIdentifiers(t *testing.T) {
	info, err := ParseKernel("void k(double *x) { *x = gam * qinf[2] + 1e-3; /* eps */ }", "k")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"gam", "qinf", "x"} {
		if !info.Idents[id] {
			t.Errorf("identifier %q not found", id)
		}
	}
	for _, id := range []string{"eps", "e", "3"} {
		if info.Idents[id] {
			t.Errorf("%q reported as an identifier", id)
		}
	}
}
