package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// testAccCheckGroupsStay is a CheckDestroy: after destroy the groups must STILL be there.
func testAccCheckGroupsStay(rdb *redis.Client, stream string, names ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		for _, name := range names {
			if err := valkeytest.CheckGroup(rdb, stream, name); err != nil {
				return fmt.Errorf("destroy must leave the group on the server: %w", err)
			}
		}
		return nil
	}
}

func TestAccStreamGroup_create(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testAccCheckGroupsStay(rdb, stream, "billing"),
		Steps: []resource.TestStep{{
			Config: acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "new"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("valkey_stream_group.test", plancheck.ResourceActionCreate),
				plancheck.ExpectUnknownValue("valkey_stream_group.test", tfjsonpath.New("adopted")),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("id"), knownvalue.StringExact(stream+"/billing")),
				statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("adopted"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("group_start"), knownvalue.StringExact("new")),
				acctest.CheckServer(func() error {
					if typ := rdb.Type(context.Background(), stream).Val(); typ != "stream" {
						return fmt.Errorf("TYPE %s = %q, want stream created by MKSTREAM", stream, typ)
					}
					return valkeytest.CheckGroup(rdb, stream, "billing")
				}),
			},
		}, {
			// A second plan with nothing changed is empty: Read confirms the group.
			Config:   acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "new"),
			PlanOnly: true,
		}},
	})
}

func TestAccStreamGroup_adoptsExistingGroup(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testAccCheckGroupsStay(rdb, stream, "billing"),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				acctest.MustDo(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: "7-0", Values: []string{"k", "v"}}).Err())
				if err := rdb.XGroupCreate(ctx, stream, "billing", "$").Err(); err != nil {
					t.Fatal(err)
				}
			},
			Config: acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "head"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("adopted"), knownvalue.Bool(true)),
				acctest.CheckServer(func() error {
					g, _, err := valkeytest.Group(rdb, stream, "billing")
					if err != nil {
						return err
					}
					if g.LastDeliveredID != "7-0" {
						return fmt.Errorf("adopted group moved to %q; head must not be applied to an existing group", g.LastDeliveredID)
					}
					return nil
				}),
			},
		}},
	})
}

// readCount is how many entries a fresh consumer of the group receives right now.
func readCount(rdb *redis.Client, stream, group string) (int, error) {
	res, err := rdb.XReadGroup(context.Background(), &redis.XReadGroupArgs{
		Group: group, Consumer: "probe", Streams: []string{stream, ">"}, Count: 100, Block: -1,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return len(res[0].Messages), nil
}

func TestAccStreamGroup_headReplaysAndNewDoesNot(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	config := acctest.ProviderConfig(acctest.Server(t)) + fmt.Sprintf(`
resource "valkey_stream_group" "replay" {
  stream      = %[1]q
  name        = "replay"
  group_start = "head"
}

resource "valkey_stream_group" "tail" {
  stream      = %[1]q
  name        = "tail"
  group_start = "new"
}
`, stream)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				for range 3 {
					acctest.MustDo(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"order", "before"}}).Err())
				}
			},
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				acctest.CheckServer(func() error {
					if n, err := readCount(rdb, stream, "replay"); err != nil || n != 3 {
						return fmt.Errorf("head group delivered %d of the 3 earlier entries (err %w), want 3", n, err)
					}
					if n, err := readCount(rdb, stream, "tail"); err != nil || n != 0 {
						return fmt.Errorf("new group delivered %d earlier entries (err %w), want 0", n, err)
					}
					if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"order", "after"}}).Err(); err != nil {
						return err
					}
					if n, err := readCount(rdb, stream, "tail"); err != nil || n != 1 {
						return fmt.Errorf("new group delivered %d later entries (err %w), want 1", n, err)
					}
					return nil
				}),
			},
		}},
	})
}

