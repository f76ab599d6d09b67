package provider

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// hclString quotes s for HCL: escapes, and no template sequences.
func hclString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case (r == '$' || r == '%') && strings.HasPrefix(s[i+1:], "{"):
			b.WriteRune(r) // "$${" is a literal "${", "%%{" a literal "%{"
			b.WriteRune(r)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// hashSlotKeys are keys Terraform can carry (Unicode text in NFC form) with every brace shape.
func hashSlotKeys(n int) []string {
	keys := []string{
		"", "foo", "{}", "}{", "{}{a}", "{{a}}", "{a", "a}", "{a}{b}", "{user1000}.following", "{user1000}.followers",
		"emq:{orders}:stream/main", "emq:{orders}:dead-letter", "日本{語}", "{日本}語", "{é}", "${x}", "%{x}", "{\u0000}", "a\tb{\n}",
	}
	r := rand.New(rand.NewPCG(8, 1))
	pieces := []string{"{", "}", "{", "}", "a", "b", ":", "/", "é", "日", "\U0001F600", "$", "%", `"`, `\`, "\n"}
	for range n {
		var b strings.Builder
		for range r.IntN(16) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		keys = append(keys, b.String())
	}
	return keys
}

// testAccFunction runs one step that calls provider functions, which Terraform has from 1.8.
func testAccFunction(t *testing.T, step resource.TestStep) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		Steps:                    []resource.TestStep{step},
	})
}

func TestAccHashSlotFunction_matchesClusterKeyslot(t *testing.T) {
	t.Parallel()
	cluster := valkeytest.StartT(t, valkeytest.WithArgs("--cluster-enabled", "yes"))

	keys := hashSlotKeys(400)
	want := make([]knownvalue.Check, len(keys))
	quoted := make([]string, len(keys))
	for i, slot := range cluster.KeySlots(t, keys) {
		want[i] = knownvalue.Int64Exact(slot)
		quoted[i] = "    " + hclString(keys[i]) + ",\n"
	}
	testAccFunction(t, resource.TestStep{
		Config: fmt.Sprintf(`
locals {
  keys = [
%s  ]
}

output "keys" {
  value = local.keys
}

output "slots" {
  value = [for k in local.keys : provider::valkey::hash_slot(k)]
}
`, strings.Join(quoted, "")),
		ConfigStateChecks: []statecheck.StateCheck{
			// The keys arrive unchanged, so the slots below are the server's for these exact keys.
			statecheck.ExpectKnownOutputValue("keys", knownvalue.ListExact(func() []knownvalue.Check {
				checks := make([]knownvalue.Check, len(keys))
				for i, k := range keys {
					checks[i] = knownvalue.StringExact(k)
				}
				return checks
			}())),
			statecheck.ExpectKnownOutputValue("slots", knownvalue.ListExact(want)),
		},
	})
}

func TestAccHashSlotFunction_colocationCheck(t *testing.T) {
	t.Parallel()
	testAccFunction(t, resource.TestStep{
		Config: `
output "same_slot" {
  value = provider::valkey::hash_slot("emq:{orders}:stream") == provider::valkey::hash_slot("emq:{orders}:dead-letter")
}

output "slot" {
  value = provider::valkey::hash_slot("foo")
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("same_slot", knownvalue.Bool(true)),
			statecheck.ExpectKnownOutputValue("slot", knownvalue.Int64Exact(12182)),
		},
	})
}

func TestAccHashSlotFunction_nullKeyIsRefused(t *testing.T) {
	t.Parallel()
	testAccFunction(t, resource.TestStep{
		Config: `
output "slot" {
  value = provider::valkey::hash_slot(null)
}
`,
		ExpectError: regexp.MustCompile(`(?i)Invalid function argument`),
	})
}
