package action

import (
	"encoding/json"
	"slices"
	"strings"
)

// Heuristics for tools the catalog does not know: what the name's words,
// the description and the parameter names suggest. They are weaker than the
// catalog and stronger than MCP annotations, which may only raise.

// verbs count wherever they appear in a name (unless a read verb leads it:
// in "get_payment_status" the later words are the object, not the action).
var verbs = map[string]Kind{}

// leadVerbs count only as the first word: they are nouns elsewhere
// ("email_user" sends; "get_email" reads).
var leadVerbs = map[string]Kind{}

// readLeads are the verbs after which the rest of a name is the object.
var readLeads = map[string]bool{}

// nounKinds count anywhere unless a read verb leads: "create_payment" pays.
var nounKinds = map[string]Kind{}

// credentialWords mark credential access anywhere in a name, even after a
// read verb: "get_api_key", "read_secret", "print_env".
var credentialWords = map[string]bool{}

func init() {
	add := func(m map[string]Kind, k Kind, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = k
		}
	}
	add(verbs, Read, `get read list search find query show view describe lookup retrieve count
		check inspect preview summarize summarise load open export stat peek explain analyze
		analyse validate verify compare diff echo ping resolve estimate calculate convert
		translate parse extract scan watch monitor whoami lint plan return fetch_info`)
	add(verbs, Fetch, `fetch download browse navigate crawl scrape visit goto curl wget screenshot`)
	add(verbs, Write, `create add update edit modify set put write save insert upsert rename move
		copy mark assign enable disable toggle configure install apply patch merge commit
		schedule import sync register append replace change store attach fork clone restore
		approve reject close reopen lock unlock pin unpin follow like react vote accept decline
		snooze mute unmute block unblock grant compose prepare cancel unsubscribe deactivate
		reserve rsvp upload initialize init mkdir touch overwrite`)
	add(verbs, Delete, `delete remove rm del destroy drop purge erase trash wipe truncate uninstall
		clear discard revoke terminate empty expunge shred prune evict unlink`)
	add(verbs, Send, `send reply forward fwd publish share invite notify dm tweet submit broadcast
		announce respond push tell alert transmit deliver dispatch mention say`)
	add(verbs, Pay, `pay purchase buy checkout charge refund withdraw deposit donate payout remit
		tip bid sell trade`)
	add(verbs, Execute, `run exec execute eval invoke launch start spawn deploy trigger build
		compile restart stop reboot scale rollback kill provision migrate rollout`)
	add(verbs, Delegate, `delegate handoff subagent`)
	add(leadVerbs, Send, `email mail message post comment sms text chat`)
	add(leadVerbs, Pay, `order transfer wire book`)
	add(leadVerbs, Write, `draft label tag star flag archive log record link`)
	add(leadVerbs, Execute, `shell bash script command cmd python test`)
	for _, w := range strings.Fields(`get read list search find query show view describe lookup
		retrieve count check inspect preview summarize summarise stat peek explain analyze analyse
		validate verify compare diff fetch download browse whoami lint return`) {
		readLeads[w] = true
	}
	add(nounKinds, Pay, `payment payments purchase charge refund transfer checkout`)
	add(nounKinds, Delegate, `agent subagent`)
	for _, w := range strings.Fields(`token tokens secret secrets password passwords passwd
		credential credentials apikey keychain env environ environment vault`) {
		credentialWords[w] = true
	}
}

// vendorFamilies maps vendor and server words to tool families; they also
// are the prefixes stripped from names before a catalog lookup.
var vendorFamilies = map[string]string{
	"gmail": "email", "outlook": "email", "mail": "email", "email": "email", "imap": "email",
	"smtp": "email", "sendgrid": "email", "mailgun": "email", "fastmail": "email", "protonmail": "email",
	"slack": "chat", "discord": "chat", "teams": "chat", "telegram": "chat", "whatsapp": "chat",
	"mattermost": "chat", "signal": "chat", "twilio": "chat", "matrix": "chat",
	"gcal": "calendar", "calendar": "calendar", "calendly": "calendar",
	"contacts": "contacts",
	"gdrive":   "files", "drive": "files", "dropbox": "files", "onedrive": "files", "box": "files",
	"sharepoint": "files", "filesystem": "files", "fs": "files", "s3": "cloud",
	"browser": "web", "playwright": "web", "puppeteer": "web", "fetch": "web", "brave": "web",
	"tavily": "web", "exa": "web", "firecrawl": "web", "web": "web",
	"stripe": "payments", "paypal": "payments", "bank": "payments", "banking": "payments",
	"wise": "payments", "plaid": "payments", "revolut": "payments", "square": "payments",
	"shopify": "shopping", "amazon": "shopping", "shop": "shopping", "ebay": "shopping", "etsy": "shopping",
	"github": "code", "gitlab": "code", "bitbucket": "code", "git": "code", "gitea": "code",
	"jira": "code", "linear": "code",
	"aws": "cloud", "gcp": "cloud", "gcloud": "cloud", "azure": "cloud", "k8s": "cloud",
	"kubernetes": "cloud", "kubectl": "cloud", "docker": "cloud", "terraform": "cloud", "helm": "cloud",
	"postgres": "database", "postgresql": "database", "mysql": "database", "sqlite": "database",
	"mongo": "database", "mongodb": "database", "redis": "database", "supabase": "database",
	"bigquery": "database", "snowflake": "database", "db": "database",
	"notion": "files", "confluence": "files", "google": "", "microsoft": "", "ms": "", "o365": "",
	"office365": "", "mcp": "",
}

