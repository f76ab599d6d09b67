package systemtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The minimal ACL, proven on the real CLI: the tests read the ACL SETUSER lines and the table
// of additions from the documentation itself (templates/index.md.tmpl, "Minimal ACL"), create a
// user with exactly what they say for the configuration at hand, run every path of the
// provider under it, and then read the server's ACL LOG: any command, key or subcommand the
// provider sent that the documentation does not grant is logged there, even where the provider
// tolerates the refusal (a plan whose XINFO STREAM is refused only warns).

// documentedACL is what the "Minimal ACL" section of templates/index.md.tmpl grants.
type documentedACL struct {
	single, cluster string            // the ACL SETUSER lines, for a single server and for a cluster
	add             map[string]string // the table of additions: its "When" cell to its "Add" cell
}

// readDocumentedACL parses the section: its two fenced ACL SETUSER lines (the single server's
// first) and its two-column table.
func readDocumentedACL(t *testing.T) documentedACL {
	t.Helper()
	b, err := os.ReadFile("../../templates/index.md.tmpl")
	acctest.MustDo(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Minimal ACL\n")
	if !ok {
		t.Fatal("templates/index.md.tmpl has no Minimal ACL section")
	}
	if end := regexp.MustCompile(`\n## |\{\{`).FindStringIndex(section); end != nil {
		section = section[:end[0]]
	}
	doc := documentedACL{add: map[string]string{}}
	var lines []string
	cell := strings.NewReplacer("`", "", `\|`, "|")
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "ACL SETUSER "):
			lines = append(lines, line)
		case strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "|--") && !strings.HasPrefix(line, "| When "):
			// Split on the cell borders, not on the escaped "\|" inside a cell.
			cells := regexp.MustCompile(`\s*(?:^|[^\\])\|\s*`).Split(strings.Trim(line, " "), -1)
			if len(cells) != 4 {
				t.Fatalf("table row %q has %d cells, want 2", line, len(cells)-2)
			}
			doc.add[cells[1]] = cell.Replace(cells[2])
		}
	}
	if len(lines) != 2 {
		t.Fatalf("the Minimal ACL section has %d ACL SETUSER lines, want the single server's and the cluster's: %q", len(lines), lines)
	}
	doc.single, doc.cluster = lines[0], lines[1]
	return doc
}

