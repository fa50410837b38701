package api

import "github.com/mandate-dev/mandate/internal/flow"

// SessionFlow is GET /v1/sessions/{id}/flow: the values the session has
// seen — in the user's words, the mandate, its calls and the outputs
// observed — each with its first source (origin, trust, tool, decision,
// observation), the injected spans and the sensitive reads. Secrets appear
// only as their redaction markers.
type SessionFlow = flow.Snapshot
