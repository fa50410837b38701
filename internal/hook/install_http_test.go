package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const testURL = "http://127.0.0.1:7410/v1/hooks/claude-code?home=%2Fhome%2Fdev"

// httpHandlers lists Mandate's http handlers per event, as
// "matcher|timeout|onFailure|url|Authorization|allowedEnvVars".
func httpHandlers(t testing.TB, settings []byte) map[string][]string {
	t.Helper()
	var s struct {
		Hooks map[string][]struct {
			Matcher string    `json:"matcher"`
			Hooks   []handler `json:"hooks"`
		} `json:"hooks"`
	}
	out := map[string][]string{}
	if err := json.Unmarshal(settings, &s); err != nil {
		t.Fatal(err)
	}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Type == "http" && IsMandateURL(h.URL) {
					out[ev] = append(out[ev], strings.Join([]string{g.Matcher, itoa(h.Timeout), h.OnFailure, h.URL, h.Headers["Authorization"], strings.Join(h.AllowedEnvVars, ",")}, "|"))
				}
			}
		}
	}
	return out
}

// TestInstallHTTP: the http form registers every event Install does, with
// the token's variable in the header and listed in allowedEnvVars (else
// Claude Code sends it empty) and onFailure block; installing either form
// replaces the other, and Uninstall removes both.
func TestInstallHTTP(t *testing.T) {
	want := map[string][]string{}
	for _, ev := range Installed {
		want[ev.Event] = []string{strings.Join([]string{ev.Matcher, itoa(ev.Timeout), "block", testURL, "Bearer $MANDATE_TOKEN", "MANDATE_TOKEN"}, "|")}
	}
	eachSettingsFixture(t, func(t *testing.T, orig []byte) {
		cmd, err := Install(orig, testCommand)
		if err != nil {
			t.Fatal(err)
		}
		viaHTTP, err := InstallHTTP(cmd, testURL)
		if err != nil {
			t.Fatal(err)
		}
		if got := httpHandlers(t, viaHTTP); !equalLists(got, want) {
			t.Errorf("http handlers:\n got %v\nwant %v", got, want)
		}
		if got := ours(t, viaHTTP); len(got) != 0 {
			t.Errorf("the command handlers stayed beside the http ones: %v", got)
		}
		again, err := InstallHTTP(viaHTTP, testURL)
		if err != nil || !bytes.Equal(again, viaHTTP) {
			t.Errorf("installing twice changed the file (%v)", err)
		}
		back, err := Install(viaHTTP, testCommand)
		if err != nil || !bytes.Equal(back, cmd) {
			t.Errorf("installing the command form again does not give the command install back (%v):\n%s\n---\n%s", err, back, cmd)
		}
		gone, removed, err := Uninstall(viaHTTP)
		if err != nil || !removed {
			t.Fatalf("Uninstall: removed %v, %v", removed, err)
		}
		if got := httpHandlers(t, gone); len(got) != 0 {
			t.Errorf("http handlers left after uninstall: %v", got)
		}
		if len(ours(t, orig)) == 0 && !bytes.Equal(gone, indented(t, orig)) {
			t.Errorf("uninstall did not restore the file:\n%s\nwant\n%s", gone, indented(t, orig))
		}
	})
}

func equalLists(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\n") != strings.Join(b[k], "\n") {
			return false
		}
	}
	return true
}

func TestInstallHTTPRefusesOtherURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:7410/v1/hooks/claude-code", "http://127.0.0.1:7410/v1/evaluate", "ftp://h/v1/hooks/claude-code"} {
		if _, err := InstallHTTP(nil, u); err == nil {
			t.Errorf("%q: installed", u)
		}
	}
	// A user's own http hook elsewhere is not Mandate's: kept by Uninstall.
	user := []byte(`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"http","url":"http://127.0.0.1:9000/audit"}]}]}}`)
	out, removed, err := Uninstall(user)
	if err != nil || removed || !bytes.Equal(out, user) {
		t.Errorf("Uninstall touched a foreign http hook: removed %v, %v\n%s", removed, err, out)
	}
}
