package valkey

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

// fuzzReply is an error reply as go-redis hands it over: it satisfies redis.Error.
type fuzzReply string

func (e fuzzReply) Error() string { return string(e) }
func (fuzzReply) RedisError()     {}

var _ redis.Error = fuzzReply("")

// FuzzEnsureOutcome checks EnsureGroup's table: only an error reply from the server starting with
// BUSYGROUP is swallowed (as Adopted); nil is Created; anything else, including a Go error
// whose text happens to start with BUSYGROUP, comes back as the same error.
func FuzzEnsureOutcome(f *testing.F) {
	for _, msg := range []string{
		"BUSYGROUP Consumer Group name already exists",
		"BUSYGROUP",
		"busygroup Consumer Group name already exists",
		" BUSYGROUP Consumer Group name already exists",
		"BUSYGROU",
		"WRONGTYPE Operation against a key holding the wrong kind of value",
		"NOPERM User u has no permissions to run the 'xgroup|create' command",
		"READONLY You can't write against a read only replica.",
		"LOADING Valkey is loading the dataset in memory",
		"MOVED 3999 127.0.0.1:6381",
		"ERR The XGROUP subcommand requires the key to exist.",
		"",
	} {
		for kind := range uint8(5) {
			f.Add(msg, kind)
		}
	}
	f.Fuzz(func(t *testing.T, msg string, kind uint8) {
		var err error
		isReply := false
		switch kind % 5 {
		case 0: // an error reply, as go-redis returns it
			err, isReply = fuzzReply(msg), true
		case 1: // an error reply wrapped by a caller on the way up
			err, isReply = fmt.Errorf("pipeline: %w", fuzzReply(msg)), true
		case 2: // a Go error with the same words: not the server's reply
			err = errors.New(msg)
		case 3: // a transport error
			err = &net.OpError{Op: "read", Net: "tcp", Err: fmt.Errorf("%s: %w", msg, syscall.ECONNRESET)}
		case 4:
			err = fmt.Errorf("%s: %w", msg, io.EOF)
		}
		outcome, got := ensureOutcome("", err)
		swallow := isReply && strings.HasPrefix(msg, "BUSYGROUP")
		switch {
		case swallow && (outcome != Adopted || got != nil):
			t.Fatalf("ensureOutcome(%T %q) = %v, %v; a BUSYGROUP reply means Adopted, no error", err, msg, outcome, got)
		case !swallow && got == nil:
			t.Fatalf("ensureOutcome(%T %q) = %v, nil; only a BUSYGROUP reply may be swallowed", err, msg, outcome)
		case !swallow && (outcome != 0 || !errors.Is(got, err)):
			t.Fatalf("ensureOutcome(%T %q) = %v, %v; want no outcome and the same error back", err, msg, outcome, got)
		}
	})
	if o, got := ensureOutcome("OK", nil); o != Created || got != nil {
		f.Fatalf("ensureOutcome(OK, nil) = %v, %v; want Created", o, got)
	}
	// An OK that was read stays Created when the connection broke later in the round trip.
	if o, got := ensureOutcome("OK", io.EOF); o != Created || got != nil {
		f.Fatalf("ensureOutcome(OK, EOF) = %v, %v; want Created", o, got)
	}
}

// urlPlaceholder takes the password's place to tell its echo from text that merely matches it.
const urlPlaceholder = "PLACEHOLDER-7f3a9c"

// FuzzParseURL checks ParseURL on URLs built as <prefix><user>:<password>@<hostport>, so the
// password's place is known: it never panics, its error never repeats the password, and an
// accepted URL names a host and port and carries the password it was given.
func FuzzParseURL(f *testing.F) {
	for _, s := range [][4]string{
		{"valkey://", "default", "s3cret-pw", "127.0.0.1:6379/0"},
		{"valkeys://", "app", "s3cret-pw", "localhost:6380/2"},
		{"redis://", "", "s3cret-pw", "[::1]:6379"},
		{"rediss://", "u", "s3cret-pw", "127.0.0.1"},
		{"valkey://", "u", "s3cret-pw", "127.0.0.1:notaport"},
		{"valkey://", "u", "s3cret-pw", "127.0.0.1:6379/notadb"},
		{"valkey://", "u", "s3cret-pw", ""},
		{"valkey://", "u", "s3%zz-pw", "127.0.0.1:6379"},
		{"valkey://", "u", "s3cret pw", "127.0.0.1:6379"},
		{"http://", "u", "s3cret-pw", "127.0.0.1:6379"},
		{"VALKEY://", "u", "s3cret-pw", "127.0.0.1:6379"},
		{"valkey:/", "u", "s3cret-pw", "127.0.0.1:6379"},
		{"", "default", "s3cret-pw", "127.0.0.1:6379"},
		{"", "", "s3cret-pw", "127.0.0.1:6379"},
		{"valkey://", "u", "s3cret\x7fpw", "127.0.0.1:6379"},
		{"valkey://", "u", "s3cret-pw", "127.0.0.1:6379/0?dial_timeout=x"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, prefix, user, password, hostport string) {
		// Keep the password in the userinfo's password place: no character may move it
		// into another part of the URL.
		if strings.ContainsAny(user, ":@/?#") || strings.ContainsAny(password, "@/?#") || strings.Contains(hostport, "@") ||
			strings.ContainsAny(strings.TrimSuffix(strings.TrimSuffix(prefix, "//"), ":"), "@/?#:") {
			return
		}
		raw := prefix + user + ":" + password + "@" + hostport
		opts, err := ParseURL(raw)
		if err != nil {
			if len(password) >= 4 && strings.Contains(err.Error(), password) {
				_, other := ParseURL(prefix + user + ":" + urlPlaceholder + "@" + hostport)
				if other == nil || !strings.Contains(other.Error(), password) {
					t.Fatalf("ParseURL(%q) error repeats the password %q: %v", raw, password, err)
				}
			}
			var urlErr *URLError
			if !errors.As(err, &urlErr) {
				t.Fatalf("ParseURL(%q) error is %T, want *URLError", raw, err)
			}
			return
		}
		host, port, splitErr := net.SplitHostPort(opts.Addr)
		if splitErr != nil || host == "" || port == "" {
			t.Fatalf("ParseURL(%q) accepted, Addr %q is not host:port (%v)", raw, opts.Addr, splitErr)
		}
		if !strings.ContainsAny(password, "%") && opts.Password != password && password != "" {
			t.Errorf("ParseURL(%q) password = %q, want %q", raw, opts.Password, password)
		}
		// The redacted URL and the client's address must not depend on the password: the same
		// URL with the placeholder in its place redacts and dials the same. (Comparing texts,
		// not searching for the password, keeps a password such as "xxxx", a substring of the
		// redaction mark, or "6379", a substring of the default port, from reading as a leak.)
		other := prefix + user + ":" + urlPlaceholder + "@" + hostport
		if password != "" && RedactURL(raw) != RedactURL(other) {
			t.Errorf("RedactURL(%q) = %q, but with another password it is %q: the password shows through",
				raw, RedactURL(raw), RedactURL(other))
		}
		c, err := NewClient(Options{URL: raw})
		if err != nil {
			t.Fatalf("NewClient accepts nothing ParseURL accepted: %v", err)
		}
		defer func() { _ = c.Close() }()
		if oc, err := NewClient(Options{URL: other}); err == nil {
			if c.Addr() != oc.Addr() {
				t.Errorf("Addr() = %q, but with another password it is %q: the password shows through", c.Addr(), oc.Addr())
			}
			_ = oc.Close()
		}
	})
}

