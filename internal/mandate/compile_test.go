package mandate

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/fold"
)

var testNow = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

const (
	r = action.Read
	f = action.Fetch
	w = action.Write
	x = action.Execute
	g = action.Delegate
	c = action.Credential
	d = action.Delete
	s = action.Send
	p = action.Pay
)

// readOnlyDeny is what a read-only restriction denies.
var readOnlyDeny = []action.Kind{w, x, d, s, p}

// compileCase is one sentence and what its draft must hold. Scope lists
// are exact (nil means none); prohibitions list "kind:target" entries
// that must be present ("pay:" for an untargeted one).
type compileCase struct {
	text       string
	lang       string // the first detected language
	allow      []action.Kind
	deny       []action.Kind
	ask        []action.Kind
	prohibit   []string
	paths      []string
	hosts      []string
	recipients []string
	accounts   []string
	names      []string
	spend      string // "84.2 EUR"
	counts     map[action.Kind]int
	expires    time.Duration // from testNow; -1 means end of today
}

var englishCases = []compileCase{
	{text: "Compare prices of the Dell U2723QE on two shops. Do not buy.", lang: "en",
		allow: []action.Kind{r, f}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
	{text: "Pay the electricity bill, 84.20 EUR to DE89 3704 0044 0532 0130 00", lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"DE89370400440532013000"}, spend: "84.2 EUR"},
	{text: "fix the failing test in ./pkg/auth", lang: "en",
		allow: []action.Kind{r, w}, paths: []string{"pkg/auth/**"}},
	{text: "Organise my inbox but don't delete anything.", lang: "en",
		allow: []action.Kind{r, w}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	{text: "Summarise https://news.example.com/today and email the summary to bob@example.com", lang: "en",
		allow: []action.Kind{r, f, s}, hosts: []string{"news.example.com"}, recipients: []string{"bob@example.com"}},
	{text: "Don't email bob@x.com.", lang: "en",
		allow: []action.Kind{r}, prohibit: []string{"send:bob@x.com"}},
	{text: "Read only: go through the logs in /var/log/nginx/", lang: "en",
		allow: []action.Kind{r}, deny: readOnlyDeny, paths: []string{"/var/log/nginx/**"}},
	{text: "Buy a USB-C cable on amazon.de for at most €20 today", lang: "en",
		allow: []action.Kind{r, f, p}, ask: []action.Kind{w}, hosts: []string{"amazon.de"}, spend: "20 EUR", expires: -1},
	{text: "Reply to the thread in #release-notes, at most 3 messages", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"#release-notes"}, counts: map[action.Kind]int{s: 3}},
	{text: "Clean up old branches in ~/code/mandate but never force push", lang: "en",
		allow: []action.Kind{r, w, d}, deny: []action.Kind{s}, paths: []string{"~/code/mandate/**"}},
	{text: "Run the tests and deploy to staging.example.com for the next 2 hours", lang: "en",
		allow: []action.Kind{r, f, w, x}, hosts: []string{"staging.example.com"}, expires: 2 * time.Hour},
	{text: "Just look at my calendar, no changes", lang: "en",
		allow: []action.Kind{r}, deny: readOnlyDeny, prohibit: []string{"write:"}},
	{text: "Tidy my inbx, dont delte anything", lang: "en", // typos
		allow: []action.Kind{r, w}, deny: []action.Kind{d}},
	{text: `Pay "Stadtwerke München" 120 EUR`, lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"Stadtwerke München"}, spend: "120 EUR"},
	{text: "Don't spend more than 50 dollars on books", lang: "en",
		allow: []action.Kind{r}, spend: "50 USD"},
	{text: "Forward the invoice to accounting@corp.example and ask a sub-agent to file it", lang: "en",
		allow: []action.Kind{r, w, g, s}, recipients: []string{"accounting@corp.example"}},
	{text: "Rotate the API keys for the staging cluster, don't touch prod/", lang: "en",
		allow: []action.Kind{r, c}, prohibit: []string{"write:prod/**", "delete:prod/**", "execute:prod/**"}},
	{text: "don't touch prod/ and fix src/foo.go", lang: "en",
		allow: []action.Kind{r, w}, prohibit: []string{"write:prod/**", "delete:prod/**", "execute:prod/**"}, paths: []string{"src/foo.go"}},
	{text: "No purchases, no emails. Send a message to 'Claire Dupont' in #team", lang: "en",
		allow: []action.Kind{r}, deny: []action.Kind{p, s}, recipients: []string{"Claire Dupont", "#team"}},
	{text: "Email the draft with subject \"Quarterly numbers\" to ops@example.com, up to 1,234.50 USD of ads", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"ops@example.com"}, spend: "1234.5 USD"},
	{text: "Cmopare prices, don't purchse anything", lang: "en", // a typo never grants, a negated one denies
		allow: []action.Kind{r}, deny: []action.Kind{p}},
}

