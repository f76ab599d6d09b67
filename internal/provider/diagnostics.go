package provider

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// This file, with its two companions for the failures of a cloud token (tokenHint in
// diagnostics_auth.go) and of a SOCKS5 proxy (proxyHint in diagnostics_proxy.go), is the one
// place that turns the typed errors of internal/valkey into words for people (errorDetail,
// addSettingsError): what the server said, which key and address, and what to do next, in the
// provider's terms (attributes, environment variables, Terraform commands); and it words the
// outcomes of a create. What is not an error of internal/valkey is worded where it is found:
// the plan's previews in resource_stream_group_plan.go, a missing group or stream of a data
// source in data_source_shared.go, an import that finds no group in group_id.go. They all call
// errorDetail for the server's errors.

// errorDetail explains err, met while working on subject (such as `group "g" of stream "s"`).
func errorDetail(err error, subject string) string {
	var (
		wrongType   *valkey.WrongTypeError
		refused     *valkey.RefusedError
		redirect    *valkey.RedirectError
		unreachable *valkey.UnreachableError
		unconfirmed *valkey.UnconfirmedError
		unknown     *configUnknownError
		lost        *valkey.UnknownOutcomeError
	)
	switch {
	case errors.As(err, &wrongType):
		return fmt.Sprintf("Key %q on the server at %s holds a %s, not a stream, so %s cannot be there. "+
			"Choose another stream key, or remove the %s from the server if nothing uses it.",
			wrongType.Key, wrongType.Addr, wrongType.Type, subject, wrongType.Type)
	case errors.As(err, &refused):
		return fmt.Sprintf("The server at %s refused %s on key %q for %s with: %s\n\n%s",
			refused.Addr, refused.Command, refused.Key, subject, sentence(refused.Reply), refusedHint(refused.Code()))
	case errors.As(err, &redirect):
		return fmt.Sprintf("The Valkey %s kept redirecting %s on key %q (slot %d) between its nodes while working on %s; "+
			"the last reply was %s. The slot is being moved, and its nodes did not agree on which of them serves it for as long as "+
			"the provider followed their redirections (about a second). The command ran on no node: nothing was written.\n\n"+
			"Run Terraform again when the slot migration has finished. If the nodes still disagree, check the slot with "+
			"`valkey-cli --cluster check` and repair it with `valkey-cli --cluster fix`.",
			redirect.Addr, redirect.Command, redirect.Key, valkey.HashSlot(redirect.Key), subject, redirect.Reply)
	case errors.As(err, &lost):
		return lostReplyDetail(lost)
	case errors.As(err, &unconfirmed):
		return unconfirmedDetail(unconfirmed, subject)
	case errors.As(err, &unknown):
		return fmt.Sprintf("The provider configuration was unknown when this operation ran (%s depends on values known only "+
			"after apply), so no server could be asked about %s.\n\n%s",
			strings.Join(unknown.settings, ", "), subject, configUnknownHint)
	case errors.As(err, &unreachable):
		what := "Could not talk to Valkey"
		switch step := unreachable.Step; step {
		case "", "connect":
		case "SELECT":
			what = fmt.Sprintf("Could not open a connection to Valkey (SELECT %d failed)", unreachable.DB)
		case "CLUSTER SLOTS": // nothing was sent for the key: the node serving it is not known
			what = "Could not learn which Valkey cluster node serves the key (CLUSTER SLOTS failed)"
		default:
			what = fmt.Sprintf("Could not open a connection to Valkey (%s failed)", step)
		}
		hint, known := proxyHint(unreachable)
		if !known {
			hint, known = tokenHint(unreachable)
		}
		if !known {
			hint, known = announcedHint(unreachable)
		}
		if !known {
			hint = unreachableHint(unreachable.Cause(), unreachable.DB)
		}
		return fmt.Sprintf("%s at %s while working on %s: %s\n\n%s", what, valkey.Where(unreachable.Addr, unreachable.Node),
			subject, sentence(unreachable.Err.Error()), hint)
	}
	return fmt.Sprintf("%s: %s", capitalize(subject), sentence(err.Error()))
}

