package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSelfFacts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	data := filepath.Join(dir, "data")
	link := filepath.Join(dir, "data-link")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	tests := []struct {
		name      string
		cfg       Config
		addresses []string // must all be present
		absent    []string // must not be
		paths     []string
		noPaths   []string
	}{
		{
			name:      "loopback",
			cfg:       Config{Listen: "127.0.0.1:7410", DataDir: link, PolicyDirs: []string{"policies"}, Protect: []string{"/", home}},
			addresses: []string{"127.0.0.1:7410", "localhost:7410", "[::1]:7410", "0.0.0.0:7410", "127.1:7410", "2130706433:7410"},
			paths:     []string{link, data, mustAbs(t, "policies"), filepath.Join(dir, "config", "mandate")},
			noPaths:   []string{"/", home},
		},
		{
			name:      "every interface",
			cfg:       Config{Listen: ":9000"},
			addresses: []string{"localhost:9000", "127.0.0.1:9000", "0.0.0.0:9000"},
		},
		{
			name:   "no listener",
			cfg:    Config{DataDir: data},
			absent: []string{"127.0.0.1:7410"},
			paths:  []string{data},
		},
		{
			name:   "port chosen by the system is unknown here",
			cfg:    Config{Listen: "127.0.0.1:0"},
			absent: []string{"127.0.0.1:0"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := SelfFacts(tc.cfg)
			holds(t, "addresses", f.Addresses, tc.addresses, tc.absent)
			if len(f.Addresses) > 0 && (len(f.Ports) != 1 || len(f.Hosts) != len(f.Addresses)) {
				t.Errorf("ports %v, hosts %v for %d addresses", f.Ports, f.Hosts, len(f.Addresses))
			}
			holds(t, "paths", f.Paths, tc.paths, tc.noPaths)
		})
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// holds fails t for each of want that got lacks and each of absent it has.
func holds(t *testing.T, what string, got, want, absent []string) {
	t.Helper()
	for _, a := range want {
		if !slices.Contains(got, a) {
			t.Errorf("%s lack %s: %v", what, a, got)
		}
	}
	for _, a := range absent {
		if slices.Contains(got, a) {
			t.Errorf("%s have %s", what, a)
		}
	}
}
