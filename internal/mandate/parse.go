package mandate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/action"
)

// maxDocument bounds what Parse reads; a mandate is a few kilobytes.
const maxDocument = 1 << 20

// Parse reads a mandate written as YAML or JSON. It is strict: a field the
// Mandate type does not have is an error naming the field and its line, as
// are aliases, several documents and values of the wrong type. The result
// is validated.
func Parse(data []byte) (*Mandate, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("mandate: empty document")
	}
	if len(data) > maxDocument {
		return nil, fmt.Errorf("mandate: document is %d bytes, more than the %d allowed", len(data), maxDocument)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("mandate: %w", err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, fmt.Errorf("mandate: line %d: a second document; a mandate is one document", extra.Line)
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("mandate: %w", err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("mandate: line %d: a mandate is a mapping (object) of fields, not a %s", root.Line, nodeKind(root))
	}
	if err := checkFields(root, reflect.TypeFor[Mandate](), "mandate"); err != nil {
		return nil, fmt.Errorf("mandate: %w", err)
	}
	var m Mandate
	if err := root.Decode(&m); err != nil {
		return nil, fmt.Errorf("mandate: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

var timeType = reflect.TypeFor[time.Time]()

// checkFields walks a YAML node alongside the Go type it will decode into
// and rejects mapping keys the type has no field for, and aliases, with the
// line and the field's path.
func checkFields(n *yaml.Node, t reflect.Type, where string) error {
	if n.Kind == yaml.AliasNode {
		return fmt.Errorf("line %d: %s: aliases are not supported", n.Line, where)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return nil
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode || v.Kind == yaml.AliasNode {
				return fmt.Errorf("line %d: %s: aliases are not supported", k.Line, where)
			}
			ft, ok := fields[k.Value]
			if !ok {
				return fmt.Errorf("line %d: unknown field %q in %s (known: %s)", k.Line, k.Value, where, strings.Join(sortedKeys(fields), ", "))
			}
			if err := checkFields(v, ft, where+"."+k.Value); err != nil {
				return err
			}
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			if err := checkFields(c, t.Elem(), fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode {
				return fmt.Errorf("line %d: %s: aliases are not supported", k.Line, where)
			}
			if err := checkFields(v, t.Elem(), where+"."+k.Value); err != nil {
				return err
			}
		}
	}
	// Kind mismatches (a list where a string belongs) are left to Decode,
	// whose errors carry the line too.
	return nil
}

// yamlFields maps a struct's YAML field names to their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	return "mapping"
}

// Instruction sources Validate accepts.
var sources = [...]string{"user", "admin", "operator", "hook", "file"}

// Validate checks that the mandate is well formed: kinds are defined ones,
// instructions have text and a known source, prohibitions say what they
// prohibit, scope entries are valid globs, host patterns, recipients and
// accounts (IBANs with a valid checksum), limits are non-negative with a
// three-letter upper-case currency. Every problem is reported, each naming
// its field.
func (m *Mandate) Validate() error {
	if m == nil {
		return errors.New("mandate: nil mandate")
	}
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("mandate: %s: %s", field, fmt.Sprintf(format, args...)))
	}
	if m.Version < 0 {
		bad("version", "%d is negative", m.Version)
	}
	for i, in := range m.Instructions {
		f := fmt.Sprintf("instructions[%d]", i)
		if strings.TrimSpace(in.Text) == "" {
			bad(f+".text", "empty")
		}
		if in.Source != "" && !slices.Contains(sources[:], in.Source) {
			bad(f+".source", "%q is not one of %s", in.Source, strings.Join(sources[:], ", "))
		}
	}
	checkKinds := func(field string, ks []action.Kind) {
		for i, k := range ks {
			if !k.Valid() {
				bad(fmt.Sprintf("%s[%d]", field, i), "unknown kind %q (want one of %s)", k, kindList())
			}
		}
	}
	checkKinds("allow", m.Allow)
	checkKinds("deny", m.Deny)
	checkKinds("ask", m.Ask)
	for i, k := range m.Ask {
		switch {
		case slices.Contains(m.Allow, k):
			bad(fmt.Sprintf("ask[%d]", i), "%s is also in allow; a kind is allowed, denied or asked, not two of them", k)
		case slices.Contains(m.Deny, k):
			bad(fmt.Sprintf("ask[%d]", i), "%s is also in deny; a kind is allowed, denied or asked, not two of them", k)
		}
	}
	for i, c := range m.Conditions {
		f := fmt.Sprintf("conditions[%d]", i)
		switch {
		case !c.Kind.Valid() || c.Kind == "":
			bad(f+".kind", "unknown kind %q (want one of %s)", c.Kind, kindList())
		case !slices.Contains(m.Ask, c.Kind):
			bad(f+".kind", "%s is not in ask; a condition says when a call of an asked kind may go without a person", c.Kind)
		}
		validateCondition(c, f, bad)
		if strings.TrimSpace(c.Text) == "" {
			bad(f+".text", "empty: say which words stated the condition")
		}
	}
	for i, p := range m.Prohibitions {
		f := fmt.Sprintf("prohibitions[%d]", i)
		if p.Kind != "" && !p.Kind.Valid() {
			bad(f+".kind", "unknown kind %q (want one of %s)", p.Kind, kindList())
		}
		if p.Kind == "" && p.Target == "" {
			bad(f, "needs a kind, a target or both")
		}
		if strings.TrimSpace(p.Text) == "" {
			bad(f+".text", "empty; a prohibition keeps the words that said so")
		}
		if p.Target != "" {
			if msg := validTarget(p.Target); msg != "" {
				bad(f+".target", "%q: %s", p.Target, msg)
			}
		}
	}
	s := &m.Scope
	checkList := func(field string, list []string, valid func(string) string) {
		for i, e := range list {
			if msg := valid(e); msg != "" {
				bad(fmt.Sprintf("scope.%s[%d]", field, i), "%q: %s", e, msg)
			}
		}
	}
	checkList(DimPaths, s.Paths, validGlob)
	checkList(DimHosts, s.Hosts, validHost)
	checkList(DimRecipients, s.Recipients, validRecipient)
	checkList(DimAccounts, s.Accounts, validAccount)
	checkList(DimNames, s.Names, validName)
	listed := map[string]int{DimPaths: len(s.Paths), DimHosts: len(s.Hosts), DimRecipients: len(s.Recipients),
		DimAccounts: len(s.Accounts), DimNames: len(s.Names)}
	for i, d := range s.None {
		f := fmt.Sprintf("scope.none[%d]", i)
		switch n, ok := listed[d]; {
		case !ok:
			bad(f, "unknown dimension %q (want one of %s)", d, strings.Join(dimensions[:], ", "))
		case n > 0:
			bad(f, "%s match nothing, yet scope.%s lists %d", d, d, n)
		}
	}
	if sp := m.Limits.Spend; sp != nil {
		if math.IsNaN(sp.Amount) || math.IsInf(sp.Amount, 0) || sp.Amount < 0 {
			bad("limits.spend.amount", "%v is not a non-negative amount", sp.Amount)
		}
		if !validCurrency(sp.Currency) {
			bad("limits.spend.currency", "%q is not a three-letter upper-case ISO 4217 code", sp.Currency)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Limits.Counts)) {
		f := "limits.counts." + string(k)
		if !k.Valid() {
			bad(f, "unknown kind %q (want one of %s)", k, kindList())
		}
		if n := m.Limits.Counts[k]; n < 0 {
			bad(f, "%d is negative", n)
		}
	}
	return errors.Join(errs...)
}

// validTarget accepts a prohibition target of any dimension.
func validTarget(t string) string {
	if strings.TrimSpace(t) == "" {
		return "empty target"
	}
	if hasControl(t) {
		return "contains control characters"
	}
	if b, ok := strings.CutPrefix(t, BranchTarget); ok {
		if b == "" || strings.ContainsFunc(b, unicode.IsSpace) {
			return "want a branch name after \"" + BranchTarget + "\""
		}
		return ""
	}
	if op, ok := strings.CutPrefix(t, OperationTarget); ok {
		if ops, err := loadOperations(); err != nil || ops[op].Commands == nil && ops[op].Tools == nil {
			return "want an operation of " + operationsFile + " after \"" + OperationTarget + "\""
		}
		return ""
	}
	if strings.ContainsRune(t, '/') {
		return validGlob(t)
	}
	return ""
}

func validCurrency(c string) bool {
	return len(c) == 3 && isUpperASCII(c[0]) && isUpperASCII(c[1]) && isUpperASCII(c[2])
}

func kindList() string {
	var b strings.Builder
	for i, k := range action.AllKinds() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(k))
	}
	return b.String()
}

