package action

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/datafile"
	"github.com/mandate-dev/mandate/internal/secret"
	"github.com/mandate-dev/mandate/internal/shell"
)

// keyClass is what an argument's name suggests about its value, for tools
// whose catalog entry does not say (or that have none).
type keyClass uint8

const (
	keyOther      keyClass = iota
	keyPath                // surely a path: file_path, path, notebook_path
	keyMaybePath           // a path if the value looks like one: source, target
	keyAttachment          // files read and sent along
	keyURL
	keyHost
	keyRecipient
	keyAccount
	keySourceAccount
	keyAmount
	keyAmountMinor
	keyCurrency
	keyContent // free text: no URL or path extraction
	keyShell
	keySQL
	keyCode
)

// keyClassNames are the classes' names in a knowledge file's arguments
// section.
var keyClassNames = map[string]keyClass{
	"path": keyPath, "maybe_path": keyMaybePath, "attachment": keyAttachment, "url": keyURL,
	"host": keyHost, "recipient": keyRecipient, "account": keyAccount, "source_account": keySourceAccount,
	"amount": keyAmount, "amount_minor": keyAmountMinor, "currency": keyCurrency, "content": keyContent,
	"shell": keyShell, "sql": keySQL, "code": keyCode,
}

// argSpecs is the arguments section of a knowledge file
// (data/arguments.yaml).
type argSpecs struct {
	Classes           argClasses          `yaml:"classes"`
	RecipientFields   map[string][]string `yaml:"recipient_fields"`
	RecipientLeafKeys []string            `yaml:"recipient_leaf_keys"`
	RecipientNameKeys []string            `yaml:"recipient_name_keys"`
	LinkTokens        []string            `yaml:"link_tokens"`
	WrittenContent    []string            `yaml:"written_content"`
	Items             itemSpecs           `yaml:"items"`
}

// itemSpecs tell how many items a call acts on (see Action.Items).
type itemSpecs struct {
	Lists          []string `yaml:"lists"`
	Expanding      []string `yaml:"expanding"`
	RecursiveFlags []string `yaml:"recursive_flags"`
}

// argClasses maps class names to argument names; every class name is
// checked.
type argClasses map[string][]string

// UnmarshalYAML checks the class names.
func (c *argClasses) UnmarshalYAML(n *yaml.Node) error {
	var m map[string][]string
	if err := datafile.Decode(n, &m); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if _, ok := keyClassNames[n.Content[i].Value]; !ok {
			return datafile.At(n.Content[i], "unknown argument class %q (want one of %s)", n.Content[i].Value, strings.Join(slices.Sorted(maps.Keys(keyClassNames)), ", "))
		}
	}
	*c = m
	return nil
}

func (a *argSpecs) merge(o *argSpecs) {
	if len(o.Classes) > 0 {
		a.Classes = argClasses(datafile.AppendGroups(a.Classes, o.Classes))
	}
	a.RecipientFields = datafile.AppendGroups(a.RecipientFields, o.RecipientFields)
	a.RecipientLeafKeys = append(a.RecipientLeafKeys, o.RecipientLeafKeys...)
	a.RecipientNameKeys = append(a.RecipientNameKeys, o.RecipientNameKeys...)
	a.LinkTokens = append(a.LinkTokens, o.LinkTokens...)
	a.WrittenContent = append(a.WrittenContent, o.WrittenContent...)
	a.Items.Lists = append(a.Items.Lists, o.Items.Lists...)
	a.Items.Expanding = append(a.Items.Expanding, o.Items.Expanding...)
	a.Items.RecursiveFlags = append(a.Items.RecursiveFlags, o.Items.RecursiveFlags...)
}

