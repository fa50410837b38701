package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// generator derives JSON Schemas from Go types the way encoding/json
// encodes them: named struct types become components referred to by $ref,
// pointers, slices and maps may be null, fields without omitempty or omitzero
// are required (they are always present in the encoding).
type generator struct {
	spec   *Spec
	prefix string
	// closed forbids properties a struct does not declare: validation
	// then fails on a field the document does not describe.
	closed bool
	comps  map[string]*jsonschema.Schema
	// responses are the shared error responses, by name.
	responses map[string]*response
	byType    map[reflect.Type]string
	byName    map[string]reflect.Type
	// named are components that fields name with an `openapi` tag; they
	// must be generated from some type by the end.
	named map[string]string
}

func newGenerator(spec *Spec, prefix string, closed bool) *generator {
	return &generator{
		spec: spec, prefix: prefix, closed: closed,
		comps: map[string]*jsonschema.Schema{}, responses: map[string]*response{}, byType: map[reflect.Type]string{},
		byName: map[string]reflect.Type{}, named: map[string]string{},
	}
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
	byteType = reflect.TypeFor[[]byte]()
)

func (g *generator) ref(name string) *jsonschema.Schema {
	return &jsonschema.Schema{Ref: g.prefix + name}
}

// schema returns a fresh schema for t (schemas must not be shared: a
// resolved schema is a tree).
func (g *generator) schema(t reflect.Type) (*jsonschema.Schema, error) {
	switch t {
	case timeType:
		return &jsonschema.Schema{Type: "string", Format: "date-time"}, nil
	case rawType:
		return &jsonschema.Schema{}, nil // any JSON value
	case byteType:
		return &jsonschema.Schema{Types: []string{"string", "null"}, ContentEncoding: "base64"}, nil
	}
	if _, ok := g.spec.Enums[t]; ok {
		return g.component(t)
	}
	switch t.Kind() {
	case reflect.Pointer:
		s, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return nullable(s), nil
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		return g.component(t)
	case reflect.Slice:
		items, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &jsonschema.Schema{Types: []string{"array", "null"}, Items: items}, nil
	case reflect.Array:
		items, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &jsonschema.Schema{Type: "array", Items: items, MinItems: jsonschema.Ptr(t.Len()), MaxItems: jsonschema.Ptr(t.Len())}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: map keys must be strings", t)
		}
		v, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &jsonschema.Schema{Types: []string{"object", "null"}, AdditionalProperties: v}, nil
	case reflect.Interface:
		return &jsonschema.Schema{}, nil
	case reflect.String:
		return &jsonschema.Schema{Type: "string"}, nil
	case reflect.Bool:
		return &jsonschema.Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &jsonschema.Schema{Type: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(0.0)}, nil
	case reflect.Float32, reflect.Float64:
		return &jsonschema.Schema{Type: "number"}, nil
	}
	return nil, fmt.Errorf("%s: a %s cannot be described in JSON", t, t.Kind())
}

func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	switch {
	case s.Ref != "":
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{s, {Type: "null"}}}
	case s.Type != "":
		s.Types, s.Type = []string{s.Type, "null"}, ""
	case len(s.Types) > 0 && !slices.Contains(s.Types, "null"):
		s.Types = append(s.Types, "null")
	}
	return s
}

// component registers t under its name (once) and refers to it.
func (g *generator) component(t reflect.Type) (*jsonschema.Schema, error) {
	if name, ok := g.byType[t]; ok {
		return g.ref(name), nil
	}
	name := g.spec.Names[t]
	if name == "" {
		name = t.Name()
	}
	if other, ok := g.byName[name]; ok {
		return nil, fmt.Errorf("two types are named %s (%s and %s): give one a component name in Spec.Names", name, other, t)
	}
	g.byType[t], g.byName[name] = name, t
	var (
		s   *jsonschema.Schema
		err error
	)
	if values, ok := g.spec.Enums[t]; ok {
		s = &jsonschema.Schema{Type: "string"}
		for _, v := range values {
			s.Enum = append(s.Enum, v)
		}
	} else if t.Kind() == reflect.Struct {
		s, err = g.object(t)
	} else {
		// A named non-struct type without an enum is its underlying type;
		// it gets no component of its own.
		delete(g.byType, t)
		delete(g.byName, name)
		return g.schema(underlying(t))
	}
	if err != nil {
		return nil, err
	}
	s.Description = g.spec.Docs.typeDoc(t)
	g.comps[name] = s
	return g.ref(name), nil
}

