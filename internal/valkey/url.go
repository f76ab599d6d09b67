package valkey

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// AcceptedURLForms names the URL shapes ParseURL takes, for error messages.
const AcceptedURLForms = "valkey://[user[:password]@]host[:port][/db], valkeys://... (TLS), redis://... or rediss://... (TLS)"

var urlSchemes = map[string]string{
	"valkey":  "redis",
	"valkeys": "rediss",
	"redis":   "redis",
	"rediss":  "rediss",
}

// ParseURL reads a valkey://, valkeys://, redis:// or rediss:// URL into go-redis options.
// The "s" forms turn TLS on, verified against the system roots.
func ParseURL(raw string) (*redis.Options, error) {
	bad := func(reason string) error { return &URLError{URL: RedactURL(raw), Reason: reason} }
	scheme, rest, ok := cutScheme(raw)
	if !ok {
		return nil, bad("it has no scheme")
	}
	mapped, known := urlSchemes[strings.ToLower(scheme)]
	if !known {
		return nil, bad(fmt.Sprintf("scheme %q is not supported", scheme))
	}
	u, err := url.Parse(mapped + "://" + rest)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, bad(err.Error())
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, bad("it has no host")
	}
	if !validHost(u.Hostname()) {
		return nil, bad(fmt.Sprintf("host %q is not a host name or IP address", u.Hostname()))
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, bad(fmt.Sprintf("port %s is not a TCP port (1 to 65535)", port))
		}
	}
	if u.RawQuery != "" || u.ForceQuery {
		// go-redis would read settings from the query, and the client's own options would then
		// override them without a word: refuse the query instead. Values are left out of the
		// message, since a query may carry a secret.
		params := slices.Sorted(maps.Keys(u.Query()))
		redacted, _, _ := strings.Cut(RedactURL(raw), "?")
		reason := "it has a query string; settings are not read from the URL"
		if len(params) > 0 {
			reason = fmt.Sprintf("it has query parameters (%s); settings are not read from the URL", strings.Join(params, ", "))
		}
		return nil, &URLError{URL: redacted + "?...", Params: params, Reason: reason}
	}
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		reason := strings.TrimPrefix(err.Error(), "redis: ")
		return nil, bad(reason)
	}
	if opts.TLSConfig != nil {
		opts.TLSConfig.MinVersion = tls.VersionTLS12
	}
	return opts, nil
}

// RedactURL hides the password in a URL, even one that does not parse or has no scheme:
// whatever stands between the first ":" and the last "@" of the part after "://" is hidden.
// It may hide more than the password, never less.
func RedactURL(raw string) string {
	prefix, rest := "", raw
	if scheme, after, ok := cutScheme(raw); ok {
		prefix, rest = scheme+"://", after
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return raw
	}
	return prefix + user + ":xxxxx" + rest[at:]
}

// cutScheme splits "scheme://rest" where the scheme has RFC 3986's syntax: a letter, then
// letters, digits, "+", "-" or ".". Text with ":" or "@" before the first "://" (such as
// "user:pw@valkey://host") has no scheme, so the password in it is never quoted as one.
func cutScheme(raw string) (scheme, rest string, ok bool) {
	scheme, rest, ok = strings.Cut(raw, "://")
	if !ok || scheme == "" || !isLetter(scheme[0]) {
		return "", raw, false
	}
	for i := 1; i < len(scheme); i++ {
		if c := scheme[i]; !isLetter(c) && (c < '0' || c > '9') && c != '+' && c != '-' && c != '.' {
			return "", raw, false
		}
	}
	return scheme, rest, true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// validHost reports a host name or IP address that can be dialled.
func validHost(host string) bool {
	if net.ParseIP(host) != nil {
		return true
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 253 {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !isHostChar(r) {
				return false
			}
		}
	}
	return true
}

func isHostChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}
