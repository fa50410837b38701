package policy

import "testing"

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/*", "/a/b", true},
		{"/a/*", "/a/b/c", false},
		{"/a/**", "/a/b/c", true},
		{"/a/**", "/a", true},
		{"/a/**", "/ab", false},
		{"/a/**/c", "/a/c", true},
		{"/a/**/c", "/a/x/y/c", true},
		{"/a/**/c", "/a/x/y/d", false},
		{"**/.env", "/home/u/p/.env", true},
		{"**/.env*", "/home/u/p/.env.local", true},
		{"**", "/anything/at/all", true},
		{"*.go", "main.go", true},
		{"*.go", "cmd/main.go", false},
		{"/a/?", "/a/b", true},
		{"/a/[bc]", "/a/c", true},
		{"/a/[bc]", "/a/d", false},
		{"/A/b", "/a/b", false},
		{"", "", true},
		{"", "x", false},
		{"/**/**/**/**/**/**/**/**/**/**/z", "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q", false},
	}
	for _, tc := range cases {
		got, err := globMatch(tc.pattern, tc.name)
		if err != nil {
			t.Errorf("globMatch(%q, %q): %v", tc.pattern, tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
	if _, err := globMatch("/a/[", "/b"); err == nil {
		t.Errorf("bad pattern accepted even though an earlier segment mismatches")
	}
}

func TestHostMatch(t *testing.T) {
	cases := []struct {
		pattern, host string
		want          bool
	}{
		{"example.com", "example.com", true},
		{"example.com", "EXAMPLE.com.", true},
		{"example.com", "www.example.com", true},
		{"example.com", "notexample.com", false},
		{"example.com", "example.com.evil.net", false},
		{"*.example.com", "www.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.example.com", "example.com", false},
		{"example.com:8080", "example.com", true},
		{"example.com", "example.com:443", true},
		{"example.com", "https://user@example.com:8443/path?q=1", true},
		{"*", "anything.example", true},
		{"[::1]", "[::1]:8080", true},
		{"", "example.com", false},
		{"example.com", "", false},
	}
	for _, tc := range cases {
		if got := hostMatch(tc.pattern, tc.host); got != tc.want {
			t.Errorf("hostMatch(%q, %q) = %v, want %v", tc.pattern, tc.host, got, tc.want)
		}
	}
}
