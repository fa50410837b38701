// Package policies embeds Mandate's built-in policy pack (builtin/) and tool
// catalog (catalog/), so the single binary works with no files beside it.
// Operators add their own with --policy and --catalog; these are the defaults.
package policies

import "embed"

// FS holds builtin/ and catalog/ as shipped.
//
//go:embed builtin catalog
var FS embed.FS
