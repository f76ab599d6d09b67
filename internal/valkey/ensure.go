package valkey

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

// Outcome names what EnsureGroup did.
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

// EnsureGroup sends one XGROUP CREATE <stream> <group> <$|0> MKSTREAM, with WAIT when
// replica acknowledgements are asked for, and the group's info read back, in one round trip.
// It never deletes or trims anything.
//
// XGROUP CREATE is never sent twice: once it may have reached the server, a second one would
// answer BUSYGROUP to this very create, and the group would read as adopted with a start it
// was in fact given. A lost reply is an *UnknownOutcomeError. Only an attempt that wrote
// nothing (its connection could not be opened, or the pool had none free in time) is made
// again, up to the client's MaxRetries.
func (c *Client) EnsureGroup(ctx context.Context, stream, group string, start Start) (Outcome, Group, error) {
	id, err := start.ID()
	if err != nil {
		return 0, Group{}, err
	}
	for attempt := 0; ; attempt++ {
		outcome, g, err := c.createOnce(ctx, stream, group, id)
		if !neverWritten(err) || attempt >= c.retries {
			return c.ensureResult(ctx, stream, group, outcome, g, err)
		}
		if sleepErr := sleepCtx(ctx, retryBackoff(attempt)); sleepErr != nil {
			return c.ensureResult(ctx, stream, group, outcome, g, err)
		}
	}
}

// createOnce runs one attempt. err is a failure to load the cluster's slot map (routed's,
// marked as a connection that could not be opened), the raw error of XGROUP CREATE, or WAIT's
// as an *UnconfirmedError when the group is in place, created or adopted (WAIT confirms the
// replicas hold everything written before it, an adopted group included).
func (c *Client) createOnce(ctx context.Context, stream, group, id string) (Outcome, Group, error) {
	if err := c.routed(ctx, stream); err != nil {
		return 0, Group{}, err
	}
	create := createCmd{StatusCmd: redis.NewStatusCmd(ctx, "XGROUP", "CREATE", stream, group, id, "MKSTREAM")}
	if c.acks > 0 {
		create.confirm = &confirmation{acks: c.acks, timeout: c.ackTimeout} // confirmHook sends the WAIT
	}
	var info *redis.Cmd
	gen := c.groups.generation(stream)
	_, _ = c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error {
		_ = p.Process(ctx, create)
		info = p.Do(ctx, "XINFO", "GROUPS", stream)
		return nil
	})
	groups, parseErr := parseGroups(info.Val())
	if info.Err() != nil || parseErr != nil {
		c.groups.invalidate(stream)
	} else {
		// The read-back followed this XGROUP CREATE, so it is fresh unless another EnsureGroup
		// on the same stream ran meanwhile; replaceAfterCreate keeps it only then.
		c.groups.replaceAfterCreate(stream, gen, streamGroups{exists: true, groups: groups})
	}
	outcome, err := ensureOutcome(create.Val(), create.Err())
	if err != nil {
		return 0, Group{}, err
	}
	if unconfirmed := create.confirm.unconfirmed(c.Addr(), stream, group, outcome); unconfirmed != nil {
		return outcome, Group{}, unconfirmed
	}
	if g, found := FindGroup(groups, group); found && info.Err() == nil && parseErr == nil {
		return outcome, g, nil
	}
	// The group is in place; only the read-back failed. Report the outcome without info.
	return outcome, Group{Name: group}, nil
}

// ensureOutcome is EnsureGroup's table of XGROUP CREATE replies. BUSYGROUP is the one error
// reply it swallows: the group exists, which is what the caller asked for. Everything else
// stays an error. An OK that was read counts even when the connection broke later in the same
// round trip (go-redis then gives every command of the pipeline the transport error).
func ensureOutcome(status string, err error) (Outcome, error) {
	if err == nil || status == "OK" {
		return Created, nil
	}
	if msg, isReply := reply(err); isReply && strings.HasPrefix(msg, "BUSYGROUP") {
		return Adopted, nil
	}
	return 0, err
}

// ensureResult turns what createOnce returned into what EnsureGroup returns: typed errors, and for a
// create whose reply was lost, an *UnknownOutcomeError with what the server shows now.
func (c *Client) ensureResult(ctx context.Context, stream, group string, outcome Outcome, g Group, err error) (Outcome, Group, error) {
	var unconfirmed *UnconfirmedError
	switch {
	case err == nil:
		return outcome, g, nil
	case errors.As(err, &unconfirmed):
		return 0, Group{}, err
	}
	_, isReply := reply(err)
	if isReply || neverWritten(err) || errors.Is(err, redis.ErrClosed) {
		return 0, Group{}, c.classify(ctx, "XGROUP CREATE", stream, err)
	}
	// A transport error with the connection open: the command may have run.
	unknown := &UnknownOutcomeError{Addr: c.Addr(), Stream: stream, Group: group, Err: err}
	c.groups.invalidate(stream)
	sg, readErr := c.fetchGroups(ctx, stream)
	if readErr != nil {
		unknown.NowErr = readErr
	} else {
		unknown.Now.StreamExists = sg.exists
		unknown.Now.Group, unknown.Now.GroupExists = FindGroup(sg.groups, group)
	}
	return 0, Group{}, unknown
}

// neverWritten tells whether an attempt of EnsureGroup failed before anything was written: its
// connection could not be opened, or the pool had no connection to give within its
// PoolTimeout. Such an attempt may be made again.
func neverWritten(err error) bool {
	_, failedToOpen := asOpenError(err)
	return failedToOpen || errors.Is(err, redis.ErrPoolTimeout)
}

// retryBackoff is the pause before retry attempt+1 of a connection that could not be opened:
// go-redis's own defaults (8ms, doubling, at most 512ms).
func retryBackoff(attempt int) time.Duration {
	return min(8*time.Millisecond<<attempt, 512*time.Millisecond)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
