package valkey_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

func TestEnsureGroup_MinReplicaAcks(t *testing.T) {
	t.Parallel()
	primary := valkeytest.StartT(t)
	ctx := context.Background()

	// No replica: the group is written, but EnsureGroup does not count an unconfirmed write.
	lonely := newClient(t, valkey.Options{URL: primary.URL(), MinReplicaAcks: new(1), ReplicaAckTimeout: 200 * time.Millisecond})
	_, _, err := lonely.EnsureGroup(ctx, "orders", "billing", valkey.StartNew)
	var unconfirmed *valkey.UnconfirmedError
	if !errors.As(err, &unconfirmed) || unconfirmed.Acked != 0 || unconfirmed.Wanted != 1 || unconfirmed.Key != "orders" ||
		unconfirmed.Outcome != valkey.Created {
		t.Fatalf("err = %v, want UnconfirmedError 0 of 1 on orders, for a created group", err)
	}
	// Again: the group exists now, so EnsureGroup adopts it, and the error says that it did.
	_, _, err = lonely.EnsureGroup(ctx, "orders", "billing", valkey.StartNew)
	if !errors.As(err, &unconfirmed) || unconfirmed.Outcome != valkey.Adopted || !strings.Contains(err.Error(), "was adopted") {
		t.Fatalf("err = %v, want UnconfirmedError for an adopted group", err)
	}

	rrdb := valkeytest.StartReplicaT(t, primary).Client()
	defer func() { _ = rrdb.Close() }()

	// With a replica: created and adopted, each confirmed, and the group is on the replica.
	c := newClient(t, valkey.Options{URL: primary.URL(), MinReplicaAcks: new(1)})
	if outcome, _, err := c.EnsureGroup(ctx, "payments", "billing", valkey.StartNew); err != nil || outcome != valkey.Created {
		t.Fatalf("create: %v %v", outcome, err)
	}
	if outcome, _, err := c.EnsureGroup(ctx, "orders", "billing", valkey.StartNew); err != nil || outcome != valkey.Adopted {
		t.Fatalf("adopt: %v %v", outcome, err)
	}
	if groups, err := rrdb.XInfoGroups(ctx, "payments").Result(); err != nil || len(groups) != 1 {
		t.Fatalf("replica groups on payments: %v %v", groups, err)
	}
}
