package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/secret"
	"github.com/mandate-dev/mandate/internal/shell"
)

// Option configures a Classifier.
type Option func(*options)

type options struct {
	catalogFiles []string
}

// WithCatalogFiles adds operator knowledge files (--catalog), loaded after
// the built-in ones in the order given. A file may carry tools, commands,
// verbs, names, arguments, sensitive paths, code patterns and secret
// detectors (docs/catalog.md); an entry in a later file replaces an earlier
// entry with the same name (and server restriction), and words and
// patterns add to what earlier files gave.
func WithCatalogFiles(paths ...string) Option {
	return func(o *options) { o.catalogFiles = append(o.catalogFiles, paths...) }
}

// Classifier turns calls into Actions. It is immutable once built, so one
// Classifier serves any number of goroutines.
type Classifier struct {
	k *knowledge
	// parsers recycles shell parsers between calls.
	parsers *sync.Pool
}

// NewClassifier loads the built-in knowledge and any operator files.
// Errors name the file, the line and the problem.
func NewClassifier(opts ...Option) (*Classifier, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var k *knowledge
	var err error
	if len(o.catalogFiles) == 0 {
		k, err = builtinKnowledge()
	} else {
		k, err = loadKnowledge(o.catalogFiles)
	}
	if err != nil {
		return nil, err
	}
	return &Classifier{k: k, parsers: &sync.Pool{New: shell.NewBashParser}}, nil
}

// builtinKnowledge is the built-in knowledge, compiled once: every
// classifier without operator files shares it (it is immutable).
var builtinKnowledge = sync.OnceValues(func() (*knowledge, error) { return loadKnowledge(nil) })

// Secrets returns the secret scanner the classifier recognises secrets
// with: the built-in detectors and those of its operator files. Redaction
// should use the same one.
func (c *Classifier) Secrets() *secret.Scanner { return c.k.secrets }

// Classify says what call does. It never panics, does no I/O, and is safe
// for concurrent use. What it cannot tell it classifies conservatively: an
// unknown tool with no telling name is Unknown, an unparseable shell line is
// Execute, never Read.
func (c *Classifier) Classify(call Call) Action {
	return c.ClassifyContext(context.Background(), call)
}

