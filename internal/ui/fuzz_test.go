package ui

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSafeNext: whatever a link carries as ?next=, sign-in redirects only
// to a path on the dashboard.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/ui/sessions?x=1", "//evil.example", "https://evil.example/ui/", "/ui/../v1/tokens", "/\\evil", "/ui/login", "", "javascript:alert(1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got == "" {
			return
		}
		if !strings.HasPrefix(got, "/ui/") || strings.HasPrefix(got, "//") || strings.ContainsAny(got, "\\\r\n") || strings.HasPrefix(got, "/ui/login") {
			t.Fatalf("safeNext(%q) = %q", next, got)
		}
	})
}

// FuzzPretty: any stored value renders, bounded.
func FuzzPretty(f *testing.F) {
	for _, s := range []string{`{"a":"<script>"}`, `[1,2,{"b":null}]`, `"x"`, `{`, `{"a":` + strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) + `}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := pretty(json.RawMessage(s))
		if len(out) > maxJSON+64 {
			t.Fatalf("pretty gave %d bytes", len(out))
		}
	})
}

// FuzzDiffLines: the diff of any two texts is bounded and keeps every
// changed line.
func FuzzDiffLines(f *testing.F) {
	f.Add("a\nb\nc", "a\nc\nd")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := diffLines(a, b)
		if len(d) > 2*maxDiffLines+2 {
			t.Fatalf("%d diff lines", len(d))
		}
	})
}
