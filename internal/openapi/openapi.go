// Package openapi builds an OpenAPI 3.1 document from Go types and a table
// of operations, and validates responses against it. The server declares its
// routes as Operations whose request and response bodies are Go values (the
// types of package api); the document's schemas are derived from those types
// by reflection, following encoding/json's rules, with descriptions taken
// from the types' doc comments when the source is at hand. Nothing in the
// document is written by hand, so it cannot drift from what is served.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Operation is one route: a method and a path pattern as net/http's
// ServeMux takes them ("GET /v1/sessions/{id}"), what it does, who may call
// it, and the Go types of its bodies.
type Operation struct {
	Method string
	// Path is the ServeMux pattern's path; {name} segments are path
	// parameters (strings unless Params says otherwise).
	Path        string
	Summary     string
	Description string
	// Roles may call the route; nil means no token is needed.
	Roles []string
	// Params are the query parameters (and path parameters that are not
	// plain strings).
	Params []Param
	// Request is a value of the request body's type (api.EvaluateRequest{}),
	// or nil for none.
	Request any
	// Responses are the successful answers.
	Responses []Response
	// Errors are the error statuses the route answers with; their body is
	// Spec.Error.
	Errors []int
}

// Param is a query or path parameter.
type Param struct {
	Name string
	// In is "query" (default) or "path".
	In string
	// Type is "string" (default), "integer" or "boolean".
	Type        string
	Description string
	Required    bool
	Enum        []string
}

// Response is one status an operation answers with.
type Response struct {
	Status      int
	Description string
	// Body is a value of the body's type, or nil for no body (or a body
	// that is not JSON: then ContentType says what it is).
	Body any
	// ContentType defaults to application/json when Body is set.
	ContentType string
}

// Spec is what the document says beside its operations, and how types are
// named and described.
type Spec struct {
	Title, Version, Description string
	Servers                     []string
	// Error is a value of the error bodies' type.
	Error any
	// Names give component names to types whose Go names collide (two
	// types named Decision) or mislead.
	Names map[reflect.Type]string
	// Enums list the values of named string types (action.Kind).
	Enums map[reflect.Type][]string
	// Docs supplies descriptions from doc comments; nil for none.
	Docs *Docs
}

// Document is a built OpenAPI document.
type Document struct {
	OpenAPI    string                          `json:"openapi"`
	Info       info                            `json:"info"`
	Servers    []server                        `json:"servers,omitempty"`
	Security   []map[string][]string           `json:"security"`
	Paths      map[string]map[string]*pathItem `json:"paths"`
	Components components                      `json:"components"`

	// for validation: method+" "+path → status → content type ("" for
	// none) → schema (nil for a body that is not JSON)
	bodies map[string]map[int]map[string]*jsonschema.Schema
	comps  map[string]*jsonschema.Schema
}

type info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

type server struct {
	URL string `json:"url"`
}

type pathItem struct {
	Summary     string                 `json:"summary,omitempty"`
	Description string                 `json:"description,omitempty"`
	OperationID string                 `json:"operationId"`
	Security    *[]map[string][]string `json:"security,omitempty"`
	Roles       []string               `json:"x-mandate-roles,omitempty"`
	Parameters  []parameter            `json:"parameters,omitempty"`
	RequestBody *requestBody           `json:"requestBody,omitempty"`
	Responses   map[string]*response   `json:"responses"`
}

type parameter struct {
	Name        string             `json:"name"`
	In          string             `json:"in"`
	Description string             `json:"description,omitempty"`
	Required    bool               `json:"required,omitempty"`
	Schema      *jsonschema.Schema `json:"schema"`
}

type requestBody struct {
	Required bool                  `json:"required"`
	Content  map[string]*mediaType `json:"content"`
}

type response struct {
	Ref         string                `json:"$ref,omitempty"`
	Description string                `json:"description,omitempty"`
	Content     map[string]*mediaType `json:"content,omitempty"`
}

