package action

import "testing"

// TestItems: count caps count the items a call acts on, where it shows
// them; a call that does not show how many is 0.
func TestItems(t *testing.T) {
	c := newTestClassifier(t)
	for _, tc := range []struct {
		name string
		call Call
		want int
	}{
		{"rm of six files", Call{Tool: "Bash", Args: map[string]any{"command": "rm a b c d e f"}}, 6},
		{"rm of one file twice named", Call{Tool: "Bash", Args: map[string]any{"command": "rm a ./a"}}, 1},
		{"rm -rf of a folder", Call{Tool: "Bash", Args: map[string]any{"command": "rm -rf ~/tmp"}}, 0},
		{"rm -r -f of a folder", Call{Tool: "Bash", Args: map[string]any{"command": "rm -r -f ~/tmp"}}, 0},
		{"rm of a glob", Call{Tool: "Bash", Args: map[string]any{"command": "rm ~/tmp/*.log"}}, 0},
		{"find -delete", Call{Tool: "Bash", Args: map[string]any{"command": "find ~/tmp -mtime +30 -delete"}}, 0},
		{"find -exec rm", Call{Tool: "Bash", Args: map[string]any{"command": "find . -name '*.o' -exec rm {} +"}}, 0},
		{"xargs rm", Call{Tool: "Bash", Args: map[string]any{"command": "ls | xargs rm"}}, 0},
		{"a command naming no item", Call{Tool: "Bash", Args: map[string]any{"command": "git push"}}, 0},
		{"a batch of message ids", Call{Tool: "batch_modify_emails", Args: map[string]any{
			"messageIds": []any{"a", "b", "c"}, "removeLabelIds": []any{"INBOX"}}}, 3},
		{"a send to two recipients", Call{Tool: "send_email", Args: map[string]any{
			"to": []any{"a@example.com", "B@example.com"}, "cc": []any{"b@example.com"}, "subject": "x", "body": "y"}}, 2},
		{"an Edit", Call{Tool: "Edit", Args: map[string]any{"file_path": "/home/u/proj/x.md", "old_string": "a", "new_string": "b"}}, 1},
		{"a tool call naming one item", Call{Tool: "delete_branch", Args: map[string]any{"owner": "a", "repo": "b", "branch": "c"}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.call.WorkingDir, tc.call.HomeDir = testWD, testHome
			if a := c.Classify(tc.call); a.Items != tc.want {
				t.Errorf("items = %d, want %d (paths %v, commands %v)", a.Items, tc.want, a.Paths, a.Commands)
			}
		})
	}
}