// argNames is what argument names tell.
type argNames struct {
	// classes is keyed by snake_case argument name.
	classes map[string]keyClass
	// fields maps recipient-ish keys to the Recipient.Field they fill.
	fields map[string]string
	// leaf are the keys inside a recipient object that hold the address
	// itself ("to": [{"email": …, "name": …}] — not the name).
	leaf map[string]bool
	// names are the keys inside a recipient object that hold the display
	// name of its address ("to": [{"email": …, "name": "Dana Reyes"}]).
	names map[string]bool
	// linkTokens are query parameter names (snake_case) under which
	// links carry a one-purpose token back to the site that minted it.
	linkTokens map[string]bool
	// content are the arguments that carry what a file-writing tool
	// writes.
	content map[string]bool
	// itemLists are the arguments (snake_case) that list the items a call
	// acts on; expanding the commands that find their items themselves;
	// recursive the flags that act on everything under a path.
	itemLists, expanding, recursive map[string]bool
}

func compileArgs(a *argSpecs) *argNames {
	an := &argNames{classes: map[string]keyClass{}, fields: map[string]string{},
		leaf: datafile.WordSet(a.RecipientLeafKeys), names: datafile.WordSet(a.RecipientNameKeys), linkTokens: datafile.WordSet(a.LinkTokens), content: datafile.WordSet(a.WrittenContent),
		itemLists: datafile.WordSet(a.Items.Lists), expanding: datafile.WordSet(a.Items.Expanding), recursive: datafile.WordSet(a.Items.RecursiveFlags)}
	for c, ws := range a.Classes {
		for _, w := range ws {
			an.classes[w] = keyClassNames[c]
		}
	}
	for f, ws := range a.RecipientFields {
		for _, w := range ws {
			an.fields[w] = f
		}
	}
	return an
}

var (
	emailRE = regexp.MustCompile(`[A-Za-z0-9._%+\-']+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`)
)

// argWalk walks a call's arguments once, recording resources into b and
// collecting the values that need a parser of their own (shell, SQL, code).
type argWalk struct {
	k     *knowledge
	b     *builder
	call  *Call
	entry *toolEntry
	// access is the default access for paths found by key name.
	access Kind

	nodes     int
	scanned   int
	truncated bool

	shells []string
	sqls   []string
	codes  []codeArg

	// Recipients and accounts found by key name only are candidates: "to"
	// on a search tool is a filter, not a destination. The classifier
	// keeps them when the call sends or pays.
	recipients []Recipient
	accounts   []string
	attachment bool
	// public is set by an argument that opens something to anyone (a
	// world address range, allUsers, a public-read ACL); it counts when
	// the call changes something.
	public string
	// admin is set by an argument naming an administrator role or
	// policy (see adminRole); it too counts when the call changes
	// something.
	admin string
	// linkKinds are what the URLs the call fetches do when followed
	// (see linkAction), with notes why.
	linkKinds kindSet
	linkNotes []string
}

type codeArg struct {
	lang, code string
}

// walkCtx is what a value inherits from the keys above it.
type walkCtx struct {
	path     string   // dotted snake_case path of object keys
	key      string   // nearest object key
	rule     *argRule // the catalog role in force, if any
	ruleKey  string   // the key the rule was attached to
	class    keyClass // the generic class in force (unknown or uncovered keys)
	classKey string
	currency string
	baseDir  string // for glob roles: a sibling "path"
	// rname is the display name a recipient object gives beside its
	// address ({"email": …, "name": …}), for the addresses inside it.
	rname string
	depth int
}

func (w *argWalk) walk(args map[string]any) {
	w.visitMap(args, walkCtx{})
	if w.truncated {
		w.b.unexamined(fmt.Sprintf("the arguments hold more than %d secret-scanned bytes (MaxScanPerString %d per string, MaxScanTotal %d): the rest were not examined", act.MaxScanTotal, act.MaxScanPerString, act.MaxScanTotal))
	}
}

