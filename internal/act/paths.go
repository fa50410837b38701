package act

import (
	"net/url"
	"path"
	"regexp"
	"strings"
)

// NormPath normalises p for the record: "file://" URLs become paths, "~"
// expands to home (or stays "~/…" when home is unknown), "$HOME"/"${HOME}"
// likewise, relative paths are joined to dir, ".." is resolved and the result
// is cleaned. rel reports a relative path that could not be resolved because
// dir is unknown.
//
// Paths use forward slashes throughout: the agents Mandate guards run POSIX
// shells, and a Windows-style path is kept as given apart from cleaning.
func NormPath(p, dir, home string) (out string, rel bool) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", false
	}
	if strings.HasPrefix(p, "file://") {
		if u, err := url.Parse(p); err == nil && u.Path != "" {
			p = u.Path
		}
	}
	switch {
	case p == "~" || p == "$HOME" || p == "${HOME}":
		p = HomeOr(home)
	case strings.HasPrefix(p, "~/"):
		p = HomeOr(home) + p[1:]
	case strings.HasPrefix(p, "$HOME/"):
		p = HomeOr(home) + p[5:]
	case strings.HasPrefix(p, "${HOME}/"):
		p = HomeOr(home) + p[7:]
	}
	if isWindowsPath(p) {
		return p, false
	}
	switch {
	case strings.HasPrefix(p, "/"):
		return path.Clean(p), false
	case p == "~" || strings.HasPrefix(p, "~"):
		// Home unknown, or "~user/…": keep symbolic but clean the rest.
		head, tail, _ := strings.Cut(p, "/")
		if tail == "" {
			return head, false
		}
		return head + "/" + strings.TrimPrefix(path.Clean("/"+tail), "/"), false
	case strings.HasPrefix(p, "$"):
		// An unexpanded variable: the directory is unknown.
		return path.Clean(p), true
	case dir != "":
		return path.Join(dir, p), false
	default:
		return path.Clean(p), true
	}
}

func HomeOr(home string) string {
	if home == "" {
		return "~"
	}
	return strings.TrimSuffix(home, "/")
}

func isWindowsPath(p string) bool {
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z') || strings.HasPrefix(p, `\\`)
}

// LooksLikePath reports whether a string value is plausibly a file path, for
// keys that only sometimes hold paths ("source", "target", "folder").
func LooksLikePath(s string) bool {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\x00") {
		return false
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, "./") ||
		strings.HasPrefix(s, "../") || strings.HasPrefix(s, "$HOME") || strings.HasPrefix(s, "file://") || isWindowsPath(s) {
		return true
	}
	if strings.Contains(s, "://") || strings.Contains(s, " ") {
		return false
	}
	if strings.Contains(s, "/") {
		return true
	}
	// A bare file name with an extension: "report.pdf", ".env".
	if i := strings.LastIndexByte(s, '.'); i >= 0 && i < len(s)-1 && len(s)-i <= 6 {
		return !strings.Contains(s, "@")
	}
	return false
}

// HostOnly extracts a host name from "example.com", "example.com:443" or a
// URL.
func HostOnly(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, " \n") {
		return ""
	}
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			return u.Hostname()
		}
		return ""
	}
	if u, err := url.Parse("//" + s); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return ""
}

// URLRE finds links in text.
var URLRE = regexp.MustCompile(`(?i)\b(?:https?|ftp|wss?|sftp|s3|gs)://[^\s"'<>()\[\]{}\x60]+`)
