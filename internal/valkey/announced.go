package valkey

import (
	"errors"
	"net"
	"sync"
)

// A cluster's seeds may answer while the nodes they announce cannot be reached from here: the
// nodes of a managed cache or a Kubernetes service announce private addresses. A dial to such
// an address times out (dial_timeout), and go-redis and EnsureGroup each try it again, so one
// plan or apply used to wait minutes for the same answer. unreachedNodes remembers, for the
// client's life (one Terraform command), an announced node whose dial timed out or whose name
// did not resolve, and fails every later dial to it at once with that error. A refused
// connection is not remembered: it costs nothing to try again, and a node that restarts
// answers the next try.
type unreachedNodes struct {
	seeds map[string]bool // the configured addresses: never remembered

	mu     sync.Mutex
	failed map[string]error
}

func newUnreachedNodes(seeds []string) *unreachedNodes {
	u := &unreachedNodes{seeds: map[string]bool{}, failed: map[string]error{}}
	for _, s := range seeds {
		u.seeds[s] = true
	}
	return u
}

// announced tells whether node is an address the cluster announced (in CLUSTER SLOTS or a
// redirection) rather than one of the configured seeds.
func (u *unreachedNodes) announced(node string) bool {
	return u != nil && node != "" && !u.seeds[node]
}

// recall is the failure remembered for node, or nil.
func (u *unreachedNodes) recall(node string) error {
	if !u.announced(node) {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.failed[node]
}

// remember keeps err for node when it says the node cannot be reached from here at all.
func (u *unreachedNodes) remember(node string, err error) {
	var dnsErr *net.DNSError
	var proxy *ProxyError
	if !u.announced(node) || errors.As(err, &proxy) || !timedOut(err) && !errors.As(err, &dnsErr) {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.failed[node] = err
}
