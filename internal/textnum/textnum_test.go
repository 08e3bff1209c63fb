package textnum

import "testing"

func TestParseInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"+17", 17, true}, {"-42", -42, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"", 0, false}, {"-", 0, false}, {"1.5", 0, false}, {"12a", 0, false}, {"99999999999999999999", 0, false},
		{"-0", 0, true}, {"0012", 12, true}, {"+", 0, false}, {"0x1", 0, false}, {"1_0", 0, false},
	} {
		v, ok := ParseInt([]byte(c.in))
		if ok != c.ok || ok && v != c.want {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", c.in, v, ok, c.want, c.ok)
		}
	}
}
