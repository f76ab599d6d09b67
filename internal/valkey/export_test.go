package valkey

import "time"

// ReplicaAcks exposes what the door will wait for, so that tests can check the defaults
// without a failover.
func ReplicaAcks(c *Client) (int, time.Duration) { return c.acks, c.ackTimeout }
