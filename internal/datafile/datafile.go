// Package datafile reads Mandate's knowledge files: YAML documents that
// hold what Mandate knows (commands, verbs, secret shapes, sensitive paths)
// as data, built in and extended by operators.
//
// Reading is strict and bounded. An unknown key, a value of the wrong type
// or a value the file's own validation rejects is an error naming the file
// and line (FILE:LINE: what is wrong). A file larger than MaxSize, nested
// deeper than MaxDepth or expanding to more than MaxNodes nodes (through
// aliases, say) is refused before it is decoded: a data file is small, and
// a pathological one must cost nothing.
package datafile

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits on one data file. The built-in files are far below them.
const (
	MaxSize  = 4 << 20 // bytes
	MaxDepth = 64      // nesting of mappings and sequences
	MaxNodes = 1 << 20 // nodes, aliases expanded
)

// Error is a problem at a line of a data file.
type Error struct {
	File string
	Line int // 0 when the problem is the file as a whole
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.File == "":
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	case e.Line == 0:
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// At is an error at node n. Validation inside UnmarshalYAML methods returns
// it; Load adds the file name.
func At(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads data as one YAML document and checks its size and shape
// limits. The result is the document's top node (a mapping, for every
// knowledge file).
func Parse(file string, data []byte) (*yaml.Node, error) {
	if len(data) > MaxSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("%d bytes, more than the %d a data file may have", len(data), MaxSize)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, withFile(file, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{File: file, Msg: "empty file"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: root.Line, Msg: "the file must be a mapping of sections"}
	}
	if err := bounded(root); err != nil {
		return nil, withFile(file, err)
	}
	return root, nil
}

// Load parses data and decodes it strictly into v (a pointer to a struct
// whose yaml tags name the sections a file may have).
func Load(file string, data []byte, v any) error {
	root, err := Parse(file, data)
	if err != nil {
		return err
	}
	return withFile(file, Decode(root, v))
}

// Decode decodes n into v strictly: every mapping key must be one of the
// target struct's yaml fields, at any depth, up to types that decode
// themselves (implement yaml.Unmarshaler), which must call Decode in turn.
func Decode(n *yaml.Node, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("datafile: Decode needs a non-nil pointer")
	}
	if err := known(n, rv.Type().Elem(), 0); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		return lineError(err)
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// known checks the keys of n against t.
func known(n *yaml.Node, t reflect.Type, depth int) error {
	if depth > MaxDepth {
		return At(n, "nested more than %d levels", MaxDepth)
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != reflect.TypeFor[yaml.Node]() && (reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType)) {
		return nil // it checks itself
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // n.Decode reports the type mismatch
		}
		fields := structFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			ft, ok := fields[k.Value]
			if !ok {
				return At(k, "unknown key %q (want one of %s)", k.Value, strings.Join(sortedKeys(fields), ", "))
			}
			if err := known(n.Content[i+1], ft, depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for _, c := range n.Content {
			if err := known(c, t.Elem(), depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := known(n.Content[i+1], t.Elem(), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func structFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct {
			for k, v := range structFields(f.Type) {
				m[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f.Type
	}
	return m
}

func sortedKeys(m map[string]reflect.Type) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// bounded refuses documents nested too deeply or too large once aliases
// are expanded (a "billion laughs" document is a few lines long).
func bounded(root *yaml.Node) error {
	nodes := 0
	var walk func(n *yaml.Node, depth int) error
	walk = func(n *yaml.Node, depth int) error {
		nodes++
		if nodes > MaxNodes {
			return At(n, "more than %d nodes (aliases expanded)", MaxNodes)
		}
		if depth > MaxDepth {
			return At(n, "nested more than %d levels", MaxDepth)
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			return walk(n.Alias, depth+1)
		}
		for _, c := range n.Content {
			if err := walk(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root, 0)
}

// yamlLineRE finds the line numbers yaml.v3 puts in its messages.
var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// lineError turns yaml.v3's errors ("yaml: line 3: …", TypeError lists)
// into an *Error with the line of the first problem.
func lineError(err error) error {
	if err == nil {
		return nil
	}
	var de *Error
	if errors.As(err, &de) {
		return de
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		e := &Error{Msg: msg}
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = msg[len(m[0]):]
		}
		if len(te.Errors) > 1 {
			e.Msg += fmt.Sprintf(" (and %d more)", len(te.Errors)-1)
		}
		return e
	}
	msg := err.Error()
	e := &Error{Msg: strings.TrimPrefix(msg, "yaml: ")}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = msg[len(m[0]):]
	}
	return e
}

// withFile names the file in err.
func withFile(file string, err error) error {
	if err == nil {
		return nil
	}
	e, ok := lineError(err).(*Error)
	if !ok {
		return fmt.Errorf("%s: %w", file, err)
	}
	if e.File == "" {
		c := *e
		c.File = file
		return &c
	}
	return e
}

// Words splits each string of list at white space: YAML lists of words
// may be written several to an item ("ls list show").
func Words(list ...string) []string {
	var out []string
	for _, s := range list {
		out = append(out, strings.Fields(s)...)
	}
	return out
}

// Field returns the value node of key in mapping n, or n itself when there
// is none: errors about a field then point at its line.
func Field(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	}
	return n
}

// AppendGroups appends b's groups after a's: compiled in order, later
// groups win for a word listed twice.
func AppendGroups(a, b map[string][]string) map[string][]string {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = map[string][]string{}
	}
	// A word moved to another group leaves its old one, so that the
	// map's order does not decide.
	for g, ws := range b {
		for og, ows := range a {
			if og != g {
				a[og] = slices.DeleteFunc(ows, func(w string) bool { return slices.Contains(ws, w) })
			}
		}
		a[g] = append(a[g], ws...)
	}
	return a
}

// WordSet is a list of words as a set.
func WordSet(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}
