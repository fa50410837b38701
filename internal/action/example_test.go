package action_test

import (
	"fmt"

	"github.com/mandate-dev/mandate/internal/action"
)

// Classify says what a call really does, whatever the tool is called: a
// shell line is parsed into its commands, and each command's program,
// subcommand and flags give its kind and the resources it touches.
func ExampleClassifier_Classify() {
	c, err := action.NewClassifier()
	if err != nil {
		panic(err)
	}
	a := c.Classify(action.Call{
		Tool:       "Bash",
		Args:       map[string]any{"command": "git add -A && git commit -m wip && git push --force origin main"},
		WorkingDir: "/home/dev/project",
	})
	fmt.Println("kind:", a.Kind, "kinds:", a.Kinds)
	fmt.Println("destructive:", a.Destructive, "external:", a.Effects.External)
	for _, cmd := range a.Commands {
		fmt.Println(cmd.Name, cmd.Argv[1], "→", cmd.Kind)
	}
	// A force push rewrites history: it is a delete as well as a send.
	// Output:
	// kind: send kinds: [write delete send]
	// destructive: true external: true
	// git add → write
	// git commit → write
	// git push → send
}

// A tool the catalog knows is classified by its entry; its arguments give
// the resources: here a recipient and the paths of attachments.
func ExampleClassifier_Classify_mail() {
	c, err := action.NewClassifier()
	if err != nil {
		panic(err)
	}
	a := c.Classify(action.Call{
		Tool: "send_email",
		Args: map[string]any{
			"to":      []any{"alice@example.com"},
			"subject": "Q3 summary",
			"body":    "Attached.",
		},
	})
	fmt.Println("kind:", a.Kind, "known:", a.Known, "source:", a.Source)
	for _, r := range a.Recipients {
		fmt.Println("recipient:", r.Address)
	}
	fmt.Println("external:", a.Effects.External)
	// Output:
	// kind: send known: true source: catalog
	// recipient: alice@example.com
	// external: true
}
