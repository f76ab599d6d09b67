package valkey

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// go-redis follows MOVED and ASK by itself, up to three times per command, with no pause
// between MOVED and ASK. While a slot moves, its nodes can disagree for a moment on who serves
// it: the source, MIGRATING, answers ASK for a key it no longer holds, while the target is not
// yet IMPORTING (or the source already gave the slot away while the target still imports it)
// and answers MOVED back. Three redirections run out within a millisecond of such a moment,
// and the last one used to reach callers as if the server had refused the command. settleHook
// waits the moment out: it reloads the slot map and runs the redirected commands again, after
// a pause that doubles, until they are served or settleRounds have passed. A redirected command
// ran on no node, so running it again is safe, XGROUP CREATE included (go-redis resends it
// the same way when it follows a redirection). Only redirections that outlast every round
// reach the caller, as a *RedirectError.

// settleRounds and settleFirstPause bound the wait: 20ms doubling six times, about 1.3s in all.
const (
	settleRounds     = 6
	settleFirstPause = 20 * time.Millisecond
)

// settleHook is a go-redis hook on a cluster client itself (not on its nodes), so that it sees
// each command after go-redis's own redirections.
type settleHook struct{ cluster *redis.ClusterClient }

var _ redis.Hook = settleHook{}

func (settleHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h settleHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		for round := 0; round < settleRounds && redirected(cmd.Err()); round++ {
			if !h.pause(ctx, round) {
				break
			}
			err = next(ctx, cmd)
		}
		return err
	}
}

func (h settleHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for round := 0; round < settleRounds; round++ {
			again := redirectedCmds(cmds)
			if len(again) == 0 || !h.pause(ctx, round) {
				break
			}
			_ = next(ctx, again)
			err = firstErr(cmds)
		}
		return err
	}
}

// pause waits before round+1 and asks go-redis to reload the slot map meanwhile; false when
// ctx ended first.
func (h settleHook) pause(ctx context.Context, round int) bool {
	h.cluster.ReloadState(ctx)
	return sleepCtx(ctx, settleFirstPause<<round) == nil
}

func redirectedCmds(cmds []redis.Cmder) []redis.Cmder {
	var again []redis.Cmder
	for _, cmd := range cmds {
		if redirected(cmd.Err()) {
			again = append(again, cmd)
		}
	}
	return again
}

func firstErr(cmds []redis.Cmder) error {
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return err
		}
	}
	return nil
}
