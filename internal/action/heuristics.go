package action

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/datafile"
	"github.com/mandate-dev/mandate/internal/vocab"
)

// Heuristics for tools the catalog does not know: what the name's words,
// the description and the parameter names suggest. They are weaker than the
// catalog and stronger than MCP annotations, which may only raise.

// nameSpec is the names section of a knowledge file (data/names.yaml).
type nameSpec struct {
	ReadLeads         []string            `yaml:"read_leads"`
	CredentialWords   []string            `yaml:"credential_words"`
	KeyQualifiers     []string            `yaml:"key_qualifiers"`
	TokenUnits        []string            `yaml:"token_units"`
	BenignObjects     []string            `yaml:"benign_objects"`
	CredentialPhrases []string            `yaml:"credential_phrases"`
	Vendors           map[string][]string `yaml:"vendors"`
	FamilyWords       map[string][]string `yaml:"family_words"`
}

// merge adds a later file's names to n; a word given a family again takes
// the later one.
func (n *nameSpec) merge(o *nameSpec) {
	n.ReadLeads = append(n.ReadLeads, o.ReadLeads...)
	n.CredentialWords = append(n.CredentialWords, o.CredentialWords...)
	n.KeyQualifiers = append(n.KeyQualifiers, o.KeyQualifiers...)
	n.TokenUnits = append(n.TokenUnits, o.TokenUnits...)
	n.BenignObjects = append(n.BenignObjects, o.BenignObjects...)
	n.CredentialPhrases = append(n.CredentialPhrases, o.CredentialPhrases...)
	n.Vendors = datafile.AppendGroups(n.Vendors, o.Vendors)
	n.FamilyWords = datafile.AppendGroups(n.FamilyWords, o.FamilyWords)
}

// nameWords is what the classifier knows about the words of tool names:
// the verb vocabulary as kind sets, and the words of nameSpec as sets.
type nameWords struct {
	// verbs count wherever they appear in a name (unless a read verb
	// leads it: in "get_payment_status" the later words are the object).
	verbs map[string]kindSet
	// lead count only as the first word: they are nouns elsewhere
	// ("email_user" sends; "get_email" reads).
	lead map[string]kindSet
	// nouns count anywhere unless a read verb leads: "create_payment"
	// pays.
	nouns map[string]kindSet

	readLeads, credentialWords, keyQualifiers, tokenUnits, benignObjects map[string]bool
	credentialPhrases                                                    []string
	// vendors map vendor and server words to families ("" for none);
	// they also are the prefixes stripped before a second look-up.
	vendors map[string]string
	// families map other words of a name to families.
	families map[string]string
}

// compileNames builds the name knowledge from the vocabulary and the
// names sections. Every kind the vocabulary names is one of ours (a test
// holds the two lists equal).
func compileNames(v *vocab.Vocabulary, n *nameSpec) *nameWords {
	set := func(t vocab.Table) map[string]kindSet {
		m := make(map[string]kindSet, len(t))
		for w, ks := range t {
			var s kindSet
			for _, k := range ks {
				s.Add(Kind(k))
			}
			m[w] = s
		}
		return m
	}
	groups := func(g map[string][]string) map[string]string {
		m := map[string]string{}
		for fam, ws := range g {
			for _, w := range ws {
				m[w] = fam
			}
		}
		return m
	}
	return &nameWords{
		verbs: set(v.Verbs()), lead: set(v.LeadVerbs()), nouns: set(v.Nouns()),
		readLeads: datafile.WordSet(n.ReadLeads), credentialWords: datafile.WordSet(n.CredentialWords),
		keyQualifiers: datafile.WordSet(n.KeyQualifiers), tokenUnits: datafile.WordSet(n.TokenUnits),
		benignObjects: datafile.WordSet(n.BenignObjects), credentialPhrases: slices.Compact(slices.Sorted(slices.Values(n.CredentialPhrases))),
		vendors: groups(n.Vendors), families: groups(n.FamilyWords),
	}
}

type heuristicResult struct {
	kinds    kindSet
	family   string
	external bool
	source   string
	notes    []string
}

// heuristics classifies a tool the catalog does not know.
func (k *knowledge) heuristics(server, tool string, def *ToolDef, args map[string]any) heuristicResult {
	wd := k.names
	h := heuristicResult{source: "none"}
	ts := tokens(tool)

	// Family: the server or a vendor word, else a word of the name.
	for _, t := range append(tokens(server), ts...) {
		if f := wd.vendors[t]; f != "" {
			h.family = f
			break
		}
	}
	if h.family == "" {
		for _, t := range ts {
			if f := wd.families[t]; f != "" {
				h.family = f
				break
			}
		}
	}

	// The name.
	nameKinds, readLed := wd.nameKinds(ts)
	if nameKinds != 0 {
		h.kinds = nameKinds
		h.source = "heuristic"
		h.notes = append(h.notes, "unknown tool; its name suggests "+nameKinds.Text())
	}

	// The description, when the name says nothing.
	if h.kinds == 0 && def != nil && def.Description != "" {
		if dk := wd.descriptionKinds(def.Description); dk != 0 {
			h.kinds = dk
			h.source = "heuristic"
			h.notes = append(h.notes, "unknown tool; its description suggests "+dk.Text())
		}
	}
	// Credential phrases in the description count even beside a name verb.
	if def != nil && wd.mentionsCredentials(def.Description) && !h.kinds.Has(Credential) {
		h.kinds.Add(Credential)
		h.source = "heuristic"
		h.notes = append(h.notes, "its description mentions credentials or the environment")
	}

	// Parameter names, from the call and from the declared schema.
	params := paramNames(def, args)
	if !readLed {
		pk, why := k.args.paramKinds(params, h.kinds)
		if pk&^h.kinds != 0 {
			h.kinds |= pk
			h.source = "heuristic"
			h.notes = append(h.notes, why...)
		}
		if h.family == "" {
			h.family = k.args.paramFamily(params)
		}
	}

	// Annotations: raise only.
	if def != nil && def.Annotations != nil {
		an := def.Annotations
		if isTrue(an.DestructiveHint) && !h.kinds.Has(Delete) {
			h.kinds.Add(Delete)
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
			} else if h.kinds.Top().Rank() > Fetch.Rank() {
				h.notes = append(h.notes, "server claims read-only (readOnlyHint); ignored, the name says otherwise")
			}
		}
	}
	if h.external && h.kinds == 0 {
		// Reaching the outside with nothing else known: at least a fetch,
		// but the kind stays unknown.
		h.kinds.Add(Unknown)
	}
	if h.kinds.Has(Write) && hasWord(ts, "upload") {
		h.external = true
	}
	if hasWord(ts, "deploy") {
		h.external = true
	}
	return h
}

