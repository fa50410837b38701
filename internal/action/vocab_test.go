package action

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/vocab"
)

// TestVocabularyKinds holds the vocabulary's kind names to ours: a word
// cannot name a kind the classifier does not have.
func TestVocabularyKinds(t *testing.T) {
	names := vocab.KindNames()
	kinds := AllKinds()
	if len(names) != len(kinds)-1 {
		t.Fatalf("vocabulary kinds %v, classifier kinds %v", names, kinds)
	}
	for i, n := range names {
		if Kind(n) != kinds[i] {
			t.Errorf("vocabulary kind %d is %q, classifier's is %q", i, n, kinds[i])
		}
	}
}

// TestVocabularyInNames checks that tool names read their verbs from the
// shared vocabulary, where words name what the user's words name.
func TestVocabularyInNames(t *testing.T) {
	c := newTestClassifier(t)
	for _, tc := range []struct {
		tool string
		want expect
	}{
		{"cancel_reservation", expect{kind: Delete, source: "heuristic"}},
		{"accept_invite", expect{kind: Send}},
		{"deploy_site", expect{kinds: []Kind{Write, Execute}, external: yes()}},
		{"remove_label_from_thread", expect{kind: Write}},
		{"reserve_table", expect{kind: Pay}},
		{"list_orders", expect{kind: Read}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			tc.want.check(t, c.Classify(Call{Tool: tc.tool, Args: map[string]any{"id": "1"}}))
		})
	}
}
