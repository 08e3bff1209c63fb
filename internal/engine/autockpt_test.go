package engine

import (
	"encoding/binary"
	"testing"
)

// TestParseReductionLog reads the log autoAfter writes (index, length,
// values per loop) and refuses one cut short.
func TestParseReductionLog(t *testing.T) {
	entry := func(b []byte, idx uint64, v ...byte) []byte {
		b = binary.LittleEndian.AppendUint64(b, idx)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	}
	log := entry(entry(nil, 3, 1, 2), 9)
	got, err := parseReductionLog(log)
	if err != nil || len(got) != 2 || string(got[3]) != "\x01\x02" || len(got[9]) != 0 {
		t.Fatalf("parseReductionLog = %v, %v", got, err)
	}
	for _, bad := range [][]byte{log[:5], log[:13], entry(nil, 1, 1, 2, 3)[:14]} {
		if _, err := parseReductionLog(bad); err == nil || err.Error() != "the log of reductions is cut short" {
			t.Errorf("parseReductionLog(%v) = %v, want cut short", bad, err)
		}
	}
}
