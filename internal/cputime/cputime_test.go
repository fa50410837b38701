package cputime

import (
	"crypto/sha256"
	"runtime"
	"testing"
)

// TestProcessGrows: burning CPU shows up, and user time is never negative.
func TestProcessGrows(t *testing.T) {
	u0, s0, ok := Process()
	if !ok {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
			t.Fatal("no CPU time on a unix")
		}
		return
	}
	b := make([]byte, 1<<20)
	for range 200 {
		sum := sha256.Sum256(b)
		b[0] = sum[0]
	}
	u1, s1, _ := Process()
	if u1 <= u0 || s1 < s0 || Total() < u1+s1 {
		t.Errorf("CPU time did not grow: user %v → %v, system %v → %v", u0, u1, s0, s1)
	}
}