// Cases where a verb asks for nothing, an exception inverts, or money
// moves without a pay verb.
var qualifiedCases = []compileCase{
	{text: "how much did I spend on restaurants in november?", lang: "en",
		allow: []action.Kind{r}},
	{text: "Trie les mails de la compta et dis-moi s'il y a une facture à payer", lang: "fr",
		allow: []action.Kind{r, w}},
	// "Create" takes its object's kind: a share link is sent (sharing a
	// link is a send call); the user's own "I'll send it" grants nothing.
	{text: "Create a share link for /Clients/Acme/, I'll send it to Acme myself", lang: "en",
		allow: []action.Kind{r, s}, paths: []string{"/Clients/Acme/**"}},
	{text: "send Lukas 23,50 € on paypal for dinner", lang: "en", names: []string{"Lukas"},
		allow: []action.Kind{r, s, p}, ask: []action.Kind{w}, spend: "23.5 EUR"},
	// Writing is asked for, and ruled out for "the production code", which
	// no scope entry can name: a person decides each write.
	{text: "Ajoute des tests pour parse_iban() mais ne touche pas au code de prod", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "Delete everything in ~/tmp except ~/tmp/keep/", lang: "en",
		allow: []action.Kind{r, d}, paths: []string{"~/tmp/**"}, prohibit: []string{"delete:~/tmp/keep/**"}},
	{text: "Email everyone at orbit-saas.com the agenda", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"*@orbit-saas.com"}},
	{text: "Don't email anyone outside orbit-saas.com", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{s}, recipients: []string{"*@orbit-saas.com"}},
	{text: "Don't email anyone at evil.example", lang: "en",
		allow: []action.Kind{r}, prohibit: []string{"send:*@evil.example"}},
	{text: "Check the Elster portal, just tell me if there's a new message, I'll log in later myself", lang: "en",
		allow: []action.Kind{r}, deny: readOnlyDeny},
	{text: "Post my standup in #team: yesterday the rate limiter, today reviewing the RFC", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"#team"}},
	{text: "test_parse_date is failing since yesterday, can you fix it?", lang: "en",
		allow: []action.Kind{r, w}},
}