func TestAccStreamGroup_wrongTypeFailsAndWritesNothing(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() { rdb.Set(ctx, stream, "not a stream", 0) },
			Config:    acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "g", "new"),
			// The plan-time check already meets the string; the apply-time XGROUP CREATE is covered by
			// TestCLIStreamGroup_wrongTypeAfterPlanFailsApplyWritesNoState and internal/valkey.
			ExpectError: regexp.MustCompile(`(?s)Consumer Group Cannot Be Created.*` + regexp.QuoteMeta(fmt.Sprintf("%q", stream)[:20]) +
				`.*holds a string, not a\s+stream`),
		}, {
			// No resource in state: a configuration without it plans nothing to destroy.
			Config: acctest.ProviderConfig(acctest.Server(t)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectEmptyPlan(),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				acctest.CheckServer(func() error {
					if v := rdb.Get(ctx, stream).Val(); v != "not a stream" {
						return fmt.Errorf("the string at %s changed to %q", stream, v)
					}
					return nil
				}),
			},
		}},
	})
}

func TestAccStreamGroup_invalidGroupStartFailsAtPlan(t *testing.T) {
	t.Parallel()
	for _, start := range []string{"$", "0", "tail", ""} {
		t.Run(fmt.Sprintf("%q", start), func(t *testing.T) {
			t.Parallel()
			rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "g", start),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)group_start.*value must be one of:.*"new".*"head"`),
				}},
			})
			if keyExists(t, rdb, stream) {
				t.Errorf("the stream exists after a plan-time failure")
			}
		})
	}
}

func TestAccStreamGroup_emptyStreamOrNameFailsAtPlan(t *testing.T) {
	t.Parallel()
	for attr, config := range map[string]string{
		"stream": acctest.StreamGroupConfig("", "g", "new"),
		"name":   acctest.StreamGroupConfig("s", "", "new"),
	} {
		t.Run(attr, func(t *testing.T) {
			t.Parallel()
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      acctest.ProviderConfig(acctest.Server(t)) + config,
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)Attribute ` + attr + ` string length must be at least 1`),
				}},
			})
		})
	}
}

func TestAccStreamGroup_destroyLeavesGroupAndEntries(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if err := testAccCheckGroupsStay(rdb, stream, "billing")(s); err != nil {
				return err
			}
			if n := rdb.XLen(ctx, stream).Val(); n != 2 {
				return fmt.Errorf("XLEN %s = %d after destroy, want the 2 entries still there", stream, n)
			}
			if g, _, _ := valkeytest.Group(rdb, stream, "billing"); g.Pending != 1 {
				return fmt.Errorf("pending = %d after destroy, want the 1 pending entry kept", g.Pending)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "head"),
			ConfigStateChecks: []statecheck.StateCheck{acctest.CheckServer(func() error {
				if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"k", "1"}}).Err(); err != nil {
					return err
				}
				if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"k", "2"}}).Err(); err != nil {
					return err
				}
				return rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "c", Streams: []string{stream, ">"}, Count: 1}).Err()
			})},
		}},
	})
}

func TestAccStreamGroup_removedOutOfBandIsRecreated(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	config := acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "new")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					if err := rdb.XGroupDestroy(ctx, stream, "billing").Err(); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("valkey_stream_group.test", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("adopted"), knownvalue.Bool(false)),
					acctest.CheckServer(func() error { return valkeytest.CheckGroup(rdb, stream, "billing") }),
				},
			},
			{
				// The whole stream deleted out of band: also planned as a create, and recreated.
				PreConfig: func() { rdb.Del(ctx, stream) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("valkey_stream_group.test", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.CheckServer(func() error { return valkeytest.CheckGroup(rdb, stream, "billing") }),
				},
			},
		},
	})
}

func TestAccStreamGroup_import(t *testing.T) {
	t.Parallel()
	rdb := acctest.Admin(t, acctest.Server(t))
	// Keys with ":", "{", "}" and "/" round-trip: the ID splits at the last "/".
	stream := acctest.StreamKey(t) + "/with/slashes"
	config := acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "new")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testAccCheckGroupsStay(rdb, stream, "billing"),
		Steps: []resource.TestStep{
			{Config: config},
			{
				ResourceName:      "valkey_stream_group.test",
				ImportState:       true,
				ImportStateId:     stream + "/billing",
				ImportStateVerify: true,
				// The server does not know group_start, and an import is an adoption.
				ImportStateVerifyIgnore: []string{"group_start", "adopted"},
			},
		},
	})
}

