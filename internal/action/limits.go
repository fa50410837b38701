package action

import "github.com/mandate-dev/mandate/internal/act"

// The limits on the work one call's classification may do (package act
// declares them, for the classifier and the shell analysis alike;
// docs/catalog.md lists them).
const (
	MaxShellNesting  = act.MaxShellNesting
	MaxShellTokens   = act.MaxShellTokens
	MaxShellWork     = act.MaxShellWork
	MaxShellCommands = act.MaxShellCommands
	MaxShellDepth    = act.MaxShellDepth
	MaxArgDepth      = act.MaxArgDepth
	MaxArgNodes      = act.MaxArgNodes
	MaxScanPerString = act.MaxScanPerString
	MaxScanTotal     = act.MaxScanTotal
	MaxRecipients    = act.MaxRecipients
	MaxURLsPerString = act.MaxURLsPerString
	MaxSQLWords      = act.MaxSQLWords
	MaxCodeMatches   = act.MaxCodeMatches
)
