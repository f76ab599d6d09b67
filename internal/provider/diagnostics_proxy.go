package provider

import (
	"errors"
	"fmt"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// proxyHint says what to check when the SOCKS5 proxy did not carry the connection: the proxy,
// not the server, is what to look at. ok is false for other failures.
func proxyHint(u *valkey.UnreachableError) (hint string, ok bool) {
	var p *valkey.ProxyError
	if !errors.As(u.Err, &p) {
		return "", false
	}
	if !p.Reached {
		return fmt.Sprintf("The SOCKS5 proxy at %s, which carries every connection, could not be reached: check that it is "+
			"running (for `ssh -D`, that the tunnel is up) and that proxy (or VALKEY_PROXY) names its host and port. "+
			"The server itself was not tried.", p.Proxy), true
	}
	return fmt.Sprintf("The SOCKS5 proxy at %s answered but did not connect to %s: check the credentials in proxy (or "+
		"VALKEY_PROXY), that the proxy may reach that address (a bastion's firewall, `PermitOpen`, security groups), and "+
		"that the host and port are right as the proxy resolves them.", p.Proxy, p.Target), true
}
