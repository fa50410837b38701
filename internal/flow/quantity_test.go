package flow

import (
	"fmt"
	"testing"
)

// TestQuantityFacts: how many items a call's arguments say it acts on,
// against the count the user's words state for what each argument counts.
func TestQuantityFacts(t *testing.T) {
	s, err := NewScanner()
	if err != nil {
		t.Fatal(err)
	}
	packs := []UserCount{{N: 2, Words: []string{"packs", "of", "the"}, Phrase: "2 packs of the"}}
	room := []UserCount{{N: 1, Words: []string{"room", "at", "the"}, Phrase: "one room at the"}, {N: 2, Words: []string{"adults"}, Phrase: "2 adults"}}
	drafts := []UserCount{{N: 2, Words: []string{"entwurfe", "zum"}, Phrase: "zwei Entwürfe zum"}}
	people := []UserCount{{N: 3, Words: []string{"people", "on", "the"}, Phrase: "3 people on the"}}
	for _, c := range []struct {
		name   string
		counts []UserCount
		args   map[string]any
		want   string // "field:n/stated" of each quantity; then the largest
	}{
		{"a cart addition over the count", packs, map[string]any{"product_id": "p", "quantity": 6.0}, "[quantity:6/2] 6"},
		{"a cart addition at the count", packs, map[string]any{"product_id": "p", "quantity": 2.0}, "[quantity:2/2] 2"},
		{"a quantity as a string", packs, map[string]any{"qty": "3"}, "[qty:3/2] 3"},
		{"not a whole number", packs, map[string]any{"quantity": 1.5}, "[] 0"},
		{"rooms compared with the rooms' count, not the adults'", room, map[string]any{"number_of_rooms": 2.0, "adults": 2.0}, "[number_of_rooms:2/1] 2"},
		{"messageIds compared with the drafts' count", drafts, map[string]any{"messageIds": []any{"a", "b", "c"}}, "[messageIds:3/2] 3"},
		{"a recipients list against a count of packs: nothing stated", packs, map[string]any{"to": []any{"a@x.example", "b@x.example", "c@x.example"}}, "[to:3/0] 3"},
		{"to, cc and bcc add up", people, map[string]any{"to": []any{"a@x.example", "b@x.example"}, "cc": []any{"c@x.example"}, "bcc": []any{"d@x.example"}}, "[bcc+cc+to:4/3] 4"},
		{"a nested line's quantity", packs, map[string]any{"items": []any{map[string]any{"sku": "a", "quantity": 1.0}, map[string]any{"sku": "b", "quantity": 5.0}}}, "[items:2/2 quantity:5/2] 5"},
		{"no counts in the words", nil, map[string]any{"quantity": 6.0}, "[quantity:6/0] 6"},
		{"no quantity in the call", packs, map[string]any{"product_id": "p"}, "[] 0"},
	} {
		tab := NewTable(TableLimits{})
		tab.AddCounts(c.counts)
		f := tab.Facts(CallInput{Args: s.Args(c.args, Hint{})})
		var got []string
		for _, q := range f.Quantities {
			got = append(got, fmt.Sprintf("%s:%d/%d", q.Field, q.N, q.Stated))
		}
		if s := fmt.Sprint(got, " ", f.Quantity); s != c.want {
			t.Errorf("%s: got %s, want %s", c.name, s, c.want)
		}
		if len(f.UserCounts) != len(c.counts) {
			t.Errorf("%s: user_counts %v, want %v", c.name, f.UserCounts, c.counts)
		}
	}
}

// TestPackSize: the units an item's name says it holds.
func TestPackSize(t *testing.T) {
	s, err := NewScanner()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want int
	}{
		{"BRITA MAXTRA PRO 12er Jahrespaket", 12},
		{"Ariel All-in-1 Pods, 36 pack", 36},
		{"Varta AA batteries, 4-pack", 4},
		{"Oral-B Aufsteckbürsten, 10 Stück", 10},
		{"Pampers Baby-Dry Größe 5, 52 pcs", 52},
		{"Confezione da 6 pezzi", 6},
		{"HP 305 Black Original Ink Cartridge", 1},
		{"Apple iPhone 15 Silicone Case", 1},
		{"BRITA MAXTRA PRO Filterkartusche 1er", 1},
		{"Lavazza Qualità Rossa Bohnen 1 kg", 1},
		{"", 1},
	} {
		if got := s.voc.qty.packSize(c.name); got != c.want {
			t.Errorf("packSize(%q) = %d, want %d", c.name, got, c.want)
		}
	}
}