// ClassifyContext is Classify stopping early when ctx ends: what it had
// not examined by then is listed in Action.Unexamined, as what a limit in
// act/limits.go cuts off is.
func (c *Classifier) ClassifyContext(ctx context.Context, call Call) (a Action) {
	defer func() {
		if r := recover(); r != nil {
			// A bug must not turn into a silent allow: report the
			// call as unknown with the reason.
			a = Action{
				Tool: call.Tool, Kind: Unknown, Kinds: []Kind{Unknown}, Source: "none",
				Paths: []PathRef{}, URLs: []string{}, Hosts: []string{}, Recipients: []Recipient{},
				Accounts: []string{}, Amounts: []Amount{}, Commands: []Command{},
				Notes:      []string{fmt.Sprintf("classifier failed on this call: %v", r)},
				Unexamined: []string{"the classifier failed on this call"},
			}
		}
	}()
	b := newBuilder(call.Tool)
	bg := shell.NewBudget(ctx)
	server, tool := NormalizeToolName(call.Tool)
	entry, via := c.find(server, tool)

	w := &argWalk{k: c.k, b: b, call: &call, entry: entry}
	def := findToolDef(call)
	var h heuristicResult
	if entry != nil {
		b.a.Known, b.a.Source, b.a.Family, b.a.Trust = true, "catalog", entry.family, entry.trust
		if via != "" {
			b.note("matched catalog entry " + entry.name + " under server prefix " + via)
		}
		b.kinds = entry.kinds
		b.external = entry.external
		b.destructive = entry.destructive
		b.public = entry.public
		b.recurring = entry.recurring
		b.note(entry.note)
		c.applyWhen(b, entry, call.Args)
		w.access = defaultAccess(b.kinds, entry.access)
		if def != nil {
			annotationNotes(b, def.Annotations)
		}
	} else {
		h = c.k.heuristics(server, tool, def, call.Args)
		b.kinds = h.kinds
		b.a.Family = h.family
		b.external = h.external
		for _, n := range h.notes {
			b.note(n)
		}
		b.a.Source = h.source
		w.access = defaultAccess(b.kinds, "")
	}

	w.walk(call.Args)

	// Parsed sub-languages decide the kinds of tools that only carry
	// them (a Bash tool is what its command line does).
	shellDecides := entry != nil && entry.hasShell
	if shellDecides && len(w.shells) == 0 {
		b.note("no command given")
	}
	shellDir := call.WorkingDir
	if len(w.shells) > 0 {
		// Tools that run commands elsewhere say where (Codex's workdir,
		// Gemini CLI's directory).
		for _, k := range []string{"workdir", "cwd", "working_directory", "directory"} {
			if v, ok := call.Args[k].(string); ok && v != "" {
				if d, rel := act.NormPath(v, call.WorkingDir, call.HomeDir); !rel {
					shellDir = d
				}
				break
			}
		}
	}
	for i, s := range w.shells {
		res := c.k.analyzeShell(bg, s, shellDir, call.HomeDir, c.parsers)
		if shellDecides && i == 0 {
			b.kinds = 0
		}
		if res.Err == nil && len(res.Commands) == 0 && res.Kinds == 0 {
			// Only comments, blanks or plain assignments: nothing runs.
			res.Kinds.Add(Read)
			b.note("the command line runs nothing")
		}
		applyShell(b, res)
	}
	for _, q := range w.sqls {
		shell.ClassifySQL(q).Apply(&b.kinds, &b.destructive, b.note, b.unexamined)
	}
	for _, ca := range w.codes {
		c.k.applyCode(bg, b, c.k.code.Scan(ca.lang, ca.code), call.WorkingDir, call.HomeDir, c.parsers)
	}
	c.k.applyDeferred(bg, b, &call, c.parsers)

	if w.linkKinds != 0 && b.kinds.Has(Fetch) && !b.kinds.Has(Send) {
		// A fetch of a link that acts when followed does what the link
		// does (a POST-style send already says more).
		b.kinds |= w.linkKinds
		for _, n := range w.linkNotes {
			b.note(n)
		}
	}
	changes := b.kinds.Has(Write) || b.kinds.Has(Send) || b.kinds.Has(Execute)
	if w.public != "" && changes && !closes(tokens(tool)) {
		b.public = true
		b.note("opens access to anyone (" + w.public + ")")
	}
	if w.admin != "" && changes && !closes(tokens(tool)) {
		b.adminGrant = true
		b.note("grants administrator access (" + w.admin + ")")
	}
	if b.kinds.Has(Send) {
		for _, r := range w.recipients {
			b.recipient(r.Address, r.Field, r.Name)
		}
	}
	if b.kinds.Has(Pay) || b.a.Family == "payments" {
		for _, acct := range w.accounts {
			b.account(acct)
		}
	}
	if entry == nil && b.kinds == 0 {
		b.note("nothing tells what this tool does")
	}
	a = b.finish()
	a.Items = c.k.args.items(&a, b.listed)
	return a
}

// find looks the tool up in the catalog: as named, then without leading
// vendor words ("gmail_send_email" is "send_email" of server gmail). via is
// the stripped prefix, if one was needed.
func (c *Classifier) find(server, tool string) (e *toolEntry, via string) {
	if e := c.k.cat.lookup(server, tool); e != nil {
		return e, ""
	}
	ts := tokens(tool)
	for i := 1; i < len(ts) && i <= 3; i++ {
		if _, ok := c.k.names.vendors[ts[i-1]]; !ok {
			break
		}
		prefix := strings.Join(ts[:i], "_")
		srv := server
		if srv == "" {
			srv = prefix
		}
		if e := c.k.cat.lookup(srv, strings.Join(ts[i:], "_")); e != nil && !e.builtin {
			return e, prefix
		}
	}
	return nil, ""
}

