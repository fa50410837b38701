// Package action classifies a tool call into what it really does: the kind of
// action (read, write, delete, send, pay, …), the resources it touches (paths,
// hosts, recipients, accounts, amounts, shell commands) and its effects.
//
// Classification is deterministic. Its sources, in order of trust, are the tool
// catalog (embedded YAML plus operator files), name/description/parameter
// heuristics for tools the catalog does not know, and MCP annotations as weak
// hints only. Shell commands are parsed with mvdan.cc/sh, never pattern-matched.
package action

import "github.com/mandate-dev/mandate/internal/act"

// Kind is what a call does, as far as consequences go (package act, which
// the shell analysis shares).
type Kind = act.Kind

// The kinds of action, least consequential first; an Action's Kind is the
// most consequential of everything it does.
const (
	Read       = act.Read
	Fetch      = act.Fetch
	Write      = act.Write
	Execute    = act.Execute
	Delegate   = act.Delegate
	Credential = act.Credential
	Delete     = act.Delete
	Send       = act.Send
	Pay        = act.Pay
	Unknown    = act.Unknown
)

// AllKinds returns every kind, least consequential first.
func AllKinds() []Kind { return act.AllKinds() }

// MostConsequential returns the highest-ranked kind of ks, or Unknown if ks is
// empty.
func MostConsequential(ks ...Kind) Kind { return act.MostConsequential(ks...) }

// Call is one tool invocation as an agent asked for it.
type Call struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
	// WorkingDir is the session's working directory; relative paths are
	// resolved against it. Empty means unknown.
	WorkingDir string `json:"working_directory,omitempty"`
	// HomeDir resolves "~". Empty means unknown; "~" then stays symbolic as
	// "~/…" so sensitivity rules still see ".ssh" and the like.
	HomeDir string `json:"home_directory,omitempty"`
	// Tools is the agent's own tool list (MCP tools/list style), used to
	// classify tools the catalog does not know.
	Tools []ToolDef `json:"-"`
}

// ToolDef describes a tool as MCP tools/list does.
type ToolDef struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema,omitempty"`
	// OutputSchema is the schema of the tool's structured result, if any.
	OutputSchema any          `json:"outputSchema,omitempty"`
	Annotations  *Annotations `json:"annotations,omitempty"`
}

// Annotations are MCP tool annotations. They are the server's claims, not
// facts: the classifier treats them as weak hints.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Action is what a call really does. Policy rules see it as `action`, with the
// JSON field names below.
type Action struct {
	Tool string `json:"tool"`
	// Kind is the most consequential kind among Kinds.
	Kind  Kind   `json:"kind"`
	Kinds []Kind `json:"kinds"`
	// Known is true when the tool matched the catalog.
	Known bool `json:"known"`
	// Source says what the classification rests on: "catalog", "heuristic",
	// "annotation" or "none".
	Source string `json:"source"`
	// Family is the tool family from the catalog or heuristics (email, chat,
	// calendar, files, web, payments, shopping, code, cloud, database, shell,
	// agent), or "".
	Family string `json:"family,omitempty"`
	// Trust is the catalog's trust for the tool's output (own, open or
	// user), or "" when the catalog does not say; flow decides then by
	// family and annotations.
	Trust string `json:"trust,omitempty"`

	Paths      []PathRef   `json:"paths"`
	URLs       []string    `json:"urls"`
	Hosts      []string    `json:"hosts"`
	Recipients []Recipient `json:"recipients"`
	Accounts   []string    `json:"accounts"`
	Amounts    []Amount    `json:"amounts"`
	Commands   []Command   `json:"commands"`
	// Items is how many items the call acts on, where the call shows it:
	// the files it names to write or delete, the messages or records its
	// arguments list, the recipients of a send; 1 for a tool call that
	// names none. 0 means the call does not show it (a glob, a recursive
	// delete, find, names read from its input): count caps ask.
	Items int `json:"items"`

	Effects Effects `json:"effects"`
	// Sensitive is true when the call touches secrets or credentials: a
	// sensitive path, or a credential-looking argument value.
	Sensitive bool `json:"sensitive"`
	// Destructive is true for irreversible destruction (rm -rf, DROP TABLE,
	// force push, kubectl delete, deleting mail…).
	Destructive bool `json:"destructive"`
	// Notes explain the classification to a person, one fact each.
	Notes []string `json:"notes"`
	// Unexamined says, one reason each, what classification did not
	// examine: a walk or parser cut off at one of its limits (act/limits.go),
	// a value only known when a command runs ($(…)), an analysis stopped
	// because the caller's request ended. The verdict cannot rest on what
	// was seen alone, so the built-in policy asks (builtin.unexamined).
	Unexamined []string `json:"unexamined"`
}

// PathRef is act.PathRef.
type PathRef = act.PathRef

// Recipient is act.Recipient.
type Recipient = act.Recipient

// Amount is money with its currency (ISO 4217 code, upper case; "" if the
// call did not say).
type Amount struct {
	Value    float64 `json:"value"`
	Currency string  `json:"currency"`
}

// Command is act.Command.
type Command = act.Command

// Effects are consequences that policy commonly cares about.
type Effects struct {
	External     bool `json:"external"`     // leaves the machine / reaches other people
	Irreversible bool `json:"irreversible"` // cannot be undone
	Financial    bool `json:"financial"`    // moves or commits money
	// Public is true when the call opens something to anyone at all: a
	// share link for anyone, a public-read ACL, a firewall rule or
	// security group open to the whole internet (0.0.0.0/0).
	Public bool `json:"public"`
	// Recurring is true when a payment commits to repeating charges (a
	// subscription, a standing order, "subscribe and save") rather than
	// one charge.
	Recurring bool `json:"recurring"`
	// AdminGrant is true when the call gives someone administrator-level
	// access: Kubernetes cluster-admin, AWS AdministratorAccess, Google
	// Cloud roles/owner or roles/editor, Azure Owner.
	AdminGrant bool `json:"admin_grant"`
}
