package action

import (
	"path"
	"testing"
)

// TestGlob holds the fast glob to path.Match's answers.
func TestGlob(t *testing.T) {
	patterns := []string{"id_*", "*.*", "*.env", "*example*", ".env.*", "/etc/ssh/ssh_host_*_key", "*.tfstate.backup",
		"credentials*.json", "*.keychain*", "a*b*c", "*", "exact", "x?y", "[ab]c"}
	subjects := []string{"id_rsa", "id_rsa.pub", "x.env", ".env", "prod.example.env", ".env.local", "/etc/ssh/ssh_host_rsa_key",
		"/etc/ssh/ssh_host_a/b_key", "a.tfstate.backup", "credentials.json", "credentials-prod.json", "login.keychain-db",
		"abc", "aXbYc", "a/b/c", "", "exact", "xzy", "ac", "bc", "id_", "*"}
	for _, p := range patterns {
		g := compileGlob(p)
		for _, s := range subjects {
			want, _ := path.Match(p, s)
			if got := g.match(s); got != want {
				t.Errorf("glob %q on %q = %v, path.Match says %v", p, s, got, want)
			}
		}
	}
}
