package flow

import (
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

// TestItemDate: a listed item's date field reads as RFC 3339, a bare
// date, an RFC 5322 mail date or Unix seconds or milliseconds; anything
// else is no date.
func TestItemDate(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want string // RFC 3339 in UTC, "" for none
	}{
		{"2026-10-01T09:00:00Z", "2026-10-01T09:00:00Z"},
		{"2026-10-01", "2026-10-01T00:00:00Z"},
		{"Thu, 1 Oct 2026 11:00:00 +0200", "2026-10-01T09:00:00Z"},
		{"1790845200", "2026-10-01T09:00:00Z"},
		{"1790845200.000200", "2026-10-01T09:00:00Z"},
		{"1790845200000", "2026-10-01T09:00:00Z"},
		{"yesterday", ""},
		{"42", ""},
		{"", ""},
	} {
		got := ""
		if d := itemDate(tc.v); !d.IsZero() {
			got = d.UTC().Format(time.RFC3339)
		}
		if got != tc.want {
			t.Errorf("itemDate(%q) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestItemDatesListed: a search that lists messages with ids and dates
// gives a later call naming them by id each message's date, for the
// mandate's age conditions on messages; a message listed without one has
// none.
func TestItemDatesListed(t *testing.T) {
	ss := newSession(t, "delete the emails older than 30 days")
	ss.observe("list_emails", "mail", TrustOpen, `{"messages":[`+
		`{"id":"m1","from":"news@shop.example","subject":"Sale","date":"Thu, 1 Oct 2026 11:00:00 +0200"},`+
		`{"id":"m2","subject":"Plan","receivedDateTime":"2026-11-30T08:00:00Z"},`+
		`{"id":"m3","subject":"Undated"}]}`)
	del := &action.Action{Tool: "batch_delete_emails", Kind: action.Delete, Kinds: []action.Kind{action.Delete}, Family: "mail"}
	f := ss.facts(del, map[string]any{"messageIds": []any{"m1", "m2", "m3"}})
	got := map[string]string{}
	for _, it := range f.Items {
		got[it.ID] = ""
		if !it.Date().IsZero() {
			got[it.ID] = it.Date().UTC().Format(time.RFC3339)
		}
	}
	for id, w := range map[string]string{"m1": "2026-10-01T09:00:00Z", "m2": "2026-11-30T08:00:00Z", "m3": ""} {
		if d, ok := got[id]; !ok || d != w {
			t.Errorf("%s: date %q (listed %v), want %q", id, d, ok, w)
		}
	}
}