var germanCases = []compileCase{
	{text: "Räum mein Postfach auf, aber lösch nichts.", lang: "de",
		allow: []action.Kind{r, w}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	{text: "Schick den Bericht an anna@firma.de, nicht an max@example.com.", lang: "de",
		allow: []action.Kind{r, s}, recipients: []string{"anna@firma.de"}, prohibit: []string{"send:max@example.com"}},
	{text: "Vergleiche die Preise für den Dell U2723QE bei idealo.de, kauf nichts.", lang: "de",
		allow: []action.Kind{r, f}, deny: []action.Kind{p}, hosts: []string{"idealo.de"}},
	{text: "Bezahle die Stromrechnung: 84,20 € an DE89 3704 0044 0532 0130 00", lang: "de",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"DE89370400440532013000"}, spend: "84.2 EUR"},
	{text: "Nur lesen: fasse die Mails von heute zusammen", lang: "de",
		allow: []action.Kind{r}, deny: readOnlyDeny},
	// "älter als 30 Tage" is a condition no scope entry holds: each
	// delete is put to a person (itemcond.go).
	{text: "Lösche alle Newsletter älter als 30 Tage in ~/Mail/Archiv/", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/Mail/Archiv/**"}},
	{text: "Kaufe höchstens 2 Tickets, maximal 150 Euro", lang: "de",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, spend: "150 EUR", counts: map[action.Kind]int{p: 2}},
	{text: `Überweise 50 € an "Stadtwerke München"`, lang: "de",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"Stadtwerke München"}, spend: "50 EUR"},
	{text: "Teste den Build in ./cmd/mandate und schick keine Mails", lang: "de",
		allow: []action.Kind{r, x}, deny: []action.Kind{s}, paths: []string{"cmd/mandate/**"}},
	{text: "Beantworte die Mail von lisa@example.de, aber schick nichts an andere", lang: "de",
		allow: []action.Kind{r, s}, recipients: []string{"lisa@example.de"}},
	{text: "Für die nächsten 2 Stunden darfst du Termine in meinem Kalender eintragen", lang: "de",
		allow: []action.Kind{r, w}, expires: 2 * time.Hour},
	{text: "Lösche nichts und bezahle nicht", lang: "de",
		allow: []action.Kind{r}, deny: []action.Kind{d, p}},
	{text: "Recherchiere Flüge nach Lissabon, keine Buchungen", lang: "de",
		allow: []action.Kind{r, f}, deny: []action.Kind{p}},
	{text: "Fass prod/ nicht an, repariere den Test in src/auth/", lang: "de",
		allow: []action.Kind{r, w}, prohibit: []string{"write:prod/**", "delete:prod/**", "execute:prod/**"}, paths: []string{"src/auth/**"}},
	{text: "Organisiere mein Postfach, aber nichts loeschen", lang: "de", // umlaut spelt out
		allow: []action.Kind{r, w}, deny: []action.Kind{d}},
	{text: "Sende höchstens 3 E-Mails an *@kunde.example, für die nächste Stunde", lang: "de",
		allow: []action.Kind{r, s}, recipients: []string{"*@kunde.example"}, counts: map[action.Kind]int{s: 3}, expires: time.Hour},
	{text: "Bestelle Druckerpapier für bis zu 1.234,50 EUR, aber nicht bei amazon.de", lang: "de",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, spend: "1234.5 EUR", prohibit: []string{"pay:amazon.de"}},
}

var frenchCases = []compileCase{
	{text: "Envoie le rapport à claire@exemple.fr, rien d'autre.", lang: "fr",
		allow: []action.Kind{r, s}, recipients: []string{"claire@exemple.fr"}},
	{text: "Range ma boîte mail mais ne supprime rien.", lang: "fr",
		allow: []action.Kind{r, w}, deny: []action.Kind{d}},
	{text: "Compare les prix de l'écran Dell sur amazon.fr et fnac.com, n'achète pas.", lang: "fr",
		allow: []action.Kind{r, f}, deny: []action.Kind{p}, hosts: []string{"amazon.fr", "fnac.com"}},
	{text: "Paie la facture d'électricité : 84,20 € sur FR76 3000 6000 0112 3456 7890 189", lang: "fr",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"FR7630006000011234567890189"}, spend: "84.2 EUR"},
	{text: "Lecture seule : résume les mails d'aujourd'hui", lang: "fr",
		allow: []action.Kind{r}, deny: readOnlyDeny},
	{text: "N'envoie rien à personne", lang: "fr",
		allow: []action.Kind{r}, deny: []action.Kind{s}},
	{text: "Corrige le test dans ./internal/auth/ et lance les tests", lang: "fr",
		allow: []action.Kind{r, w, x}, paths: []string{"internal/auth/**"}},
	{text: "Achète au maximum 3 livres, budget 60 €", lang: "fr",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, spend: "60 EUR", counts: map[action.Kind]int{p: 3}},
	{text: "Ne supprime rien dans ~/Documents et n'envoie aucun mail", lang: "fr",
		allow: []action.Kind{r}, deny: []action.Kind{s}, prohibit: []string{"delete:~/Documents/**", "send:"}},
	{text: "Réponds aux messages de #support pendant la prochaine heure", lang: "fr",
		allow: []action.Kind{r, s}, recipients: []string{"#support"}, expires: time.Hour},
	{text: `Vire 50 € à "Association Les Amis"`, lang: "fr",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"Association Les Amis"}, spend: "50 EUR"},
	{text: "Ne touche pas à prod/, corrige src/main.go", lang: "fr",
		allow: []action.Kind{r, w}, prohibit: []string{"write:prod/**", "delete:prod/**", "execute:prod/**"}, paths: []string{"src/main.go"}},
	{text: "Cherche des vols pour Lisbonne sans réserver", lang: "fr",
		allow: []action.Kind{r, f}, deny: []action.Kind{p}},
	{text: "Organise mes fichiers dans ~/Téléchargements/, aucune suppression", lang: "fr",
		allow: []action.Kind{r, w}, deny: []action.Kind{d}, paths: []string{"~/Téléchargements/**"}},
	{text: "Ne dépense pas plus de 100 euros", lang: "fr",
		allow: []action.Kind{r}, spend: "100 EUR"},
	{text: "Transfère ce mail à paul@exemple.fr", lang: "fr",
		allow: []action.Kind{r, s}, recipients: []string{"paul@exemple.fr"}},
	{text: "N’achète rien et n’envoie pas l’email à marc@exemple.fr", lang: "fr", // typographic apostrophes
		allow: []action.Kind{r}, deny: []action.Kind{p}, prohibit: []string{"send:marc@exemple.fr"}},
}

var spanishCases = []compileCase{
	{text: "Busca vuelos a Madrid, no compres nada.", lang: "es",
		allow: []action.Kind{r, f}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
	{text: "Organiza mi bandeja de entrada, pero no borres nada.", lang: "es",
		allow: []action.Kind{r, w}, deny: []action.Kind{d}},
	{text: "Envía el informe a lucia@ejemplo.es y a nadie más.", lang: "es",
		allow: []action.Kind{r, s}, recipients: []string{"lucia@ejemplo.es"}},
	{text: "Paga la factura de la luz, 84,20 € a ES91 2100 0418 4502 0005 1332", lang: "es",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"ES9121000418450200051332"}, spend: "84.2 EUR"},
	{text: "Solo lectura: revisa los registros en /var/log/app/", lang: "es",
		allow: []action.Kind{r}, deny: readOnlyDeny, paths: []string{"/var/log/app/**"}},
	{text: "No envíes nada a pedro@ejemplo.com", lang: "es",
		allow: []action.Kind{r}, prohibit: []string{"send:pedro@ejemplo.com"}},
	{text: "Compara precios del monitor en amazon.es, como máximo 300 €", lang: "es",
		allow: []action.Kind{r, f}, hosts: []string{"amazon.es"}, spend: "300 EUR"},
	{text: "Arregla el test en ./pkg/auth y ejecuta las pruebas", lang: "es",
		allow: []action.Kind{r, w, x}, paths: []string{"pkg/auth/**"}},
	{text: "No pagues nada hoy", lang: "es",
		allow: []action.Kind{r}, deny: []action.Kind{p}, expires: -1},
	{text: "Responde a los correos de #ventas durante las próximas 2 horas", lang: "es",
		allow: []action.Kind{r, s}, recipients: []string{"#ventas"}, expires: 2 * time.Hour},
	{text: `Transfiere 50 € a "Fundación Vida"`, lang: "es",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"Fundación Vida"}, spend: "50 EUR"},
	{text: "Elimina los archivos temporales de /tmp/cache/, nada más", lang: "es",
		allow: []action.Kind{r, d}, paths: []string{"/tmp/cache/**"}},
	{text: "Sin compras: solo mira las ofertas en tiendas online", lang: "es",
		allow: []action.Kind{r, f}, deny: readOnlyDeny},
	{text: "No toques prod/, corrige src/app.py", lang: "es",
		allow: []action.Kind{r, w}, prohibit: []string{"write:prod/**", "delete:prod/**", "execute:prod/**"}, paths: []string{"src/app.py"}},
	{text: "Envía como máximo 5 correos a clientes", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{s}, counts: map[action.Kind]int{s: 5}},
	{text: "Descarga el informe de https://datos.ejemplo.es/informe.pdf", lang: "es",
		allow: []action.Kind{r, f}, hosts: []string{"datos.ejemplo.es"}},
	{text: "Comprá un cargador en mercadolibre.com, hasta $25, y no borres nada", lang: "es",
		allow: []action.Kind{r, f, p}, ask: []action.Kind{w}, deny: []action.Kind{d}, hosts: []string{"mercadolibre.com"}, spend: "25 USD"},
}

var mixedCases = []compileCase{
	{text: "Lies meine Mails, don't send anything", lang: "de",
		allow: []action.Kind{r}, deny: []action.Kind{s}},
	{text: "Busca hoteles en Lisboa, but do not book", lang: "en",
		allow: []action.Kind{r, f}, deny: []action.Kind{p}},
	{text: "Check my emials and dont reply", lang: "en",
		allow: []action.Kind{r}, deny: []action.Kind{s}},
	{text: "bob@example.com", lang: "",
		allow: []action.Kind{r}, recipients: []string{"bob@example.com"}},
}

func TestCompileEnglish(t *testing.T)   { runCompileCases(t, englishCases) }
func TestCompileGerman(t *testing.T)    { runCompileCases(t, germanCases) }
func TestCompileFrench(t *testing.T)    { runCompileCases(t, frenchCases) }
func TestCompileSpanish(t *testing.T)   { runCompileCases(t, spanishCases) }
func TestCompileMixed(t *testing.T)     { runCompileCases(t, mixedCases) }
func TestCompileQualified(t *testing.T) { runCompileCases(t, qualifiedCases) }

func runCompileCases(t *testing.T, cases []compileCase) {
	t.Helper()
	if len(cases) < 4 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			dr, err := Compile(tc.text, WithNow(testNow))
			if err != nil {
				t.Fatal(err)
			}
			m := dr.Mandate
			explain := func() string {
				y, _ := dr.YAML()
				return string(y)
			}
			if tc.lang == "" {
				if len(dr.Languages) != 0 {
					t.Errorf("languages = %v, want none", dr.Languages)
				}
			} else if len(dr.Languages) == 0 || dr.Languages[0] != tc.lang {
				t.Errorf("languages = %v, want %s first", dr.Languages, tc.lang)
			}
			sameKinds(t, "allow", m.Allow, tc.allow)
			sameKinds(t, "deny", m.Deny, tc.deny)
			sameKinds(t, "ask", m.Ask, tc.ask)
			for _, want := range tc.prohibit {
				kind, target, _ := strings.Cut(want, ":")
				if !slices.ContainsFunc(m.Prohibitions, func(p Prohibition) bool {
					return string(p.Kind) == kind && p.Target == target && p.Text != ""
				}) {
					t.Errorf("no prohibition %s; have %+v", want, m.Prohibitions)
				}
			}
			sameList(t, "paths", m.Scope.Paths, tc.paths)
			sameList(t, "hosts", m.Scope.Hosts, tc.hosts)
			sameList(t, "recipients", m.Scope.Recipients, tc.recipients)
			sameList(t, "accounts", m.Scope.Accounts, tc.accounts)
			sameList(t, "names", m.Scope.Names, tc.names)
			sameLimits(t, m.Limits, tc.spend, tc.counts)
			switch {
			case tc.expires == 0 && m.ExpiresAt != nil:
				t.Errorf("expires = %v, want none", m.ExpiresAt)
			case tc.expires == -1 && (m.ExpiresAt == nil || !m.ExpiresAt.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))):
				t.Errorf("expires = %v, want the end of the day", m.ExpiresAt)
			case tc.expires > 0 && (m.ExpiresAt == nil || !m.ExpiresAt.Equal(testNow.Add(tc.expires))):
				t.Errorf("expires = %v, want now + %v", m.ExpiresAt, tc.expires)
			}
			checkDraftInvariants(t, tc.text, dr)
			if t.Failed() {
				t.Logf("draft:\n%s", explain())
			}
		})
	}
}

// checkDraftInvariants holds for every draft: it validates, allow and
// deny are disjoint, the text is kept verbatim, and every item of the
// mandate is explained.
func checkDraftInvariants(t *testing.T, text string, dr *Draft) {
	t.Helper()
	m := dr.Mandate
	if err := m.Validate(); err != nil {
		t.Errorf("draft does not validate: %v", err)
	}
	for _, k := range m.Allow {
		if slices.Contains(m.Deny, k) {
			t.Errorf("%s is both allowed and denied", k)
		}
	}
	if len(m.Instructions) != 1 || m.Instructions[0].Text != text || m.Instructions[0].Source != "user" {
		t.Errorf("instructions = %+v, want the text verbatim from the user", m.Instructions)
	}
	explained := func(meaning string) bool {
		return slices.ContainsFunc(dr.Recognised, func(r Recognition) bool { return r.Meaning == meaning })
	}
	for _, k := range m.Allow {
		if !explained("allow " + string(k)) {
			t.Errorf("allow %s is not explained", k)
		}
	}
	for _, k := range m.Deny {
		if !explained("deny " + string(k)) {
			t.Errorf("deny %s is not explained", k)
		}
	}
	for _, k := range m.Ask {
		if !explained("ask " + string(k)) {
			t.Errorf("ask %s is not explained", k)
		}
		if slices.Contains(m.Allow, k) || slices.Contains(m.Deny, k) {
			t.Errorf("ask %s is also allowed or denied", k)
		}
	}
	for dim, list := range map[string][]string{"path": m.Scope.Paths, "host": m.Scope.Hosts,
		"recipient": m.Scope.Recipients, "account": m.Scope.Accounts, "name": m.Scope.Names} {
		for _, e := range list {
			if !explained("scope " + dim + " " + e) {
				t.Errorf("scope %s %s is not explained", dim, e)
			}
		}
	}
	for _, p := range m.Prohibitions {
		if p.Target != "" && !slices.ContainsFunc(dr.Recognised, func(r Recognition) bool {
			return strings.HasPrefix(r.Meaning, "prohibit ") && strings.HasSuffix(r.Meaning, " on "+p.Target)
		}) {
			t.Errorf("prohibition on %s is not explained", p.Target)
		}
	}
	if sp := m.Limits.Spend; sp != nil && !explained("limit spend "+sp.String()) {
		t.Errorf("spend cap %s is not explained", sp)
	}
	for k, n := range m.Limits.Counts {
		if !slices.ContainsFunc(dr.Recognised, func(r Recognition) bool {
			return strings.HasPrefix(r.Meaning, "limit "+string(k)+" count ")
		}) {
			t.Errorf("count %s=%d is not explained", k, n)
		}
	}
	if m.ExpiresAt != nil && !explained("expires "+m.ExpiresAt.Format(time.RFC3339)) {
		t.Errorf("expiry is not explained")
	}
	for _, r := range dr.Recognised {
		if r.Meaning == "" || r.Why == "" || r.Phrase == "" {
			t.Errorf("incomplete recognition %+v", r)
		}
	}
}

func sameKinds(t *testing.T, what string, got, want []action.Kind) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// sameLimits checks a mandate's limits: its spend cap as written ("" for
// none) and exactly the counts wanted.
func sameLimits(t *testing.T, got Limits, spend string, counts map[action.Kind]int) {
	t.Helper()
	gotSpend := ""
	if got.Spend != nil {
		gotSpend = got.Spend.String()
	}
	if gotSpend != spend {
		t.Errorf("spend = %q, want %q", gotSpend, spend)
	}
	if len(got.Counts) != len(counts) {
		t.Errorf("counts = %v, want %v", got.Counts, counts)
	}
	for k, n := range counts {
		if got.Counts[k] != n {
			t.Errorf("counts[%s] = %d, want %d", k, got.Counts[k], n)
		}
	}
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("scope %s = %q, want %q", what, got, want)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, in := range []string{"", "   \n\t ", "\xff\xfe", strings.Repeat("a ", maxInstructions)} {
		if _, err := Compile(in); err == nil {
			t.Errorf("Compile(%.20q) succeeded, want an error", in)
		}
	}
}

func TestCompileIsDeterministic(t *testing.T) {
	text := "Compare prices on amazon.de and fnac.com, email bob@example.com and #team, don't buy, up to 50 EUR, for 2 hours"
	first, err := Compile(text, WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := first.YAML()
	for range 20 {
		again, _ := Compile(text, WithNow(testNow))
		got, _ := again.YAML()
		if string(got) != string(want) {
			t.Fatalf("drafts differ:\n%s\n---\n%s", want, got)
		}
	}
}

func TestCompileImplicitRead(t *testing.T) {
	dr, err := Compile("Fix the bug.", WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(dr.Recognised, func(r Recognition) bool { return r.Meaning == "allow read" && strings.Contains(r.Why, "implicit") }) {
		t.Errorf("implicit read not explained: %+v", dr.Recognised)
	}
	dr, err = Compile("Don't read my private mails.", WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(dr.Mandate.Allow, action.Read) || !slices.Contains(dr.Mandate.Deny, action.Read) {
		t.Errorf("read prohibited yet allow=%v deny=%v", dr.Mandate.Allow, dr.Mandate.Deny)
	}
}

func TestCompileDeniedWins(t *testing.T) {
	dr, err := Compile("Buy the cheapest charger. Actually, don't buy anything.", WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(dr.Mandate.Allow, action.Pay) || !slices.Contains(dr.Mandate.Deny, action.Pay) {
		t.Fatalf("allow=%v deny=%v", dr.Mandate.Allow, dr.Mandate.Deny)
	}
	if !slices.ContainsFunc(dr.Recognised, func(r Recognition) bool {
		return r.Meaning == "drop allow pay" && strings.Contains(r.Why, "denied wins")
	}) {
		t.Errorf("conflict not explained: %+v", dr.Recognised)
	}
}

func TestDraftYAML(t *testing.T) {
	dr, err := Compile("Compare prices of the Dell U2723QE on two shops. Do not buy.", WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	y, err := dr.YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mandate:", "allow:", "- fetch", "deny:", "- pay", "text: Do not buy", "languages:", "- en", "recognised:",
		`why: negation "Do not" + verb "buy" (pay)`} {
		if !strings.Contains(string(y), want) {
			t.Errorf("YAML lacks %q:\n%s", want, y)
		}
	}
	// The mandate part parses back.
	start := strings.Index(string(y), "mandate:\n")
	end := strings.Index(string(y), "\nlanguages:")
	body := string(y)[start+len("mandate:\n") : end]
	m, err := Parse([]byte(dedent(body)))
	if err != nil {
		t.Fatalf("the printed mandate does not parse: %v\n%s", err, body)
	}
	sameKinds(t, "allow", m.Allow, dr.Mandate.Allow)
}

func dedent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n")
}

func TestLexiconsLoad(t *testing.T) {
	lx, err := loadLexicon()
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, l := range lx.langs {
		codes = append(codes, l.code)
	}
	for _, want := range []string{"de", "en", "es", "fr", "it"} {
		if !slices.Contains(codes, want) {
			t.Errorf("no %s lexicon; have %v", want, codes)
		}
	}
}

// TestCompileBriefPhrases holds the short forms users write most.
func TestCompileBriefPhrases(t *testing.T) {
	tests := map[string]struct{ allow, deny []action.Kind }{
		"don't buy":            {[]action.Kind{r}, []action.Kind{p}},
		"do not send anything": {[]action.Kind{r}, []action.Kind{s}},
		"never delete":         {[]action.Kind{r}, []action.Kind{d}},
		"without buying":       {[]action.Kind{r}, []action.Kind{p}},
		"no purchases":         {[]action.Kind{r}, []action.Kind{p}},
		"nur lesen":            {[]action.Kind{r}, readOnlyDeny},
		"read only":            {[]action.Kind{r}, readOnlyDeny},
		"lecture seule":        {[]action.Kind{r}, readOnlyDeny},
		"solo lectura":         {[]action.Kind{r}, readOnlyDeny},
		"just look":            {[]action.Kind{r}, readOnlyDeny},
		"don't check out":      {[]action.Kind{r}, []action.Kind{p}},
		// the run asked for is put to a person, not denied
		"run the tests, just tell me what fails": {[]action.Kind{r}, []action.Kind{w, d, s, p}},
		"don't touch anything":                   {[]action.Kind{r}, readOnlyDeny},
		"nichts löschen":                         {[]action.Kind{r}, []action.Kind{d}},
		"lösch nichts":                           {[]action.Kind{r}, []action.Kind{d}},
		"kauf nichts":                            {[]action.Kind{r}, []action.Kind{p}},
		"nicht bezahlen":                         {[]action.Kind{r}, []action.Kind{p}},
		"ne supprime rien":                       {[]action.Kind{r}, []action.Kind{d}},
		"n'envoie rien":                          {[]action.Kind{r}, []action.Kind{s}},
		"n'achète pas":                           {[]action.Kind{r}, []action.Kind{p}},
		"no compres":                             {[]action.Kind{r}, []action.Kind{p}},
		"no borres nada":                         {[]action.Kind{r}, []action.Kind{d}},
		"no envíes nada":                         {[]action.Kind{r}, []action.Kind{s}},
		"no pagues":                              {[]action.Kind{r}, []action.Kind{p}},
		"tidy my inbox":                          {[]action.Kind{r, w}, nil},
		"organise my inbox":                      {[]action.Kind{r, w}, nil},
		"search online":                          {[]action.Kind{r, f}, nil},
		"look up the hours":                      {[]action.Kind{r, f}, nil},
		"research the best VPN":                  {[]action.Kind{r, f}, nil},
		"ask a sub-agent":                        {[]action.Kind{r, g}, nil},
		"log in and rotate keys":                 {[]action.Kind{r, c}, nil},
		"unsubscribe from all":                   {[]action.Kind{r, d}, nil},
		"run the build":                          {[]action.Kind{r, x}, nil},
		"reply to Tom":                           {[]action.Kind{r, s}, nil},
		"order a pizza":                          {[]action.Kind{r, p}, nil},
		"bezahle die Rechnung":                   {[]action.Kind{r, p}, nil},
		"envoie le rapport":                      {[]action.Kind{r, s}, nil},
		"borra los borradores":                   {[]action.Kind{r, d}, nil},
		"überweise das Geld":                     {[]action.Kind{r, p}, nil},
		"transfiere el dinero":                   {[]action.Kind{r, p}, nil},
		"schick die Mail":                        {[]action.Kind{r, s}, nil},
		"supprime les doublons":                  {[]action.Kind{r, d}, nil},
		"manda el correo":                        {[]action.Kind{r, s}, nil},
		"achète le billet":                       {[]action.Kind{r, p}, nil},
		"virement à ma sœur":                     {[]action.Kind{r}, nil}, // a noun, not a verb: nothing granted
		"the order is late, tell me why":         {[]action.Kind{r}, nil},
	}
	for text, want := range tests {
		dr, err := Compile(text, WithNow(testNow))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		t.Run(text, func(t *testing.T) {
			sameKinds(t, "allow", dr.Mandate.Allow, want.allow)
			sameKinds(t, "deny", dr.Mandate.Deny, want.deny)
			checkDraftInvariants(t, text, dr)
		})
	}
}

// TestLanguageIsATable adds a language by adding a file: a tiny Italian
// lexicon beside English and German, in a file system of its own.
func TestLanguageIsATable(t *testing.T) {
	fsys := fstest.MapFS{
		"lang/it.yaml": {Data: []byte(`code: it
name: Italiano
markers: [il, la, e, di, per, con]
determiners: [il, la, lo, i, le, un, una]
verbs:
  read: [confronta, confrontare, leggi]
  pay: [compra, comprare, compri, paga]
  delete: [cancella, cancellare, cancelli]
negations:
  before: [non, mai, senza]
  after: [niente, nulla]
web_markers: [prezzi, negozi]
`)},
	}
	for _, code := range []string{"en", "de"} {
		data, err := fs.ReadFile(langFS, "lang/"+code+".yaml")
		if err != nil {
			t.Fatal(err)
		}
		fsys["lang/"+code+".yaml"] = &fstest.MapFile{Data: data}
	}
	lx, err := loadLexiconFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	dr := newCompilerFor(lx).compile("Confronta i prezzi di due negozi, non comprare niente e non cancellare", testNow)
	if len(dr.Languages) != 1 || dr.Languages[0] != "it" {
		t.Errorf("languages = %v, want [it]", dr.Languages)
	}
	sameKinds(t, "allow", dr.Mandate.Allow, []action.Kind{r, f})
	sameKinds(t, "deny", dr.Mandate.Deny, []action.Kind{p, d})

	if _, err := loadLexiconFS(fstest.MapFS{"lang/xx.yaml": {Data: []byte("code: xx\nverbs: {shop: [x]}\n")}}); err == nil {
		t.Error("a lexicon with an unknown kind loaded")
	}
	if _, err := loadLexiconFS(fstest.MapFS{"lang/xx.yaml": {Data: []byte("code: yy\n")}}); err == nil {
		t.Error("a lexicon whose code differs from its file name loaded")
	}
	if _, err := loadLexiconFS(fstest.MapFS{"lang/xx.yaml": {Data: []byte("code: xx\nverb: {}\n")}}); err == nil {
		t.Error("a lexicon with an unknown list loaded")
	}
}

func TestParseAmount(t *testing.T) {
	for in, want := range map[string]float64{
		"84.20": 84.2, "84,20": 84.2, "1.234,50": 1234.5, "1,234.50": 1234.5, "1.234": 1234, "1,234": 1234,
		"1234": 1234, "50": 50, "1.234.567": 1234567, "1 234,50": 1234.5, "12'345.00": 12345,
	} {
		got, ok := parseAmount(strings.ReplaceAll(in, " ", "\u00a0"))
		if !ok || got != want {
			t.Errorf("parseAmount(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
}

func TestEntities(t *testing.T) {
	c, err := sharedCompiler()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []string // "kind=value"
	}{
		{"see https://Shop-A.example/u2723qe?x=1.", []string{"0=shop-a.example"}},
		{"mail Bob.Smith@Example.COM now", []string{"1=bob.smith@example.com"}},
		{"IBAN DE89 3704 0044 0532 0130 00 EUR", []string{"2=DE89370400440532013000"}},
		{"IBAN DE89 3704 0044 0532 0130 01", nil}, // checksum fails
		{"€50, $20, 50 €, 50 Euro, 579 USD, EUR 12", []string{"3=50 EUR", "3=20 USD", "3=50 EUR", "3=50 EUR", "3=579 USD", "3=12 EUR"}},
		{"on amazon.de or www.ebay.co.uk/item", []string{"4=amazon.de", "4=www.ebay.co.uk"}},
		{"edit main.go and notes.md, not e.g. this", []string{"5=**/main.go", "5=**/notes.md"}},
		{"./x ../y/z.txt /abs ~/docs src/foo.go docs/ and/or km/h 12/05", []string{"5=x/**", "5=../y/z.txt", "5=/abs/**", "5=~/docs/**", "5=src/foo.go", "5=docs/**"}},
		{"post in #general, fix issue #123", []string{"6=#general"}},
		{`pay "Stadtwerke München" and «Les Amis» but don't`, []string{"7=Stadtwerke München", "7=Les Amis"}},
		{"src/[id].tsx and src/**/*.go", []string{`5=src/\[id\].tsx`, "5=src/**/*.go"}},
	}
	for _, tt := range tests {
		var got []string
		for _, e := range c.lx.extractEntities(tt.text, c.re) {
			v := e.value
			if e.kind == entAmount {
				v = e.money.String()
			}
			got = append(got, string(rune('0'+e.kind))+"="+v)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q:\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
}

func TestIBANChecksum(t *testing.T) {
	for in, want := range map[string]bool{
		"DE89370400440532013000":      true,
		"GB82WEST12345698765432":      true,
		"FR7630006000011234567890189": true,
		"DE89370400440532013001":      false,
		"XX00":                        false,
	} {
		if got := ibanValid(in); got != want {
			t.Errorf("ibanValid(%s) = %v", in, got)
		}
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"Lösche": "losche", "N’achète": "n'achete", "ENVÍA": "envia", "Straße": "strasse", "cœur": "coeur",
		"e\u0301te\u0301": "ete",
	} {
		if got := fold.String(in); got != want {
			t.Errorf("fold.String(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCompile(f *testing.F) {
	for _, cases := range [][]compileCase{englishCases, germanCases, frenchCases, spanishCases, mixedCases, qualifiedCases} {
		for _, tc := range cases {
			f.Add(tc.text)
		}
	}
	for _, cases := range [][]compileCase{itemConditionCases, impliedKindCases} {
		for _, tc := range cases {
			f.Add(tc.text)
		}
	}
	for _, s := range []string{"'", "\"", "«", "n'", "don't", "€", "1.2.3,4,5 EUR", "DE89 ", "#", "./", "~", "for the next", ":", "--", "a/b/c/",
		"only delete files older than 99999999 years", "älter als", "reply to no one", "don't push", "keep", "at most 10 messages",
		"Lade Pa\x00St ein", "send it to bob\x7f@corp.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		dr, err := Compile(text, WithNow(testNow))
		if err != nil {
			return
		}
		m := dr.Mandate
		if err := m.Validate(); err != nil {
			t.Fatalf("Compile(%q) does not validate: %v", text, err)
		}
		for _, k := range m.Allow {
			if slices.Contains(m.Deny, k) {
				t.Fatalf("Compile(%q): %s both allowed and denied", text, k)
			}
		}
		if _, err := dr.YAML(); err != nil {
			t.Fatalf("Compile(%q): YAML: %v", text, err)
		}
		if len(dr.NotUnderstood) > maxUnrecognised+1 {
			t.Fatalf("Compile(%q): %d phrases not understood, more than the bound", text, len(dr.NotUnderstood))
		}
		for _, k := range m.Allow {
			if slices.Contains(m.Ask, k) {
				t.Fatalf("Compile(%q): %s both allowed and asked", text, k)
			}
		}
	})
}

func BenchmarkCompile(b *testing.B) {
	text := "Compare prices of the Dell U2723QE on amazon.de and fnac.com, email the summary to bob@example.com. Do not buy; up to 600 EUR, for the next 2 hours."
	if _, err := Compile(text, WithNow(testNow)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(text, WithNow(testNow)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCompileScenarioIntents compiles every intent of the scenario corpus
// (scenarios/*.jsonl) and holds the draft invariants: real users' words,
// in several languages, must never yield an invalid or unexplained draft. The
// corpus is part of the repository, so a missing corpus, an unreadable line
// or a corpus without intents fails: a skip here would hide a regression.
func TestCompileScenarioIntents(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenario corpus in ../../scenarios/*.jsonl: it is part of the repository")
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var ep struct {
				Intent string `json:"intent"`
			}
			if err := json.Unmarshal([]byte(line), &ep); err != nil {
				t.Errorf("%s:%d: %v", f, i+1, err)
				continue
			}
			if strings.TrimSpace(ep.Intent) == "" {
				continue
			}
			dr, err := Compile(ep.Intent, WithNow(testNow))
			if err != nil {
				t.Errorf("%s: %q: %v", f, ep.Intent, err)
				continue
			}
			checkDraftInvariants(t, ep.Intent, dr)
			n++
		}
	}
	if n == 0 {
		t.Fatal("the scenario corpus holds no intent")
	}
	t.Logf("%d intents", n)
}

func TestCompileRefusesControlCharacters(t *testing.T) {
	for _, text := range []string{"Lade Pa\x00St ein", "email bob\x1b[31m@corp.example", "delete\u0085 the logs"} {
		if _, err := Compile(text, WithNow(testNow)); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("Compile(%q) = %v, want an error naming the control character", text, err)
		}
	}
	for _, text := range []string{"delete the logs\n\tin build/\r\n"} {
		if _, err := Compile(text, WithNow(testNow)); err != nil {
			t.Errorf("Compile(%q): %v, want line breaks and tabs accepted", text, err)
		}
	}
}