func (w *argWalk) visit(v any, ctx walkCtx) {
	w.nodes++
	if w.nodes > act.MaxArgNodes {
		w.b.unexamined(fmt.Sprintf("the arguments hold more than %d values (MaxArgNodes): the rest were not examined", act.MaxArgNodes))
		return
	}
	if ctx.depth > act.MaxArgDepth {
		w.b.unexamined(fmt.Sprintf("the arguments nest more than %d deep (MaxArgDepth): what is deeper was not examined", act.MaxArgDepth))
		return
	}
	switch x := v.(type) {
	case map[string]any:
		w.visitMap(x, ctx)
	case []any:
		if ctx.rule != nil && ctx.rule.role == roleShell {
			// An argv array (Codex's ["bash", "-lc", "…"]): one
			// command line, not one per element.
			if line, ok := argvLine(x); ok {
				w.leaf(line, ctx)
				return
			}
		}
		ctx.depth++
		for _, e := range x {
			w.visit(e, ctx)
		}
	case []string:
		ctx.depth++
		for _, e := range x {
			w.visit(e, ctx)
		}
	case string:
		w.leaf(x, ctx)
	case nil, bool:
	default:
		if n, ok := numberValue(x); ok {
			w.number(n, ctx)
		}
	}
}

func (w *argWalk) visitMap(m map[string]any, ctx walkCtx) {
	if len(m) == 0 {
		return
	}
	keys := sortedKeys(m) // deterministic notes and resource order
	// A currency given beside the amounts applies to them.
	cur := ctx.currency
	for _, k := range keys {
		sk := fastSnake(k)
		if w.k.args.classes[sk] == keyCurrency || w.ruleFor(ctx.path, sk) != nil && w.ruleFor(ctx.path, sk).role == roleCurrency {
			if s, ok := m[k].(string); ok && currencyOf(s) != "" {
				cur = currencyOf(s)
			}
		}
	}
	rname := ctx.rname
	if ctx.class == keyRecipient || ctx.rule != nil && ctx.rule.role == roleRecipient {
		for _, k := range keys {
			if v, ok := m[k].(string); ok && w.k.args.names[fastSnake(k)] {
				rname = displayName(v)
				break
			}
		}
	}
	base := ""
	for _, k := range []string{"path", "cwd", "directory", "dir"} {
		if s, ok := m[k].(string); ok && s != "" {
			base = s
			break
		}
	}
	for _, k := range keys {
		sk := fastSnake(k)
		if ctx.depth == 0 && w.k.args.itemLists[sk] {
			if l, ok := m[k].([]any); ok {
				w.b.listed = max(w.b.listed, len(l))
			}
		}
		c := ctx
		c.depth++
		c.key = sk
		c.currency = cur
		c.baseDir = base
		c.rname = rname
		if ctx.path == "" {
			c.path = sk
		} else {
			c.path = ctx.path + "." + sk
		}
		if r := w.ruleFor(ctx.path, sk); r != nil {
			c.rule, c.ruleKey = r, sk
		} else if c.rule == nil && ctx.class != keyRecipient && ctx.class != keyAttachment {
			// Inside a recipient or attachment object the outer key
			// decides ("cc": [{"email": …}] is a cc).
			if kc := w.k.args.classes[sk]; kc != keyOther {
				c.class, c.classKey = kc, sk
			}
		}
		w.visit(m[k], c)
	}
}

// ruleFor finds the catalog rule for key under parent path: the dotted path
// first, then the bare key at any depth.
func (w *argWalk) ruleFor(parent, key string) *argRule {
	if w.entry == nil || w.entry.args == nil {
		return nil
	}
	if parent != "" {
		if r := w.entry.args[parent+"."+key]; r != nil {
			return r
		}
	}
	return w.entry.args[key]
}

