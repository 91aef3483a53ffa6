package main

import (
	"runtime/debug"
	"testing"
)

func TestDescribe(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"release", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"pseudo-version from go build in a checkout",
			debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122092051-9bfc19178df7"}}, "v0.0.0-20261122092051-9bfc19178df7"},
		{"revision only", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "9bfc19178df7acde703087eed9001e95e0077f5e", "vcs.time", "2026-11-22T09:20:51Z", "vcs.modified", "false")},
			"dev-9bfc19178df7 (2026-11-22T09:20:51Z)"},
		{"dirty tree", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "9bfc19178df7acde", "vcs.modified", "true")},
			"dev-9bfc19178df7+dirty"},
		{"no stamp", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"no stamp, Go release known", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "dev (go1.26.8)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe(&tt.info); got != tt.want {
				t.Errorf("describe() = %q, want %q", got, tt.want)
			}
		})
	}
}
