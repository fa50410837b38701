package mandate

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

// post is a chat post to the given recipients (address, field).
func post(rcpts ...[2]string) *action.Action {
	a := &action.Action{Tool: "slack_post_message", Kind: action.Send, Kinds: []action.Kind{action.Send}, Family: "chat", Items: 1}
	for _, rc := range rcpts {
		a.Recipients = append(a.Recipients, action.Recipient{Address: rc[0], Field: rc[1]})
	}
	return a
}

// TestChannelConditionCompiles: "only" before a sending verb whose words
// name channels only is a channel condition, in every language; "except
// #random" and "never post in #random" stay prohibitions.
func TestChannelConditionCompiles(t *testing.T) {
	for _, tc := range []struct {
		text     string
		channels []string
		prohibit string
		scoped   string // no condition: send allowed, the channel in scope
	}{
		{text: "only post in #general", channels: []string{"#general"}},
		{text: "Only post in the channel #general.", channels: []string{"#general"}},
		{text: "nur im Kanal #team posten", channels: []string{"#team"}},
		{text: "seulement poster dans #annonces", channels: []string{"#annonces"}},
		{text: "publie seulement dans #annonces", scoped: "#annonces"},
		{text: "Post the update to Slack, only in #general", scoped: "#general"},
		{text: "solo publica en #ventas", channels: []string{"#ventas"}},
		{text: "pubblica solo nel canale #dev", channels: []string{"#dev"}},
		{text: "never post in #random", prohibit: "send:#random"},
		{text: "post the release notes on Slack, except #random", prohibit: "send:#random"},
	} {
		dr, err := Compile(tc.text, WithNow(testNow))
		if err != nil {
			t.Fatal(err)
		}
		m := dr.Mandate
		var got []string
		for _, c := range m.Conditions {
			if c.Kind == action.Send {
				got = append(got, c.Channels...)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.channels, ",") {
			t.Errorf("%q: channels %v, want %v (conditions %+v, ask %v)", tc.text, got, tc.channels, m.Conditions, m.Ask)
		}
		if tc.scoped != "" && (!slices.Contains(m.Allow, action.Send) || !slices.Contains(m.Scope.Recipients, tc.scoped)) {
			t.Errorf("%q: allow %v, recipients %v, want send to %s", tc.text, m.Allow, m.Scope.Recipients, tc.scoped)
		}
		if tc.prohibit != "" && !hasProhibition(m, tc.prohibit) {
			t.Errorf("%q: prohibitions %+v, want %s", tc.text, m.Prohibitions, tc.prohibit)
		}
	}
}

func hasProhibition(m *Mandate, want string) bool {
	for _, p := range m.Prohibitions {
		if string(p.Kind)+":"+p.Target == want {
			return true
		}
	}
	return false
}

// TestChannelConditionChecked: a post meets a channel condition when every
// recipient is a channel whose name the call or an earlier listing shows;
// anything else is asked.
func TestChannelConditionChecked(t *testing.T) {
	only := ItemCondition{Kind: action.Send, Channels: []string{"#general"}, Text: "only post in #general"}
	except := ItemCondition{Kind: action.Send, NotChannels: []string{"#random"}, Text: "except #random"}
	listed := []Item{{ID: "C01GEN", Name: "general"}, {ID: "C02RND", Name: "random"}, {ID: "C03DEV", Name: "dev"}}
	bash := &action.Action{Tool: "Bash", Kind: action.Send, Kinds: []action.Kind{action.Send}, Items: 1,
		Recipients: []action.Recipient{{Address: "#general", Field: "channel"}},
		Commands:   []action.Command{{Name: "curl", Argv: []string{"curl", "https://slack.example/api"}}}}
	for _, tc := range []struct {
		name  string
		c     ItemCondition
		a     *action.Action
		items []Item
		want  bool
	}{
		{"named #general", only, post([2]string{"#general", "channel"}), nil, true},
		{"named general, other case", only, post([2]string{"General", "channel"}), nil, true},
		{"an id listed as general", only, post([2]string{"C01GEN", "channel"}), listed, true},
		{"an id listed as random", only, post([2]string{"C02RND", "channel"}), listed, false},
		{"an id no listing named", only, post([2]string{"C09XYZ", "channel"}), listed, false},
		{"another channel by name", only, post([2]string{"#random", "channel"}), nil, false},
		{"a person, not a channel", only, post([2]string{"U123", "user"}), nil, false},
		{"a channel and a person", only, post([2]string{"#general", "channel"}, [2]string{"dana@x.example", "to"}), nil, false},
		{"no recipient", only, post(), nil, false},
		{"a command line", only, bash, nil, false},
		{"except: #dev by name", except, post([2]string{"#dev", "channel"}), nil, true},
		{"except: an id listed as dev", except, post([2]string{"C03DEV", "channel"}), listed, true},
		{"except: #random", except, post([2]string{"#random", "channel"}), nil, false},
		{"except: an id listed as random", except, post([2]string{"C02RND", "channel"}), listed, false},
		{"except: a bare id no listing named", except, post([2]string{"C09XYZ", "channel"}), listed, false},
	} {
		m := &Mandate{Allow: []action.Kind{action.Read}, Ask: []action.Kind{action.Send}, Conditions: []ItemCondition{tc.c}}
		if got := len(m.ConditionsMetItems(tc.a, tc.items, testNow)) > 0; got != tc.want {
			t.Errorf("%s: met %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMessageAgeFromListedDates: "delete the emails older than 30 days"
// holds on a delete of messages an earlier output listed with dates that
// old at the decision's time; a message no listing dated, or a find on
// files, is asked.
func TestMessageAgeFromListedDates(t *testing.T) {
	old, recent := testNow.Add(-40*24*time.Hour), testNow.Add(-10*24*time.Hour)
	c := ItemCondition{Kind: action.Delete, OlderThanDays: 30, Messages: true, Text: "older than 30 days"}
	del := func(n int) *action.Action {
		return &action.Action{Tool: "delete_email", Kind: action.Delete, Kinds: []action.Kind{action.Delete}, Family: "mail", Items: n}
	}
	find := &action.Action{Tool: "Bash", Kind: action.Delete, Kinds: []action.Kind{action.Delete}, Items: 1,
		Commands: []action.Command{{Name: "find", Argv: []string{"find", "/home/sam/Mail", "-mtime", "+30", "-delete"}}}}
	for _, tc := range []struct {
		name  string
		a     *action.Action
		items []Item
		now   time.Time
		want  bool
	}{
		{"listed 40 days ago", del(1), []Item{{ID: "m1", Date: old}}, testNow, true},
		{"listed 10 days ago", del(1), []Item{{ID: "m1", Date: recent}}, testNow, false},
		{"listed with a sender, no date", del(1), []Item{{ID: "m1", Senders: []string{"news@x.example"}}}, testNow, false},
		{"no listing", del(1), nil, testNow, false},
		{"two named, one dated old", del(2), []Item{{ID: "m1", Date: old}}, testNow, false},
		{"two named, both old", del(2), []Item{{ID: "m1", Date: old}, {ID: "m2", Date: old}}, testNow, true},
		{"one old, one recent", del(2), []Item{{ID: "m1", Date: old}, {ID: "m2", Date: recent}}, testNow, false},
		{"the time of the decision matters", del(1), []Item{{ID: "m1", Date: recent}}, testNow.Add(25 * 24 * time.Hour), true},
		{"no decision time", del(1), []Item{{ID: "m1", Date: old}}, time.Time{}, false},
		{"a find on files", find, []Item{{ID: "m1", Date: old}}, testNow, false},
	} {
		m := &Mandate{Allow: []action.Kind{action.Read}, Ask: []action.Kind{action.Delete}, Conditions: []ItemCondition{c}}
		if got := len(m.ConditionsMetItems(tc.a, tc.items, tc.now)) > 0; got != tc.want {
			t.Errorf("%s: met %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMessageAgeCompiles: an age said of messages of any sort is a
// condition on messages; said of files or everything, it stays on files;
// said of newsletters (more than the age), there is none.
func TestMessageAgeCompiles(t *testing.T) {
	for text, want := range map[string]string{
		"delete the emails older than 30 days":      "30 messages",
		"Lösche die Mails älter als 30 Tage":        "30 messages",
		"delete everything older than 30 days":      "30 files",
		"delete the newsletters older than 30 days": "",
	} {
		dr, err := Compile(text, WithNow(testNow))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, c := range dr.Mandate.Conditions {
			sort := "files"
			if c.Messages {
				sort = "messages"
			}
			got = strings.TrimSpace(got + " " + strconv.Itoa(c.OlderThanDays) + " " + sort)
		}
		if got != want {
			t.Errorf("%q: conditions %q, want %q", text, got, want)
		}
	}
}

// TestBadStoredChannelCondition: a stored mandate whose version 3
// condition no call could be checked against is a parse error naming the
// field, never a condition read as met.
func TestBadStoredChannelCondition(t *testing.T) {
	head := "allow: [read]\nask: [send, delete]\nconditions:\n"
	for _, tc := range []struct{ doc, want string }{
		{head + "  - {kind: send, channels: ['general chat'], text: 'only post in general chat'}", "conditions[0].channels[0]"},
		{head + "  - {kind: send, channels: ['#'], text: 'only post in #'}", "conditions[0].channels[0]"},
		{head + "  - {kind: send, not_channels: [''], text: except}", "conditions[0].not_channels[0]"},
		{head + "  - {kind: send, channels: ['#general'], older_than_days: 3, text: x}", "states channels and another attribute"},
		{head + "  - {kind: delete, messages: true, text: the emails}", "states no attribute"},
		{head + "  - {kind: delete, messages: true, names: ['*.eml'], older_than_days: 30, text: x}", "not a size, file name or channel"},
		{head + "  - {kind: send, channels: '#general', text: x}", "cannot unmarshal"},
	} {
		_, err := Parse([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one with %q", tc.doc, err, tc.want)
		}
	}
	good := head + "  - {kind: send, channels: ['#general'], text: 'only post in #general'}\n  - {kind: delete, messages: true, older_than_days: 30, text: older than 30 days}"
	if _, err := Parse([]byte(good)); err != nil {
		t.Errorf("a good version 3 condition: %v", err)
	}
}
