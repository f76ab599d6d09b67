package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/redis/go-redis/v9"
)

// rssKey names one command of the peak-RSS series.
type rssKey struct {
	sub string
	n   int
	op  string
}

// rssSeries runs one apply, no-change plan and destroy of ours and of the plugin floor at each
// of cfg.rssSizes (K = N/10). Peak RSS is the kernel's maxrss, which does not vary from run to
// run the way time does, so one run per size is enough.
func rssSeries(ctx context.Context, cfg config, out string, tf *terraform, rdb *redis.Client, urlEnv string, res *results) error {
	for _, n := range cfg.rssSizes {
		sh := shape{n, max(n/10, 1)}
		for _, sub := range subjects[:2] {
			dir := filepath.Join(out, "work", fmt.Sprintf("rss-%s-n%d-k%d", sub.key, sh.N, sh.K))
			if err := writeConfig(dir, sub, sh); err != nil {
				return err
			}
			logf("peak RSS %s %s", sh, sub.label)
			record := func(op string, r opResult, _ map[string]int64) { res.rss[rssKey{sub.key, n, op}] = r }
			if err := cycle(ctx, tf, rdb, dir, sub, record, urlEnv); err != nil {
				return err
			}
		}
	}
	return nil
}

// logCheck is one apply of ours with TF_LOG=TRACE: the lines that show the provider's logs
// still reach Terraform.
type logCheck struct {
	creates   int
	door      int // our provider's own "group door" debug lines, one per Create
	proto     int // terraform-plugin-go lines (@module=sdk.proto)
	framework int // framework lines (@module=sdk.framework)
}

func (l logCheck) met() bool { return l.door == l.creates && l.proto > 0 && l.framework > 0 }

func checkTFLog(ctx context.Context, out string, tf *terraform, rdb *redis.Client, urlEnv string) (logCheck, error) {
	sh := shape{10, 1}
	check := logCheck{creates: sh.N}
	dir := filepath.Join(out, "work", fmt.Sprintf("tflog-ours-n%d-k%d", sh.N, sh.K))
	if err := writeConfig(dir, subjects[0], sh); err != nil {
		return check, err
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return check, err
	}
	logf("TF_LOG=TRACE apply of ours, %s", sh)
	_, output, err := tf.runOutput(ctx, dir, "apply", urlEnv, "TF_LOG=TRACE")
	if err != nil {
		return check, err
	}
	for line := range strings.SplitSeq(string(output), "\n") {
		switch {
		case strings.Contains(line, "group door"):
			check.door++
		case strings.Contains(line, "@module=sdk.proto"):
			check.proto++
		case strings.Contains(line, "@module=sdk.framework"):
			check.framework++
		}
	}
	return check, nil
}

// rpcReproduction runs bench/cmd/rpcrss (the plugin stack without Terraform) and returns its
// table.
func rpcReproduction(ctx context.Context, bin string) (string, error) {
	logf("rpcrss: the plugin stack without Terraform")
	out, err := exec.CommandContext(ctx, bin).Output()
	if err != nil {
		return "", fmt.Errorf("rpcrss: %w", err)
	}
	return string(out), nil
}

// rssTable renders the peak-RSS series.
func (r *results) rssTable(sizes []int) string {
	if len(sizes) == 0 {
		return ""
	}
	var t strings.Builder
	fmt.Fprintf(&t, "\n### Peak RSS per resource: one run per size, K = N/10\n\n")
	t.WriteString("Peak RSS of the largest provider process of the command, with the peak divided by N beside it. ")
	t.WriteString("\"Per added resource\" is the growth from the smallest to the largest N, divided by the resources added.\n\n")
	t.WriteString("| Command | Subject |")
	for _, n := range sizes {
		fmt.Fprintf(&t, " N=%d, MiB (KiB per resource) |", n)
	}
	lo, hi := sizes[0], sizes[len(sizes)-1]
	fmt.Fprintf(&t, " N=%d / N=%d | per added resource, KiB |\n|---|---|", hi, lo)
	for range sizes {
		t.WriteString("---|")
	}
	t.WriteString("---|---|\n")
	for _, op := range ops {
		for _, sub := range subjects[:2] {
			fmt.Fprintf(&t, "| %s | %s |", op, sub.label)
			for _, n := range sizes {
				kib := r.rss[rssKey{sub.key, n, op}].RSSKiB
				fmt.Fprintf(&t, " %.1f (%.1f) |", float64(kib)/1024, float64(kib)/float64(n))
			}
			a, b := r.rss[rssKey{sub.key, lo, op}].RSSKiB, r.rss[rssKey{sub.key, hi, op}].RSSKiB
			ratio, per := "—", "—"
			if a > 0 && hi > lo {
				ratio = fmt.Sprintf("%.2fx", float64(b)/float64(a))
				per = fmt.Sprintf("%.1f", float64(b-a)/float64(hi-lo))
			}
			fmt.Fprintf(&t, " %s | %s |\n", ratio, per)
		}
	}
	return t.String()
}

// rssTargets checks that peak RSS at the largest N stays within 1.2x of the smallest.
func (r *results) rssTargets(sizes []int, verdict func(bool) string) string {
	if len(sizes) < 2 {
		return ""
	}
	var b strings.Builder
	lo, hi := sizes[0], sizes[len(sizes)-1]
	for _, sub := range subjects[:2] {
		for _, op := range ops {
			a, c := r.rss[rssKey{sub.key, lo, op}].RSSKiB, r.rss[rssKey{sub.key, hi, op}].RSSKiB
			if a == 0 || c == 0 {
				continue
			}
			ratio := float64(c) / float64(a)
			fmt.Fprintf(&b, "- Peak RSS of %s, %s, at N=%d within 1.2x of N=%d: %s — %.1f MiB against %.1f MiB (%.2fx).\n",
				sub.label, op, hi, lo, verdict(ratio <= 1.2), float64(c)/1024, float64(a)/1024, ratio)
		}
	}
	return b.String()
}

func (l *logCheck) target(verdict func(bool) string) string {
	if l == nil {
		return ""
	}
	return fmt.Sprintf("- `TF_LOG=TRACE` still yields the provider's log lines (one apply of ours, N=%d K=1): %s — %d of %d `group door` lines from our provider, %d `sdk.proto` and %d `sdk.framework` lines.\n",
		l.creates, verdict(l.met()), l.door, l.creates, l.proto, l.framework)
}
