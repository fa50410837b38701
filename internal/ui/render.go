package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/store"
)

// Limits on what one value may take on a page: a hostile or huge value
// (a 1 MB argument) is cut, with the number of bytes left out said.
const (
	maxText = 400     // one line of text: a reason, a note, a tool name
	maxJSON = 8 << 10 // a call's arguments or a tool's output, indented
)

// pageData is what every page template gets.
type pageData struct {
	V     *viewer
	Title string
	// Nav is the section the page belongs to, for the menu.
	Nav  string
	Data any
}

// parsePages parses each page with the layout and the shared partials:
// one template set per page, so every page defines "content" its own way.
func parsePages() (map[string]*template.Template, error) {
	files, err := templateFS.ReadDir("templates")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, f := range files {
		name := strings.TrimSuffix(f.Name(), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/"+f.Name())
		if err != nil {
			return nil, fmt.Errorf("ui: template %s: %w", f.Name(), err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes a whole page (the layout around the page's content).
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, v *viewer, status int, page string, data any) {
	d.execute(w, r, status, page, "layout", pageData{V: v, Title: titles[page], Nav: navOf[page], Data: data})
}

// fragment writes one named template of a page alone, for htmx; data is
// what that template takes.
func (d *Dashboard) fragment(w http.ResponseWriter, r *http.Request, page, name string, data any) {
	d.execute(w, r, http.StatusOK, page, name, data)
}

func (d *Dashboard) execute(w http.ResponseWriter, r *http.Request, status int, page, name string, data any) {
	t, ok := d.pages[page]
	if !ok {
		d.log.Error("dashboard: no such page template", "page", page)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	// Render to a buffer first: a template error becomes a clean 500, not
	// half a page.
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		d.log.Error("dashboard: rendering failed", "page", page, "template", name, "path", r.URL.Path, "err", err)
		http.Error(w, "internal error rendering this page", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

var titles = map[string]string{
	"login": "Sign in", "live": "Live", "sessions": "Sessions", "session": "Session", "decision": "Decision",
	"approvals": "Approvals", "approval": "Approval", "agents": "Agents", "agent": "Agent", "error": "Error", "evidence": "Evidence", "summary": "Session summary", "trace": "Trace", "policy": "Policy",
}

var navOf = map[string]string{
	"live": "live", "sessions": "sessions", "session": "sessions", "decision": "live",
	"approvals": "approvals", "approval": "approvals", "agents": "agents", "agent": "agents", "evidence": "evidence", "summary": "sessions", "trace": "live", "policy": "policy",
}

type errorData struct {
	Status  int
	Message string
}

// errorPage answers a page that cannot be shown with its status and a
// sentence saying why.
func (d *Dashboard) errorPage(w http.ResponseWriter, r *http.Request, v *viewer, status int, msg string) {
	d.render(w, r, v, status, "error", errorData{Status: status, Message: msg})
}

func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request, v *viewer, msg string) {
	d.errorPage(w, r, v, http.StatusNotFound, msg)
}

// fail answers an engine error: unknown is 404, forbidden 403, bad input
// 400, anything else 500 (logged).
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, v *viewer, what string, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.notFound(w, r, v, fmt.Sprintf("There is no %s here.", what))
	case errors.Is(err, engine.ErrForbidden):
		d.errorPage(w, r, v, http.StatusForbidden, "Your token may not see or do this: "+err.Error())
	case errors.Is(err, engine.ErrInvalid):
		d.errorPage(w, r, v, http.StatusBadRequest, err.Error())
	case errors.Is(err, store.ErrConflict):
		d.errorPage(w, r, v, http.StatusConflict, err.Error())
	default:
		d.log.Error("dashboard: request failed", "path", r.URL.Path, "err", err)
		d.errorPage(w, r, v, http.StatusInternalServerError, "Something failed on the server; the log says what.")
	}
}

var funcs = template.FuncMap{
	"trunc":     trunc,
	"pct":       func(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) },
	"pretty":    pretty,
	"iso":       func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"utc":       func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"timep":     func(t *time.Time) time.Time { return derefTime(t) },
	"resources": resources,
	"join":      func(sep string, l []string) string { return strings.Join(l, sep) },
	"kinds": func(l []action.Kind) string {
		s := make([]string, len(l))
		for i, k := range l {
			s[i] = string(k)
		}
		return strings.Join(s, ", ")
	},
	// short cuts an id for a table cell (its title attribute has it whole).
	"short": func(s string) string {
		if len(s) <= 24 {
			return s
		}
		return trunc(23, s)[:23] + "…"
	},
	"add":    func(a, b int) int { return a + b },
	"base":   path.Base,
	"chart":  func(title string, c *barChart) chartView { return chartView{Title: title, L: c.Layout()} },
	"signal": func(raw json.RawMessage) string { return trunc(maxText, string(raw)) },
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// trunc cuts s to at most n bytes (on a rune boundary), saying how much
// was left out.
func trunc(n int, s string) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

// pretty indents a JSON value for reading: each string cut at maxString
// (so one huge value does not hide the others), the whole at maxJSON.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return trunc(maxJSON, string(raw))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the template escapes
	enc.SetIndent("", "  ")
	if enc.Encode(cutStrings(v, 0)) != nil {
		return trunc(maxJSON, string(raw))
	}
	return trunc(maxJSON, strings.TrimSuffix(buf.String(), "\n"))
}

// maxString bounds one string inside a JSON value shown on a page.
const maxString = 1000

// cutStrings shortens the long strings of a decoded JSON value; past a
// depth of 64 it stops descending (what is deeper shows as is).
func cutStrings(v any, depth int) any {
	if depth > 64 {
		return v
	}
	switch x := v.(type) {
	case string:
		return trunc(maxString, x)
	case []any:
		for i := range x {
			x[i] = cutStrings(x[i], depth+1)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = cutStrings(e, depth+1)
		}
	}
	return v
}

// resources lists what a classified call touches, one line each.
func resources(a *action.Action) []string {
	if a == nil {
		return nil
	}
	var out []string
	for _, p := range a.Paths {
		out = append(out, string(p.Access)+" "+p.Path)
	}
	for _, h := range a.Hosts {
		out = append(out, "host "+h)
	}
	for _, rc := range a.Recipients {
		out = append(out, rc.Field+" "+rc.Address)
	}
	for _, ac := range a.Accounts {
		out = append(out, "account "+ac)
	}
	for _, am := range a.Amounts {
		out = append(out, fmt.Sprintf("amount %.2f %s", am.Value, am.Currency))
	}
	for _, c := range a.Commands {
		out = append(out, "run "+strings.Join(c.Argv, " "))
	}
	for i, s := range out {
		out[i] = trunc(maxText, s)
	}
	if len(out) > 50 {
		out = append(out[:50], fmt.Sprintf("… and %d more", len(out)-50))
	}
	return out
}