// unreachableAnnounced tells an error of a cluster whose seeds answered but one of whose
// announced nodes cannot be reached from here at all (no answer, or a name that does not
// resolve): a configuration that apply cannot get past, unlike a server that is down.
func unreachableAnnounced(err error) bool {
	var unreachable *valkey.UnreachableError
	if !errors.As(err, &unreachable) || !unreachable.Announced || unreachable.Step != "connect" {
		return false
	}
	cause := unreachable.Cause()
	return cause == valkey.CauseTimeout || cause == valkey.CauseDNS
}

// announcedHint points a cluster whose announced nodes cannot be reached to the two settings
// that reach them.
func announcedHint(u *valkey.UnreachableError) (string, bool) {
	if !unreachableAnnounced(u) {
		return "", false
	}
	return fmt.Sprintf("The cluster's seed answered, but node %s, at the address the cluster announces for it, cannot be reached "+
		"from here. Nodes of a managed cache, a Kubernetes service or containers often announce private addresses: map each "+
		"announced address to one this machine reaches with cluster.address_map (or VALKEY_CLUSTER_ADDRESS_MAP), or carry every "+
		"connection through a SOCKS5 bastion with proxy (or VALKEY_PROXY).", u.Node), true
}

// sentence ends text with exactly one period, whatever the server's words end with.
func sentence(text string) string {
	return strings.TrimRight(strings.TrimSpace(text), ".") + "."
}

// lostReplyDetail explains a Create whose XGROUP CREATE may have run but whose reply was lost.
func lostReplyDetail(lost *valkey.UnknownOutcomeError) string {
	var now string
	switch {
	case lost.NowErr != nil:
		now = fmt.Sprintf("Asked once more, the server could not be read either (%s), so whether the group exists now is "+
			"not known.", strings.TrimSuffix(lost.NowErr.Error(), "."))
	case lost.Now.GroupExists:
		now = fmt.Sprintf("Asked once more, the server shows group %q on stream %q, at last-delivered-id %s with lag %s: "+
			"this apply's create may have made it, or another client may have.",
			lost.Group, lost.Stream, lost.Now.Group.LastDeliveredID, formatOptional(lost.Now.Group.Lag))
	case lost.Now.StreamExists:
		now = fmt.Sprintf("Asked once more, the server shows stream %q without group %q: the create did not take effect.",
			lost.Stream, lost.Group)
	default:
		now = fmt.Sprintf("Asked once more, the server shows no stream %q: the create did not take effect.", lost.Stream)
	}
	why, check := "", "Check the network path to the server"
	switch lost.Cause() {
	case valkey.CauseTimeout:
		why, check = ": the server did not answer within command_timeout", check+" and the server's load (raise command_timeout if it is only slow)"
	case valkey.CauseClosed:
		why, check = ": the connection closed before the reply came", check+" and the server's logs"
	}
	return fmt.Sprintf("XGROUP CREATE for group %q of stream %q was sent to %s, but its reply was lost%s (%s), so the provider "+
		"cannot tell whether this apply created the group. The command was not sent again: a second XGROUP CREATE would "+
		"answer BUSYGROUP to this very create, and the group would be reported as adopted. Nothing was written to state.\n\n"+
		"%s\n\n%s, then run terraform apply again: its XGROUP CREATE creates the group if it "+
		"is absent, or meets BUSYGROUP and adopts it if it is there, and the adoption's warning then says that the group may "+
		"be this apply's own.",
		lost.Group, lost.Stream, lost.Addr, why, strings.TrimSuffix(lost.Err.Error(), "."), now, check)
}

