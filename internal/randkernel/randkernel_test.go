package randkernel

import "testing"

// TestSource pins the kernel of a loop with each kind of argument.
func TestSource(t *testing.T) {
	got := Source("rk", []Arg{
		{Kind: "direct", Access: "RW", Type: "double", Dim: 1},
		{Kind: "indirect", Access: "Write", Type: "int", Dim: 1},
		{Kind: "mapidx", Access: "Read", Type: "int", Dim: 1},
		{Kind: "vector", Access: "Inc", Type: "double", Dim: 1, Arity: 2},
		{Kind: "global", Access: "Max", Type: "int", Dim: 1, Opt: true},
	}, "  s += c;\n")
	want := `void rk(double *p0, int *p1, const int *p2, double **p3, int *p4) {
  double s = 1;
  s += c;
  s += p0[0]; 
  
  s += p2[0] % 13; 
  
  
  double t = fmod(fabs(s), 61.0);
  p0[0] = (double)fmod(p0[0] + t, 101.0); 
  p1[0] = (int)(p2[0] % 17 + 0); 
  
  p3[0][0] += (double)(fmod(t, 7.0) - 3); p3[1][0] += (double)(fmod(t, 7.0) - 3); 
  if (p4) { if (t + 5 > p4[0]) p4[0] = (int)(t + 5); }
}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
