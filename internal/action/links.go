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
// note, or (0, "") when it only reads.
func linkAction(u *url.URL) (Kind, string) {
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for _, s := range segs {
		if unsubscribeWords[linkWord(s)] {
			return Delete, "following the unsubscribe link " + redactURL(u) + " cancels a subscription"
		}
	}
	q := u.Query()
	for _, k := range []string{"action", "do", "op", "cmd"} {
		if unsubscribeWords[strings.ToLower(q.Get(k))] {
			return Delete, "following the unsubscribe link " + redactURL(u) + " cancels a subscription"
		}
	}
	if last := linkWord(segs[len(segs)-1]); submitWords[last] {
		for _, vs := range q {
			for _, v := range vs {
				if v != "" {
					return Send, "the link " + redactURL(u) + " submits the data in its query string"
				}
			}
		}
	}
	return "", ""
}

// linkWord is a path segment in lower case without its extension
// ("Unsubscribe.php" is "unsubscribe").
func linkWord(s string) string {
	s = strings.ToLower(s)
	if ext := path.Ext(s); ext != "" && len(ext) <= 5 {
		s = strings.TrimSuffix(s, ext)
	}
	return s
}
