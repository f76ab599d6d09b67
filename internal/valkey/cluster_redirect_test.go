package valkey_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// A slot half-moved with its two nodes disagreeing: the source MIGRATING answers ASK for the
// stream it no longer holds, and the target, not IMPORTING, answers MOVED back. go-redis's
// own three redirections run out at once; the client must keep following them while the
// nodes settle, and when they never do, say so as a redirection, never as a refusal.

// slotStandoff is a stream moved to the target of its slot's migration, which then stops
// importing (valkeytest's StopImporting): every command on the stream bounces between the two.
type slotStandoff struct {
	*valkeytest.Migration
	stream string
}

func newSlotStandoff(t *testing.T, cluster *valkeytest.Cluster) *slotStandoff {
	t.Helper()
	ctx := context.Background()
	stream := valkeytest.Key(t, "emq:{%s}:stream")
	slot := slotOf(t, cluster, stream)
	source, err := cluster.Owner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	admin := source.Client()
	t.Cleanup(func() { _ = admin.Close() })
	valkeytest.XAdd(t, admin, stream, "1-1", "2-1", "3-1")
	if err := admin.XGroupCreate(ctx, stream, "existing", "0").Err(); err != nil {
		t.Fatal(err)
	}
	target := cluster.Nodes[0]
	if target == source {
		target = cluster.Nodes[1]
	}
	m, err := cluster.BeginMigration(ctx, slot, target)
	if err == nil {
		err = m.Move(ctx, 0, stream)
	}
	if err != nil {
		t.Fatal(err)
	}
	st := &slotStandoff{Migration: m, stream: stream}
	st.stopImporting(t)
	return st
}

func (st *slotStandoff) stopImporting(t *testing.T) {
	if err := st.StopImporting(context.Background()); err != nil {
		t.Error(err)
	}
}

func (st *slotStandoff) resumeImporting(t *testing.T) {
	if err := st.ResumeImporting(context.Background()); err != nil {
		t.Error(err)
	}
}

// groups is what the target holds on the stream (read after the standoff ends).
func (st *slotStandoff) groups(t *testing.T) []string {
	t.Helper()
	st.resumeImporting(t)
	names := st.Target.Groups(t, 0, st.stream)
	slices.Sort(names)
	return names
}

// entryPoints are every client call that reaches a stream's slot, each returning its error.
func entryPoints(c *valkey.Client, stream string) map[string]func(context.Context) error {
	return map[string]func(context.Context) error{
		"Survey": func(ctx context.Context) error { _, err := c.Survey(ctx, stream); return err },
		"Group":  func(ctx context.Context) error { _, _, err := c.Group(ctx, stream, "existing"); return err },
		"StreamInfo": func(ctx context.Context) error {
			_, err := c.StreamInfo(ctx, stream)
			return err
		},
		"GroupDetail": func(ctx context.Context) error {
			_, _, err := c.GroupDetail(ctx, stream, "existing")
			return err
		},
		"ListGroups": func(ctx context.Context) error {
			for _, err := range c.ListGroups(ctx, valkey.ListOptions{Streams: []string{stream}}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"EnsureGroup": func(ctx context.Context) error {
			_, _, err := c.EnsureGroup(ctx, stream, "created", valkey.StartHead)
			return err
		},
	}
}

// settleOnRedirect is a hook inside the client's own: the first time a command or pipeline
// comes back redirected, it runs settle, once. Nothing but the redirection decides when.
type settleOnRedirect struct {
	once   *sync.Once
	settle func()
}

func (h settleOnRedirect) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h settleOnRedirect) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.check(cmd)
		return err
	}
}

func (h settleOnRedirect) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			h.check(cmd)
		}
		return err
	}
}

func (h settleOnRedirect) check(cmd redis.Cmder) {
	if err := cmd.Err(); err != nil && (strings.HasPrefix(err.Error(), "MOVED ") || strings.HasPrefix(err.Error(), "ASK ")) {
		h.once.Do(h.settle)
	}
}

func TestCluster_RedirectionsAreFollowedUntilTheSlotSettles(t *testing.T) { //nolint:tparallel // each subtest holds its own slot in a standoff, in turn
	t.Parallel()
	cluster := valkeytest.StartClusterT(t, 3, 0)
	zero := 0

	t.Run("every entry point waits for the nodes to agree", func(t *testing.T) {
		st := newSlotStandoff(t, cluster)
		for name := range entryPoints(nil, st.stream) {
			t.Run(name, func(t *testing.T) {
				st.stopImporting(t)
				c := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs()[:1], MinReplicaAcks: &zero})
				redirects := 0
				c.Universal().AddHook(settleOnRedirect{once: &sync.Once{}, settle: func() { redirects++; st.resumeImporting(t) }})
				if err := entryPoints(c, st.stream)[name](t.Context()); err != nil {
					t.Fatalf("%s while the slot settled: %v; want it served by %s after ASKING", name, err, st.Target.Addr())
				}
				if redirects != 1 {
					t.Fatalf("the nodes disagreed %d times before %s was served; want once (the standoff was not met)", redirects, name)
				}
			})
		}
		if got := st.groups(t); !slices.Equal(got, []string{"created", "existing"}) {
			t.Errorf("the target holds groups %v; want the existing one and the one EnsureGroup created", got)
		}
	})

	t.Run("a standoff that never ends is a redirection, not a refusal", func(t *testing.T) {
		st := newSlotStandoff(t, cluster)
		c := newClient(t, valkey.Options{ClusterAddrs: cluster.Addrs()[:1], MinReplicaAcks: &zero})
		for name, call := range entryPoints(c, st.stream) {
			err := call(t.Context())
			var redirect *valkey.RedirectError
			var refused *valkey.RefusedError
			switch {
			case errors.As(err, &refused):
				t.Errorf("%s: %v; a redirection reported as a refusal", name, err)
			case !errors.As(err, &redirect):
				t.Errorf("%s: %T %v; want a *valkey.RedirectError", name, err, err)
			case redirect.Key != st.stream || !strings.HasPrefix(redirect.Reply, "MOVED ") && !strings.HasPrefix(redirect.Reply, "ASK "):
				t.Errorf("%s: %+v; want the stream %q and the last MOVED or ASK", name, redirect, st.stream)
			}
		}
		if got := st.groups(t); !slices.Equal(got, []string{"existing"}) {
			t.Errorf("the target holds groups %v; a create that was only ever redirected wrote nothing", got)
		}
	})
}
