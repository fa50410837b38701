package action

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestAddressesKeepDisplayNames: the display name written beside an
// address is kept with it, and nothing that is not a display name of that
// very address is taken for one.
func TestAddressesKeepDisplayNames(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Recipient
	}{
		{"bare address", "dana@corp.example", []Recipient{{Address: "dana@corp.example"}}},
		{"name and address", "Dana Reyes <dana@corp.example>", []Recipient{{Address: "dana@corp.example", Name: "Dana Reyes"}}},
		{"address lower-cased, name as written", "Dana Reyes <Dana@Corp.Example>", []Recipient{{Address: "dana@corp.example", Name: "Dana Reyes"}}},
		{"quoted name with a comma", `"Reyes, Dana" <dana@corp.example>, bob@x.org`, []Recipient{{Address: "dana@corp.example", Name: "Reyes, Dana"}, {Address: "bob@x.org"}}},
		{"list of named addresses", "Dana Reyes <dana@corp.example>, Bob <bob@x.org>; carol@x.org", []Recipient{{Address: "dana@corp.example", Name: "Dana Reyes"}, {Address: "bob@x.org", Name: "Bob"}, {Address: "carol@x.org"}}},
		{"spaces inside the brackets", "Dana   Reyes < dana@corp.example >", []Recipient{{Address: "dana@corp.example", Name: "Dana Reyes"}}},
		{"look-alike keeps its own name", "Dana <eve@evil.example>", []Recipient{{Address: "eve@evil.example", Name: "Dana"}}},
		// Both addresses count as recipients (the wider reading), and
		// neither gets the other as its name.
		{"an address as a name names no one", `"dana@corp.example" <eve@evil.example>`, []Recipient{{Address: "dana@corp.example"}, {Address: "eve@evil.example"}}},
		{"a name before an unbracketed address is not its name", "Dana eve@evil.example", []Recipient{{Address: "eve@evil.example"}}},
		{"mailto in brackets has no name", "Dana <mailto:dana@corp.example>", []Recipient{{Address: "dana@corp.example"}}},
		{"unbalanced quote gives no name", `Reyes, Dana" <dana@corp.example>`, []Recipient{{Address: "dana@corp.example"}}},
		{"control characters are spaces", "Dana\x00\tReyes <dana@corp.example>", []Recipient{{Address: "dana@corp.example", Name: "Dana Reyes"}}},
		{"a name too long to be one", strings.Repeat("a", 300) + " <dana@corp.example>", []Recipient{{Address: "dana@corp.example"}}},
		{"channel", "#general", []Recipient{{Address: "#general"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := addresses(tc.in)
			if cut || !slices.Equal(got, tc.want) {
				t.Errorf("addresses(%q) = %+v cut=%v, want %+v", tc.in, got, cut, tc.want)
			}
		})
	}
}

// TestClassifyKeepsRecipientNames: every way a call writes a display name
// reaches Action.Recipients beside the address.
func TestClassifyKeepsRecipientNames(t *testing.T) {
	c := newTestClassifier(t)
	for _, tc := range []struct {
		name, tool, args string
		want             []Recipient
	}{
		{"to string", "send_email", `{"to": "Dana Reyes <dana@corp.example>", "subject": "notes", "body": "b"}`,
			[]Recipient{{Address: "dana@corp.example", Field: "to", Name: "Dana Reyes"}}},
		{"recipient object", "send_email", `{"to": [{"email": "dana@corp.example", "name": "Dana Reyes"}], "body": "b"}`,
			[]Recipient{{Address: "dana@corp.example", Field: "to", Name: "Dana Reyes"}}},
		{"graph-style nested object", "create_message_rule", `{"displayName": "x", "actions": {"redirectTo": [{"emailAddress": {"address": "eve@evil.example", "name": "Dana"}}]}}`,
			[]Recipient{{Address: "eve@evil.example", Field: "forward", Name: "Dana"}}},
		{"the object's name does not override the bracketed one", "send_email", `{"to": [{"email": "Dana <dana@corp.example>", "name": "Boss"}], "body": "b"}`,
			[]Recipient{{Address: "dana@corp.example", Field: "to", Name: "Dana"}}},
		{"a name outside a recipient object is no display name", "send_email", `{"to": "dana@corp.example", "name": "Dana", "body": "b"}`,
			[]Recipient{{Address: "dana@corp.example", Field: "to"}}},
		{"mail on the shell", "Bash", `{"command": "mail -s notes 'Dana Reyes <dana@corp.example>' < notes.txt"}`,
			[]Recipient{{Address: "dana@corp.example", Field: "to", Name: "Dana Reyes"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
				t.Fatalf("bad test args: %v", err)
			}
			a := c.Classify(Call{Tool: tc.tool, Args: args, WorkingDir: testWD, HomeDir: testHome})
			if !slices.Equal(a.Recipients, tc.want) {
				t.Errorf("recipients = %+v, want %+v", a.Recipients, tc.want)
			}
		})
	}
}

func TestConversationIDRecipient(t *testing.T) {
	for s, want := range map[string]string{
		"19:fac@thread.tacv2":           "19:fac@thread.tacv2",
		"19:hugo-sophie@unq.gbl.spaces": "19:hugo-sophie@unq.gbl.spaces",
		"Dana <dana@corp.example>":      "dana@corp.example",
		"mailto:dana@corp.example":      "dana@corp.example",
	} {
		rs, _ := addresses(s)
		if len(rs) != 1 || rs[0].Address != want {
			t.Errorf("%q: %+v, want %q", s, rs, want)
		}
	}
}