// addition is the table's Add cell for the one row whose When cell mentions when.
func (d documentedACL) addition(t *testing.T, when string) string {
	t.Helper()
	var found []string
	for w, add := range d.add {
		if strings.Contains(w, when) {
			found = append(found, add)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the Minimal ACL table has %d rows for %q, want 1: %v", len(found), when, d.add)
	}
	return found[0]
}

// aclTarget is where a minimal-ACL run goes: the provider block (with the user's name, and
// its password in VALKEY_PASSWORD), every node that has the user, and an administrator's
// client on the node and database that hold a key.
type aclTarget struct {
	provider       string
	user, password string
	nodes          []*valkeytest.Server
	admin          func(key string) *redis.Client
	// grant adds permissions to the user on every node (ACL SETUSER user +scan).
	grant func(perms string)
}

func TestCLIMinimalACL_singleServer(t *testing.T) {
	t.Parallel()
	needCLI(t)
	runMinimalACL(t, singleServerACLTarget(t, 0))
}

func TestCLIMinimalACL_singleServerDatabase(t *testing.T) {
	t.Parallel()
	needCLI(t)
	runMinimalACL(t, singleServerACLTarget(t, 5))
}

// TestCLIMinimalACL_cluster: a cluster with a replica per primary, so Create confirms with
// WAIT (min_replica_acks is 1 by default with cluster); on Valkey 9 and later in database 3
// (cluster-databases), so with SELECT too.
func TestCLIMinimalACL_cluster(t *testing.T) {
	t.Parallel()
	needCLI(t)
	doc := readDocumentedACL(t)
	db, opts := clusterDatabase(t)
	cluster := valkeytest.StartClusterT(t, 3, 1, opts...)
	line := doc.cluster + " " + doc.addition(t, "`min_replica_acks`") + " " + doc.addition(t, "data source")
	if db != 0 {
		line += " " + doc.addition(t, "`db`")
	}
	user, password := cluster.ACLSetUser(t, line)
	t.Logf("%s, on every node", strings.Replace(line, "terraform", user, 1))
	runMinimalACL(t, aclTarget{
		provider: clusterProvider(cluster, fmt.Sprintf("username = %q", user), fmt.Sprintf("db = %d", db)),
		nodes:    cluster.Nodes,
		admin: func(key string) *redis.Client {
			c := ownerOf(t, cluster, key).ClientDB(db)
			t.Cleanup(func() { _ = c.Close() })
			return c
		},
		grant: func(perms string) { grantAll(t, cluster.Nodes, user, perms) },
		user:  user, password: password,
	})
}

// TestCLIMinimalACL_sentinel: a primary found through Sentinel, with a replica, so Create
// confirms with WAIT (min_replica_acks is 1 by default with sentinel). The user is the single
// server's line with +wait, on the primary and the replica; the sentinels are asked as their
// own default user (sentinel.username is the sentinels' ACL, which the documentation leaves out).
func TestCLIMinimalACL_sentinel(t *testing.T) {
	t.Parallel()
	needCLI(t)
	doc := readDocumentedACL(t)
	st := valkeytest.StartSentinelT(t, 1)
	line := doc.single + " " + doc.addition(t, "`min_replica_acks`") + " " + doc.addition(t, "data source")
	nodes := []*valkeytest.Server{st.Primary, st.Replica}
	user, password := st.Primary.ACLSetUser(t, line)
	replicaLine := strings.Replace(strings.Replace(line, "terraform", user, 1), ">PASSWORD", ">"+password, 1)
	st.Replica.ACLSetUserNamed(t, replicaLine)
	t.Logf("%s, on the primary and the replica", strings.Replace(line, "terraform", user, 1))
	admin := st.Primary.Client()
	t.Cleanup(func() { _ = admin.Close() })
	runMinimalACL(t, aclTarget{
		provider: fmt.Sprintf("provider \"valkey\" {\n  username = %q\n  sentinel = {\n    master_name = %q\n    addresses   = [%q]\n  }\n}\n",
			user, st.MasterName, st.Addrs()[0]),
		nodes: nodes,
		admin: func(string) *redis.Client { return admin },
		grant: func(perms string) { grantAll(t, nodes, user, perms) },
		user:  user, password: password,
	})
}

// singleServerACLTarget is a server of the test's own (its ACL LOG is the test's alone) and
// a user made from the documented single-server line, with +select when db is not 0, and the
// data source's addition.
func singleServerACLTarget(t *testing.T, db int) aclTarget {
	t.Helper()
	doc := readDocumentedACL(t)
	srv := valkeytest.StartT(t)
	line := doc.single + " " + doc.addition(t, "data source")
	if db != 0 {
		line += " " + doc.addition(t, "`db`")
	}
	user, password := srv.ACLSetUser(t, line)
	t.Logf("%s", strings.Replace(line, "terraform", user, 1))
	admin := srv.ClientDB(db)
	t.Cleanup(func() { _ = admin.Close() })
	return aclTarget{
		provider: fmt.Sprintf("provider \"valkey\" {\n  url      = %q\n  username = %q\n  db       = %d\n}\n", "valkey://"+srv.Addr(), user, db),
		nodes:    []*valkeytest.Server{srv},
		admin:    func(string) *redis.Client { return admin },
		grant:    func(perms string) { grantAll(t, []*valkeytest.Server{srv}, user, perms) },
		user:     user, password: password,
	}
}

// grantAll adds perms to user on every node.
func grantAll(t *testing.T, nodes []*valkeytest.Server, user, perms string) {
	t.Helper()
	for _, s := range nodes {
		rdb := s.Client()
		args := []any{"ACL", "SETUSER", user}
		for _, p := range strings.Fields(perms) {
			args = append(args, p)
		}
		err := rdb.Do(context.Background(), args...).Err()
		_ = rdb.Close()
		acctest.MustDo(t, err)
	}
}

// runMinimalACL runs every path of the provider against target, then fails on any entry of
// the ACL LOG of any node for the user.
func runMinimalACL(t *testing.T, target aclTarget) {
	t.Helper()
	ctx := context.Background()
	prefix := valkeytest.Key(t, "emq:%s")
	fresh, replay, adopt, wrong := prefix+":{a}:fresh", prefix+":{b}:replay", prefix+":{c}:adopt", prefix+":{d}:wrong"
	valkeytest.XAdd(t, target.admin(replay), replay, "1-1", "2-1", "3-1")
	valkeytest.XAdd(t, target.admin(adopt), adopt, "1-1")
	acctest.MustDo(t, target.admin(adopt).XGroupCreate(ctx, adopt, "audit", "0").Err())
	acctest.MustDo(t, target.admin(adopt).XReadGroup(ctx, &redis.XReadGroupArgs{Group: "audit", Consumer: "worker", Streams: []string{adopt, ">"}}).Err())
	acctest.MustDo(t, target.admin(wrong).Set(ctx, wrong, "not a stream", 0).Err())

	config := target.provider +
		acctest.NamedGroupConfig("fresh", fresh, "billing", "new") + // MKSTREAM
		acctest.NamedGroupConfig("replay", replay, "billing", "head") + // XINFO STREAM: will replay 3
		acctest.NamedGroupConfig("skip", replay, "audit", "new") + // XINFO STREAM: will skip 3
		acctest.NamedGroupConfig("adopt", adopt, "audit", "new") + // BUSYGROUP: adopted
		fmt.Sprintf(`
data "valkey_stream" "replay" {
  key        = %q
  depends_on = [valkey_stream_group.replay]
}
data "valkey_stream_group" "adopt" {
  stream     = %q
  name       = "audit"
  depends_on = [valkey_stream_group.adopt]
}
output "length" {
  value = data.valkey_stream.replay.length
}
output "consumers" {
  value = [for c in data.valkey_stream_group.adopt.consumer : c.name]
}
`, replay, adopt)
	r := newCLIRun(t, config).withPassword(target.password)

	plan := r.plan().must(t, true)
	noCheckSkipped(t, plan)
	diagtest.ExpectWarning(t, plan.diags, planwords.GroupSummary(replay, "billing", planwords.WillReplay, planwords.EntriesFigure(3)), 1)
	diagtest.ExpectWarning(t, plan.diags, planwords.GroupSummary(replay, "audit", planwords.WillSkip, planwords.EntriesFigure(3)), 1)
	diagtest.ExpectWarning(t, plan.diags, diagtest.StreamCreatedSummary, 1, fresh)
	diagtest.ExpectWarning(t, plan.diags, diagtest.WillAdoptSummary, 1, adopt)

	apply := r.apply().must(t, true)
	noCheckSkipped(t, apply)
	if g := r.stateGroup("adopt"); !g.Adopted {
		t.Errorf("valkey_stream_group.adopt is %+v, want adopted (BUSYGROUP)", g)
	}
	if g := r.stateGroup("fresh"); g.Adopted {
		t.Errorf("valkey_stream_group.fresh is %+v, want created", g)
	}
	if got := target.admin(fresh).XInfoGroups(ctx, fresh).Val(); len(got) != 1 || got[0].Name != "billing" {
		t.Errorf("%s, made by XGROUP CREATE ... MKSTREAM, holds groups %+v; want billing", fresh, got)
	}
	outputs := read(r, "output", func(ctx context.Context) (map[string]tfexec.OutputMeta, error) { return r.tf.Output(ctx) })
	if got := string(outputs["length"].Value); got != "3" {
		t.Errorf("data.valkey_stream length = %s, want 3", got)
	}
	var consumers []string
	acctest.MustDo(t, json.Unmarshal(outputs["consumers"].Value, &consumers))
	if !slices.Equal(consumers, []string{"worker"}) {
		t.Errorf("data.valkey_stream_group consumers = %q, want the one that read, worker", consumers)
	}

	noCheckSkipped(t, r.refresh().must(t, true))
	noCheckSkipped(t, r.expectEmptyPlan())

	// Import a group made outside Terraform.
	acctest.MustDo(t, target.admin(replay).XGroupCreate(ctx, replay, "imported", "0").Err())
	withImport := config + acctest.NamedGroupConfig("imported", replay, "imported", "head")
	r.write(withImport)
	r.importID("valkey_stream_group.imported", replay+"/imported").must(t, true)
	if g := r.stateGroup("imported"); g.Stream != replay || g.Name != "imported" {
		t.Errorf("imported %+v", g)
	}
	r.apply().must(t, true)
	noCheckSkipped(t, r.expectEmptyPlan())

	// A key of another type: WRONGTYPE, and TYPE names what it holds.
	r.write(withImport + acctest.NamedGroupConfig("wrong", wrong, "billing", "new"))
	wrongPlan := r.plan().must(t, false)
	errs := diagtest.Find(wrongPlan.diags, tfjson.DiagnosticSeverityError, "Consumer Group Cannot Be Created")
	if len(errs) != 1 || !strings.Contains(diagtest.Unwrap(errs[0].Detail), fmt.Sprintf("Key %q", wrong)) ||
		!strings.Contains(diagtest.Unwrap(errs[0].Detail), "holds a string, not a stream") {
		t.Errorf("want one error naming %s and its type (string, which TYPE said); diagnostics: %+v", wrong, wrongPlan.diags)
	}
	r.write(withImport)

	// Destroy sends nothing: every group stays on the server.
	r.destroy().must(t, true)
	for key, want := range map[string][]string{fresh: {"billing"}, replay: {"audit", "billing", "imported"}, adopt: {"audit"}} {
		var got []string
		for _, g := range target.admin(key).XInfoGroups(ctx, key).Val() {
			got = append(got, g.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("after destroy %s holds groups %v, want %v", key, got, want)
		}
	}

	if atLeast(t, "1.14.0") {
		// Listing named streams reads with XINFO GROUPS only; a pattern needs SCAN, granted as
		// the table says just before.
		want := []string{adopt + " audit", replay + " audit", replay + " billing", replay + " imported"}
		slices.Sort(want)
		r.put("groups.tfquery.hcl", queryConfig("named", fmt.Sprintf("streams = [%q, %q, %q]", replay, adopt, wrong)))
		if got := foundBy(r.query().must(t, true)).groups["list.valkey_stream_group.named"]; !slices.Equal(got, want) {
			t.Errorf("terraform query of named streams found %q, want %q", got, want)
		}
		target.grant(readDocumentedACL(t).addition(t, "`match`"))
		r.put("groups.tfquery.hcl", queryConfig("matched", fmt.Sprintf("match = %q", prefix+":*")))
		want = append(want, fresh+" billing")
		slices.Sort(want)
		if got := foundBy(r.query().must(t, true)).groups["list.valkey_stream_group.matched"]; !slices.Equal(got, want) {
			t.Errorf("terraform query with match found %q, want %q", got, want)
		}
	} else {
		t.Logf("%s has no terraform query: the list resource's paths are not run", cliVersion(t))
	}

	// Nothing was refused: every command the provider sent is documented.
	for _, s := range target.nodes {
		for _, e := range s.ACLDenials(t, target.user) {
			t.Errorf("the ACL LOG of %s records a refusal for %s, which the documented ACL does not grant: reason %s, object %q, context %s",
				s.Addr(), target.user, e.Reason, e.Object, e.Context)
		}
	}
}
