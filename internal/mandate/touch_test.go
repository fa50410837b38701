package mandate

import (
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

// TestTouchSparesReading: "don't touch X" rules out changing X (writing,
// deleting, running it), not looking at it; "don't access X" rules out
// reading it too. One case a language for each.
func TestTouchSparesReading(t *testing.T) {
	const dir = "/var/lib/docker/volumes"
	on := func(tool string, k action.Kind) *action.Action {
		return &action.Action{Tool: tool, Kind: k, Kinds: []action.Kind{k}, Paths: []action.PathRef{{Path: dir + "/ci_cache/x", Access: k}}}
	}
	read, del, write := on("Read", action.Read), on("Bash", action.Delete), on("Write", action.Write)
	for _, tc := range []struct {
		text     string
		readable bool // a read under dir is not prohibited
	}{
		{"Free up disk space, but don't touch " + dir, true},
		{"Libère de l'espace disque, mais ne touche pas à " + dir, true},
		{"Libera espacio en disco, pero no toques " + dir, true},
		{"Libera spazio sul disco, ma non toccare " + dir, true},
		{"Mach Speicherplatz frei, aber fass " + dir + " nicht an", true},
		{"Free up disk space, but don't access " + dir, false},
		{"Libère de l'espace disque, mais n'accède pas à " + dir, false},
		{"Libera espacio en disco, pero no accedas a " + dir, false},
		{"Libera spazio sul disco, ma non accedere a " + dir, false},
		{"Mach Speicherplatz frei, aber greif nicht auf " + dir + " zu", false},
	} {
		t.Run(tc.text, func(t *testing.T) {
			dr, err := Compile(tc.text, WithNow(testNow))
			if err != nil {
				t.Fatal(err)
			}
			m := dr.Mandate
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			check := func(a *action.Action) bool {
				return len(m.CheckIn(a, Env{}, time.Now()).Prohibited) > 0
			}
			y, _ := dr.YAML()
			if got := !check(read); got != tc.readable {
				t.Errorf("read under %s allowed by the prohibitions = %v, want %v\n%s", dir, got, tc.readable, y)
			}
			for _, a := range []*action.Action{del, write} {
				if !check(a) {
					t.Errorf("%s under %s not prohibited\n%s", a.Kind, dir, y)
				}
			}
		})
	}
}
