package main

import (
	"runtime/debug"
	"strings"
)

// version is set by release builds with -ldflags "-X main.version=v1.2.3".
var version = ""

// buildVersion names the build: the stamped release version, else the module version that
// `go install …@v1.2.3` records, else the commit and its date from the VCS stamp that `go build`
// adds in a checkout, marked "+dirty" when the tree had uncommitted changes; else "dev" and
// the Go release that built it.
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return describe(info)
}

func describe(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, date string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			date = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		// Built without a VCS stamp (outside a checkout, or with -buildvcs=false): say at
		// least what built it.
		if info.GoVersion != "" {
			return "dev (" + info.GoVersion + ")"
		}
		return "dev"
	}
	var b strings.Builder
	b.WriteString("dev-")
	b.WriteString(rev[:min(len(rev), 12)])
	if dirty {
		b.WriteString("+dirty")
	}
	if date != "" {
		b.WriteString(" (" + date + ")")
	}
	return b.String()
}