// unconfirmedDetail explains a group that fewer replicas confirmed than min_replica_acks asks.
func unconfirmedDetail(u *valkey.UnconfirmedError, subject string) string {
	var what string
	if u.Outcome == valkey.Adopted {
		what = fmt.Sprintf("%s already existed at %s (XGROUP CREATE answered BUSYGROUP), so it was adopted, but", capitalize(subject), valkey.Where(u.Addr, u.Node))
	} else {
		what = fmt.Sprintf("XGROUP CREATE created %s at %s, but", subject, valkey.Where(u.Addr, u.Node))
	}
	switch {
	case u.Reply != "":
		return fmt.Sprintf("%s the server refused WAIT, with which the provider confirms that replicas hold the group "+
			"(min_replica_acks, on by default with sentinel and cluster): %s\n\nThe group is on the primary but not recorded until confirmed. "+
			"Grant +wait to the ACL user (see the provider's minimal ACL), or set min_replica_acks = 0 to skip the "+
			"confirmation, then apply again: the group is then adopted as it is.", what, sentence(u.Reply))
	case u.Err != nil:
		return fmt.Sprintf("%s the reply to WAIT, with which the provider confirms that replicas hold the group, was lost (%s). "+
			"The group is on the primary but not recorded until confirmed. Check the network path to the server, then "+
			"apply again: the group is adopted if it survived.", what, strings.TrimSuffix(u.Err.Error(), "."))
	}
	return fmt.Sprintf("%s only %d of the %d replicas asked for (min_replica_acks, on by default with sentinel and cluster) "+
		"confirmed it within %s. A failover now could lose it, so Terraform does not record it. Check the replicas' health "+
		"and replication links (or raise replica_ack_timeout), then apply again: the group is adopted if it survived. "+
		"A primary without replicas can never confirm a write: set min_replica_acks = 0 (or VALKEY_MIN_REPLICA_ACKS) for one.",
		what, u.Acked, u.Wanted, u.Timeout)
}

// groupSubject and streamSubject name what an operation worked on, for errorDetail.
func groupSubject(stream, group string) string {
	return fmt.Sprintf("group %q of stream %q", group, stream)
}

func streamSubject(stream string) string { return fmt.Sprintf("stream %q", stream) }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// refusedHint says what to do about an error reply, by its first word. MOVED and ASK are
// refusals only for a client of one server (a cluster client follows them, and reports a
// *valkey.RedirectError when they never end), so their advice is to configure the cluster.
func refusedHint(code string) string {
	switch code {
	case "NOPERM":
		return "The ACL user lacks the permission named in the reply: grant it (see the provider's minimal ACL) or use another user."
	case "READONLY":
		return "The address points at a replica; point the provider at the primary (or use the sentinel attribute)."
	case "LOADING":
		return "The server is still loading its dataset; retry when it has finished."
	case "OOM":
		return "The server is out of memory (maxmemory reached, with a policy that evicts nothing this write could use): " +
			"free memory or raise maxmemory, then apply again."
	case "CLUSTERDOWN":
		return "The cluster cannot serve this key's slot: check `CLUSTER INFO` (cluster_state) and the health of its nodes."
	case "MOVED", "ASK", "CROSSSLOT":
		return "The server is part of a cluster; configure the provider's cluster attribute instead of a single url."
	}
	return "Check the server's reply above and the server's configuration."
}

// configUnknownHint says what to do when the provider's configuration is not known yet.
const configUnknownHint = "The provider's configuration depends on values known only after apply (for example a url taken from a resource " +
	"not created yet). Apply the resources it depends on first (terraform apply -target=...), or configure the provider with known values."

