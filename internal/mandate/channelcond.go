// Channel conditions and the ages of listed messages: "only post in
// #general" holds on a post whose every recipient is the channel
// #general, named so on the call or listed so by an earlier output; "delete
// the emails older than 30 days" on a delete of messages a search listed
// with dates that old.

package mandate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/fold"
)

// channelled reports whether the condition states the channels its items
// are posted in.
func (c ItemCondition) channelled() bool {
	return len(c.Channels)+len(c.NotChannels) > 0
}

// channelAttributes counts the channel attributes the condition states.
func channelAttributes(c ItemCondition) int {
	n := 0
	if len(c.Channels) > 0 {
		n++
	}
	if len(c.NotChannels) > 0 {
		n++
	}
	return n
}

// meetsChannels: the action is a tool call whose every recipient is a
// channel (a post, a reply in a thread), and each channel's name is
// shown — "#general" or "general" on the call, or an id an earlier
// output listed with its name — to be one of Channels (when it states
// any) and none of NotChannels. A bare value no listing named could be
// any channel's id: it meets Channels only by being the name itself, and
// NotChannels never.
func meetsChannels(a *action.Action, c ItemCondition, items []Item) bool {
	if len(a.Commands) > 0 || len(a.Recipients) == 0 {
		return false
	}
	for _, rc := range a.Recipients {
		if rc.Field != "channel" {
			return false // a person, an address: no channel shows where it goes
		}
		addr := rc.Address
		name, shown := channelName(addr, items)
		if len(c.Channels) > 0 && !containsChannel(c.Channels, name) {
			return false
		}
		if len(c.NotChannels) > 0 && (!shown || containsChannel(c.NotChannels, name)) {
			return false
		}
	}
	return true
}

// channelName is the folded name of the channel a call names by addr,
// without its "#": the name an earlier output listed the id with, or the
// address itself. shown reports whether it is a name for certain (listed,
// or written with "#"), not an id that might be any channel's.
func channelName(addr string, items []Item) (name string, shown bool) {
	addr = strings.TrimSpace(addr)
	for _, it := range items {
		if it.ID == addr && strings.TrimSpace(it.Name) != "" {
			return foldChannel(it.Name), true
		}
	}
	return foldChannel(addr), strings.HasPrefix(addr, "#")
}

// foldChannel folds a channel's name for comparing: case, accents and a
// leading "#" do not count.
func foldChannel(s string) string {
	return strings.TrimPrefix(fold.String(strings.TrimSpace(s)), "#")
}

// containsChannel reports whether list names the channel name (folded).
func containsChannel(list []string, name string) bool {
	for _, ch := range list {
		if foldChannel(ch) == name && name != "" {
			return true
		}
	}
	return false
}

// dateMeets reports whether a message listed with date is, at now, older
// (newer) than the condition's days. A message no listing dated meets no
// age.
func dateMeets(date time.Time, c ItemCondition, now time.Time) bool {
	if date.IsZero() || now.IsZero() {
		return false
	}
	age := now.Sub(date)
	day := 24 * time.Hour
	if c.OlderThanDays > 0 && age <= time.Duration(c.OlderThanDays)*day {
		return false
	}
	if c.NewerThanDays > 0 && (age < 0 || age >= time.Duration(c.NewerThanDays)*day) {
		return false
	}
	return true
}

// validateChannels checks a condition's channels (version 3): each a
// channel's name ("#general", "general": no spaces, commas or control
// characters), stated alone — no call shows a post's channel and its
// file's age — and messages only beside an age, a sender or a label.
func validateChannels(c ItemCondition, f string, bad func(field, format string, args ...any)) {
	for _, l := range []struct {
		field string
		list  []string
	}{{"channels", c.Channels}, {"not_channels", c.NotChannels}} {
		for i, ch := range l.list {
			if ch == "\x00" {
				continue // two conditions named no channel in common: none holds (bothHold)
			}
			if n := strings.TrimPrefix(strings.TrimSpace(ch), "#"); n == "" || strings.ContainsAny(n, " ,#\t\n") || hasControl(n) {
				bad(fmt.Sprintf("%s.%s[%d]", f, l.field, i), "%q: a channel's name such as \"#general\"", ch)
			}
		}
	}
	if c.channelled() && c.attributes() > channelAttributes(c) {
		bad(f, "states channels and another attribute of the items; a channel condition states channels alone")
	}
	if c.Messages && (c.channelled() || c.LargerThanBytes > 0 || c.SmallerThanBytes > 0 || len(c.Names)+len(c.NotNames) > 0) {
		bad(f, "messages: a message's listing shows its age, sender and labels, not a size, file name or channel")
	}
}

// describeMore says the version 3 attributes in words, for describe.
func (c ItemCondition) describeMore() []string {
	var parts []string
	if len(c.Channels) > 0 {
		parts = append(parts, "posted in the channel "+strings.Join(c.Channels, " or "))
	}
	if len(c.NotChannels) > 0 {
		parts = append(parts, "posted in a channel whose name is shown and is not "+strings.Join(c.NotChannels, " or "))
	}
	if c.Messages {
		parts = append(parts, "messages an earlier output listed with their dates")
	}
	return parts
}

// onlyChannels reads the channels an "only" before a sending verb
// restricts it to ("only post in #general", "nur im Kanal #team posten",
// "solo nel canale #dev"): the words after the "only" in its clause are
// the verb, channels, channel words (channel_words) and function words
// only, and name at least one channel.
func (b *build) onlyChannels(st *segState, q qualifier, a *anchor, to int) ([]string, bool) {
	if !slices.Contains(a.kinds, action.Send) {
		return nil, false
	}
	var chs []string
	for j := q.to; j < to; j++ {
		if j >= a.pos && j < a.end {
			continue // the verb
		}
		t := st.toks[j]
		switch {
		case t.kind == tokEntity && b.ents[t.ent].kind == entChannel:
			chs = append(chs, b.ents[t.ent].value)
		case t.kind != tokWord || st.consumed[j] && !b.is(t, roleChannelWord):
			return nil, false
		case b.is(t, roleChannelWord) || b.fillerAt(st, j) > 0:
		default:
			return nil, false
		}
	}
	return chs, len(chs) > 0
}

// messagesAged reports whether an age condition is said of messages of
// any sort ("delete the emails older than 30 days", "lösche die Mails
// älter als 30 Tage"): the verb's object, before the age, is words for
// messages and function words only. It marks the condition as on
// messages, whose ages only their listed dates show.
func (b *build) messagesAged(st *segState, q *qualifier, a *anchor) bool {
	c := q.cond
	ages := 0
	for _, set := range []bool{c.OlderThanDays > 0, c.NewerThanDays > 0} {
		if set {
			ages++
		}
	}
	if ages == 0 || c.attributes() != ages {
		return false
	}
	var ok bool
	if slices.Contains(st.anchors, a) {
		ok = !a.passive && a.pos < q.from && b.anyMessagesBetween(st, a.end, q.from)
	} else {
		ok = (a.anyObject || a.anyMessages) && b.anyMessagesBetween(st, 0, q.from)
	}
	q.cond.Messages = ok
	return ok
}
