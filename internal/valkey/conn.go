package valkey

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Opening a connection is where most mistakes people make show up: a wrong address, TLS
// spoken to a plain port, a wrong password, a database the server lacks. go-redis opens
// connections lazily, inside whichever command or pipeline first needs one, and reports the
// failure on that command in ways that differ by step and by mode: a refused SELECT or AUTH
// of a pipeline's connection is returned on the pipeline only, with every command left
// without a value or an error. openHook marks every failure to open a connection once, at
// its source, so that callers see the same typed failure whatever first used the connection,
// and so that EnsureGroup knows that nothing of its own was sent.

// openError is a failure while a connection was being opened: dialling (TCP, TLS, the
// Sentinel lookup of the primary), getting the cloud token that is the password (AWS or Google
// IAM), the HELLO/AUTH handshake, or SELECT; or, with a cluster,
// while its slot map was being loaded (CLUSTER SLOTS, see routed). No command of the caller's
// was written.
type openError struct {
	step string // "connect", "IAM token", "HELLO", "AUTH", "SELECT" or "CLUSTER SLOTS"
	node string // the cluster node the connection was to; "" outside a cluster
	err  error
}

func (e *openError) Error() string { return e.step + ": " + e.err.Error() }

func (e *openError) Unwrap() error { return e.err }

// opening marks err as a failure to open a connection to node at step. The mark is wrapped
// once more, because go-redis unwraps one level of the errors its connection set-up returns:
// either way, errors.As finds the *openError.
func opening(step, node string, err error) error {
	var already *openError
	if errors.As(err, &already) {
		return err
	}
	return fmt.Errorf("opening a connection: %w", &openError{step: step, node: node, err: err})
}

// asOpenError finds the mark left by opening.
func asOpenError(err error) (*openError, bool) {
	var open *openError
	ok := errors.As(err, &open)
	return open, ok
}

// handshakeSteps are the commands go-redis sends while opening a connection. This package
// never sends them itself, so seeing one means a connection is being opened.
var handshakeSteps = map[string]string{"hello": "HELLO", "auth": "AUTH", "select": "SELECT"}

// openHook is a go-redis hook on every client this package builds (on each node of a cluster,
// where node is that node's address, and unreached the cluster's memory of nodes that cannot
// be reached).
type openHook struct {
	node      string
	unreached *unreachedNodes
}

var _ redis.Hook = openHook{}

func (h openHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if err := h.unreached.recall(h.node); err != nil {
			return nil, opening("connect", h.node, err)
		}
		conn, err := next(ctx, network, addr)
		if err != nil {
			h.unreached.remember(h.node, err)
			return nil, opening("connect", h.node, err)
		}
		return conn, nil
	}
}

// ProcessHook marks the failure of a handshake command (HELLO, AUTH) on the command itself,
// which is where go-redis's connection set-up reads it.
func (h openHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if step, isHandshake := handshakeSteps[strings.ToLower(cmd.Name())]; isHandshake && err != nil {
			err = opening(step, h.node, err)
			cmd.SetErr(err)
		}
		return err
	}
}

// ProcessPipelineHook marks a failed SELECT of the set-up pipeline, and gives every command of
// a pipeline whose connection could not be opened that failure as its own error.
func (h openHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if step, isHandshake := handshakeSteps[strings.ToLower(cmd.Name())]; isHandshake && cmd.Err() != nil {
				err = opening(step, h.node, cmd.Err())
				cmd.SetErr(err)
			}
		}
		if _, failedToOpen := asOpenError(err); failedToOpen {
			for _, cmd := range cmds {
				if cmd.Err() == nil {
					cmd.SetErr(err)
				}
			}
		}
		return err
	}
}

// withHooks adds openHook and confirmHook where rdb opens connections and writes to them: to
// the client itself, or to every node of a cluster, including nodes it meets later. (Not to the
// cluster client as well: a cluster pipeline spans nodes, a node that could not be reached
// must not stamp its failure on another node's replies, and WAIT must follow the create to
// the node that runs it.) A cluster client itself gets settleHook, which follows redirections
// past go-redis's own few.
func withHooks(rdb redis.UniversalClient, unreached *unreachedNodes) redis.UniversalClient {
	if cluster, ok := rdb.(*redis.ClusterClient); ok {
		cluster.OnNewNode(func(node *redis.Client) {
			addr := node.Options().Addr
			node.AddHook(openHook{node: addr, unreached: unreached})
			node.AddHook(confirmHook{node: addr})
		})
		cluster.AddHook(settleHook{cluster: cluster})
		return rdb
	}
	rdb.AddHook(openHook{})
	rdb.AddHook(confirmHook{})
	return rdb
}

// routed makes sure that a cluster client knows the node serving key before anything is
// written for it. go-redis loads the slot map (CLUSTER SLOTS) inside whichever command or
// pipeline first needs it, and hands a failure there to every command of it as that command's
// own error: EnsureGroup would read its create as written and its reply as lost, and a read
// would quote CLUSTER SLOTS's refusal as its own. A failure here is marked like one to open a
// connection (step "CLUSTER SLOTS"), since nothing of the caller's was written. Every entry
// point calls it before its first command: EnsureGroup, Group, Survey, StreamInfo,
// GroupDetail, and ListGroups for each page and before its SCAN.
func (c *Client) routed(ctx context.Context, key string) error {
	cluster, ok := c.Universal().(*redis.ClusterClient)
	if !ok {
		return nil
	}
	if _, err := cluster.MasterForKey(ctx, key); err != nil {
		return opening("CLUSTER SLOTS", "", err)
	}
	return nil
}