func TestAccStreamGroup_importBlockRecordsGroupStartWithoutReplacement(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	config := acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "head") + fmt.Sprintf(`
import {
  to = valkey_stream_group.test
  id = %q
}
`, stream+"/billing")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testAccCheckGroupsStay(rdb, stream, "billing"),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				if err := rdb.XGroupCreateMkStream(ctx, stream, "billing", "$").Err(); err != nil {
					t.Fatal(err)
				}
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("valkey_stream_group.test", plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("group_start"), knownvalue.StringExact("head")),
				statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("adopted"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("id"), knownvalue.StringExact(stream+"/billing")),
			},
		}, {
			Config:   config,
			PlanOnly: true,
		}},
	})
}

func TestAccStreamGroup_importErrors(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	for _, tc := range []struct {
		id   string
		want string
	}{
		{"no-slash-here", `Invalid Import ID.*not of the form <stream>/<name>`},
		{stream + "/", `Invalid Import ID`},
		{"/billing", `Invalid Import ID`},
		{stream + "/does-not-exist", `(?s)Consumer Group Not Found For Import.*has no consumer group "does-not-exist"`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:        acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "does-not-exist", "new"),
					ResourceName:  "valkey_stream_group.test",
					ImportState:   true,
					ImportStateId: tc.id,
					ExpectError:   regexp.MustCompile(`(?s)` + tc.want),
				}},
			})
		})
	}
}

func TestAccStreamGroup_groupStartChangeReplacesWithoutMovingGroup(t *testing.T) {
	t.Parallel()
	ctx, rdb, stream := context.Background(), acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	var before string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "new"),
			ConfigStateChecks: []statecheck.StateCheck{acctest.CheckServer(func() error {
				// Move the group forward: one entry delivered.
				if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"k", "1"}}).Err(); err != nil {
					return err
				}
				if _, err := readCount(rdb, stream, "billing"); err != nil {
					return err
				}
				if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"k", "2"}}).Err(); err != nil {
					return err
				}
				g, _, err := valkeytest.Group(rdb, stream, "billing")
				before = g.LastDeliveredID
				return err
			})},
		}, {
			Config: acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "billing", "head"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("valkey_stream_group.test", plancheck.ResourceActionDestroyBeforeCreate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("adopted"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("group_start"), knownvalue.StringExact("head")),
				acctest.CheckServer(func() error {
					g, ok, err := valkeytest.Group(rdb, stream, "billing")
					if err != nil || !ok {
						return fmt.Errorf("group gone after replacement (err %w)", err)
					}
					if g.LastDeliveredID != before {
						return fmt.Errorf("last-delivered-id moved from %s to %s; a group_start change must not move the group", before, g.LastDeliveredID)
					}
					if n, err := readCount(rdb, stream, "billing"); err != nil || n != 1 {
						return fmt.Errorf("group delivers %d entries (err %w), want only the 1 undelivered one", n, err)
					}
					return nil
				}),
			},
		}},
	})
}

func TestAccStreamGroup_refreshWithServerDownKeepsState(t *testing.T) {
	t.Parallel()
	// An own server with fsync'd persistence: the test kills it and brings it back.
	srv := valkeytest.StartT(t, valkeytest.WithArgs("--appendonly", "yes", "--appendfsync", "always"))
	stream := acctest.StreamKey(t)
	config := acctest.ProviderConfig(srv) + acctest.StreamGroupConfig(stream, "billing", "new")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig:    srv.Stop,
				RefreshState: true,
				ExpectError:  regexp.MustCompile(`(?s)Consumer Group Not Read.*Could not talk to Valkey at ` + regexp.QuoteMeta(srv.Addr())),
			},
			{
				// Back up: the resource is still in state, so nothing is planned.
				PreConfig: func() {
					if err := srv.Restart(); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("id"), knownvalue.StringExact(stream+"/billing")),
				},
			},
		},
	})
}
