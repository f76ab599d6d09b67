package provider

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// TestPlanSession_RemembersFirstFailureOnly: a plan of many groups on an unreachable server
// waits for the network once and warns once; a key of another type is an answer, never
// remembered as a failure.
func TestPlanSession_RemembersFirstFailureOnly(t *testing.T) {
	t.Parallel()
	ctx, rdb := context.Background(), testAdmin(t, testServer(t))
	client, err := valkey.NewClient(valkey.Options{URL: testServer(t).URL()})
	if err != nil {
		t.Fatal(err)
	}
	s := &planSession{}
	k := testKey(t)
	rdb.Set(ctx, k, "x", 0)
	for range 2 {
		var wt *valkey.WrongTypeError
		if _, _, first, err := s.groups(ctx, client, k); !errors.As(err, &wt) || first {
			t.Fatalf("err=%v first=%v, want WrongTypeError every time and never first", err, first)
		}
	}
	if _, exists, _, err := s.groups(ctx, client, testKey(t)); err != nil || exists {
		t.Fatalf("fresh stream: exists=%v err=%v", exists, err)
	}

	down, err := valkey.NewClient(valkey.Options{URL: "valkey://127.0.0.1:1", MaxRetries: new(0)})
	if err != nil {
		t.Fatal(err)
	}
	s, firsts := &planSession{}, 0
	for i := range 5 {
		_, _, first, err := s.groups(ctx, down, "s"+strconv.Itoa(i))
		var unreachable *valkey.UnreachableError
		if !errors.As(err, &unreachable) {
			t.Fatalf("call %d: err = %v, want UnreachableError", i, err)
		}
		if first {
			firsts++
		}
	}
	if firsts != 1 {
		t.Errorf("%d calls reported first, want exactly 1 (one warning per plan)", firsts)
	}
}

func TestPlanSession_FirstNoteOncePerStream(t *testing.T) {
	s := &planSession{}
	if !s.firstNote("a") || s.firstNote("a") || !s.firstNote("b") {
		t.Error("firstNote must answer true once per stream")
	}
}
