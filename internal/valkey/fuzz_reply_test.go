package valkey

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// replyServer is a loopback server that answers every connection with the same bytes, whatever
// is asked: the handshake's replies and then the commands', and then ends its side of the
// connection. It reads and drops what the client sends.
type replyServer struct {
	ln    net.Listener
	reply chan []byte
}

func startReplyServer(tb testing.TB) *replyServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &replyServer{ln: ln, reply: make(chan []byte, 1)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			blob := <-s.reply
			s.reply <- blob
			go func() {
				defer func() { _ = conn.Close() }()
				// The blob, then the end of the stream: a client waiting for more reads EOF at once.
				_, _ = conn.Write(blob)
				if tcp, ok := conn.(*net.TCPConn); ok {
					_ = tcp.CloseWrite()
				}
				_, _ = io.Copy(io.Discard, conn)
			}()
		}
	}()
	tb.Cleanup(func() { _ = ln.Close() })
	return s
}

// answer makes blob the server's answer for the connections that follow.
func (s *replyServer) answer(blob []byte) {
	select {
	case <-s.reply:
	default:
	}
	s.reply <- blob
}

// fuzzReplies seed the corpus: well-formed replies of each reader, and the handshake failures
// that once crashed the stream data source (a refused AUTH, and a refused SELECT, left the
// pipelined XINFO STREAM without a value or an error).
var fuzzReplies = []string{
	// HELLO refused (an old server), AUTH accepted, SELECT accepted, then the replies.
	"-ERR unknown command 'HELLO'\r\n+OK\r\n+OK\r\n" +
		"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:0\r\n" +
		"$17\r\nlast-delivered-id\r\n$3\r\n1-1\r\n$12\r\nentries-read\r\n_\r\n$3\r\nlag\r\n:1\r\n",
	"-ERR unknown command 'HELLO'\r\n+OK\r\n+OK\r\n" +
		"*14\r\n$6\r\nlength\r\n:2\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n" +
		"$17\r\nlast-generated-id\r\n$3\r\n1-2\r\n$6\r\ngroups\r\n:1\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n" +
		"$10\r\nlast-entry\r\n*2\r\n$3\r\n1-2\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*0\r\n",
	"-ERR unknown command 'HELLO'\r\n+OK\r\n+OK\r\n*0\r\n*1\r\n*8\r\n$4\r\nname\r\n$1\r\nc\r\n$7\r\npending\r\n:3\r\n$4\r\nidle\r\n:9\r\n$8\r\ninactive\r\n:9\r\n",
	// The crashes: a wrong password, and a database the server lacks.
	"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
	"-ERR unknown command 'HELLO'\r\n-WRONGPASS invalid username-password pair or user is disabled.\r\n",
	"-ERR unknown command 'HELLO'\r\n+OK\r\n-ERR DB index is out of range\r\n",
	"-NOAUTH Authentication required.\r\n",
	// Replies of the wrong shape.
	"-ERR unknown command 'HELLO'\r\n+OK\r\n+OK\r\n:1\r\n$-1\r\n*-1\r\n",
	"-ERR unknown command 'HELLO'\r\n+OK\r\n+OK\r\n*2\r\n*3\r\n$4\r\nname\r\n",
	"-ERR unknown command 'HELLO'\r\n+OK\r\n+OK\r\n%1\r\n$4\r\nname\r\n$1\r\ng\r\n",
	"",
}

// FuzzReplyReaders feeds arbitrary bytes, as the server's answers to the handshake and to the
// commands, to every reader of the client: XINFO GROUPS (Group, Survey, EnsureGroup's read-back),
// XINFO STREAM (Survey, StreamInfo) and XINFO CONSUMERS (GroupDetail). None may panic, and
// none may return an empty result without an error.
func FuzzReplyReaders(f *testing.F) {
	for _, r := range fuzzReplies {
		f.Add([]byte(r))
	}
	srv := startReplyServer(f)
	newFuzzClient := func() *Client {
		return &Client{addr: srv.ln.Addr().String(), build: func() redis.UniversalClient {
			return withHooks(redis.NewClient(&redis.Options{
				Addr: srv.ln.Addr().String(), Password: "pw", DB: 1, Protocol: 2, DisableIdentity: true,
				MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 100 * time.Millisecond,
				PoolSize: 1, PipelinePoolSize: -1,
			}), nil)
		}}
	}
	f.Fuzz(func(t *testing.T, blob []byte) {
		srv.answer(blob)
		ctx := context.Background()
		calls := map[string]func(c *Client) error{
			"Group": func(c *Client) error {
				g, found, err := c.Group(ctx, "s", "g")
				if err == nil && found && g.Name != "g" {
					t.Errorf("Group found %+v, not g", g)
				}
				return err
			},
			"Survey": func(c *Client) error { _, err := c.Survey(ctx, "s"); return err },
			"StreamInfo": func(c *Client) error {
				s, err := c.StreamInfo(ctx, "s")
				if err == nil && s.Key != "s" {
					t.Errorf("StreamInfo = %+v without an error", s)
				}
				return err
			},
			"GroupDetail": func(c *Client) error {
				g, _, err := c.GroupDetail(ctx, "s", "g")
				if err == nil && g.Name != "g" {
					t.Errorf("GroupDetail = %+v without an error", g)
				}
				return err
			},
			"EnsureGroup": func(c *Client) error {
				outcome, _, err := c.EnsureGroup(ctx, "s", "g", StartNew)
				if err == nil && outcome != Created && outcome != Adopted {
					t.Errorf("EnsureGroup = %v without an error", outcome)
				}
				return err
			},
		}
		for _, call := range calls {
			c := newFuzzClient()
			_ = call(c) // any error will do; a panic fails the fuzz run
			_ = c.Close()
		}
	})
}
