package flow

import (
	"path"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// Retry is an earlier refused call whose resource this call reaches again
// by other means: `rm -rf build/` denied, then `mv build /tmp/trash`; a
// send denied, then the same recipient through another tool.
type Retry struct {
	// Resource is what both calls reach (a path, recipient, account or
	// host), as the earlier call named it.
	Resource   string `json:"resource"`
	DecisionID string `json:"decision_id"`
	Tool       string `json:"tool"`
	// Reason says it for a person: "build was to be deleted by Bash,
	// which was denied (decision 01a2…)".
	Reason string `json:"reason"`
}

// Target is a resource a consequential call acts on.
type Target struct {
	// Role is path, recipient, account or host.
	Role  string
	Value string
	// Access is, for a path, what the call does to it (write, delete,
	// execute).
	Access string
}

// Targets are the resources an action changes or sends to: paths it
// writes, deletes or runs, its recipients and accounts, and the hosts of
// a send or payment. Paths it only reads are not targets.
func Targets(a *action.Action) []Target {
	if a == nil {
		return nil
	}
	// Counted first, so that the list is one allocation (none for a
	// call without targets): it is made for every decided call.
	n := len(a.Recipients) + len(a.Accounts)
	for _, p := range a.Paths {
		if p.Access != action.Read && p.Path != "" {
			n++
		}
	}
	sends := sendsOrPays(a)
	if sends {
		n += len(a.Hosts)
	}
	if n == 0 {
		return nil
	}
	out := make([]Target, 0, n)
	for _, p := range a.Paths {
		if p.Access == action.Read || p.Path == "" {
			continue
		}
		out = append(out, Target{Role: "path", Value: p.Path, Access: string(p.Access)})
	}
	for _, r := range a.Recipients {
		out = append(out, Target{Role: "recipient", Value: r.Address})
	}
	for _, acc := range a.Accounts {
		out = append(out, Target{Role: "account", Value: acc})
	}
	if sends {
		for _, h := range a.Hosts {
			out = append(out, Target{Role: "host", Value: h})
		}
	}
	if len(out) > maxTargets {
		out = out[:maxTargets]
	}
	return out
}

// maxTargets bounds what one call contributes to the refusals kept.
const maxTargets = 16

// maxRefusals bounds the refused targets a table keeps (oldest dropped).
const maxRefusals = 256

// refusal is a target of a refused call.
type refusal struct {
	role, norm, display string
	decision, tool      string
	access              string
}

// NormTarget is a target's value as the table keys it: a clean path, a
// normalised address, account or host ("" when it has none).
func NormTarget(t Target) string { return normTarget(t) }

func normTarget(t Target) string {
	switch t.Role {
	case "path":
		return path.Clean(t.Value)
	case "recipient":
		return string(keyOf(recipientClass(t.Value), t.Value))
	case "account":
		return string(keyOf(Account, t.Value))
	case "host":
		return normHost(t.Value)
	}
	return ""
}

// refused records the targets of a denied call.
func (t *Table) refused(info DecisionInfo) {
	for _, tg := range info.Targets {
		n := normTarget(tg)
		if n == "" || n == "." || n == "/" {
			continue
		}
		t.refusals = append(t.refusals, refusal{role: tg.Role, norm: n, display: clip(tg.Value, maxValueLen), decision: info.ID, tool: info.Tool, access: tg.Access})
	}
	if n := len(t.refusals) - maxRefusals; n > 0 {
		t.refusals = append(t.refusals[:0], t.refusals[n:]...)
	}
}

// retries finds the earlier refusals the call's targets reach again.
func (t *Table) retries(a *action.Action) []Retry {
	if len(t.refusals) == 0 {
		return []Retry{}
	}
	out := []Retry{}
	for _, tg := range Targets(a) {
		n := normTarget(tg)
		if n == "" {
			continue
		}
		for i := len(t.refusals) - 1; i >= 0; i-- {
			r := t.refusals[i]
			if r.role != tg.Role || !reaches(r, tg, n, a.Tool) {
				continue
			}
			if len(out) < 8 && !containsRetry(out, r.decision, r.display) {
				out = append(out, Retry{Resource: r.display, DecisionID: r.decision, Tool: r.tool, Reason: retryReason(r)})
			}
			break
		}
	}
	return out
}

func containsRetry(rs []Retry, decision, res string) bool {
	for _, r := range rs {
		if r.DecisionID == decision && r.Resource == res {
			return true
		}
	}
	return false
}

// reaches says whether a call's target (normalised n) reaches what a
// refused call targeted. A path is reached when the call deletes (or
// moves away) the refused path or a directory holding it — `mv build
// /tmp/trash`, `find build -delete`, `git clean` in the project — or
// overwrites the very file a refused delete named (`> file`); working on
// a file inside a refused directory is not a retry (fixing one file after
// `rm -rf` of the tree was refused). A recipient, account or host is
// reached only through another tool: the same tool with other arguments
// is the agent correcting its call, not going around the refusal.
func reaches(r refusal, tg Target, n, tool string) bool {
	if r.role != "path" {
		return r.norm == n && !strings.EqualFold(r.tool, tool)
	}
	switch tg.Access {
	case "delete":
		return r.norm == n || strings.HasPrefix(r.norm, n+"/")
	case "write":
		return r.access == "delete" && r.norm == n
	}
	return false
}

func retryReason(r refusal) string {
	var what string
	switch {
	case r.role == "path" && r.access != "":
		what = r.display + " was to be " + pastTense(r.access) + " by " + r.tool
	case r.role == "recipient":
		what = "a send to " + r.display + " by " + r.tool
	case r.role == "account":
		what = "a payment to " + r.display + " by " + r.tool
	default:
		what = r.display + " was reached by " + r.tool
	}
	return what + ", which was denied" + decisionRef(r.decision)
}

func pastTense(access string) string {
	switch access {
	case "write":
		return "written"
	case "delete":
		return "deleted"
	case "execute":
		return "run"
	}
	return access
}

// NoFacts are the facts of a session that has seen nothing: what policy
// sees where no flow table is kept (`mandate check`, policy fixtures).
func NoFacts() *Facts {
	return &Facts{
		Values: []ValueFacts{}, FollowsInjection: []string{}, UnnamedObjects: []string{}, Carries: []string{}, Injections: []InjectionRecord{}, Items: []ItemFacts{}, Containers: []ContainerFacts{},
		SensitiveRead: []SensitiveRead{}, OpenBody: []string{}, Retries: []Retry{}, Related: true,
		UserCounts: []UserCount{}, Quantities: []QuantityFacts{},
	}
}
