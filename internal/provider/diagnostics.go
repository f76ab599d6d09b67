package provider

import (
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// valkeyErrorDetail explains an error from internal/valkey in whole sentences: what the
// server said, which key and address, and what to do next.
func valkeyErrorDetail(err error, stream, group string) string {
	var (
		wrongType   *valkey.WrongTypeError
		refused     *valkey.RefusedError
		unreachable *valkey.UnreachableError
		unconfirmed *valkey.UnconfirmedError
	)
	switch {
	case errors.As(err, &wrongType):
		return fmt.Sprintf("Key %q holds a %s, not a stream, so consumer group %q cannot live there. "+
			"Choose another stream key, or remove the %s from the server if nothing uses it.",
			wrongType.Key, wrongType.Type, group, wrongType.Type)
	case errors.As(err, &refused):
		return fmt.Sprintf("The server at %s refused %s on key %q for group %q with: %s\n\n%s",
			refused.Addr, refused.Command, refused.Key, group, refused.Reply, refused.Hint())
	case errors.As(err, &unconfirmed):
		return fmt.Sprintf("Group %q was written to stream %q at %s, but only %d of the %d replicas asked for (min_replica_acks) "+
			"acknowledged it within %s. A failover now could lose it, so Terraform does not record it. Check the replicas' "+
			"health and replication links, then apply again: the door adopts the group if it survived.",
			group, stream, unconfirmed.Addr, unconfirmed.Acked, unconfirmed.Wanted, unconfirmed.Timeout)
	case errors.As(err, &unreachable):
		return fmt.Sprintf("Could not talk to Valkey at %s while working on group %q of stream %q: %v.\n\n%s",
			unreachable.Addr, group, stream, unreachable.Err, unreachable.Hint())
	}
	return fmt.Sprintf("Group %q of stream %q: %v.", group, stream, err)
}

// addValkeyError appends err as an error diagnostic under summary.
func addValkeyError(diags *diag.Diagnostics, summary string, err error, stream, group string) {
	diags.AddError(summary, valkeyErrorDetail(err, stream, group))
}