func (w *argWalk) leaf(s string, ctx walkCtx) {
	if s == "" {
		return
	}
	w.scanSecrets(s, ctx.key)
	if mayGrant(ctx) {
		if w.public == "" && publicArg(ctx.key, s) {
			w.public = ctx.key + " " + s
		}
		if w.admin == "" && adminRole(s) && (!azureRoleName(s) || strings.Contains(ctx.path, "role")) {
			w.admin = s
		}
	}
	if ctx.class == keySourceAccount && ctx.rule == nil {
		w.b.note("paid from the account " + strings.TrimSpace(s))
		return
	}
	if ibans := findIBANs(s); len(ibans) > 0 {
		for _, ib := range ibans {
			w.b.account(ib)
		}
	}
	if r := ctx.rule; r != nil {
		w.ruleLeaf(s, r, ctx)
		return
	}
	switch ctx.class {
	case keyPath:
		if !strings.Contains(s, "://") || strings.HasPrefix(s, "file://") {
			w.addPath(s, w.access, ctx)
			return
		}
	case keyMaybePath:
		if act.LooksLikePath(s) {
			w.addPath(s, w.access, ctx)
			return
		}
	case keyAttachment:
		if act.LooksLikePath(s) && ctx.key != "content" && ctx.key != "data" {
			w.attachment = true
			w.addPath(s, Read, ctx)
			w.b.note("attachment " + w.lastPath() + " is read and sent")
			return
		}
	case keyURL:
		w.addURL(s, true)
		return
	case keyHost:
		if h := act.HostOnly(s); h != "" {
			w.b.host(h)
		}
		return
	case keyRecipient:
		if ctx.key == ctx.classKey || w.k.args.leaf[ctx.key] || strings.Contains(s, "@") {
			for _, rc := range w.addresses(s, ctx) {
				rc.Field = w.k.args.fields[ctx.classKey]
				w.recipients = append(w.recipients, rc)
			}
		}
	case keyAccount:
		w.accounts = append(w.accounts, strings.TrimSpace(s))
	case keyAmount, keyAmountMinor:
		if am, ok := parseAmount(s); ok {
			if am.Currency == "" {
				am.Currency = ctx.currency
			}
			if ctx.class == keyAmountMinor {
				am.Value = minorToMajor(am.Value, am.Currency)
			}
			w.b.amount(am)
		}
		return
	case keyContent:
		if w.entry == nil && (ctx.key == "query" || ctx.key == "q") && shell.LooksLikeSQL(s) {
			w.sqls = append(w.sqls, s)
		}
		return
	case keyShell:
		if w.entry == nil {
			w.shells = append(w.shells, s)
		}
	case keySQL:
		if w.entry == nil {
			w.sqls = append(w.sqls, s)
		}
	case keyCode:
		if w.entry == nil {
			w.codes = append(w.codes, codeArg{code: s})
		}
	}
	if ctx.class != keyContent && strings.Contains(s, "://") {
		w.findURLs(s)
	}
}

func (w *argWalk) ruleLeaf(s string, r *argRule, ctx walkCtx) {
	switch r.role {
	case rolePath:
		acc := r.access
		if acc == "" {
			acc = w.access
		}
		w.addPath(s, acc, ctx)
		if w.k.args.isAttachmentKey(r.key) && w.b.kinds.Has(Send) {
			w.attachment = true
			w.b.note("attachment " + w.lastPath() + " is read and sent")
		}
	case roleGlob:
		p := s
		if ctx.baseDir != "" && !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "~") {
			p = strings.TrimSuffix(ctx.baseDir, "/") + "/" + s
		}
		np, rel := act.NormPath(p, w.call.WorkingDir, w.call.HomeDir)
		acc := r.access
		if acc == "" {
			acc = Read
		}
		// A glob lists names; it reads no file, so it is not checked
		// for sensitivity.
		w.b.path(PathRef{Path: np, Access: acc})
		if rel {
			w.b.note("relative pattern " + np + " kept as is: working directory unknown")
		}
	case roleURL:
		w.addURL(s, true)
	case roleHost:
		if h := act.HostOnly(s); h != "" {
			w.b.host(h)
		}
	case roleRecipient:
		if ctx.key != ctx.ruleKey && !w.k.args.leaf[ctx.key] && !strings.Contains(s, "@") {
			return
		}
		field := r.field
		if field == "" {
			field = w.k.args.fields[r.key]
			if field == "" {
				field = r.key
			}
		}
		for _, rc := range w.addresses(s, ctx) {
			w.b.recipient(rc.Address, field, rc.Name)
		}
	case roleAccount:
		w.b.account(s)
	case roleAmount:
		if am, ok := parseAmount(s); ok {
			w.ruleAmount(am, r, ctx)
		}
	case roleShell:
		w.shells = append(w.shells, s)
	case roleSQL:
		w.sqls = append(w.sqls, s)
	case roleCode:
		w.codes = append(w.codes, codeArg{lang: r.language, code: s})
	case roleCurrency, roleContent:
	case roleNone, roleRemote:
		if strings.Contains(s, "://") {
			w.findURLs(s)
		}
	}
}

