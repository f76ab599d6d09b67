package provider

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// TestPlanSession_RemembersFirstFailureOnly: a plan of many groups on an unreachable server
// waits for the network once and warns once; a key of another type is an answer, never
// remembered as a failure.
func TestPlanSession_RemembersFirstFailureOnly(t *testing.T) {
	t.Parallel()
	ctx, rdb := context.Background(), acctest.Admin(t, acctest.Server(t))
	client, err := valkey.NewClient(valkey.Options{URL: acctest.Server(t).URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	s := &planSession{}
	k := acctest.StreamKey(t)
	acctest.MustDo(t, rdb.Set(ctx, k, "x", 0).Err())
	for range 2 {
		var wt *valkey.WrongTypeError
		if _, first, err := s.survey(ctx, client, k); !errors.As(err, &wt) || first {
			t.Fatalf("err=%v first=%v, want WrongTypeError every time and never first", err, first)
		}
	}
	if survey, _, err := s.survey(ctx, client, acctest.StreamKey(t)); err != nil || survey.Exists {
		t.Fatalf("fresh stream: exists=%v err=%v", survey.Exists, err)
	}

	down, err := valkey.NewClient(valkey.Options{URL: "valkey://127.0.0.1:1", MaxRetries: new(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = down.Close() })
	s, firsts := &planSession{}, 0
	for i := range 5 {
		_, first, err := s.survey(ctx, down, "s"+strconv.Itoa(i))
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

func TestPlanSession_OncePerKey(t *testing.T) {
	s := &planSession{}
	if !s.once("a") || s.once("a") || !s.once("b") {
		t.Error("once must answer true once per key")
	}
}

func TestEntryAt_NamesTheTime(t *testing.T) {
	if got := entryAt("1700000000000-0"); got != "1700000000000-0 (2023-11-14 22:13:20.000 UTC)" {
		t.Errorf("entryAt = %q", got)
	}
	if got := entryAt("not-an-id"); got != "not-an-id" {
		t.Errorf("entryAt of a malformed ID = %q, want it as it is", got)
	}
}
