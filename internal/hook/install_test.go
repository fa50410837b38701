package hook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const testCommand = "/usr/local/bin/mandate hook claude-code --server http://127.0.0.1:7410 --token-file /home/dev/.config/mandate/hook.token"

// decodeNumbers parses JSON keeping numbers as written, for comparing
// what a rewrite kept.
func decodeNumbers(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// indented is how a settings file looks after a rewrite that changed
// nothing in it.
func indented(t testing.TB, b []byte) []byte {
	t.Helper()
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	var c, out bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&out, c.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// ours lists Mandate's handlers per event, as "matcher|timeout|onFailure".
// It reads settings the way Uninstall does: the user's entries are kept
// raw and may have any shape (a matcher that is not a string, a group
// without hooks), so an entry that does not decode as a handler is not
// Mandate's, and is skipped rather than failing the test.
func ours(t testing.TB, settings []byte) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	if len(bytes.TrimSpace(settings)) == 0 {
		return out
	}
	var top struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &top); err != nil {
		t.Fatal(err)
	}
	for ev, groups := range top.Hooks {
		for _, raw := range groups {
			var g map[string]json.RawMessage
			if json.Unmarshal(raw, &g) != nil {
				continue
			}
			var matcher string
			_ = json.Unmarshal(g["matcher"], &matcher) // not a string: no matcher
			var handlers []json.RawMessage
			if json.Unmarshal(g["hooks"], &handlers) != nil {
				continue
			}
			for _, hraw := range handlers {
				var h handler
				if json.Unmarshal(hraw, &h) != nil {
					continue
				}
				if h.Type == "command" && IsMandateCommand(h.Command) {
					out[ev] = append(out[ev], strings.Join([]string{matcher, itoa(h.Timeout), h.OnFailure, h.Command}, "|"))
				}
			}
		}
	}
	return out
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// eachSettingsFixture runs test on each settings file in testdata/settings,
// as a subtest named for the file.
func eachSettingsFixture(t *testing.T, test func(t *testing.T, orig []byte)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "settings", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no settings fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			test(t, settingsFixture(t, filepath.Base(file)))
		})
	}
}

// settingsFixture is the settings file testdata/settings/name.
func settingsFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "settings", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustInstall is Install(orig, testCommand), which must succeed.
func mustInstall(t *testing.T, orig []byte) []byte {
	t.Helper()
	out, err := Install(orig, testCommand)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInstallUninstallRoundTrip(t *testing.T) {
	wantOurs := map[string][]string{}
	for _, ev := range Installed {
		wantOurs[ev.Event] = []string{strings.Join([]string{ev.Matcher, itoa(ev.Timeout), "block", testCommand}, "|")}
	}
	eachSettingsFixture(t, func(t *testing.T, orig []byte) {
		once, err := Install(orig, testCommand)
		if err != nil {
			t.Fatal(err)
		}
		if got := ours(t, once); !reflect.DeepEqual(got, wantOurs) {
			t.Errorf("Mandate's handlers after install:\n got %v\nwant %v", got, wantOurs)
		}
		twice, err := Install(once, testCommand)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, twice) {
			t.Errorf("installing twice changed the file:\n%s\n---\n%s", once, twice)
		}
		back, removed, err := Uninstall(twice)
		if err != nil || !removed {
			t.Fatalf("Uninstall: removed %v, %v", removed, err)
		}
		if got := ours(t, back); len(got) != 0 {
			t.Errorf("handlers left after uninstall: %v", got)
		}
		// Without earlier Mandate handlers in it, the file comes back
		// as it was (re-indented); with them, minus them.
		if len(ours(t, orig)) == 0 {
			if !bytes.Equal(back, indented(t, orig)) {
				t.Errorf("uninstall did not restore the file:\n%s\nwant\n%s", back, indented(t, orig))
			}
		}
		again, removed, err := Uninstall(back)
		if err != nil || removed || !bytes.Equal(again, back) {
			t.Errorf("a second uninstall changed something: removed %v, %v", removed, err)
		}
	})
}

func TestInstallKeepsEverythingElse(t *testing.T) {
	orig := settingsFixture(t, "user_hooks.json")
	out := mustInstall(t, orig)
	before, after := decodeNumbers(t, orig).(map[string]any), decodeNumbers(t, out).(map[string]any)
	for k, v := range before {
		if k == "hooks" {
			continue
		}
		if !reflect.DeepEqual(after[k], v) {
			t.Errorf("setting %s changed: %v -> %v", k, v, after[k])
		}
	}
	// Numbers are kept as written, strings unescaped.
	for _, s := range []string{`12345678901234567890`, `1.5e3`, `2e10`, `"a < b && c > d"`} {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("%s was not kept verbatim", s)
		}
	}
	// The user's hooks stay, in their events, first.
	hooks := after["hooks"].(map[string]any)
	pre := hooks["PreToolUse"].([]any)
	if len(pre) != 2 || pre[0].(map[string]any)["matcher"] != "Bash" {
		t.Errorf("PreToolUse groups: %v", pre)
	}
	post := hooks["PostToolUse"].([]any)
	if len(post[0].(map[string]any)["hooks"].([]any)) != 2 {
		t.Errorf("the user's PostToolUse group lost a handler: %v", post[0])
	}
	if _, ok := hooks["Stop"]; !ok {
		t.Error("the user's Stop hook is gone")
	}
	// Top-level key order is kept.
	keys := func(b []byte) []string {
		o, err := parseObject(b, "x")
		if err != nil {
			t.Fatal(err)
		}
		return o.keys
	}
	if !reflect.DeepEqual(keys(orig), keys(out)) {
		t.Errorf("key order changed: %v -> %v", keys(orig), keys(out))
	}
}