func (w *argWalk) number(n float64, ctx walkCtx) {
	if r := ctx.rule; r != nil {
		if r.role == roleAmount {
			w.ruleAmount(Amount{Value: n}, r, ctx)
		}
		return
	}
	switch ctx.class {
	case keyAmount:
		w.b.amount(Amount{Value: n, Currency: ctx.currency})
	case keyAmountMinor:
		w.b.amount(Amount{Value: minorToMajor(n, ctx.currency), Currency: ctx.currency})
	}
}

func (w *argWalk) ruleAmount(am Amount, r *argRule, ctx walkCtx) {
	if am.Currency == "" {
		am.Currency = r.currency
	}
	if am.Currency == "" {
		am.Currency = ctx.currency
	}
	if r.minor {
		am.Value = minorToMajor(am.Value, am.Currency)
	}
	w.b.amount(am)
}

func (w *argWalk) addPath(raw string, access Kind, ctx walkCtx) {
	ref, notes := w.k.paths.ref(raw, access, w.call.WorkingDir, w.call.HomeDir)
	w.b.path(ref)
	for _, n := range notes {
		w.b.note(n)
	}
}

func (w *argWalk) lastPath() string {
	if n := len(w.b.a.Paths); n > 0 {
		return w.b.a.Paths[n-1].Path
	}
	return ""
}

// addURL records a URL and its host. explicit means the key says it is a
// URL, so a scheme-less "example.com/x" counts too.
func (w *argWalk) addURL(s string, explicit bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 8192 {
		return
	}
	if !strings.Contains(s, "://") {
		if !explicit || strings.ContainsAny(s, " \n") || !strings.Contains(s, ".") && !strings.HasPrefix(s, "localhost") {
			if strings.Contains(s, "://") {
				w.findURLs(s)
			}
			return
		}
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		w.findURLs(s)
		return
	}
	w.b.url(s)
	w.b.host(u.Hostname())
	for _, n := range w.k.urlSecrets(u) {
		w.b.sensitive(n)
	}
	if k, n := linkAction(u); k != "" {
		w.linkKinds.Add(k)
		w.linkNotes = append(w.linkNotes, n)
	}
}

// urlSecrets explains the credentials a URL carries: a password in its
// user info, a query parameter named like a credential, a parameter whose
// decoded value is itself a credential ("v=postgres%3A%2F%2Fu%3Apw%40db"),
// or a parameter that names a secret ("k=JWT_SIGNING_KEY") sent along with a
// value. The opaque tokens that unsubscribe, confirmation and invitation
// links carry back to the site that issued them do not count by their name
// alone: following such a link is what the link is for.
func (k *knowledge) urlSecrets(u *url.URL) []string {
	var out []string
	if u.User != nil {
		if _, hasPw := u.User.Password(); hasPw {
			out = append(out, "URL "+redactURL(u)+" carries a password")
		}
	}
	if u.RawQuery == "" {
		return out
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return out
	}
	names := make([]string, 0, len(q))
	for n := range q {
		names = append(names, n)
	}
	slices.Sort(names)
	named, valued := "", false
	for _, name := range names {
		for _, v := range q[name] {
			if ms := k.secrets.Find(v); len(ms) > 0 {
				out = append(out, "URL parameter "+name+" carries a secret-looking value ("+ms[0].Type+")")
				continue
			}
			switch {
			case k.secrets.SensitiveKey(name) && !k.secrets.IsPlaceholder(v) && !k.args.linkTokenKey(name):
				out = append(out, "URL parameter "+name+" carries a credential")
			case k.secrets.SensitiveKey(v) && strings.ToUpper(v) == v:
				named = v
			case len(v) >= 8:
				valued = true
			}
		}
	}
	if named != "" && valued {
		out = append(out, "URL names the secret "+named+" and carries a value with it")
	}
	return out
}

