package act

import "testing"

func TestNormPath(t *testing.T) {
	tests := []struct {
		in, dir, home string
		want          string
		rel           bool
	}{
		{"src/a.go", "/home/u/proj", "/home/u", "/home/u/proj/src/a.go", false},
		{"./a/../b", "/w", "", "/w/b", false},
		{"../../etc/passwd", "/home/u/proj", "/home/u", "/home/etc/passwd", false},
		{"~/notes.txt", "/w", "/home/u", "/home/u/notes.txt", false},
		{"~", "/w", "/home/u/", "/home/u", false},
		{"~/.ssh/../.aws/credentials", "/w", "/home/u", "/home/u/.aws/credentials", false},
		{"$HOME/x", "/w", "/home/u", "/home/u/x", false},
		{"${HOME}/x", "/w", "", "~/x", false},
		{"~/x/../y", "/w", "", "~/y", false},
		{"~bob/x", "/w", "/home/u", "~bob/x", false},
		{"/a//b/./c/", "/w", "", "/a/b/c", false},
		{"/../..", "", "", "/", false},
		{"file:///etc/hosts", "", "", "/etc/hosts", false},
		{"rel/x", "", "", "rel/x", true},
		{"../x", "", "", "../x", true},
		{"$DIR/x", "/w", "", "$DIR/x", true},
		{`C:\Users\u\file.txt`, "/w", "", `C:\Users\u\file.txt`, false},
		{"  spaced  ", "/w", "", "/w/spaced", false},
		{"", "/w", "", "", false},
	}
	for _, tt := range tests {
		got, rel := NormPath(tt.in, tt.dir, tt.home)
		if got != tt.want || rel != tt.rel {
			t.Errorf("NormPath(%q, %q, %q) = (%q, %v), want (%q, %v)", tt.in, tt.dir, tt.home, got, rel, tt.want, tt.rel)
		}
	}
}

func TestLooksLikePath(t *testing.T) {
	for s, want := range map[string]bool{
		"/etc/hosts": true, "~/x": true, "./a": true, "a/b": true, "report.pdf": true, ".env": true,
		"Receipts": false, "hello world.txt": false, "https://x.example/a": false, "bob@x.org": false, "": false,
	} {
		if got := LooksLikePath(s); got != want {
			t.Errorf("LooksLikePath(%q) = %v, want %v", s, got, want)
		}
	}
}
