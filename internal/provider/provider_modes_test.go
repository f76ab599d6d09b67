package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

func TestAccProvider_Cluster(t *testing.T) {
	t.Parallel()
	cluster := valkeytest.StartClusterT(t, 3, 0)
	admin := cluster.Client()
	t.Cleanup(func() { _ = admin.Close() })
	streams := []string{"emq:{orders}:stream/main", "emq:{payments}:stream/main", "emq:{shipping}:stream/main"}
	config := fmt.Sprintf(`provider "valkey" {
  cluster = {
    addresses = [%q]
  }
  min_replica_acks = 0 # the masters have no replicas to confirm a write
}
`, cluster.Addrs()[0])
	for i, s := range streams {
		config += fmt.Sprintf(`
resource "valkey_stream_group" "g%d" {
  stream      = %q
  name        = "billing"
  group_start = "new"
}
`, i, s)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{acctest.CheckServer(func() error {
				owners := map[string]bool{}
				for _, s := range streams {
					groups, err := admin.XInfoGroups(context.Background(), s).Result()
					if err != nil || len(groups) != 1 || groups[0].Name != "billing" {
						return fmt.Errorf("stream %s: groups %+v, err %w", s, groups, err)
					}
					slot := admin.ClusterKeySlot(context.Background(), s).Val()
					owner, err := cluster.Owner(context.Background(), int(slot))
					if err != nil {
						return err
					}
					owners[owner.Addr()] = true
				}
				if len(owners) < 2 {
					return fmt.Errorf("streams all on one node; the test did not cross slots")
				}
				return nil
			})},
		}},
	})
}

func TestAccProvider_SentinelFailover(t *testing.T) {
	t.Parallel()
	st := valkeytest.StartSentinelT(t, 2)
	stream := acctest.StreamKey(t)
	config := func(groups ...string) string {
		c := fmt.Sprintf(`provider "valkey" {
  sentinel = {
    master_name = %q
    addresses   = [%q, %q]
  }
}
`, st.MasterName, st.Addrs()[0], st.Addrs()[1])
		for _, g := range groups {
			c += fmt.Sprintf(`
resource "valkey_stream_group" %[1]q {
  stream      = %[2]q
  name        = %[1]q
  group_start = "new"
}
`, g, stream)
		}
		return c
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("before"),
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.CheckServer(func() error { return valkeytest.CheckGroup(acctest.Admin(t, st.Primary), stream, "before") }),
				},
			},
			{
				PreConfig: func() {
					if err := st.Failover(context.Background()); err != nil {
						t.Fatal(err)
					}
					// min_replica_acks is 1 in sentinel mode: the new primary needs its replica back.
					if err := st.WaitReplicated(context.Background()); err != nil {
						t.Fatal(err)
					}
				},
				Config: config("before", "after"),
				ConfigStateChecks: []statecheck.StateCheck{
					// The replica is the primary now: both groups are there, the new one created on it.
					acctest.CheckServer(func() error { return valkeytest.CheckGroup(acctest.Admin(t, st.Replica), stream, "after") }),
					acctest.CheckServer(func() error { return valkeytest.CheckGroup(acctest.Admin(t, st.Replica), stream, "before") }),
				},
			},
		},
	})
}
