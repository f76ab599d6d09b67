package valkey

import (
	"context"
	"errors"
	"testing"
)

// serverReply is an error reply as go-redis hands it over (it implements redis.Error).
type serverReply string

func (e serverReply) Error() string { return string(e) }
func (serverReply) RedisError()     {}

// BenchmarkEnsureOutcome classifies each kind of XGROUP CREATE reply EnsureGroup meets.
func BenchmarkEnsureOutcome(b *testing.B) {
	for _, bc := range []struct {
		name string
		err  error
		want Outcome
	}{
		{"ok", nil, Created},
		{"busygroup", serverReply("BUSYGROUP Consumer Group name already exists"), Adopted},
		{"wrongtype", serverReply("WRONGTYPE Operation against a key holding the wrong kind of value"), 0},
		{"noperm", serverReply("NOPERM User bench has no permissions to run the 'xgroup|create' command"), 0},
		{"transport", context.DeadlineExceeded, 0},
		{"wrapped_busygroup", errors.Join(errors.New("pipeline"), serverReply("BUSYGROUP Consumer Group name already exists")), Adopted},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got, _ := ensureOutcome("", bc.err); got != bc.want {
					b.Fatalf("ensureOutcome(%v) = %v, want %v", bc.err, got, bc.want)
				}
			}
		})
	}
}
