package flow

import (
	"slices"
	"sort"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// TestExcludedWords: the words after an exclusion cue, to the end of their
// clause, are what the user rules out; a limit after the cue ("not more
// than") and an undone cue ("don't forget") rule nothing out, and a word
// the user also asks for elsewhere is not ruled out.
func TestExcludedWords(t *testing.T) {
	s := newTestScanner(t)
	for _, tc := range []struct {
		words string
		want  []string
	}{
		{"archive all the newsletters except the ones from my bank", []string{"bank", "ones"}},
		{"Archiviere alle Newsletter außer denen von der Sparkasse.", []string{"denen", "sparkasse"}},
		{"archive les newsletters sauf celles de ma banque, merci", []string{"banque", "celles"}},
		{"archiva le newsletter tranne quelle della banca", []string{"banca", "quelle"}},
		{"archiva los boletines excepto los del banco", []string{"banco"}},
		{"reply to everyone but not to Bob Miller; then archive it", []string{"miller"}},
		{"pay the Stadtwerke bill, not the garage one", []string{"garage"}},
		{"don't forget to cc Anna", nil},
		{"Pay the water bill, but don't pay more than 50 EUR", nil},
		{"Zahl die Rechnung, aber nicht mehr als 50 €", nil},
		{"send Anna the notes, not the slides, and cc Anna's boss", []string{"slides"}},
		{"delete the drafts, not the notes. Then delete the notes too", nil},
	} {
		sc := s.Words(tc.words, Hint{})
		got := slices.Clone(sc.excludedWords)
		sort.Strings(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: excluded %v, want %v", tc.words, got, tc.want)
		}
	}
}

// TestFactsExcluded: a recipient or amount the user's words have only
// where they rule it out is excluded and not in the user's words; an item
// whose sender is what they ruled out is excluded, and the others are not.
func TestFactsExcluded(t *testing.T) {
	ss := newSession(t, "reply to everyone on the thread except bob@corp.example")
	f := ss.facts(send("bob@corp.example", "ana@corp.example"), map[string]any{"to": []any{"bob@corp.example", "ana@corp.example"}})
	if v := value(f, "bob@corp.example"); !v.Excluded || v.InUserWords {
		t.Errorf("the recipient ruled out: %+v", v)
	}
	if v := value(f, "ana@corp.example"); v.Excluded {
		t.Errorf("another recipient: %+v", v)
	}

	pay := func(n float64) *action.Action {
		return &action.Action{Tool: "refund_payment", Kind: action.Pay, Kinds: []action.Kind{action.Pay}, Family: "payments",
			Amounts: []action.Amount{{Value: n, Currency: "EUR"}}}
	}
	ss = newSession(t, "refund the customer 30 EUR, not the 45 EUR they asked for")
	if v := value(ss.facts(pay(45), map[string]any{"amount": 45}), "45 EUR"); !v.Excluded {
		t.Errorf("the amount ruled out: %+v", v)
	}
	if v := value(ss.facts(pay(30), map[string]any{"amount": 30}), "30 EUR"); v.Excluded || !v.InUserWords {
		t.Errorf("the amount named: %+v", v)
	}
	ss = newSession(t, "pay the bill but not more than 50 EUR")
	if v := value(ss.facts(pay(50), map[string]any{"amount": 50}), "50 EUR"); v.Excluded {
		t.Errorf("a cap is not ruled out: %+v", v)
	}

	// A later instruction that asks for what an earlier one ruled out.
	ss = newSession(t, "reply to everyone except bob@corp.example")
	ss.tab.AddWords(ss.s.Words("actually, add bob@corp.example too", Hint{}), nil, t0)
	if v := value(ss.facts(send("bob@corp.example"), map[string]any{"to": "bob@corp.example"}), "bob@corp.example"); v.Excluded {
		t.Errorf("asked for after being ruled out: %+v", v)
	}

	archive := &action.Action{Tool: "batch_modify_emails", Kind: action.Write, Kinds: []action.Kind{action.Write}, Family: "email"}
	for _, tc := range []struct {
		words, listing string
		ids            []any
		excluded       []string
	}{
		{"archive all the newsletters except the ones from my bank",
			`{"messages":[{"id":"m1","from":"Zalando <news@zalando.example>","subject":"Winter sale"},{"id":"m2","from":"ING Bank <info@ing.example>","subject":"Your statement is ready"},{"id":"m3","from":"Spotify","subject":"Wrapped"}]}`,
			[]any{"m1", "m2", "m3"}, []string{"m2"}},
		{"Archiviere alle Newsletter, außer die von der Sparkasse",
			`[{"id":"a1","from":"Sparkasse Leipzig <newsletter@sparkasse.example>","subject":"Neue Konditionen"},{"id":"a2","from":"MediaMarkt","subject":"Black Week"}]`,
			[]any{"a1", "a2"}, []string{"a1"}},
		{"archive all the newsletters",
			`{"messages":[{"id":"m1","from":"Zalando","subject":"Sale"},{"id":"m2","from":"ING Bank","subject":"Statement"}]}`,
			[]any{"m1", "m2"}, nil},
	} {
		ss := newSession(t, tc.words)
		ss.observe("search_emails", "email", TrustOpen, tc.listing)
		f := ss.facts(archive, map[string]any{"messageIds": tc.ids, "removeLabelIds": []any{"INBOX"}})
		var got []string
		for _, it := range f.Items {
			if it.Excluded {
				got = append(got, it.ID)
			}
		}
		if len(f.Items) != len(tc.ids) || !slices.Equal(got, tc.excluded) {
			t.Errorf("%q: items %+v, excluded %v, want %v", tc.words, f.Items, got, tc.excluded)
		}
	}
}
