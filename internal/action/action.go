// Package action classifies a tool call into what it really does: the kind of
// action (read, write, delete, send, pay, …), the resources it touches (paths,
// hosts, recipients, accounts, amounts, shell commands) and its effects.
//
// Classification is deterministic. Its sources, in order of trust, are the tool
// catalog (embedded YAML plus operator files), name/description/parameter
// heuristics for tools the catalog does not know, and MCP annotations as weak
// hints only. Shell commands are parsed with mvdan.cc/sh, never pattern-matched.
package action

import "slices"

// Kind is what a call does, as far as consequences go.
type Kind string

// The kinds of action. Their order in kindRank is how consequential they are;
// an Action's Kind is the most consequential of everything it does.
const (
	Read       Kind = "read"
	Fetch      Kind = "fetch"
	Write      Kind = "write"
	Execute    Kind = "execute"
	Delegate   Kind = "delegate"
	Credential Kind = "credential"
	Delete     Kind = "delete"
	Send       Kind = "send"
	Pay        Kind = "pay"
	Unknown    Kind = "unknown"
)

// Kinds lists every kind, least consequential first.
var allKinds = [...]Kind{Read, Fetch, Write, Execute, Delegate, Credential, Delete, Send, Pay, Unknown}

// AllKinds returns every kind, least consequential first.
func AllKinds() []Kind { return allKinds[:] }

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool { return slices.Contains(allKinds[:], k) }

// Rank orders kinds by how consequential they are; higher is more. Unknown
// ranks highest: what we cannot classify is treated as the worst case.
func (k Kind) Rank() int {
	if i := slices.Index(allKinds[:], k); i >= 0 {
		return i
	}
	return len(allKinds)
}

// MostConsequential returns the highest-ranked kind of ks, or Unknown if ks is
// empty.
func MostConsequential(ks ...Kind) Kind {
	if len(ks) == 0 {
		return Unknown
	}
	best := ks[0]
	for _, k := range ks[1:] {
		if k.Rank() > best.Rank() {
			best = k
		}
	}
	return best
}

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
	// examine: a walk or parser cut off at one of its limits (bounds.go),
	// a value only known when a command runs ($(…)), an analysis stopped
	// because the caller's request ended. The verdict cannot rest on what
	// was seen alone, so the built-in policy asks (builtin.unexamined).
	Unexamined []string `json:"unexamined"`
}

// PathRef is a file system path a call touches, normalised to an absolute,
// clean path where the working directory is known.
type PathRef struct {
	Path string `json:"path"`
	// Access is read, write, delete or execute.
	Access    Kind   `json:"access"`
	Sensitive bool   `json:"sensitive"`
	Why       string `json:"why,omitempty"` // why it is sensitive
}

// Recipient is a destination of a send: an e-mail address, a chat channel or
// user, a phone number.
type Recipient struct {
	Address string `json:"address"`
	// Field is where it came from: to, cc, bcc, channel, user, phone.
	Field string `json:"field"`
	// Name is the display name the call wrote beside the address ("Dana
	// Reyes" of "Dana Reyes <dana@corp.example>", or the "name" of a
	// recipient object {"email": …, "name": …}), as written; "" when it
	// wrote none. Whoever writes the call writes the name, so it is a
	// claim about whose the address is, never proof of it: the mandate
	// matches a person the user named against it only as a hint that
	// the address's provenance must confirm ("Dana <eve@evil.example>"
	// is not Dana on its own).
	Name string `json:"name,omitempty"`
}

// Amount is money with its currency (ISO 4217 code, upper case; "" if the
// call did not say).
type Amount struct {
	Value    float64 `json:"value"`
	Currency string  `json:"currency"`
}

// Command is one simple command from a parsed shell line.
type Command struct {
	Argv []string `json:"argv"`
	// Name is the program, without directory (argv[0] after wrappers).
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// ReadOnly is true only when the command is known to change nothing.
	ReadOnly    bool `json:"read_only"`
	Destructive bool `json:"destructive"`
	// Via names the wrappers or constructs it was found inside, e.g.
	// "sudo", "sh -c", "$(…)", "find -exec".
	Via  []string `json:"via,omitempty"`
	Note string   `json:"note,omitempty"`
	// RunsFetched is true when the program text this command runs (its
	// standard input, a -c string, eval's arguments, a script file) was
	// fetched from the network earlier in the same command line:
	// curl … | sh, bash -c "$(curl …)", source <(curl …),
	// curl -o x.sh … && sh x.sh. Code nobody has seen runs.
	RunsFetched bool `json:"runs_fetched"`
	// Hazard says why the command does more than its program's usual
	// work, or is "": it runs or loads code named on its command line
	// (go test -exec, LD_PRELOAD=…, git -c core.pager=…), changes the
	// user's global configuration (git config --global) or runs a
	// consequential target (make deploy). Such a command is never one of
	// the project's own build and test commands (builtin.dev-hazard).
	Hazard string `json:"hazard,omitempty"`
}

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
