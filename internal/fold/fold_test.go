package fold

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"delete", "delete"},
		{"Lösche", "losche"},
		{"LÖSCHE", "losche"},
		{"n’achète", "n'achete"},
		{"n`achete", "n'achete"},
		{"Straße", "strasse"},
		{"Cœur", "coeur"},
		{"Æble", "aeble"},
		{"e\u0301te\u0301", "ete"}, // decomposed: combining acute accents dropped
		{"Příliš žluťoučký kůň", "prilis zlutoucky kun"},
		{"Łódź", "lodz"},
		{"İstanbul", "istanbul"},
		{"日本語", "日本語"},
		{"\xff\xfe", "\ufffd\ufffd"}, // invalid UTF-8 becomes the replacement rune, never a crash
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPlainDoesNotAllocate: lower-case ASCII, most of what the tables
// meet, is returned as it is.
func TestPlainDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("forward the invoices ", 8)
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Errorf("String of plain ASCII allocates %v times", n)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"Lösche", "n’achète", "\xff", "ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := String(s)
		if String(once) != once {
			t.Errorf("folding %q twice gives %q, once %q", s, String(once), once)
		}
	})
}