// underlying is t's unnamed underlying type, so schema does not come back
// to t itself.
func underlying(t reflect.Type) reflect.Type {
	switch t.Kind() {
	case reflect.String:
		return reflect.TypeFor[string]()
	case reflect.Bool:
		return reflect.TypeFor[bool]()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return reflect.TypeFor[int64]()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return reflect.TypeFor[uint64]()
	case reflect.Float32, reflect.Float64:
		return reflect.TypeFor[float64]()
	case reflect.Slice:
		return reflect.SliceOf(t.Elem())
	case reflect.Map:
		return reflect.MapOf(t.Key(), t.Elem())
	}
	return t
}

// object describes a struct as encoding/json encodes it.
func (g *generator) object(t reflect.Type) (*jsonschema.Schema, error) {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	if g.closed {
		s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, tagged := jsonName(f)
		if name == "-" && !strings.Contains(f.Tag.Get("json"), ",") {
			continue
		}
		ft := f.Type
		if f.Anonymous && !tagged {
			// encoding/json promotes an untagged embedded struct's
			// fields; VisibleFields lists them after it.
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				continue
			}
			if !f.IsExported() {
				continue
			}
		}
		if len(f.Index) > 1 && !promoted(t, f) {
			continue
		}
		if _, dup := s.Properties[name]; dup {
			continue
		}
		fs, err := g.field(t, f)
		if err != nil {
			return nil, err
		}
		d := g.spec.Docs.fieldDoc(t, f)
		if rest, ok := strings.CutPrefix(d, f.Name+" "); ok && name != f.Name {
			d = name + " " + rest // the doc speaks of the Go name
		}
		if d != "" {
			fs.Description = d
		}
		s.Properties[name] = fs
		s.PropertyOrder = append(s.PropertyOrder, name)
		if !opts["omitempty"] && !opts["omitzero"] {
			s.Required = append(s.Required, name)
		}
	}
	return s, nil
}

// promoted reports whether a field found in an embedded struct is one
// encoding/json promotes: every struct on the way is embedded without a json
// name.
func promoted(t reflect.Type, f reflect.StructField) bool {
	cur := t
	for _, i := range f.Index[:len(f.Index)-1] {
		sf := cur.Field(i)
		if _, _, tagged := jsonName(sf); tagged {
			return false
		}
		cur = sf.Type
		if cur.Kind() == reflect.Pointer {
			cur = cur.Elem()
		}
	}
	return true
}

func (g *generator) field(owner reflect.Type, f reflect.StructField) (*jsonschema.Schema, error) {
	tag := f.Tag.Get("openapi")
	if tag == "" {
		s, err := g.schema(f.Type)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", owner, f.Name, err)
		}
		return s, nil
	}
	var s *jsonschema.Schema
	if tag == "object" {
		s = &jsonschema.Schema{Types: []string{"object", "null"}}
	} else {
		g.named[tag] = owner.String() + "." + f.Name
		s = g.ref(tag)
	}
	if f.Type.Kind() == reflect.Slice && f.Type != rawType {
		return &jsonschema.Schema{Types: []string{"array", "null"}, Items: s}, nil
	}
	return s, nil
}

// finish checks that every component a tag names exists.
func (g *generator) finish() error {
	names := make([]string, 0, len(g.named))
	for n := range g.named {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := g.comps[n]; !ok {
			return fmt.Errorf("openapi: %s names component %s, which no type in the document generates", g.named[n], n)
		}
	}
	return nil
}

// jsonName is a field's JSON name and options; tagged says the tag gave a
// name.
func jsonName(f reflect.StructField) (string, map[string]bool, bool) {
	tag := f.Tag.Get("json")
	name, rest, _ := strings.Cut(tag, ",")
	opts := map[string]bool{}
	for _, o := range strings.Split(rest, ",") {
		if o != "" {
			opts[o] = true
		}
	}
	if name == "" {
		return f.Name, opts, false
	}
	return name, opts, true
}
