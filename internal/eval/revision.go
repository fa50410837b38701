package eval

import (
	"context"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"
)

// Revision names the build being measured: `git describe --always --dirty`
// of the checkout in dir when there is one (a report from a working tree
// must say it was dirty), else the VCS revision stamped into the binary,
// else "unknown". A binary stamped with a revision other than the
// checkout's HEAD reports its own revision: it is what was measured.
func Revision(ctx context.Context, dir string) string {
	stamped, modified := buildRevision()
	if described, head := gitRevision(ctx, dir); described != "" && (stamped == "" || stamped == head) {
		return described
	}
	if stamped == "" {
		return "unknown"
	}
	if len(stamped) > 12 {
		stamped = stamped[:12]
	}
	if modified {
		stamped += "-dirty"
	}
	return stamped
}

func buildRevision() (rev string, modified bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, modified
}

// gitRevision returns git's description of dir's checkout and its HEAD
// commit, or "" when dir is not in a checkout or git is not installed.
func gitRevision(ctx context.Context, dir string) (described, head string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	run := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	described = run("describe", "--always", "--dirty")
	if described == "" {
		return "", ""
	}
	return described, run("rev-parse", "HEAD")
}
