package engine

import (
	"slices"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// ownWords labels the instructions of a structured mandate with the source
// its principal's words carry. Only an admin may say who spoke; a user's
// or a hook's grant cannot pass its words off as another's — a hook's
// token is within the agent's reach, and "user" on words the agent wrote
// would be a forgery. The caller's mandate is not modified.
func ownWords(p auth.Principal, m *mandate.Mandate, source string) *mandate.Mandate {
	if m == nil || p.Role == auth.RoleAdmin || !slices.ContainsFunc(m.Instructions, func(i mandate.Instruction) bool { return i.Source != source }) {
		return m
	}
	cp := *m
	cp.Instructions = slices.Clone(m.Instructions)
	for i := range cp.Instructions {
		cp.Instructions[i].Source = source
	}
	return &cp
}
