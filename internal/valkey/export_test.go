package valkey

import "time"

// ReplicaAcks exposes what EnsureGroup will wait for, so that tests can check the defaults
// without a failover.
func ReplicaAcks(c *Client) (int, time.Duration) { return c.acks, c.ackTimeout }

// NewClientWithPool is NewClient with one pool of the given size and wait (no separate
// pipeline pool), so that tests can make the pool run out.
func NewClientWithPool(opts Options, size int, timeout time.Duration) (*Client, error) {
	s, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	s.universal.PoolSize, s.universal.PoolTimeout, s.universal.PipelinePoolSize = size, timeout, -1
	return newClient(s), nil
}