type mediaType struct {
	Schema *jsonschema.Schema `json:"schema,omitempty"`
}

type components struct {
	SecuritySchemes map[string]any                `json:"securitySchemes"`
	Responses       map[string]*response          `json:"responses,omitempty"`
	Schemas         map[string]*jsonschema.Schema `json:"schemas"`
}

// RefPrefix is where component schemas live in the document.
const RefPrefix = "#/components/schemas/"

var pathParam = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}`)

// Build makes the document for ops.
func Build(spec Spec, ops []Operation) (*Document, error) {
	return build(spec, ops, RefPrefix, false)
}

func build(spec Spec, ops []Operation, prefix string, closed bool) (*Document, error) {
	g := newGenerator(&spec, prefix, closed)
	d := &Document{
		OpenAPI:  "3.1.0",
		Info:     info{Title: spec.Title, Version: spec.Version, Description: spec.Description},
		Security: []map[string][]string{{"bearer": {}}},
		Paths:    map[string]map[string]*pathItem{},
		bodies:   map[string]map[int]map[string]*jsonschema.Schema{},
	}
	for _, s := range spec.Servers {
		d.Servers = append(d.Servers, server{URL: s})
	}
	seen := map[string]bool{}
	for _, op := range ops {
		key := op.Method + " " + op.Path
		if seen[key] {
			return nil, fmt.Errorf("openapi: %s is declared twice", key)
		}
		seen[key] = true
		item, err := g.operation(op)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", key, err)
		}
		if d.Paths[op.Path] == nil {
			d.Paths[op.Path] = map[string]*pathItem{}
		}
		d.Paths[op.Path][strings.ToLower(op.Method)] = item
		bodies := map[int]map[string]*jsonschema.Schema{}
		add := func(status int, ct string, s *jsonschema.Schema) {
			if bodies[status] == nil {
				bodies[status] = map[string]*jsonschema.Schema{}
			}
			bodies[status][ct] = s
		}
		for _, r := range op.Responses {
			ct, s, err := g.body(r)
			if err != nil {
				return nil, fmt.Errorf("openapi: %s: %d: %w", key, r.Status, err)
			}
			add(r.Status, ct, s)
		}
		for _, st := range op.Errors {
			s, err := g.schema(reflect.TypeOf(spec.Error))
			if err != nil {
				return nil, fmt.Errorf("openapi: error body: %w", err)
			}
			add(st, "application/json", s)
		}
		d.bodies[key] = bodies
	}
	if err := g.finish(); err != nil {
		return nil, err
	}
	d.comps = g.comps
	d.Components = components{
		SecuritySchemes: map[string]any{"bearer": map[string]string{"type": "http", "scheme": "bearer", "description": "a Mandate token (mandate token create)"}},
		Responses:       g.responses,
		Schemas:         g.comps,
	}
	return d, nil
}

// JSON renders the document, indented, keys in a stable order.
func (d *Document) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("openapi: encode: %w", err)
	}
	return buf.Bytes(), nil
}

func (g *generator) operation(op Operation) (*pathItem, error) {
	if op.Method == "" || !strings.HasPrefix(op.Path, "/") {
		return nil, fmt.Errorf("method and a path starting with / are required")
	}
	item := &pathItem{
		Summary: op.Summary, Description: op.Description, Roles: op.Roles,
		OperationID: operationID(op), Responses: map[string]*response{},
	}
	if op.Roles == nil {
		item.Security = &[]map[string][]string{}
	} else if len(op.Roles) > 0 {
		roles := "Roles: " + strings.Join(op.Roles, ", ") + "."
		if item.Description == "" {
			item.Description = roles
		} else {
			item.Description += " " + roles
		}
	}
	declared := map[string]Param{}
	for _, p := range op.Params {
		declared[p.Name] = p
	}
	for _, m := range pathParam.FindAllStringSubmatch(op.Path, -1) {
		p, ok := declared[m[1]]
		if !ok {
			p = Param{Name: m[1]}
		}
		p.In, p.Required = "path", true
		delete(declared, m[1])
		item.Parameters = append(item.Parameters, param(p))
	}
	for _, p := range op.Params {
		if _, ok := declared[p.Name]; !ok {
			continue
		}
		if p.In == "" {
			p.In = "query"
		}
		if p.In != "query" {
			return nil, fmt.Errorf("parameter %s: in %q, but the path has no {%s}", p.Name, p.In, p.Name)
		}
		item.Parameters = append(item.Parameters, param(p))
	}
	if op.Request != nil {
		s, err := g.schema(reflect.TypeOf(op.Request))
		if err != nil {
			return nil, fmt.Errorf("request body: %w", err)
		}
		item.RequestBody = &requestBody{Required: true, Content: map[string]*mediaType{"application/json": {Schema: s}}}
	}
	if len(op.Responses) == 0 {
		return nil, fmt.Errorf("no responses")
	}
	for _, r := range op.Responses {
		ct, s, err := g.body(r)
		if err != nil {
			return nil, fmt.Errorf("%d: %w", r.Status, err)
		}
		code := strconv.Itoa(r.Status)
		resp := item.Responses[code]
		if resp == nil {
			resp = &response{Description: http.StatusText(r.Status)}
			item.Responses[code] = resp
		}
		if r.Description != "" {
			resp.Description = r.Description
		}
		if ct != "" {
			if resp.Content == nil {
				resp.Content = map[string]*mediaType{}
			}
			resp.Content[ct] = &mediaType{Schema: s}
		}
	}
	errs := slices.Clone(op.Errors)
	slices.Sort(errs)
	for _, st := range errs {
		name, err := g.errorResponse(st)
		if err != nil {
			return nil, err
		}
		item.Responses[strconv.Itoa(st)] = &response{Ref: "#/components/responses/" + name}
	}
	return item, nil
}

// errorResponse is the shared response for an error status, named for it
// ("NotFound").
func (g *generator) errorResponse(status int) (string, error) {
	name := strings.ReplaceAll(http.StatusText(status), " ", "")
	if name == "" {
		return "", fmt.Errorf("error status %d has no name", status)
	}
	if _, ok := g.responses[name]; ok {
		return name, nil
	}
	s, err := g.schema(reflect.TypeOf(g.spec.Error))
	if err != nil {
		return "", fmt.Errorf("error body: %w", err)
	}
	g.responses[name] = &response{Description: http.StatusText(status), Content: map[string]*mediaType{"application/json": {Schema: s}}}
	return name, nil
}

func (g *generator) body(r Response) (string, *jsonschema.Schema, error) {
	if r.Body == nil {
		return r.ContentType, nil, nil
	}
	s, err := g.schema(reflect.TypeOf(r.Body))
	if err != nil {
		return "", nil, err
	}
	ct := r.ContentType
	if ct == "" {
		ct = "application/json"
	}
	return ct, s, nil
}

func param(p Param) parameter {
	t := p.Type
	if t == "" {
		t = "string"
	}
	s := &jsonschema.Schema{Type: t}
	for _, e := range p.Enum {
		s.Enum = append(s.Enum, e)
	}
	if t == "integer" {
		s.Minimum = jsonschema.Ptr(0.0)
	}
	return parameter{Name: p.Name, In: p.In, Description: p.Description, Required: p.Required, Schema: s}
}

// operationID is a stable name from the method and path:
// "GET /v1/sessions/{id}/mandate" → "get_sessions_id_mandate".
func operationID(op Operation) string {
	path := strings.TrimPrefix(op.Path, "/v1")
	var b strings.Builder
	b.WriteString(strings.ToLower(op.Method))
	for _, part := range strings.FieldsFunc(path, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		b.WriteByte('_')
		b.WriteString(strings.ToLower(part))
	}
	return b.String()
}
