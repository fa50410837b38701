package mandate_test

import (
	"fmt"

	"github.com/mandate-dev/mandate/internal/mandate"
)

// Compile drafts a mandate from the user's words, deterministically: verbs
// become kinds of action, negations prohibitions, named things scope. The
// draft says what it recognised and why, so a person can check it.
func ExampleCompile() {
	d, err := mandate.Compile("Send the Q3 summary to alice@example.com. Do not delete anything.")
	if err != nil {
		panic(err)
	}
	m := d.Mandate
	fmt.Println("allow:", m.Allow)
	fmt.Println("deny:", m.Deny)
	fmt.Println("recipients:", m.Scope.Recipients)
	fmt.Println("languages:", d.Languages)
	for _, r := range d.Recognised {
		fmt.Printf("%q → %s\n", r.Phrase, r.Meaning)
	}
	// Output:
	// allow: [read send]
	// deny: [delete]
	// recipients: [alice@example.com]
	// languages: [en]
	// "alice@example.com" → scope recipient alice@example.com
	// "Send" → allow send
	// "Do not delete" → deny delete
	// "(implicit)" → allow read
}
