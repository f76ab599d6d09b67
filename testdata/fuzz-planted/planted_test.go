// Package planted is make fuzz's planted crasher: its target fails on every input but the empty
// seed, so the first mutation is a crasher, and the fuzz step must fail and write that input.
package planted

import "testing"

func FuzzPlanted(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 {
			t.Fatalf("planted crasher: %q", b)
		}
	})
}
