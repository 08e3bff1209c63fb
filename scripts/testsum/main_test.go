package main

import (
	"strings"
	"testing"
)

// TestSummary: packages are printed as they finish, a failing test's
// output as it fails, and skips are grouped by their message.
func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"m/a"}`,
		`{"Action":"run","Package":"m/a","Test":"TestX"}`,
		`{"Action":"output","Package":"m/a","Test":"TestX","Output":"=== RUN   TestX\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestX","Output":"    x_test.go:12: opencl is not available here\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestX","Output":"--- SKIP: TestX (0.00s)\n"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestX","Elapsed":0}`,
		`{"Action":"output","Package":"m/a","Test":"TestY","Output":"    y_test.go:3: opencl is not available here\n"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestY","Elapsed":0}`,
		`{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t0.1s\n"}`,
		`{"Action":"pass","Package":"m/a","Elapsed":0.1}`,
		`{"Action":"output","Package":"m/b","Test":"TestZ","Output":"    z_test.go:9: wrong: 3\n"}`,
		`{"Action":"fail","Package":"m/b","Test":"TestZ","Elapsed":0.2}`,
		`{"Action":"output","Package":"m/b","Output":"FAIL\n"}`,
		`{"Action":"fail","Package":"m/b","Elapsed":0.3}`,
		`{"Action":"output","Package":"m/c","Output":"?   \tm/c\t[no test files]\n"}`,
		`{"Action":"skip","Package":"m/c"}`,
		`not json: printed as it is`,
	}, "\n")
	var out strings.Builder
	s := newSummary(&out)
	s.list = true
	if err := s.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	s.printSkips()
	s.printSlowest(5)
	got := out.String()
	for _, want := range []string{
		"ok   m/a", "--- FAIL: m/b TestZ", "z_test.go:9: wrong: 3", "FAIL m/b",
		"not json: printed as it is", "2 packages",
		"2 tests skipped, for 1 reasons", "2× opencl is not available here", "a.TestX, a.TestY",
		"the 1 slowest of 1 tests", "0.2s b.TestZ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "m/c") {
		t.Errorf("a package without tests is printed:\n%s", got)
	}
	if !s.failed {
		t.Error("a failed test not noted")
	}
}