// TestParseURL_RefusesStrayBracketHost: an accepted URL must name a host that can be dialled;
// plan-time validation is where a typo should be caught.
func TestParseURL_RefusesStrayBracketHost(t *testing.T) {
	for _, raw := range []string{"valkey://0]0", "redis://:pw@0]0", "valkey://host]:6379/0"} {
		if opts, err := ParseURL(raw); err == nil {
			t.Errorf("ParseURL(%q) accepted, Addr %q", raw, opts.Addr)
		}
	}
}

// TestParseURL_RefusesPortsOutOfRange: a port that is no TCP port is a malformed URL, refused
// where the URL is read (at plan time), not a dial failure at apply.
func TestParseURL_RefusesPortsOutOfRange(t *testing.T) {
	for _, raw := range []string{"valkey://127.0.0.1:99999/0", "valkey://host:0", "valkeys://[::1]:65536", "redis://:pw@h:123456"} {
		var urlErr *URLError
		if opts, err := ParseURL(raw); !errors.As(err, &urlErr) || !strings.Contains(urlErr.Reason, "is not a TCP port") {
			t.Errorf("ParseURL(%q) = %v, %v; want a URLError naming the port", raw, opts, err)
		}
	}
	if _, err := ParseURL("valkey://127.0.0.1:65535/0"); err != nil {
		t.Errorf("port 65535 refused: %v", err)
	}
}

// TestParseURL_SchemelessURLDoesNotEchoPassword guards a mistake users make: the scheme
// forgotten. url.Parse reads "default:pw@host" as scheme "default" with an opaque part, so
// RedactURL finds no password to hide and the "no scheme" error repeats it, and the provider
// then prints it in the plan's diagnostic and the TRACE log. A "://" that comes only after the
// password (found by FuzzParseURL: ":0000@://") must not make the text before it a scheme.
func TestParseURL_SchemelessURLDoesNotEchoPassword(t *testing.T) {
	for _, raw := range []string{
		"default:s3cret-pw@127.0.0.1:6379", ":s3cret-pw@127.0.0.1:6379", "app:s3cret-pw@localhost",
		":s3cret-pw@://", "app:s3cret-pw@://host:6379", "app:s3cret-pw@valkey://host:6379",
	} {
		_, err := ParseURL(raw)
		if err == nil {
			t.Fatalf("ParseURL(%q) accepted a URL without a scheme", raw)
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("ParseURL(%q) error repeats the password: %v", raw, err)
		}
	}
}

// TestParseURL_RefusesQueryParameters: settings in a URL's query would be read by go-redis and
// then overridden by the client's own options without a word, so no query is accepted. The
// error names the parameters but never their values, which may be secrets.
func TestParseURL_RefusesQueryParameters(t *testing.T) {
	for raw, want := range map[string][]string{
		"valkey://host:6379/0?dial_timeout=42s&max_retries=9&protocol=3": {"dial_timeout", "max_retries", "protocol"},
		"valkeys://u:pw@host:6380?password=s3cret-in-query":              {"password"},
		"redis://host:6379/0?": {},
	} {
		_, err := ParseURL(raw)
		var urlErr *URLError
		if !errors.As(err, &urlErr) || !slices.Equal(urlErr.Params, want) && len(want) > 0 {
			t.Errorf("ParseURL(%q) = %v, want a URLError naming %v", raw, err, want)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "42s") || strings.Contains(err.Error(), ":pw@") {
			t.Errorf("ParseURL(%q) error repeats a value: %v", raw, err)
		}
	}
}
