package mandate

import (
	"slices"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

func TestNamesPerson(t *testing.T) {
	for _, tc := range []struct {
		entry, name string
		want        bool
	}{
		{"Dana", "dana reyes", true},
		{"Reyes", "dana reyes", true},
		{"Dana Reyes", "dana reyes", true},
		{"dana  reyes", "Dana Reyes", true},
		{"Dana", "reyes, dana", true},
		{"Dana Reyes", "dana", false},
		{"Dan", "dana reyes", false},
		{"Reyes Dana", "dana reyes", false},
		{"Jean", "jean-luc picard", true},
		{"Muller", "müller", true},
		{"Núñez", "jose nunez", true},
		{"Dana", "", false},
		{"dana@corp.example", "dana", false},
		{"#dana", "dana", false},
		{"*@corp.example", "dana", false},
		{"", "dana", false},
	} {
		if got := namesPerson(tc.entry, tc.name); got != tc.want {
			t.Errorf("namesPerson(%q, %q) = %v, want %v", tc.entry, tc.name, got, tc.want)
		}
	}
}

func TestAddressFitsName(t *testing.T) {
	for _, tc := range []struct {
		addr, name string
		want       bool
	}{
		{"dana@corp.example", "dana reyes", true},
		{"reyes@corp.example", "dana reyes", true},
		{"dana.reyes@corp.example", "dana reyes", true},
		{"d.reyes@corp.example", "dana reyes", true},
		{"dreyes@corp.example", "dana reyes", true},
		{"danareyes@corp.example", "dana reyes", true},
		{"dana_r+notes@corp.example", "dana reyes", true},
		{"eve@evil.example", "dana", false},
		{"xreyes@corp.example", "dana reyes", false},
		{"dr@corp.example", "dana reyes", false},
		{"corp@dana.example", "dana", false}, // the domain says nothing of whose
		{"U042", "dana", false},
		{"dana", "dana", false},
		{"dana@corp.example", "", false},
		{"t.krueger@firma.example", "tobias krüger", true},
		{"tobias.kruger@firma.example", "Tobias Krüger", true},
		{"jose.nunez@empresa.example", "José Núñez", true},
	} {
		if got := addressFitsName(tc.addr, tc.name); got != tc.want {
			t.Errorf("addressFitsName(%q, %q) = %v, want %v", tc.addr, tc.name, got, tc.want)
		}
	}
}

// TestCheckRecipientsByName: a display name never puts an address in
// scope; it marks the address as named by its display name only when the
// name is a person the user named and the address fits the name.
func TestCheckRecipientsByName(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name             string
		scope            Scope
		rc               action.Recipient
		outside, byName  bool
		prohibitedByName bool
	}{
		{"named person, fitting address", Scope{Recipients: []string{"Dana"}}, action.Recipient{Address: "dana@corp.example", Name: "Dana Reyes"}, true, true, false},
		{"names entry", Scope{Names: []string{"Dana"}}, action.Recipient{Address: "dana@corp.example", Name: "Dana Reyes"}, true, true, false},
		{"look-alike", Scope{Recipients: []string{"Dana"}}, action.Recipient{Address: "eve@evil.example", Name: "Dana"}, true, false, false},
		{"name in the address form", Scope{Recipients: []string{"Dana"}}, action.Recipient{Address: "Dana Reyes <dana@corp.example>"}, true, true, false},
		{"no display name", Scope{Recipients: []string{"Dana"}}, action.Recipient{Address: "dana@corp.example"}, true, false, false},
		{"another person", Scope{Recipients: []string{"Dana"}}, action.Recipient{Address: "bob@corp.example", Name: "Bob"}, true, false, false},
		{"the address is named", Scope{Recipients: []string{"dana@corp.example"}}, action.Recipient{Address: "dana@corp.example", Name: "Anyone"}, false, false, false},
		{"a named address does not admit its display name elsewhere", Scope{Recipients: []string{"dana@corp.example"}}, action.Recipient{Address: "eve@evil.example", Name: "dana@corp.example"}, true, false, false},
		{"recipients match nothing", Scope{Recipients: nil, None: []string{DimRecipients}}, action.Recipient{Address: "dana@corp.example", Name: "Dana"}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Mandate{Version: 1, Allow: []action.Kind{action.Send}, Scope: tc.scope}
			a := &action.Action{Kind: action.Send, Kinds: []action.Kind{action.Send}, Recipients: []action.Recipient{tc.rc}}
			r := m.Check(a, "", now)
			if got := len(r.RecipientsOutside) > 0; got != tc.outside {
				t.Errorf("outside = %v (%q), want %v", got, r.RecipientsOutside, tc.outside)
			}
			if got := len(r.RecipientsByName) > 0; got != tc.byName {
				t.Errorf("by name = %v (%q), want %v", got, r.RecipientsByName, tc.byName)
			}
			if tc.byName && !slices.Equal(r.RecipientsByName, r.RecipientsOutside) {
				t.Errorf("by name %q is not the address outside %q", r.RecipientsByName, r.RecipientsOutside)
			}
		})
	}
}

// TestProhibitionByDisplayName: a prohibition on a person holds for a
// send that writes their name over any address.
func TestProhibitionByDisplayName(t *testing.T) {
	m := &Mandate{Version: 1, Allow: []action.Kind{action.Send}, Prohibitions: []Prohibition{{Text: "don't write to Eve", Kind: action.Send, Target: "Eve"}}}
	for _, tc := range []struct {
		rc   action.Recipient
		want bool
	}{
		{action.Recipient{Address: "e.ortiz@corp.example", Name: "Eve Ortiz"}, true},
		{action.Recipient{Address: "eve@corp.example"}, true},
		{action.Recipient{Address: "steve@corp.example"}, false},
		{action.Recipient{Address: "bob@corp.example", Name: "Bob"}, false},
	} {
		a := &action.Action{Kind: action.Send, Kinds: []action.Kind{action.Send}, Recipients: []action.Recipient{tc.rc}}
		if got := len(m.Check(a, "", time.Unix(0, 0)).Prohibited) > 0; got != tc.want {
			t.Errorf("%+v: prohibited = %v, want %v", tc.rc, got, tc.want)
		}
	}
}
