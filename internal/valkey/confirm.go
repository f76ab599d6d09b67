package valkey

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// WAIT counts the replicas that acknowledged the writes of the connection it runs on, so the
// WAIT of EnsureGroup means something only right after its XGROUP CREATE, on the same connection. A
// single server or a Sentinel's primary has one connection per pipeline. A cluster pipeline has
// one per node, and go-redis routes a keyless WAIT to any node (or refuses it: its command
// policy is all shards); and when the create's slot moves, go-redis follows MOVED and ASK by
// sending the create again, in a pipeline of its own, to another node. So EnsureGroup does not put
// WAIT in its pipeline: confirmHook, on each node, puts one right after the create in whatever
// pipeline carries it there, and keeps the WAIT of the node that ran the create, not of one
// that redirected it.

// confirmation asks for EnsureGroup's WAIT and receives it: confirmHook fills in wait, and node in
// a cluster, from the pipeline whose XGROUP CREATE the server ran.
type confirmation struct {
	acks    int
	timeout time.Duration

	wait *redis.IntCmd
	node string // the cluster node that ran the create and the WAIT; "" outside a cluster
}

// createCmd is XGROUP CREATE ... MKSTREAM, marked for go-redis as a command never to be
// resent once written (go-redis would otherwise resend the whole pipeline after a broken
// connection, MaxRetries times). confirm is nil when no WAIT is asked for.
type createCmd struct {
	*redis.StatusCmd
	confirm *confirmation
}

func (createCmd) NoRetry() bool { return true }

// confirmHook is a go-redis hook on every client this package builds (on each node of a
// cluster, where node is that node's address). It adds WAIT after each create that asks for it.
type confirmHook struct{ node string }

var _ redis.Hook = confirmHook{}

func (confirmHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (confirmHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h confirmHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		i, create := -1, createCmd{}
		for at, cmd := range cmds {
			if c, isCreate := cmd.(createCmd); isCreate && c.confirm != nil {
				i, create = at, c // EnsureGroup sends one create per pipeline
				break
			}
		}
		if i < 0 {
			return next(ctx, cmds)
		}
		wait := redis.NewIntCmd(ctx, "WAIT", create.confirm.acks, create.confirm.timeout.Milliseconds())
		err := next(ctx, slices.Insert(slices.Clone(cmds), i+1, redis.Cmder(wait)))
		if !redirected(create.Err()) {
			create.confirm.wait, create.confirm.node = wait, h.node
		}
		return err
	}
}

// redirected tells a reply that sends the command to another node (MOVED, ASK): go-redis sends
// it there next, and that node's WAIT is the one that counts.
func redirected(err error) bool {
	msg, isReply := reply(err)
	return isReply && (strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK "))
}

// unconfirmed is the *UnconfirmedError of a create that fewer replicas acknowledged than
// asked for, or whose WAIT failed or never ran on its connection; nil when confirmed, or when
// no confirmation was asked for (c is nil).
func (c *confirmation) unconfirmed(addr, stream, group string, outcome Outcome) *UnconfirmedError {
	if c == nil {
		return nil
	}
	u := &UnconfirmedError{Addr: addr, Node: c.node, Key: stream, Group: group, Outcome: outcome, Wanted: c.acks, Timeout: c.timeout}
	switch {
	case c.wait == nil:
		u.Err = errWaitNotSent
	case c.wait.Err() != nil:
		if msg, isReply := reply(c.wait.Err()); isReply {
			u.Reply = msg
		} else {
			u.Err = c.wait.Err()
		}
	case c.wait.Val() < int64(c.acks):
		u.Acked = c.wait.Val()
	default:
		return nil
	}
	return u
}

// errWaitNotSent is a create whose pipeline carried no WAIT after it: without one, nothing
// confirms the write, so it is not counted.
var errWaitNotSent = errors.New("no WAIT was sent on the connection of the create")