// unreachableHint says what to check when the server could not be reached; db is the database
// asked for.
func unreachableHint(cause valkey.Cause, db int) string {
	switch cause {
	case valkey.CauseAuth:
		return "Authentication failed: check the username and password (attributes, VALKEY_USERNAME/VALKEY_PASSWORD, or the url) " +
			"and that the ACL user is enabled."
	case valkey.CauseNoPerm:
		return "The ACL user may not run a command the connection needs: grant it (see the provider's minimal ACL) or use another user."
	case valkey.CauseClusterDown:
		return "The cluster cannot serve requests: check `CLUSTER INFO` (cluster_state) and the health of its nodes."
	case valkey.CauseDNS:
		return "The host name does not resolve: check the host in the url (or the cluster or sentinel addresses) and DNS."
	case valkey.CauseRefused:
		return "Nothing is listening there: check that valkey-server is running and that the host and port are right."
	case valkey.CauseTLSVerify:
		return "TLS verification of the server's certificate failed: check tls.ca_cert (or ca_cert_file) and that " +
			"tls.server_name matches a name in the certificate."
	case valkey.CauseTLSRejected:
		return "The server rejected the TLS handshake: if it requires client certificates (tls-auth-clients), set tls.cert " +
			"and tls.key to a pair its CA trusts."
	case valkey.CauseNotTLS:
		return "The server did not speak TLS: use valkey:// without the tls attribute, or check the port."
	case valkey.CauseClosed:
		return "The server closed the connection: if it expects TLS, use valkeys:// or the tls attribute; otherwise check its logs and maxclients."
	case valkey.CauseClosedTLS:
		return "The server closed the TLS connection: if it requires client certificates (tls-auth-clients), set tls.cert " +
			"and tls.key to a pair its CA trusts."
	case valkey.CauseClosedTLSCert:
		return "The server closed the TLS connection: check that its tls-ca-cert-file trusts the client certificate in " +
			"tls.cert, and the server's logs."
	case valkey.CauseNoDatabase:
		return "The server has no database of the number asked for: check db (or VALKEY_DB, or the url's /db) against the " +
			"server's `databases` setting (16 by default, numbered from 0)."
	case valkey.CauseNoClusterDatabase:
		return fmt.Sprintf("The cluster serves no database %d: in Cluster mode, Valkey 9.0 and later serve the databases below "+
			"`cluster-databases` (1 by default, so only database 0), and earlier versions only database 0. Start every node with "+
			"`cluster-databases` above %d (it cannot be changed while the server runs), or set db (or VALKEY_DB) to 0.", db, db)
	case valkey.CauseTimeout:
		return "The server did not answer in time: check the address and port (a TLS client on a plain port waits like this), " +
			"firewalls, the server's load, and dial_timeout/command_timeout."
	}
	return "Check the address, the network path to the server, and the server's logs."
}

// addSettingsError reports connection settings that valkey.NewClient refused, on the
// attribute at fault; urlSource says where the URL came from.
func addSettingsError(diags *diag.Diagnostics, err error, urlSource string) {
	var (
		urlErr    *valkey.URLError
		optionErr *valkey.OptionError
	)
	switch {
	case errors.As(err, &urlErr):
		diags.AddAttributeError(path.Root("url"), "Invalid Valkey URL",
			fmt.Sprintf("The URL taken from %s cannot be used: %s.%s", urlSource, err, queryAdvice(err)))
	case errors.As(err, &optionErr):
		setting, known := settingFilling(optionErr.Field)
		if !known {
			setting.name = optionErr.Field
		}
		detail := fmt.Sprintf("The connection setting %s", setting.name)
		if setting.env != "" {
			detail += fmt.Sprintf(" (or %s)", setting.env)
		}
		diags.AddAttributeError(attributePath(setting.name), "Invalid Valkey Connection Settings",
			detail+" "+optionErr.Reason+". Check the provider configuration and the VALKEY_* environment variables.")
	default:
		diags.AddError("Invalid Valkey Connection Settings",
			fmt.Sprintf("The provider's connection settings cannot be used: %s. Check the provider configuration and the VALKEY_* environment variables.", err))
	}
}

// ensureErrorSummary names what a failed Create leaves behind: nothing, a group nobody confirmed,
// or an outcome nobody knows.
func ensureErrorSummary(err error) string {
	var (
		lost        *valkey.UnknownOutcomeError
		unconfirmed *valkey.UnconfirmedError
	)
	switch {
	case errors.As(err, &lost):
		return "Consumer Group Outcome Unknown"
	case errors.As(err, &unconfirmed):
		return "Consumer Group Not Confirmed By Replicas"
	}
	return "Consumer Group Not Created"
}
