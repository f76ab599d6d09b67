package valkey

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Start is where a new group begins reading. It is always declared, never defaulted.
type Start string

const (
	StartNew  Start = "new"  // "$": only entries appended from now on
	StartHead Start = "head" // "0": replay everything already in the stream
)

// Starts lists the accepted start positions, for validation and messages.
var Starts = []string{string(StartNew), string(StartHead)}

// ID is the stream ID XGROUP CREATE takes for s.
func (s Start) ID() (string, error) {
	switch s {
	case StartNew:
		return "$", nil
	case StartHead:
		return "0", nil
	}
	return "", fmt.Errorf("group start %q is not one of %q", string(s), Starts)
}

// Outcome names what the door did.
type Outcome int

const (
	Created Outcome = iota + 1 // XGROUP CREATE answered OK
	Adopted                    // the group already existed (BUSYGROUP)
)

func (o Outcome) String() string {
	switch o {
	case Created:
		return "created"
	case Adopted:
		return "adopted"
	}
	return "unknown"
}

// EnsureGroup is the door: one XGROUP CREATE <stream> <group> <$|0> MKSTREAM, with the
// group's info read back in the same round trip. It never deletes or trims anything.
func (c *Client) EnsureGroup(ctx context.Context, stream, group string, start Start) (Outcome, Group, error) {
	id, err := start.ID()
	if err != nil {
		return 0, Group{}, err
	}
	var create *redis.StatusCmd
	var info *redis.Cmd
	var wait *redis.IntCmd
	acks, ackTimeout := c.acks, c.ackTimeout
	gen := c.groups.generation(stream)
	_, pipeErr := c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error {
		create = p.XGroupCreateMkStream(ctx, stream, group, id)
		if acks > 0 {
			wait = redis.NewIntCmd(ctx, "WAIT", acks, ackTimeout.Milliseconds())
			_ = p.Process(ctx, wait)
		}
		info = p.Do(ctx, "XINFO", "GROUPS", stream)
		return nil
	})
	groups, parseErr := parseGroups(info.Val())
	if info.Err() != nil || parseErr != nil {
		c.groups.invalidate(stream)
	} else {
		// The read-back followed this Create, so it is fresh unless another door on the same
		// stream ran meanwhile; replaceAfterDoor keeps it only then.
		c.groups.replaceAfterDoor(stream, gen, streamGroups{exists: true, groups: groups})
	}
	createErr := create.Err()
	if createErr == nil && pipeErr != nil && info.Err() == nil && (wait == nil || wait.Err() == nil) {
		// No command has an error of its own: the connection failed before any ran (dial, TLS,
		// AUTH), which go-redis reports on the pipeline only. A refused WAIT is WAIT's, below.
		createErr = pipeErr
	}
	outcome, err := doorOutcome(createErr)
	if err != nil {
		return 0, Group{}, c.classify(ctx, "XGROUP CREATE", stream, err)
	}
	if wait != nil && (wait.Err() != nil || wait.Val() < int64(acks)) {
		if msg, isReply := reply(wait.Err()); isReply {
			return 0, Group{}, &RefusedError{Addr: c.Addr(), Key: stream, Command: "WAIT", Reply: msg}
		}
		return 0, Group{}, &UnconfirmedError{Addr: c.Addr(), Key: stream, Acked: wait.Val(), Wanted: acks, Timeout: ackTimeout}
	}
	if info.Err() != nil || parseErr != nil {
		// The group is in place; only the read-back failed. Report the outcome without info.
		return outcome, Group{Name: group}, nil //nolint:nilerr // the door succeeded; the read-back is optional
	}
	if g, ok := FindGroup(groups, group); ok {
		return outcome, g, nil
	}
	return outcome, Group{Name: group}, nil
}

// doorOutcome is the door's table. BUSYGROUP is the one error reply it swallows: the group
// exists, which is what the caller asked for. Everything else stays an error.
func doorOutcome(err error) (Outcome, error) {
	if err == nil {
		return Created, nil
	}
	if msg, isReply := reply(err); isReply && strings.HasPrefix(msg, "BUSYGROUP") {
		return Adopted, nil
	}
	return 0, err
}
