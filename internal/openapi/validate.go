package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrUndocumented is returned by Check for a route the document lacks.
var ErrUndocumented = errors.New("not in the OpenAPI document")

// Validator holds responses to the document built from a spec and
// operations. It is stricter than the document: an object may carry no
// property its type does not declare, so a field served but not described
// fails too. It is safe for concurrent use.
type Validator struct {
	doc *Document

	mu       sync.Mutex
	resolved map[string]*jsonschema.Resolved
}

// NewValidator builds the validating form of the document for ops.
func NewValidator(spec Spec, ops []Operation) (*Validator, error) {
	spec.Docs = nil // descriptions do not validate anything
	d, err := build(spec, ops, "#/$defs/", true)
	if err != nil {
		return nil, err
	}
	return &Validator{doc: d, resolved: map[string]*jsonschema.Resolved{}}, nil
}

// Check validates one response to the route with the ServeMux pattern
// ("POST /v1/evaluate"): its status must be documented for the route, its
// content type the documented one, and its body valid against the schema.
func (v *Validator) Check(pattern string, status int, contentType string, body []byte) error {
	statuses, ok := v.doc.bodies[pattern]
	if !ok {
		return fmt.Errorf("%s: %w", pattern, ErrUndocumented)
	}
	types, ok := statuses[status]
	if !ok {
		return fmt.Errorf("%s answered %d, a status the document does not list for it", pattern, status)
	}
	if len(body) == 0 {
		if _, ok := types[""]; ok {
			return nil
		}
		return fmt.Errorf("%s %d: no body, the document says there is one", pattern, status)
	}
	got, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		got = contentType
	}
	s, ok := types[got]
	if !ok {
		return fmt.Errorf("%s %d: content type %q is not one the document lists", pattern, status, contentType)
	}
	if s == nil {
		return nil // documented without a schema (text)
	}
	rs, err := v.resolve(pattern+" "+got, status, s)
	if err != nil {
		return err
	}
	var inst any
	if err := json.Unmarshal(body, &inst); err != nil {
		return fmt.Errorf("%s %d: the body is not JSON: %w", pattern, status, err)
	}
	if err := rs.Validate(inst); err != nil {
		return fmt.Errorf("%s %d: the body does not match the document: %w\nbody: %.2000s", pattern, status, err, body)
	}
	return nil
}

func (v *Validator) resolve(pattern string, status int, s *jsonschema.Schema) (*jsonschema.Resolved, error) {
	key := fmt.Sprintf("%s %d", pattern, status)
	v.mu.Lock()
	defer v.mu.Unlock()
	if rs, ok := v.resolved[key]; ok {
		return rs, nil
	}
	root := s.CloneSchemas()
	root.Schema = "https://json-schema.org/draft/2020-12/schema"
	root.Defs = map[string]*jsonschema.Schema{}
	for name, c := range v.doc.comps {
		root.Defs[name] = c.CloneSchemas()
	}
	rs, err := root.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%s: resolve the schema: %w", key, err)
	}
	v.resolved[key] = rs
	return rs, nil
}