// linkTokenKey reports whether a URL query parameter named k holds a link
// token (see argNames.linkTokens).
func (an *argNames) linkTokenKey(k string) bool { return an.linkTokens[fastSnake(k)] }

func (w *argWalk) findURLs(s string) {
	if len(s) > act.MaxScanPerString {
		s = s[:act.MaxScanPerString]
		w.b.unexamined(fmt.Sprintf("an argument is longer than %d bytes (MaxScanPerString): its links past that were not examined", act.MaxScanPerString))
	}
	ms := act.URLRE.FindAllString(s, act.MaxURLsPerString+1)
	if len(ms) > act.MaxURLsPerString {
		ms = ms[:act.MaxURLsPerString]
		w.b.unexamined(fmt.Sprintf("an argument holds more than %d links (MaxURLsPerString): the rest were not examined", act.MaxURLsPerString))
	}
	for _, m := range ms {
		m = strings.TrimRight(m, ".,;:!?")
		u, err := url.Parse(m)
		if err != nil || u.Host == "" {
			continue
		}
		w.b.url(m)
		w.b.host(u.Hostname())
	}
}

// scanSecrets marks the action sensitive when a value looks like a
// credential or sits under a credential-ish key.
func (w *argWalk) scanSecrets(s, key string) {
	if key != "" && w.k.secrets.SensitiveKey(key) && !w.k.secrets.IsPlaceholder(s) {
		w.b.sensitive("argument " + key + " holds a credential")
		return
	}
	if w.scanned >= act.MaxScanTotal {
		w.truncated = true
		return
	}
	if len(s) > act.MaxScanPerString {
		s = s[:act.MaxScanPerString]
		w.truncated = true
	}
	w.scanned += len(s)
	if m, ok := w.k.findSecret(s); ok {
		name := key
		if name == "" {
			name = "value"
		}
		w.b.sensitive(fmt.Sprintf("argument %s holds a secret-looking value (%s)", name, m.Type))
	}
}

// mayGrant reports whether a value could grant access (an address range,
// a principal, an ACL, a role): one with no role, or a remote name, not a
// path, URL, amount or message text.
func mayGrant(ctx walkCtx) bool {
	if ctx.rule != nil {
		return ctx.rule.role == roleNone || ctx.rule.role == roleRemote
	}
	return ctx.class == keyOther || ctx.class == keyRecipient
}

// findSecret returns the first secret-looking span of s, passing over the
// values of link tokens in URLs (see inLinkToken).
func (k *knowledge) findSecret(s string) (secret.Match, bool) {
	for _, m := range k.secrets.Find(s) {
		if !k.args.inLinkToken(s, m) {
			return m, true
		}
	}
	return secret.Match{}, false
}

// inLinkToken reports whether m is the value of a link-token query
// parameter ("…?token=9d1f2a&…", see linkTokens) of a URL in s, which
// urlSecrets judges on its own. A value that is a credential in its own
// right is found by the detectors for its format, not as an assignment.
func (an *argNames) inLinkToken(s string, m secret.Match) bool {
	if m.Type != "secret_assignment" || m.Start < 2 || s[m.Start-1] != '=' {
		return false
	}
	end := m.Start - 1
	i := end
	for i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_' || s[i-1] == '-') {
		i--
	}
	if i == end || i == 0 || (s[i-1] != '?' && s[i-1] != '&') {
		return false
	}
	return an.linkTokenKey(s[i:end])
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// argvLine joins an array of strings into a shell command line, quoting
// each element.
func argvLine(xs []any) (string, bool) {
	if len(xs) == 0 {
		return "", false
	}
	parts := make([]string, 0, len(xs))
	for _, x := range xs {
		s, ok := x.(string)
		if !ok {
			return "", false
		}
		parts = append(parts, shell.Quote(s))
	}
	return strings.Join(parts, " "), true
}

