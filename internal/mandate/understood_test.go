package mandate

import (
	"slices"
	"strings"
	"testing"
)

// TestRuleAccountForEveryWord: every word no stage used is listed under
// not_understood, with its clause and what the draft did without it;
// function words and words a stage used are not.
func TestRuleAccountForEveryWord(t *testing.T) {
	for _, tc := range []struct {
		text    string
		phrases []string
		clause  string // of the first phrase
		effect  string // a part of the first phrase's effect
	}{
		{"Reply to Dana's last email and tell her the meeting moved to 3pm.",
			[]string{"last", "moved to 3pm"}, "Reply to Dana's last email", `"Reply" (send)`},
		{"Read the logs, do not delete anything", []string{"logs"}, "Read the logs", `"Read" (read)`},
		{"Delete the build artefacts", []string{"artefacts"}, "Delete the build artefacts", `"Delete" (delete)`},
		{"Lies die Mails und fass sie zusammen", nil, "", ""},
		{"Clean up my Downloads folder, only delete files older than a year.",
			[]string{"files"}, "only delete files older than a year", "delete is put to a person"},
		{"blorp zzyzx", []string{"blorp zzyzx"}, "blorp zzyzx", "grants nothing and rules nothing out"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			dr, err := Compile(tc.text, WithNow(testNow))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range dr.NotUnderstood {
				got = append(got, u.Phrase)
				if u.Clause == "" || !strings.Contains(u.Clause, u.Phrase) || !strings.HasPrefix(u.Effect, "ignored") {
					t.Errorf("%+v: want its clause and an effect that says it was ignored", u)
				}
			}
			if !slices.Equal(got, tc.phrases) {
				t.Errorf("not_understood = %q, want %q", got, tc.phrases)
			}
			if len(tc.phrases) > 0 {
				if u := dr.NotUnderstood[0]; u.Clause != tc.clause || !strings.Contains(u.Effect, tc.effect) {
					t.Errorf("first = %+v, want clause %q, effect with %q", u, tc.clause, tc.effect)
				}
			}
		})
	}
}

// TestNotUnderstoodBounded: ten thousand clauses of unknown words list at
// most maxUnrecognised phrases and say how many more there were.
func TestNotUnderstoodBounded(t *testing.T) {
	text := strings.Repeat("blorp zzyzx, ", 5000)
	dr, err := Compile(text[:min(len(text), maxInstructions)], WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(dr.NotUnderstood); n != maxUnrecognised+1 {
		t.Fatalf("%d entries, want %d and a count of the rest", n, maxUnrecognised+1)
	}
	if last := dr.NotUnderstood[maxUnrecognised]; !strings.Contains(last.Effect, "more phrases") {
		t.Errorf("last = %+v, want the count of the rest", last)
	}
	if len(dr.Mandate.Allow) != 1 || len(dr.Mandate.Deny) != 0 {
		t.Errorf("allow %v deny %v: unknown words grant nothing but the implicit read", dr.Mandate.Allow, dr.Mandate.Deny)
	}
}
