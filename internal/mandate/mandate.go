// Package mandate holds the user's intent for a session: their verbatim words
// and the structured, versioned grant compiled from them — which kinds of
// action, which paths, hosts, recipients and accounts, what limits, what is
// explicitly prohibited.
//
// Agents never write a mandate; only a user or an operator creates or amends
// one, and every amendment is a new version. A child session's mandate is the
// intersection of what it asks for and its parent's: delegation can narrow a
// grant, never widen it.
package mandate

import (
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

// Mandate is one version of a session's grant. Policy rules see it as
// `mandate`, with the JSON field names below.
type Mandate struct {
	// Version counts from 1 within a session; 0 means not stored yet.
	Version int `json:"version" yaml:"version,omitempty"`
	// Instructions are the user's words, verbatim, oldest first.
	Instructions []Instruction `json:"instructions" yaml:"instructions"`
	// Allow lists the kinds of action the task needs.
	Allow []action.Kind `json:"allow" yaml:"allow"`
	// Deny lists kinds the user ruled out; they are denied even if allowed
	// elsewhere.
	Deny []action.Kind `json:"deny" yaml:"deny"`
	// Ask lists kinds the user asked for and restricted in a way no scope
	// entry can hold ("ask me before deleting anything big", "fix the
	// tests without touching the logic"): neither allowed nor denied, each
	// call of them is for a person to decide.
	Ask []action.Kind `json:"ask,omitempty" yaml:"ask,omitempty"`
	// Prohibitions are the user's explicit "don't"s with their words.
	Prohibitions []Prohibition `json:"prohibitions" yaml:"prohibitions,omitempty"`
	Scope        Scope         `json:"scope" yaml:"scope,omitempty"`
	// Conditions are the user's conditions on the items a kind in Ask may
	// act on ("only delete files older than a year"). A call shown to meet
	// every condition of its asked kinds is reported in
	// Report.ConditionsMet; any other call of those kinds is still asked.
	Conditions []ItemCondition `json:"conditions,omitempty" yaml:"conditions,omitempty"`
	Limits     Limits          `json:"limits" yaml:"limits,omitempty"`
	// ExpiresAt, when set, ends the grant: every call after it is denied.
	ExpiresAt *time.Time `json:"expires_at,omitempty" yaml:"expires_at,omitempty"`
	// Parent is the parent session id when this mandate was narrowed from
	// a parent's by delegation.
	Parent string `json:"parent,omitempty" yaml:"parent,omitempty"`
	// Notes explain, for a person, how this version was derived where that
	// is not evident from the fields, e.g. a parent's cap kept by Intersect
	// because the child asked for a different currency.
	Notes []string `json:"notes,omitempty" yaml:"notes,omitempty"`
}

// ItemCondition is a condition on the items one kind acts on. Version 1
// of conditions knew the items' age; version 2 added a newest age, size,
// file name, sender and label; version 3 (ConditionsVersion) adds the
// channel and messages' ages from their listed dates. A
// condition that states several attributes holds when every one holds;
// a kind with several conditions needs them all. A call meets a condition
// only when it shows every attribute for every item it acts on: where an
// attribute is unknown, the call is asked.
type ItemCondition struct {
	Kind action.Kind `json:"kind" yaml:"kind"`
	// OlderThanDays: every item was last modified more than this many
	// days ago. A call meets it when it shows so — `find … -mtime +N
	// -delete` with N at least this — and only then.
	OlderThanDays int `json:"older_than_days,omitempty" yaml:"older_than_days,omitempty"`
	// NewerThanDays: every item was last modified less than this many
	// days ago (`find … -mtime -N`, N at most this).
	NewerThanDays int `json:"newer_than_days,omitempty" yaml:"newer_than_days,omitempty"`
	// LargerThanBytes, SmallerThanBytes: every item is larger (smaller)
	// than this many bytes (`find … -size +10M`, `-size -1k`).
	LargerThanBytes  int64 `json:"larger_than_bytes,omitempty" yaml:"larger_than_bytes,omitempty"`
	SmallerThanBytes int64 `json:"smaller_than_bytes,omitempty" yaml:"smaller_than_bytes,omitempty"`
	// Names: every item's file name (its last path segment) matches one
	// of these globs ("*.tmp", "report-*.csv"). NotNames: none does,
	// compared case-insensitively ("keep the *.pdf files" spares X.PDF too).
	Names    []string `json:"names,omitempty" yaml:"names,omitempty"`
	NotNames []string `json:"not_names,omitempty" yaml:"not_names,omitempty"`
	// From: every item's sender, author or owner, as an earlier output of
	// the session listed it, has one of these words (case and accents
	// folded, whole words of its display name or address: "linkedin"
	// holds for "LinkedIn <news@linkedin.com>"). NotFrom: none has any.
	// A call meets them only when every item it names was listed with
	// its sender.
	From    []string `json:"from,omitempty" yaml:"from,omitempty"`
	NotFrom []string `json:"not_from,omitempty" yaml:"not_from,omitempty"`
	// Labels: every item is filed, as an earlier output of the session
	// listed it, under a label, folder or tag with one of these words
	// ("promotions" holds for "CATEGORY_PROMOTIONS" and "Promotions").
	// NotLabels: under none with any. Like From, met only by items
	// listed with their labels.
	Labels    []string `json:"labels,omitempty" yaml:"labels,omitempty"`
	NotLabels []string `json:"not_labels,omitempty" yaml:"not_labels,omitempty"`
	// Channels: every item is posted to (sent in) a channel named by one
	// of these ("#general"): "only post in #general". A call meets it when
	// every recipient it has is a channel, and each is named so on the
	// call ("#general", "general") or is the id an earlier output of the
	// session listed with that name ("C01GEN" listed as "general").
	// NotChannels: in none of these, each channel's name shown the same
	// way. A call with a recipient that is not a channel, or a channel
	// whose name nothing shows, does not meet either (version 3).
	Channels    []string `json:"channels,omitempty" yaml:"channels,omitempty"`
	NotChannels []string `json:"not_channels,omitempty" yaml:"not_channels,omitempty"`
	// Messages: the items are messages, not files ("delete the emails
	// older than 30 days"): an age is met only by a tool call naming
	// items an earlier output listed with a date (flow item_date_keys)
	// that is that old at the decision's time, never by a command line's
	// find (version 3).
	Messages bool `json:"messages,omitempty" yaml:"messages,omitempty"`
	// PreparesPayment: the item is the purchase or transfer the user
	// asked for, being prepared — a cart, a form, a quote, a payee. A call
	// meets it when it is a tool call (no command line) that writes,
	// deletes and runs no file and destroys nothing.
	PreparesPayment bool `json:"prepares_payment,omitempty" yaml:"prepares_payment,omitempty"`
	// Text is the user's words that said so.
	Text string `json:"text" yaml:"text"`
}

// ConditionsVersion is the version of the item conditions this package
// reads and checks (docs/mandate.md, "Conditions on items"): 1 had
// older_than_days and prepares_payment; 2 adds newer_than_days,
// larger_than_bytes, smaller_than_bytes, names, not_names, from,
// not_from, labels and not_labels; 3 adds channels, not_channels and
// messages (an age checked against a listed message's date). A mandate
// written for an earlier version reads the same.
const ConditionsVersion = 3

// Instruction is the user's (or operator's) text, verbatim, with its source.
type Instruction struct {
	Text string `json:"text" yaml:"text"`
	// Source is who said it: user, admin, hook (a user prompt relayed by an
	// agent hook), or file.
	Source string    `json:"source" yaml:"source"`
	At     time.Time `json:"at,omitzero" yaml:"at,omitempty"`
}

// Prohibition is something the user explicitly ruled out.
type Prohibition struct {
	// Kind is the prohibited kind; "" means any action touching Target.
	Kind action.Kind `json:"kind,omitempty" yaml:"kind,omitempty"`
	// Target narrows the prohibition to a resource pattern (path glob, host
	// pattern, recipient or account); "" means every resource.
	Target string `json:"target,omitempty" yaml:"target,omitempty"`
	// Text is the user's words that said so.
	Text string `json:"text" yaml:"text"`
}

// Scope names the resources the task may touch. Empty lists mean the user
// named none; what that implies is the policy's decision, not the scope's.
type Scope struct {
	// Paths are globs ("**" matches across directories); relative ones are
	// taken against the session's working directory.
	Paths []string `json:"paths" yaml:"paths,omitempty"`
	// Hosts are host names or patterns ("example.com", "*.example.com").
	Hosts []string `json:"hosts" yaml:"hosts,omitempty"`
	// Recipients are addresses or patterns ("bob@example.com",
	// "*@example.com", "#channel").
	Recipients []string `json:"recipients" yaml:"recipients,omitempty"`
	// Accounts are IBANs, account numbers or payee names.
	Accounts []string `json:"accounts" yaml:"accounts,omitempty"`
	// Names are people or organisations the user named without saying
	// whether they receive or get paid ("Stadtwerke München"). They match
	// recipients' display names and addresses and account names,
	// case-insensitively.
	Names []string `json:"names" yaml:"names,omitempty"`
	// None lists dimensions ("paths", "hosts", "recipients", "accounts",
	// "names") that match nothing at all. Intersect sets it when none of a
	// child's entries fit inside its parent's: an empty list would mean
	// "named none", which is wider than "nothing". For "paths" it also
	// takes the working directory out of scope.
	None []string `json:"none,omitempty" yaml:"none,omitempty"`
	// PathsOnly takes the working directory out of scope: only the paths
	// named are ("update README.md and touch nothing else"). Without it
	// the working directory is in scope beside the named paths.
	PathsOnly bool `json:"paths_only,omitempty" yaml:"paths_only,omitempty"`
}

// Limits cap what the session may do in total.
type Limits struct {
	// Spend caps money committed by the session; nil means no cap stated.
	Spend *Money `json:"spend,omitempty" yaml:"spend,omitempty"`
	// Counts caps the items acted on per kind: the files deleted, the
	// messages changed, the recipients sent to (action.Items).
	Counts map[action.Kind]int `json:"counts,omitempty" yaml:"counts,omitempty"`
}

// Money is an amount in a currency (ISO 4217 code, upper case).
type Money struct {
	Amount   float64 `json:"amount" yaml:"amount"`
	Currency string  `json:"currency" yaml:"currency"`
}

// Report is how an action's resources sit against a mandate's scope and
// prohibitions. Policy rules see it as `scope`. It is mechanical: each list
// holds the resources no scope entry matched; what that means is policy.
type Report struct {
	// PathsOutside are paths matched neither by Scope.Paths nor by the
	// working directory (which is in scope implicitly).
	PathsOutside []string `json:"paths_outside"`
	// SensitivePathsOutside are sensitive paths not matched by an explicit
	// Scope.Paths entry (the working directory does not count: a .env in the
	// project is still a secret).
	SensitivePathsOutside []string `json:"sensitive_paths_outside"`
	HostsOutside          []string `json:"hosts_outside"`
	RecipientsOutside     []string `json:"recipients_outside"`
	// RecipientsByName are the addresses of RecipientsOutside whose
	// display name on the call names a person the user named (scope
	// recipients or names: "Dana" for "Dana Reyes <dana@corp.example>"),
	// and whose local part reads as that name's holder's ("dana",
	// "d.reyes"; not "eve" for "Dana <eve@evil.example>").
	// The call writes the name, so it is no proof: such an address stays
	// outside the scope, and policy vouches for it only when the address
	// itself comes from the user's own data or words.
	RecipientsByName []string `json:"recipients_by_name"`
	AccountsOutside  []string `json:"accounts_outside"`
	// Prohibited lists the prohibitions this action falls under, by text.
	Prohibited []string `json:"prohibited"`
	// KindDenied is true when the action's kind (or any of its kinds) is in
	// Deny; KindAllowed when every kind it involves is in Allow.
	KindDenied  bool `json:"kind_denied"`
	KindAllowed bool `json:"kind_allowed"`
	// KindAsk is true when one of the action's kinds is in Ask and the
	// call does not meet the conditions stated for it.
	KindAsk bool `json:"kind_ask"`
	// ConditionsMet holds the texts of the item conditions this call is
	// shown to meet, when they cover every kind of it in Ask; else empty.
	ConditionsMet []string `json:"conditions_met"`
	// ScratchWrites are the paths the action writes that are scratch
	// space (scratch.yaml): a file a tool call creates in a temporary
	// directory, outside the working and home directories — never a
	// command line's writes, never an Edit in place.
	ScratchWrites []string `json:"scratch_writes"`
	// Expired is true when the mandate has expired.
	Expired bool `json:"expired"`
}