// addresses is the package's addresses, recording a cut-off list as not
// examined; an address without a display name of its own takes the one
// its recipient object gives.
func (w *argWalk) addresses(s string, ctx walkCtx) []Recipient {
	rs, cut := addresses(s)
	if cut {
		w.b.unexamined(fmt.Sprintf("argument %s names more than %d recipients (MaxRecipients): the rest were not examined", ctx.key, act.MaxRecipients))
	}
	if ctx.rname != "" {
		for i := range rs {
			if rs[i].Name == "" {
				rs[i].Name = ctx.rname
			}
		}
	}
	return rs
}

// addresses splits a recipient value into recipients: the e-mail
// addresses in it if any ("Eve <eve@evil.example>, bob@x.org"), each with
// the display name written before it in angle brackets, else the trimmed
// value (a channel, user or phone number). cut is set when the value
// holds more than MaxRecipients addresses (only the first are returned)
// or is a name too long to be one. Field is left to the caller.
func addresses(s string) (rs []Recipient, cut bool) {
	if IsConversationID(s) {
		return []Recipient{{Address: strings.TrimSpace(s)}}, false
	}
	if strings.Contains(s, "@") {
		if ms := emailRE.FindAllStringIndex(s, act.MaxRecipients+1); len(ms) > 0 {
			if len(ms) > act.MaxRecipients {
				ms, cut = ms[:act.MaxRecipients], true
			}
			rs = make([]Recipient, 0, len(ms))
			prev := 0
			for _, m := range ms {
				rs = append(rs, Recipient{
					Address: strings.ToLower(strings.Trim(s[m[0]:m[1]], "'.")),
					Name:    bracketName(s[prev:m[0]], s[m[1]:]),
				})
				prev = m[1]
			}
			return rs, cut
		}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	if len(s) > maxRecipientName {
		return nil, true
	}
	return []Recipient{{Address: s}}, false
}

// IsConversationID: s is a chat platform's conversation id that merely
// looks like an e-mail address — a number, a colon, then a token with an
// "@" and no space (Microsoft Teams' "19:a1b2…@thread.tacv2",
// "19:…@unq.gbl.spaces", "19:meeting_…@thread.v2"). It names a channel or a
// chat as a whole; the text after the colon is no mailbox, and its
// "domain" is no host.
func IsConversationID(s string) bool {
	s = strings.TrimSpace(s)
	colon := strings.IndexByte(s, ':')
	if colon < 1 || colon > 3 || len(s) > 256 {
		return false
	}
	for i := 0; i < colon; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	rest := s[colon+1:]
	at := strings.IndexByte(rest, '@')
	if at < 1 || at == len(rest)-1 || strings.Count(rest, "@") != 1 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(isAlnum(c) || c == '.' || c == '-' || c == '_' || c == '@') {
			return false
		}
	}
	return true
}

// bracketName is the display name of an address written "Name <addr>":
// before is the text since the previous address (or the start), after the
// text that follows the address. It is the quoted string before the "<"
// ("\"Reyes, Dana\" <dana@…>"), else the text back to the previous
// comma, semicolon or ">"; "" when the address is not in angle brackets.
func bracketName(before, after string) string {
	b := strings.TrimRight(before, " \t")
	if !strings.HasSuffix(b, "<") || !strings.HasPrefix(strings.TrimLeft(after, " \t"), ">") {
		return ""
	}
	b = strings.TrimRight(b[:len(b)-1], " \t")
	if strings.HasSuffix(b, `"`) {
		i := strings.LastIndexByte(b[:len(b)-1], '"')
		if i < 0 {
			return ""
		}
		return displayName(b[i+1 : len(b)-1])
	}
	if i := strings.LastIndexAny(b, ",;>\n"); i >= 0 {
		b = b[i+1:]
	}
	return displayName(b)
}

