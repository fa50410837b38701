package server

import (
	_ "embed"
	"net/http"
	"reflect"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/hook"
	"github.com/mandate-dev/mandate/internal/openapi"
	"github.com/mandate-dev/mandate/internal/store"
)

//go:generate go run ./gendoc

// openAPIDoc is the document generated from the routes and package api
// (go generate); TestOpenAPIDocument fails when it is stale.
//
//go:embed openapi.json
var openAPIDoc []byte

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDoc)
}

// Spec is what the document says beside its routes. docs supplies
// descriptions from the source's doc comments (nil: none).
func Spec(docs *openapi.Docs) openapi.Spec {
	kinds := []string{}
	for _, k := range action.AllKinds() {
		kinds = append(kinds, string(k))
	}
	return openapi.Spec{
		Title:   "Mandate API",
		Version: "1",
		Description: "Decide whether an AI agent's tool call should happen for the user's task. " +
			"All /v1 routes need 'Authorization: Bearer <token>'. Roles: agent (evaluate and observe in its own agent's sessions), " +
			"hook (evaluate, observe, session lifecycle, the user's prompts as mandate versions), user (create sessions and mandates, read, answer approvals), " +
			"approver (read and answer approvals, nothing else), admin (everything). " +
			"Request bodies are JSON; unknown fields are refused. Responses may gain fields: ignore those you do not know. " +
			`Errors are {"error":{"code","message"}}; a failed /v1/evaluate also says effect deny: the call is refused. ` +
			"This document is generated from the Go types of package github.com/mandate-dev/mandate/api.",
		Servers: []string{"http://127.0.0.1:7410"},
		Error:   api.Error{},
		Names: map[reflect.Type]string{
			reflect.TypeFor[store.Decision]():     "DecisionRecord",
			reflect.TypeFor[action.Annotations](): "ToolAnnotations",
			reflect.TypeFor[hook.Event]():         "ClaudeCodeEvent",
			reflect.TypeFor[hook.Output]():        "ClaudeCodeAnswer",
			reflect.TypeFor[hook.EventOutput]():   "ClaudeCodeEventAnswer",
		},
		Enums: map[reflect.Type][]string{
			reflect.TypeFor[action.Kind](): kinds,
			reflect.TypeFor[api.Effect]():  {string(api.Allow), string(api.Deny), string(api.Ask)},
		},
		Docs: docs,
	}
}

// Operations are the API's routes as the document describes them.
func Operations() []openapi.Operation {
	s := &Server{mux: http.NewServeMux()}
	s.routes(nil, nil)
	return s.ops
}

// OpenAPI generates the document (what go generate writes to openapi.json).
func OpenAPI(docs *openapi.Docs) ([]byte, error) {
	d, err := openapi.Build(Spec(docs), Operations())
	if err != nil {
		return nil, err
	}
	return d.JSON()
}
