package flow

import (
	"slices"

	"github.com/mandate-dev/mandate/internal/action"
)

// TrustOf says how far the output of a classified call can be taken at
// its word, in this order: the catalog's trust for the tool (operators set
// it per tool, `trust:` in a catalog entry); open when the call fetches
// from the network, whatever its family; the family's default
// (values.yaml, family_trust: received mail is open even when a mail
// server's tools say openWorldHint false); then the MCP openWorldHint,
// which like every annotation can only raise concern: true makes an
// output open, false makes it own only for a tool the catalog knows;
// open. The label is a fact for policy, not a verdict: injected
// instructions are looked for in every output whatever its trust.
func (s *Scanner) TrustOf(a *action.Action, ann *action.Annotations) Trust {
	if a == nil {
		return TrustOpen
	}
	switch Trust(a.Trust) {
	case TrustOwn, TrustOpen, TrustUser:
		return Trust(a.Trust)
	}
	if a.Kind == action.Fetch || slices.Contains(a.Kinds, action.Fetch) {
		return TrustOpen
	}
	if t, ok := s.voc.familyTrust[a.Family]; ok {
		if ann != nil && ann.OpenWorldHint != nil && *ann.OpenWorldHint {
			return TrustOpen
		}
		return t
	}
	if ann != nil && ann.OpenWorldHint != nil && !*ann.OpenWorldHint && a.Known {
		return TrustOwn
	}
	return TrustOpen
}