// String renders a Money value as "84.20 EUR".
func (m Money) String() string {
	return strconv.FormatFloat(m.Amount, 'f', -1, 64) + " " + m.Currency
}

// maxConditionBytes bounds a size condition: a petabyte is past any file.
const maxConditionBytes = 1 << 50

// validateCondition reports what is wrong with one item condition: it
// states prepares_payment alone, or at least one attribute, each in range.
func validateCondition(c ItemCondition, f string, bad func(field, format string, args ...any)) {
	attrs := c.attributes()
	switch {
	case c.PreparesPayment && attrs > 0:
		bad(f, "states prepares_payment and an attribute of the items; a condition states one or the other")
		return
	case c.PreparesPayment:
		return
	case attrs == 0:
		bad(f, "states no attribute of the items (older_than_days, newer_than_days, larger_than_bytes, smaller_than_bytes, names, not_names, from, not_from, labels, not_labels, channels, not_channels) and no prepares_payment")
		return
	}
	days := func(field string, n int) {
		if n < 0 || n > 100_000 {
			bad(f+"."+field, "%d is not a number of days from 1 to 100000", n)
		}
	}
	days("older_than_days", c.OlderThanDays)
	days("newer_than_days", c.NewerThanDays)
	if c.OlderThanDays > 0 && c.NewerThanDays > 0 && c.NewerThanDays <= c.OlderThanDays {
		bad(f, "older than %d days and newer than %d days: no item is both", c.OlderThanDays, c.NewerThanDays)
	}
	size := func(field string, n int64) {
		if n < 0 || n > maxConditionBytes {
			bad(f+"."+field, "%d is not a number of bytes from 1 to 2^50", n)
		}
	}
	size("larger_than_bytes", c.LargerThanBytes)
	size("smaller_than_bytes", c.SmallerThanBytes)
	if c.LargerThanBytes > 0 && c.SmallerThanBytes > 0 && c.SmallerThanBytes <= c.LargerThanBytes {
		bad(f, "larger than %d and smaller than %d bytes: no item is both", c.LargerThanBytes, c.SmallerThanBytes)
	}
	globs := func(field string, list []string) {
		for i, g := range list {
			_, err := path.Match(g, "")
			switch {
			case strings.TrimSpace(g) == "":
				bad(fmt.Sprintf("%s.%s[%d]", f, field, i), "empty: a file-name glob such as \"*.log\"")
			case strings.Contains(g, "/"):
				bad(fmt.Sprintf("%s.%s[%d]", f, field, i), "%q: a file name, not a path (the scope holds paths)", g)
			case err != nil:
				bad(fmt.Sprintf("%s.%s[%d]", f, field, i), "%q: %v", g, err)
			}
		}
	}
	globs("names", c.Names)
	globs("not_names", c.NotNames)
	words := func(field string, list []string) {
		for i, w := range list {
			if strings.TrimSpace(w) == "" {
				bad(fmt.Sprintf("%s.%s[%d]", f, field, i), "empty: a word of a sender's name or address")
			}
		}
	}
	words("from", c.From)
	words("not_from", c.NotFrom)
	words("labels", c.Labels)
	words("not_labels", c.NotLabels)
	validateChannels(c, f, bad)
}
