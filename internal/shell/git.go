package shell

import (
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// git: what each subcommand does and the remotes it reaches (gitCmd); the
// git -c settings that run commands are judged in dev.go.

// gitCmd classifies git subcommands.
func gitCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "Cc", long: []string{"git-dir", "work-tree", "namespace", "exec-path", "config-env", "super-prefix"}, stop: true})
	for _, c := range p.values("c") {
		if strings.HasPrefix(strings.ToLower(c), "core.sshcommand") || strings.HasPrefix(strings.ToLower(c), "core.pager") ||
			strings.HasPrefix(strings.ToLower(c), "alias.") || strings.HasPrefix(strings.ToLower(c), "core.fsmonitor") ||
			strings.HasPrefix(strings.ToLower(c), "core.hookspath") || strings.Contains(strings.ToLower(c), "credential.helper") {
			inv.kind(act.Execute)
			inv.note("git -c " + strings.SplitN(c, "=", 2)[0] + " can run arbitrary commands")
		}
	}
	if p.rest >= len(inv.argv) {
		inv.kind(act.Read)
		inv.readOnly = inv.ks == 0 || inv.ks == act.Bit(act.Read)
		return
	}
	sub := inv.argv[p.rest]
	q := parseFlags(inv.argv, p.rest+1, flagDef{short: "mFCSoObBnreuxX", long: []string{"message", "file", "author", "date", "format", "pretty", "since", "until", "grep", "output", "branch", "upstream", "set-upstream-to", "exec", "strategy", "strategy-option", "onto", "depth", "origin", "template", "separate-git-dir", "reference", "shallow-since", "jobs", "push-option", "receive-pack", "repo", "config", "cleanup", "reuse-message", "fixup", "squash", "pathspec-from-file", "inter-hunk-context", "diff-filter", "path-format", "abbrev", "sort", "points-at", "contains", "merged", "no-merged"}})
	ops := q.ops
	opArgs := make([]string, len(ops))
	for i, o := range ops {
		opArgs[i] = inv.argv[o]
	}
	set := func(a subAct) { inv.act(a, "") }
	switch sub {
	case "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree", "cat-file", "describe",
		"shortlog", "grep", "reflog", "rev-list", "name-rev", "for-each-ref", "show-ref", "merge-base",
		"count-objects", "check-ignore", "check-attr", "whatchanged", "range-diff", "var", "help", "version",
		"annotate", "cherry", "show-branch", "ls-remote", "verify-commit", "verify-tag", "fsck", "bisect-log":
		set(rd)
		if sub == "ls-remote" {
			inv.ks = 0
			inv.kind(act.Fetch)
		}
	case "config":
		if q.has("get", "get-all", "get-regexp", "list", "l", "show-origin", "get-urlmatch") || len(ops) == 1 {
			set(rd)
		} else {
			set(wr)
		}
		if len(ops) > 0 && strings.Contains(opArgs[0], "credential") && len(ops) == 1 {
			set(cred)
		}
	case "credential", "credential-store", "credential-cache":
		set(cred)
		inv.note("git credential reads stored credentials")
	case "remote":
		if len(ops) == 0 || opArgs[0] == "show" || opArgs[0] == "get-url" || opArgs[0] == "-v" {
			set(rd)
		} else {
			set(wr)
		}
	case "branch":
		switch {
		case q.has("D") || q.has("d", "delete") && q.has("f", "force"):
			set(delD)
			inv.note("git branch -D deletes branches even if unmerged")
		case q.has("d", "delete"):
			set(del)
		case q.has("m", "M", "move", "c", "C", "copy", "u", "set-upstream-to", "unset-upstream", "edit-description"):
			set(wr)
		case len(ops) == 0 || q.has("l", "list", "a", "all", "r", "remotes", "v", "vv", "show-current", "contains", "merged", "no-merged", "points-at"):
			set(rd)
		default:
			set(wr)
		}
	case "tag":
		switch {
		case q.has("d", "delete"):
			set(del)
		case len(ops) == 0 || q.has("l", "list", "n", "contains", "points-at", "merged", "v", "verify"):
			set(rd)
		default:
			set(wr)
		}
	case "stash":
		switch {
		case len(ops) > 0 && (opArgs[0] == "list" || opArgs[0] == "show"):
			set(rd)
		case len(ops) > 0 && (opArgs[0] == "drop" || opArgs[0] == "clear"):
			set(delD)
			inv.note("git stash " + opArgs[0] + " discards stashed changes")
		default:
			set(wr)
		}
	case "reset":
		if q.has("hard") {
			set(delD)
			inv.note("git reset --hard discards uncommitted changes")
		} else {
			set(wr)
		}
	case "clean":
		if q.has("n", "dry-run") {
			set(rd)
			return
		}
		set(delD)
		inv.note("git clean deletes untracked files")
		inv.w.addPath(".", act.Delete, inv.env, false)
	case "checkout":
		// "git checkout -- f", "git checkout .", "git checkout HEAD f"
		// throw local changes away. "git checkout REF -- f" brings f
		// in from another commit or branch: a write of those files.
		dash := slices.Index(inv.argv[p.rest:], "--")
		fromRef := dash > 0 && len(opArgs) > 0 && p.rest+dash > ops[0] && opArgs[0] != "HEAD" && opArgs[0] != "."
		discard := q.has("f", "force") || dash >= 0 && !fromRef || len(opArgs) > 0 && (opArgs[0] == "." || opArgs[0] == "HEAD" && len(opArgs) > 1)
		switch {
		case discard:
			set(delD)
			inv.note("git checkout over working files discards uncommitted changes")
		case fromRef:
			set(wr)
			for _, o := range ops[1:] {
				inv.addPath(o, act.Write)
			}
			inv.note("git checkout " + opArgs[0] + " -- replaces the files with their version from " + opArgs[0])
		default:
			set(wr)
		}
	case "restore":
		if q.has("S", "staged") && !q.has("W", "worktree") {
			set(wr)
		} else {
			set(delD)
			inv.note("git restore discards uncommitted changes")
		}
	case "rm":
		set(del)
		for i, o := range ops {
			_ = i
			inv.addPath(o, act.Delete)
		}
	case "add":
		set(wr)
		for _, o := range ops {
			inv.addPath(o, act.Read)
		}
		if q.has("f", "force") {
			inv.note("git add -f stages ignored files")
		}
	case "commit", "switch", "merge", "rebase", "cherry-pick", "revert", "mv", "apply", "am", "init",
		"notes", "submodule", "worktree", "gc", "prune", "repack", "pack-refs", "bisect", "update-index",
		"sparse-checkout", "maintenance", "replace", "read-tree", "commit-tree", "write-tree", "update-ref", "symbolic-ref", "lfs", "format-patch", "archive", "bundle":
		set(wr)
		if sub == "update-ref" && q.has("d") {
			set(del)
		}
		if sub == "rebase" && q.has("x", "exec") {
			inv.kind(act.Execute)
			inv.note("git rebase --exec runs commands")
		}
	case "filter-branch", "filter-repo":
		set(delD)
		inv.note("git " + sub + " rewrites history")
	case "fetch", "pull", "clone":
		set(ftch)
		if sub != "fetch" {
			inv.kind(act.Write)
		}
		for _, a := range opArgs {
			if strings.Contains(a, "://") || strings.Contains(a, "@") {
				inv.addURL(gitURL(a))
			}
		}
		if sub == "fetch" && q.has("prune", "p") {
			inv.note("git fetch --prune deletes stale remote-tracking branches")
		}
	case "push":
		if q.has("n", "dry-run") {
			set(rd)
			inv.note("git push --dry-run sends nothing")
			return
		}
		set(snd)
		force := q.has("f", "force", "force-with-lease", "force-if-includes", "mirror")
		deleting := q.has("d", "delete")
		for _, a := range opArgs {
			if strings.HasPrefix(a, "+") {
				force = true
			}
			if strings.HasPrefix(a, ":") && len(a) > 1 {
				deleting = true
			}
			if strings.Contains(a, "://") || strings.Contains(a, "@") {
				inv.addURL(gitURL(a))
			}
		}
		switch {
		case force:
			inv.destructive = true
			inv.note("git push --force overwrites remote history")
		case deleting:
			inv.destructive = true
			inv.note("git push --delete deletes remote branches")
		default:
			inv.note("git push publishes commits to a remote")
		}
	case "send-email", "request-pull", "imap-send":
		set(snd)
		for _, v := range q.values("to", "cc", "bcc") {
			for _, rc := range inv.w.addresses(v) {
				rc.Field = "to"
				inv.w.res.Recipients = append(inv.w.res.Recipients, rc)
			}
		}
	case "daemon", "instaweb", "http-backend":
		set(exeExt)
	default:
		// Unknown subcommands may be aliases or git-foo programs.
		set(exe)
		inv.note("git " + sub + " is not a known subcommand (an alias or plugin)")
	}
}

// gitURL turns scp-style git remotes (git@host:org/repo) into URLs.
func gitURL(a string) string {
	if strings.Contains(a, "://") {
		return a
	}
	if at := strings.IndexByte(a, '@'); at >= 0 {
		rest := a[at+1:]
		host, p, _ := strings.Cut(rest, ":")
		return "ssh://" + a[:at] + "@" + host + "/" + p
	}
	return a
}