// familyWords map words in a tool name to families.
var familyWords = map[string]string{
	"email": "email", "emails": "email", "mail": "email", "inbox": "email", "draft": "email",
	"slack": "chat", "channel": "chat", "chat": "chat", "dm": "chat", "sms": "chat",
	"calendar": "calendar", "event": "calendar", "events": "calendar", "meeting": "calendar",
	"contact": "contacts", "contacts": "contacts",
	"file": "files", "files": "files", "folder": "files", "directory": "files", "document": "files",
	"drive": "files", "upload": "files",
	"url": "web", "web": "web", "browser": "web", "page": "web", "http": "web", "navigate": "web", "website": "web",
	"payment": "payments", "payments": "payments", "invoice": "payments", "transfer": "payments",
	"iban": "payments", "refund": "payments", "charge": "payments", "pay": "payments", "wallet": "payments",
	"cart": "shopping", "checkout": "shopping", "order": "shopping", "product": "shopping",
	"products": "shopping", "buy": "shopping", "purchase": "shopping",
	"repo": "code", "repository": "code", "pull": "code", "issue": "code", "branch": "code",
	"commit": "code", "pr": "code",
	"pod": "cloud", "pods": "cloud", "deployment": "cloud", "cluster": "cloud", "instance": "cloud",
	"bucket": "cloud", "lambda": "cloud",
	"sql": "database", "table": "database", "database": "database", "db": "database",
	"shell": "shell", "bash": "shell", "terminal": "shell", "command": "shell",
	"agent": "agent", "subagent": "agent",
}

type heuristicResult struct {
	kinds    kindSet
	family   string
	external bool
	source   string
	notes    []string
}

// heuristics classifies a tool the catalog does not know.
func heuristics(server, tool string, def *ToolDef, args map[string]any) heuristicResult {
	h := heuristicResult{source: "none"}
	ts := tokens(tool)

	// Family: the server or a vendor word, else a word of the name.
	for _, t := range append(tokens(server), ts...) {
		if f := vendorFamilies[t]; f != "" {
			h.family = f
			break
		}
	}
	if h.family == "" {
		for _, t := range ts {
			if f := familyWords[t]; f != "" {
				h.family = f
				break
			}
		}
	}

	// The name.
	nameKinds, readLed := nameKinds(ts)
	if nameKinds != 0 {
		h.kinds = nameKinds
		h.source = "heuristic"
		h.notes = append(h.notes, "unknown tool; its name suggests "+kindList(nameKinds))
	}

	// The description, when the name says nothing.
	if h.kinds == 0 && def != nil && def.Description != "" {
		if dk := descriptionKinds(def.Description); dk != 0 {
			h.kinds = dk
			h.source = "heuristic"
			h.notes = append(h.notes, "unknown tool; its description suggests "+kindList(dk))
		}
	}
	// Credential phrases in the description count even beside a name verb.
	if def != nil && mentionsCredentials(def.Description) && !h.kinds.has(Credential) {
		h.kinds.add(Credential)
		h.source = "heuristic"
		h.notes = append(h.notes, "its description mentions credentials or the environment")
	}

	// Parameter names, from the call and from the declared schema.
	params := paramNames(def, args)
	if !readLed {
		pk, why := paramKinds(params, h.kinds)
		if pk&^h.kinds != 0 {
			h.kinds |= pk
			h.source = "heuristic"
			h.notes = append(h.notes, why...)
		}
		if h.family == "" {
			h.family = paramFamily(params)
		}
	}

	// Annotations: raise only.
	if def != nil && def.Annotations != nil {
		an := def.Annotations
		if isTrue(an.DestructiveHint) && !h.kinds.has(Delete) {
			h.kinds.add(Delete)
			if h.source == "none" {
				h.source = "annotation"
			}
			h.notes = append(h.notes, "server marks it destructive (destructiveHint)")
		}
		if isTrue(an.OpenWorldHint) && !h.external {
			h.external = true
			if h.source == "none" {
				h.source = "annotation"
			}
			h.notes = append(h.notes, "server says it reaches the open world (openWorldHint)")
		}
		if isTrue(an.ReadOnlyHint) {
			if h.kinds == 0 {
				h.notes = append(h.notes, "server claims read-only (readOnlyHint); a claim alone is not trusted")
			} else if h.kinds.top().Rank() > Fetch.Rank() {
				h.notes = append(h.notes, "server claims read-only (readOnlyHint); ignored, the name says otherwise")
			}
		}
	}
	if h.external && h.kinds == 0 {
		// Reaching the outside with nothing else known: at least a fetch,
		// but the kind stays unknown.
		h.kinds.add(Unknown)
	}
	if h.kinds.has(Write) && hasWord(ts, "upload") {
		h.external = true
	}
	if hasWord(ts, "deploy") {
		h.external = true
	}
	return h
}

