package policytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/mandate"
)

// yamlLineRE finds the line yaml.v3 puts in its syntax errors.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// maxFileSize bounds one fixture file.
const maxFileSize = 8 << 20

// LoadCases reads every *_test.yaml (and *_test.yml) file in dir, sorted by
// name, strictly: unknown keys and bad values are errors naming the file
// and line. Case names must be unique across dir.
func LoadCases(dir string) ([]*Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("policytest: %w", err)
	}
	var cases []*Case
	seen := map[string]*Case{}
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || !(strings.HasSuffix(name, "_test.yaml") || strings.HasSuffix(name, "_test.yml")) {
			continue
		}
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("policytest: %w", err)
		}
		cs, err := ParseCases(path, data)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if prev, dup := seen[c.Name]; dup {
				return nil, fmt.Errorf("%s:%d: case %q is already defined at %s:%d", c.File, c.Line, c.Name, prev.File, prev.Line)
			}
			seen[c.Name] = c
		}
		cases = append(cases, cs...)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("policytest: no cases in %s (fixture files are named *_test.yaml)", dir)
	}
	return cases, nil
}

// ParseCases reads the cases of one fixture file; name is used in errors
// and as each case's File.
func ParseCases(name string, data []byte) ([]*Case, error) {
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: file is %d bytes, more than the %d a fixture file may have", name, len(data), maxFileSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			return nil, fmt.Errorf("%s:%s: YAML: %s", name, m[1], msg[len(m[0]):])
		}
		return nil, fmt.Errorf("%s: YAML: %s", name, strings.TrimPrefix(msg, "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty file; want `cases:` with a list of cases", name)
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, errAt(name, top, "", "a fixture file is a mapping with `cases:`")
	}
	var list *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "cases" {
			return nil, errAt(name, k, "", "unknown key %q (a fixture file has cases)", k.Value)
		}
		if list != nil {
			return nil, errAt(name, k, "", "key \"cases\" appears twice")
		}
		list = v
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, errAt(name, top, "", "`cases:` must be a list of cases")
	}
	var cases []*Case
	var errs []error
	seen := map[string]int{}
	for _, n := range list.Content {
		c, err := parseCase(name, n)
		if err != nil {
			errs = append(errs, err)
			if len(errs) >= 20 {
				break
			}
			continue
		}
		if line, dup := seen[c.Name]; dup {
			errs = append(errs, errAt(name, n, c.Name, "case name already used at line %d", line))
			continue
		}
		seen[c.Name] = c.Line
		cases = append(cases, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cases, nil
}

const caseKeys = "name, intent, mandate, working_directory, home_directory, session, agent, self, tools, call, expect, expect_rules"

func parseCase(file string, n *yaml.Node) (*Case, error) {
	if n.Kind != yaml.MappingNode {
		return nil, errAt(file, n, "", "a case must be a mapping with %s", caseKeys)
	}
	c := &Case{File: file, Line: n.Line}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "name" {
			c.Name = strings.TrimSpace(n.Content[i+1].Value)
		}
	}
	if c.Name == "" {
		return nil, errAt(file, n, "", "case has no name")
	}
	seen := map[string]bool{}
	var sawCall, sawExpect bool
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, errAt(file, k, c.Name, "key %q appears twice", k.Value)
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "name":
		case "intent":
			err = scalar(v, &c.Intent)
		case "working_directory":
			err = scalar(v, &c.WorkingDirectory)
		case "home_directory":
			err = scalar(v, &c.HomeDirectory)
		case "mandate":
			var m mandate.Mandate
			if err = viaJSON(v, &m); err == nil {
				if err = m.Validate(); err == nil {
					c.Mandate = &m
				}
			}
		case "session":
			err = viaJSON(v, &c.Session)
		case "agent":
			err = viaJSON(v, &c.Agent)
		case "self":
			err = viaJSON(v, &c.Self)
		case "tools":
			err = viaJSON(v, &c.Tools)
		case "call":
			sawCall = true
			if err = viaJSON(v, &c.Call); err == nil && strings.TrimSpace(c.Call.Tool) == "" {
				err = errors.New("call has no tool")
			}
		case "expect":
			sawExpect = true
			var s string
			if err = scalar(v, &s); err == nil {
				c.Expect = Expectation(s)
				if !c.Expect.Valid() {
					err = fmt.Errorf("%q is not allow, deny, ask or block", s)
				}
			}
		case "expect_rules":
			err = viaJSON(v, &c.ExpectRules)
		default:
			return nil, errAt(file, k, c.Name, "unknown key %q (a case has %s)", k.Value, caseKeys)
		}
		if err != nil {
			return nil, errAt(file, v, c.Name, "%s: %v", k.Value, err)
		}
	}
	switch {
	case !sawCall:
		return nil, errAt(file, n, c.Name, "case has no call")
	case !sawExpect:
		return nil, errAt(file, n, c.Name, "case has no expect (allow, deny, ask or block)")
	case c.Intent == "" && c.Mandate == nil:
		return nil, errAt(file, n, c.Name, "case has neither intent nor mandate")
	}
	return c, nil
}

func scalar(n *yaml.Node, dst *string) error {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return errors.New("want a string")
	}
	*dst = n.Value
	return nil
}

// viaJSON decodes a YAML node into dst through JSON, strictly, so fixture
// fields have exactly the JSON names rules see (and the API takes), and
// numbers in call arguments arrive as they would over HTTP (float64).
func viaJSON(n *yaml.Node, dst any) error {
	var v any
	if err := n.Decode(&v); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("cannot be represented as JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func errAt(file string, n *yaml.Node, caseName, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if caseName != "" {
		msg = fmt.Sprintf("case %q: %s", caseName, msg)
	}
	return fmt.Errorf("%s:%d:%d: %s", file, n.Line, n.Column, msg)
}