func TestInstallReplacesStaleHandlers(t *testing.T) {
	orig := settingsFixture(t, "mixed_group.json")
	out := mustInstall(t, orig)
	var s struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	// The user's handler stays in its group; the old Mandate handler
	// beside it is gone, and ours is a group of its own.
	pre := s.Hooks["PreToolUse"]
	if len(pre) != 2 || !strings.Contains(string(pre[0]), "audit-log") || strings.Contains(string(pre[0]), "/opt/old/mandate") {
		t.Fatalf("PreToolUse after install: %s", pre)
	}
	if n := len(s.Hooks["SessionEnd"]); n != 1 {
		t.Fatalf("SessionEnd has %d groups, want the new one only", n)
	}
	back, removed, err := Uninstall(out)
	if err != nil || !removed {
		t.Fatal(removed, err)
	}
	want := `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/audit-log"
          }
        ]
      }
    ]
  }
}
`
	if string(back) != want {
		t.Fatalf("after uninstall:\n%s\nwant\n%s", back, want)
	}
}

func TestInstallBadSettings(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not an object", `[1, 2]`, "expected a JSON object"},
		{"hooks not an object", `{"hooks": []}`, "settings.hooks: expected an object"},
		{"event not a list", `{"hooks": {"PreToolUse": {}}}`, "settings.hooks.PreToolUse: expected a list"},
		{"group not an object", `{"hooks": {"PreToolUse": [1]}}`, "hooks.PreToolUse[0]: expected a JSON object"},
		{"handlers not a list", `{"hooks": {"PreToolUse": [{"hooks": "x"}]}}`, "expected a list"},
		{"duplicate key", `{"a": 1, "a": 2}`, `key "a" appears twice`},
		{"trailing data", `{} {}`, "unexpected data after the JSON object"},
		{"truncated", `{"a": [1, 2`, "the JSON ends early"},
		{"syntax", `{"a" 1}`, "at byte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Install([]byte(tc.in), testCommand)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Install: got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(tc.in, `"hooks"`) || tc.name == "duplicate key" || tc.name == "truncated" || tc.name == "syntax" || tc.name == "trailing data" || tc.name == "not an object" {
				if _, _, err := Uninstall([]byte(tc.in)); err == nil {
					t.Errorf("Uninstall accepted %s", tc.in)
				}
			}
		})
	}
	if _, err := Install(nil, "/usr/bin/true"); err == nil {
		t.Error("Install accepted a command that is not mandate hook claude-code")
	}
}

func TestIsMandateCommand(t *testing.T) {
	tests := []struct {
		cmd  string
		want bool
	}{
		{"mandate hook claude-code", true},
		{"/usr/local/bin/mandate hook claude-code --server http://x", true},
		{"'/opt/my tools/mandate' hook claude-code", true},
		{"MANDATE_URL=http://x mandate hook claude-code", true},
		{"mandate hook install claude-code", false},
		{"mandate check --intent hook", false},
		{"/usr/bin/mandate-helper hook claude-code", false},
		{"echo mandate hook", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := IsMandateCommand(tc.cmd); got != tc.want {
			t.Errorf("IsMandateCommand(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// FuzzInstall holds Install and Uninstall to their promises on any input
// they accept: installing twice changes nothing, uninstalling leaves no
// Mandate handler, and a file without one comes back as it was.
func FuzzInstall(f *testing.F) {
	seedJSON(f, "settings")
	f.Add([]byte(`{"hooks":{"PreToolUse":[{"hooks":[]}],"X":[]}}`))
	f.Add([]byte(`{"hooks":{"PreToolUse":[{"matcher":"*"}]}}`))
	// Entries of events Mandate does not install, which Uninstall reads too.
	f.Add([]byte(`{"hooks":{"X":1}}`))
	f.Add([]byte(`{"hooks":{"Stop":[1]}}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":{}}]}}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"a":1,"a":2}]}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		once, err := Install(in, testCommand)
		if err != nil {
			return
		}
		twice, err := Install(once, testCommand)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("second install: %v\n%s\n---\n%s", err, once, twice)
		}
		back, _, err := Uninstall(twice)
		if err != nil {
			t.Fatalf("Uninstall of an installed file: %v", err)
		}
		if got := ours(t, back); len(got) != 0 {
			t.Fatalf("handlers left: %v", got)
		}
		if !json.Valid(back) {
			t.Fatalf("uninstall wrote invalid JSON: %s", back)
		}
	})
}
