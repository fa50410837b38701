package action

import (
	"net/url"
	"path"
	"strings"
)

// State-changing links. Fetching a URL usually only reads, but some links
// act when followed: an unsubscribe link cancels a subscription, and a
// GET to a submit or ingest endpoint hands over the data in its query
// string. Such a fetch is also what the link does.

// unsubscribeWords are path segments (lower case, extension dropped) of
// unsubscribe and opt-out links, in the languages newsletters use.
var unsubscribeWords = map[string]bool{
	"unsubscribe": true, "unsub": true, "optout": true, "opt-out": true, "opt_out": true,
	"unsubscribe-confirm": true, "list-unsubscribe": true, "abmelden": true, "abbestellen": true,
	"newsletter-abmelden": true, "desabonnement": true, "desinscription": true, "desabonner": true,
	"desinscribir": true, "desuscribir": true, "darse-de-baja": true, "baja": true, "cancelar-suscripcion": true,
}

// submitWords are the last path segments of endpoints that take data:
// a GET to one with a query string hands the query's data over.
var submitWords = map[string]bool{
	"submit": true, "upload": true, "send": true, "publish": true, "ingest": true, "collect": true,
}

// linkAction returns what following u does besides fetching it, with a
// note, or ("", "") when it only reads. It allocates only for a link that
// acts.
func linkAction(u *url.URL) (Kind, string) {
	p := strings.Trim(u.Path, "/")
	last := ""
	for p != "" {
		seg, rest, _ := strings.Cut(p, "/")
		if unsubscribeWords[linkWord(seg)] {
			return Delete, "following the unsubscribe link " + redactURL(u) + " cancels a subscription"
		}
		last, p = seg, rest
	}
	if u.RawQuery == "" {
		return "", ""
	}
	if strings.Contains(strings.ToLower(u.RawQuery), "unsub") || strings.Contains(strings.ToLower(u.RawQuery), "opt") {
		q := u.Query()
		for _, k := range []string{"action", "do", "op", "cmd"} {
			if unsubscribeWords[strings.ToLower(q.Get(k))] {
				return Delete, "following the unsubscribe link " + redactURL(u) + " cancels a subscription"
			}
		}
	}
	if submitWords[linkWord(last)] {
		for _, kv := range strings.Split(u.RawQuery, "&") {
			if _, v, ok := strings.Cut(kv, "="); ok && v != "" {
				return Send, "the link " + redactURL(u) + " submits the data in its query string"
			}
		}
	}
	return "", ""
}

// linkWord is a path segment in lower case without its extension
// ("Unsubscribe.php" is "unsubscribe").
func linkWord(s string) string {
	if ext := path.Ext(s); ext != "" && len(ext) <= 5 {
		s = s[:len(s)-len(ext)]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
