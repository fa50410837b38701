// Package api is Mandate's wire contract: every request and response body of
// the HTTP API under /v1, declared once and used by the server
// (internal/server), the Go client (package client) and the MCP gateway
// (internal/mcpgw). The OpenAPI document the server publishes at
// /v1/openapi.json is generated from these types and the server's route
// table, and every response a server test provokes is validated against it.
//
// Records that the server returns as they are stored — a session, a mandate,
// a classified action, a decision record, an observation, a token — are
// declared once, where they are made (internal/store, internal/mandate,
// internal/action), and named here by alias, so the document describes
// exactly what is served and a client can name every type it receives.
//
// # Compatibility
//
// JSON field names and shapes are the contract; Go names may change between
// releases. Clients must ignore fields they do not know: responses gain
// fields. Requests with fields the server does not know are refused.
//
// # Adding a route and its types
//
//  1. Declare the request and response bodies here, in the file for their
//     area (sessions.go, decisions.go, evidence.go, tokens.go, tools.go, or a
//     new file for a new area), with json tags. A field without omitempty is
//     always present in the encoding and is documented as required. Doc
//     comments on types and fields become the document's descriptions.
//     Never answer with a map[string]any: the document cannot describe it.
//  2. Register the handler in internal/server with s.handle(op, handler),
//     where op (an openapi.Operation) names the method and path, a summary,
//     the roles allowed, the query parameters, the request type and the
//     response type per status (see routes.go there).
//  3. Write the handler to decode into the request type (s.decode) and
//     answer with the response type (writeJSON); errors with s.fail.
//  4. Run `go generate ./internal/server` to regenerate openapi.json, and
//     commit it. TestOpenAPIDocument fails while the committed document
//     differs from what the types and the route table generate.
//  5. Exercise the route in a server test: the test server validates every
//     response against the document (status, content type and body), so a
//     handler that answers with something else fails the test.
//  6. Add a method to package client if Go harnesses need the route.
//
// If the generator meets a type it cannot describe (a channel, a map with
// non-string keys) or two types with one name, it fails and says which: give
// the type a component name in the server's schema names, or change it.
package api