// nameKinds reads kinds from a name's words. readLed reports a name led by a
// read verb, whose remaining words are its object.
func nameKinds(ts []string) (ks kindSet, readLed bool) {
	if len(ts) == 0 {
		return 0, false
	}
	readLed = readLeads[ts[0]]
	// A lead verb followed by a verb is a noun ("sms_list", "email_send").
	leadNoun := len(ts) > 1 && leadVerbs[ts[0]] != "" && verbs[ts[1]] != ""
	if leadNoun {
		readLed = readLeads[ts[1]]
	}
	for i, t := range ts {
		if credentialWords[t] && !credentialExempt(ts) {
			ks.add(Credential)
		}
		if i > 0 && (t == "key" || t == "keys") && slices.Contains([]string{"api", "private", "secret", "access", "ssh", "signing", "encryption"}, ts[i-1]) {
			ks.add(Credential)
		}
		if i == 0 || i == 1 && leadNoun {
			if k, ok := verbs[t]; ok {
				ks.add(benignObject(k, ts[i+1:]))
			} else if k, ok := leadVerbs[t]; ok && !leadNoun {
				ks.add(k)
			}
			continue
		}
		if readLed {
			continue
		}
		if k, ok := verbs[t]; ok {
			ks.add(benignObject(k, ts[i+1:]))
		}
		if k, ok := nounKinds[t]; ok {
			ks.add(k)
		}
	}
	return ks, readLed
}

// benignObjects are things whose removal changes settings rather than
// destroying data: removing a label, a permission or a reaction is a write.
var benignObjects = map[string]bool{
	"label": true, "labels": true, "tag": true, "tags": true, "permission": true, "permissions": true,
	"reaction": true, "reactions": true, "star": true, "flag": true, "flags": true, "member": true,
	"members": true, "collaborator": true, "assignee": true, "assignees": true, "reviewer": true,
	"reviewers": true, "subscriber": true, "watcher": true, "pin": true, "bookmark": true, "favorite": true,
}

// benignObject turns a delete verb on a benign object into a write.
func benignObject(k Kind, rest []string) Kind {
	if k != Delete || len(rest) == 0 {
		return k
	}
	if benignObjects[rest[0]] || len(rest) > 1 && benignObjects[rest[len(rest)-1]] && len(rest) <= 2 {
		return Write
	}
	return k
}

// credentialExempt reports names where "token" means a unit of text, not a
// credential: count_tokens, token_usage.
func credentialExempt(ts []string) bool {
	for _, t := range ts {
		switch t {
		case "count", "usage", "limit", "tokenize", "tokenizer", "estimate":
			return true
		}
	}
	return false
}

// descriptionKinds reads the first sentence of a description: the first
// verb found leads, stronger verbs anywhere in the sentence add.
func descriptionKinds(desc string) kindSet {
	var ks kindSet
	words := wordsOf(firstSentence(desc), 40)
	lead := true
	for _, w := range words {
		k, ok := verbOf(w)
		if !ok {
			continue
		}
		if lead {
			ks.add(k)
			lead = false
			continue
		}
		// After the lead verb only consequential verbs add ("Reads a file
		// and deletes it").
		if k.Rank() >= Delete.Rank() {
			ks.add(k)
		}
	}
	return ks
}

