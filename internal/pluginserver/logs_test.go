package pluginserver

import (
	"os"
	"testing"
)

func TestQuietUnlessWanted_QuietsOnlyWhenNoLogsAsked(t *testing.T) {
	for _, v := range append(wanted, "TF_LOG_SDK", "TF_LOG_PROVIDER") {
		t.Setenv(v, "")
		_ = os.Unsetenv(v)
	}
	QuietUnlessWanted()
	if got := os.Getenv("TF_LOG_SDK"); got != "OFF" {
		t.Errorf("no TF_LOG*: TF_LOG_SDK = %q, want OFF", got)
	}

	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER"} {
		_ = os.Unsetenv(v)
	}
	t.Setenv("TF_LOG", "TRACE")
	QuietUnlessWanted()
	if got := os.Getenv("TF_LOG_SDK"); got != "" {
		t.Errorf("TF_LOG=TRACE: TF_LOG_SDK = %q, want it left alone", got)
	}
}
