package pluginserver

import "os"

// wanted are the variables with which the SDK keeps its log defaults: those that ask for logs
// (TF_LOG*), and TF_ACC, which asks for none but marks a run of the acceptance tests.
var wanted = []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PATH", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_ACC"}

// QuietUnlessWanted turns logging off when Terraform was not asked for logs and so would parse
// and drop every line: the plugin SDK's TRACE logging (TF_LOG_SDK*) is a third of a plugin's
// CPU in a large plan. It also turns off the provider's own tflog lines (TF_LOG_PROVIDER=OFF),
// which Terraform would drop as well. Any of the variables in wanted keeps every default.
// Serve calls it before serving.
func QuietUnlessWanted() {
	for _, v := range wanted {
		if os.Getenv(v) != "" {
			return
		}
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER"} {
		_ = os.Setenv(v, "OFF")
	}
}