// nameKinds reads kinds from a name's words. readLed reports a name led by a
// read verb, whose remaining words are its object.
func (wd *nameWords) nameKinds(ts []string) (ks kindSet, readLed bool) {
	if len(ts) == 0 {
		return 0, false
	}
	readLed = wd.readLeads[ts[0]]
	// A lead verb followed by a verb is a noun ("sms_list", "email_send").
	leadNoun := len(ts) > 1 && wd.lead[ts[0]] != 0 && wd.verbs[ts[1]] != 0
	if leadNoun {
		readLed = wd.readLeads[ts[1]]
	}
	for i, t := range ts {
		if wd.credentialWords[t] && !wd.tokenUnit(ts) {
			ks.Add(Credential)
		}
		if i > 0 && (t == "key" || t == "keys") && wd.keyQualifiers[ts[i-1]] {
			ks.Add(Credential)
		}
		if i == 0 || i == 1 && leadNoun {
			if k, ok := wd.verbs[t]; ok {
				ks |= wd.benignObject(k, ts[i+1:])
			} else if k, ok := wd.lead[t]; ok && !leadNoun {
				ks |= k
			}
			continue
		}
		if readLed {
			continue
		}
		if k, ok := wd.verbs[t]; ok {
			ks |= wd.benignObject(k, ts[i+1:])
		}
		if k, ok := wd.nouns[t]; ok {
			ks |= k
		}
	}
	return ks, readLed
}

// benignObject turns a delete verb on a benign object into a write.
func (wd *nameWords) benignObject(ks kindSet, rest []string) kindSet {
	if !ks.Has(Delete) || len(rest) == 0 {
		return ks
	}
	if wd.benignObjects[rest[0]] || len(rest) > 1 && wd.benignObjects[rest[len(rest)-1]] && len(rest) <= 2 {
		return ks&^act.Bit(Delete) | act.Bit(Write)
	}
	return ks
}

// tokenUnit reports names where "token" means a unit of text, not a
// credential: count_tokens, token_usage.
func (wd *nameWords) tokenUnit(ts []string) bool {
	for _, t := range ts {
		if wd.tokenUnits[t] {
			return true
		}
	}
	return false
}

// descriptionKinds reads the first sentence of a description: the first
// verb found leads, stronger verbs anywhere in the sentence add.
func (wd *nameWords) descriptionKinds(desc string) kindSet {
	var ks kindSet
	ws := wordsOf(firstSentence(desc), 40)
	lead := true
	for _, w := range ws {
		k := wd.verbOf(w)
		if k == 0 {
			continue
		}
		if lead {
			ks |= k
			lead = false
			continue
		}
		// After the lead verb only consequential verbs add ("Reads a file
		// and deletes it").
		for _, kk := range k.List() {
			if kk.Rank() >= Delete.Rank() {
				ks.Add(kk)
			}
		}
	}
	return ks
}

// verbOf looks a description word up as a verb, allowing third-person
// forms ("sends", "fetches", "echoes").
func (wd *nameWords) verbOf(w string) kindSet {
	for _, cand := range []string{w, strings.TrimSuffix(w, "s"), strings.TrimSuffix(w, "es")} {
		if k, ok := wd.verbs[cand]; ok {
			return k
		}
		if k, ok := wd.lead[cand]; ok && (k.Has(Send) || k.Has(Pay)) && cand != "text" && cand != "message" && cand != "order" && cand != "book" {
			return k
		}
	}
	if w == "returns" || w == "return" || w == "gets" || w == "lists" {
		return act.Bit(Read)
	}
	return 0
}

func (wd *nameWords) mentionsCredentials(desc string) bool {
	if desc == "" {
		return false
	}
	d := strings.ToLower(firstSentence(desc))
	for _, p := range wd.credentialPhrases {
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
func (an *argNames) paramKinds(params []string, have kindSet) (kindSet, []string) {
	var ks kindSet
	var why []string
	addWhy := func(k Kind, p string) {
		if !ks.Has(k) && !have.Has(k) {
			why = append(why, "parameter "+p+" suggests "+string(k))
		}
		ks.Add(k)
	}
	for _, p := range params {
		switch an.classes[p] {
		case keyRecipient:
			if f := an.fields[p]; f == "to" || f == "cc" || f == "bcc" || f == "phone" {
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

func (an *argNames) paramFamily(params []string) string {
	for _, p := range params {
		switch an.classes[p] {
		case keyRecipient:
			if f := an.fields[p]; f == "to" || f == "cc" || f == "bcc" {
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