// displayName cleans a display name: quotes and spaces trimmed, runs of
// white space and control characters made one space. A name that holds an
// address or angle brackets names no one ("dana@corp.example"
// <eve@evil.example> is how a look-alike is written), nor does one too long
// to be a name; both give "".
func displayName(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	s = strings.Trim(s, `"' `)
	if s == "" || len(s) > maxRecipientName || strings.ContainsAny(s, "@<>") {
		return ""
	}
	return s
}

// maxRecipientName is the longest channel, user or phone name taken as one
// recipient; a longer value is not examined as a recipient.
const maxRecipientName = 256

func (an *argNames) isAttachmentKey(k string) bool {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	return an.classes[k] == keyAttachment
}

func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	c.RawQuery, c.Fragment = "", ""
	return c.String()
}

// currencyOf reads a currency code or symbol.
func currencyOf(s string) string {
	s = strings.TrimSpace(s)
	if up := strings.ToUpper(s); currencyCodeRE.MatchString(up) {
		return up
	}
	if c, ok := currencySymbols[s]; ok {
		return c
	}
	return currencySymbols[strings.ToLower(s)]
}

// fastSnake is snakeCase with a fast path for keys already in snake_case.
func fastSnake(k string) string {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' && i > 0 && i < len(k)-1 && k[i-1] != '_') {
			return snakeCase(k)
		}
	}
	return k
}

// argValues returns the scalar values under key (a snake_case name or
// dotted path) as lower-case strings, and whether the key is present. A bare
// name is looked up at the top level, then anywhere.
func argValues(args map[string]any, key string) ([]string, bool) {
	var v any
	var found bool
	if strings.Contains(key, ".") {
		v, found = lookupPath(args, strings.Split(key, "."))
	} else {
		v, found = lookupKey(args, key, 0)
	}
	if !found {
		return nil, false
	}
	var out []string
	collectScalars(v, &out, 0)
	return out, true
}

func lookupPath(m map[string]any, parts []string) (any, bool) {
	var cur any = m
	for _, p := range parts {
		for {
			if arr, ok := cur.([]any); ok && len(arr) > 0 {
				cur = arr[0]
				continue
			}
			break
		}
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		next, ok := findKey(mm, p)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func lookupKey(m map[string]any, key string, depth int) (any, bool) {
	if v, ok := findKey(m, key); ok {
		return v, true
	}
	if depth >= 6 {
		return nil, false
	}
	nested := false
	for _, v := range m {
		switch v.(type) {
		case map[string]any, []any:
			nested = true
		}
		if nested {
			break
		}
	}
	if !nested {
		// Flat arguments, the common case: nothing deeper to search,
		// and no key list to sort.
		return nil, false
	}
	keys := sortedKeys(m)
	for _, k := range keys {
		switch x := m[k].(type) {
		case map[string]any:
			if v, ok := lookupKey(x, key, depth+1); ok {
				return v, true
			}
		case []any:
			for _, e := range x {
				if mm, ok := e.(map[string]any); ok {
					if v, ok := lookupKey(mm, key, depth+1); ok {
						return v, true
					}
				}
			}
		}
	}
	return nil, false
}

// findKey finds key (snake_case) among m's keys in any naming style.
func findKey(m map[string]any, key string) (any, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if fastSnake(k) == key {
			return v, true
		}
	}
	return nil, false
}

func collectScalars(v any, out *[]string, depth int) {
	if depth > 8 || len(*out) > 256 {
		return
	}
	switch x := v.(type) {
	case string:
		*out = append(*out, strings.ToLower(x))
	case bool:
		*out = append(*out, fmt.Sprint(x))
	case []any:
		for _, e := range x {
			collectScalars(e, out, depth+1)
		}
	case map[string]any:
		keys := sortedKeys(x)
		for _, k := range keys {
			collectScalars(x[k], out, depth+1)
		}
	case nil:
	default:
		if n, ok := numberValue(x); ok {
			*out = append(*out, strings.ToLower(fmt.Sprint(n)))
		}
	}
}

// sortedKeys is m's keys in order: what is walked in key order gives the
// same notes and resources every time.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
