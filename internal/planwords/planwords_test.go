package planwords

import "testing"

func TestEntries_CountsReadably(t *testing.T) {
	for n, want := range map[int64]string{1: "1 entry", 2: "2 entries", 999: "999 entries", 1000: "1,000 entries", 12000000: "12,000,000 entries"} {
		if got := Entries(n); got != want {
			t.Errorf("Entries(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 Entries", 1: "1 Entry", 7: "7 Entries", 12000: "12,000 Entries"} {
		if got := EntriesTitle(n); got != want {
			t.Errorf("EntriesTitle(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSummaries_WordsAsWritten(t *testing.T) {
	for got, want := range map[string]string{
		GroupSummary(`s "x"`, "g", WillReplay, " 3 Entries"): `Group "g" of "s \"x\"" Will Replay 3 Entries`,
		StreamWillBeCreated("s"):                             `Stream "s" Will Be Created`,
		StreamCheckSkipped("s"):                              `Plan-Time Group Check Skipped For Stream "s"`,
		PlanCheckSkipped:                                     "Plan-Time Group Check Skipped",
		ReplayCheckSkipped:                                   "Replay Check Skipped",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