// verbOf looks a description word up as a verb, allowing third-person
// forms ("sends", "fetches", "echoes").
func verbOf(w string) (Kind, bool) {
	for _, cand := range []string{w, strings.TrimSuffix(w, "s"), strings.TrimSuffix(w, "es")} {
		if k, ok := verbs[cand]; ok {
			return k, true
		}
		if k, ok := leadVerbs[cand]; ok && (k == Send || k == Pay) && cand != "text" && cand != "message" && cand != "order" && cand != "book" {
			return k, true
		}
	}
	if w == "returns" || w == "return" || w == "gets" || w == "lists" {
		return Read, true
	}
	return "", false
}

var credentialPhrases = []string{
	"environment variable", "api key", "api keys", "password", "secret", "access token",
	"credential", "private key", "keychain",
}

func mentionsCredentials(desc string) bool {
	if desc == "" {
		return false
	}
	d := strings.ToLower(firstSentence(desc))
	for _, p := range credentialPhrases {
		if strings.Contains(d, p) {
			return true
		}
	}
	return false
}

// paramNames lists the snake_case names of the call's arguments and the
// schema's declared properties.
func paramNames(def *ToolDef, args map[string]any) []string {
	var out []string
	for k := range args {
		out = append(out, fastSnake(k))
	}
	if def != nil {
		for _, p := range schemaProperties(def.InputSchema) {
			out = append(out, fastSnake(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// schemaProperties returns the property names of a JSON Schema, one level
// of nesting included.
func schemaProperties(schema any) []string {
	var m map[string]any
	switch s := schema.(type) {
	case map[string]any:
		m = s
	case json.RawMessage:
		_ = json.Unmarshal(s, &m)
	case []byte:
		_ = json.Unmarshal(s, &m)
	case string:
		_ = json.Unmarshal([]byte(s), &m)
	}
	if m == nil {
		return nil
	}
	var out []string
	props, _ := m["properties"].(map[string]any)
	for k, v := range props {
		out = append(out, k)
		if sub, ok := v.(map[string]any); ok {
			if sp, ok := sub["properties"].(map[string]any); ok {
				for k2 := range sp {
					out = append(out, k2)
				}
			}
			if items, ok := sub["items"].(map[string]any); ok {
				if ip, ok := items["properties"].(map[string]any); ok {
					for k2 := range ip {
						out = append(out, k2)
					}
				}
			}
		}
	}
	return out
}

// paramKinds reads kinds from parameter names.
func paramKinds(params []string, have kindSet) (kindSet, []string) {
	var ks kindSet
	var why []string
	addWhy := func(k Kind, p string) {
		if !ks.has(k) && !have.has(k) {
			why = append(why, "parameter "+p+" suggests "+string(k))
		}
		ks.add(k)
	}
	for _, p := range params {
		switch keyClasses[p] {
		case keyRecipient:
			if f := recipientFields[p]; f == "to" || f == "cc" || f == "bcc" || f == "phone" {
				addWhy(Send, p)
			}
		case keyAccount:
			if p == "iban" || strings.Contains(p, "iban") {
				addWhy(Pay, p)
			}
		case keyAmount, keyAmountMinor:
			if p == "amount" || strings.HasPrefix(p, "amount_") || p == "unit_amount" {
				addWhy(Pay, p)
			}
		case keyPath:
			if have == 0 {
				addWhy(Read, p)
			}
		case keyURL:
			if have == 0 {
				addWhy(Fetch, p)
			}
		case keyShell, keyCode:
			addWhy(Execute, p)
		}
		switch p {
		case "card_number", "payment_method", "payment_method_id", "card_token":
			addWhy(Pay, p)
		}
	}
	return ks, why
}

func paramFamily(params []string) string {
	for _, p := range params {
		switch keyClasses[p] {
		case keyRecipient:
			if f := recipientFields[p]; f == "to" || f == "cc" || f == "bcc" {
				return "email"
			}
		case keyAccount, keyAmount, keyAmountMinor:
			return "payments"
		case keyPath:
			return "files"
		case keyURL:
			return "web"
		case keyShell:
			return "shell"
		case keySQL:
			return "database"
		}
	}
	return ""
}

func hasWord(ts []string, w string) bool { return slices.Contains(ts, w) }

func kindList(ks kindSet) string {
	l := ks.list()
	parts := make([]string, len(l))
	for i, k := range l {
		parts[i] = string(k)
	}
	return strings.Join(parts, ", ")
}