// applyWhen evaluates the entry's argument conditions; each one that holds
// adds its kinds and flags (conditions only ever raise).
func (c *Classifier) applyWhen(b *builder, e *toolEntry, args map[string]any) {
	if len(e.when) == 0 {
		return
	}
	// Most calls have flat arguments with snake_case names: then a
	// condition's argument is found, or not, by one map lookup instead
	// of a search through every key.
	flat := flatSnake(args)
	for i := range e.when {
		cond := &e.when[i]
		var vals []string
		var present bool
		if flat && !strings.Contains(cond.arg, ".") {
			var v any
			if v, present = args[cond.arg]; present {
				collectScalars(v, &vals, 0)
			}
		} else {
			vals, present = argValues(args, cond.arg)
		}
		// not_in holds for a missing argument too: what the call does
		// not say cannot be one of the harmless values.
		if !present && cond.op != "not_in" {
			continue
		}
		if present && !cond.holds(vals) {
			continue
		}
		b.kinds |= cond.kinds
		b.external = b.external || cond.external
		b.destructive = b.destructive || cond.destructive
		b.public = b.public || cond.public
		b.recurring = b.recurring || cond.recurring
		b.note(cond.note)
	}
}

func (cond *condition) holds(vals []string) bool {
	switch cond.op {
	case "present":
		for _, v := range vals {
			if v != "" && v != "false" {
				return true
			}
		}
		return false
	case "matches":
		for _, v := range vals {
			if cond.re.MatchString(v) {
				return true
			}
		}
		return false
	case "not_in":
		for _, v := range vals {
			if slices.Contains(cond.values, v) {
				return false
			}
		}
		return true
	}
	for _, v := range vals {
		for _, want := range cond.values {
			switch cond.op {
			case "equals", "in":
				if v == want {
					return true
				}
			case "contains":
				if strings.Contains(v, want) {
					return true
				}
			}
		}
	}
	return false
}

// flatSnake reports whether args holds no objects or arrays and only
// snake_case keys (as argument names are normalised to).
func flatSnake(args map[string]any) bool {
	for k, v := range args {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
		if fastSnake(k) != k {
			return false
		}
	}
	return true
}

// defaultAccess is the access of paths found by key name: what the tool
// mostly does to files.
func defaultAccess(ks kindSet, explicit Kind) Kind {
	switch {
	case explicit != "":
		return explicit
	case ks.Has(Delete) && !ks.Has(Write):
		return Delete
	case ks.Has(Write):
		return Write
	case ks.Has(Execute) && !ks.Has(Send):
		return Execute
	default:
		return Read
	}
}

// findToolDef finds the call's tool in the agent's tool list.
func findToolDef(call Call) *ToolDef {
	if len(call.Tools) == 0 {
		return nil
	}
	for i := range call.Tools {
		if call.Tools[i].Name == call.Tool {
			return &call.Tools[i]
		}
	}
	_, tool := NormalizeToolName(call.Tool)
	for i := range call.Tools {
		if _, t := NormalizeToolName(call.Tools[i].Name); t == tool {
			return &call.Tools[i]
		}
	}
	return nil
}

// annotationNotes records, for a catalogued tool, where the server's
// annotations disagree with the catalog. They change nothing: the catalog
// is trusted over the server's claims.
func annotationNotes(b *builder, an *Annotations) {
	if an == nil {
		return
	}
	if isTrue(an.ReadOnlyHint) && b.kinds.Top().Rank() > Fetch.Rank() {
		b.note("server claims read-only (readOnlyHint); the catalog says otherwise and wins")
	}
	if isTrue(an.DestructiveHint) && !b.kinds.Has(Delete) && !b.destructive {
		b.note("server marks it destructive (destructiveHint)")
	}
}

func isTrue(p *bool) bool { return p != nil && *p }
