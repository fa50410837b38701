// Package redact keeps secrets out of everything Mandate stores. Before a
// change is committed (and recorded as evidence), every string in it — call
// arguments, the classified action, tool output, the user's instructions,
// tool descriptions and schemas — is scanned with package secret, and every
// secret-looking value, and every value under a key that names a secret
// (password, token, api_key, authorization …), is replaced by a marker
// [REDACTED:<type>:<hash>].
//
// The hash is an HMAC-SHA256 of the value under a random key kept in the data
// directory (mode 0600), truncated to 128 bits. Whoever holds the original
// value can show that a marker stands for it (`mandate evidence
// prove-secret`), while someone who has the log but not the key cannot test
// guesses against the markers — which a plain or publicly salted hash would
// allow for short passwords. The trade-off: checking a claimed value needs
// the key, so it is done by the operator (or whoever they give the key to),
// not by anyone holding a bundle.
//
// Redaction copies on write: a value the engine may still hold is never
// changed; the change gets a redacted copy of the parts that had secrets.
// A change without secrets (the common case) is scanned and left as it is.
package redact

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mandate-dev/mandate/internal/secret"
)

// KeyFile is the redaction key's file in the data directory.
const KeyFile = "redact.key"

// KeySensitive is the marker type of a value replaced because of the key
// it was under, rather than its shape.
const KeySensitive = "sensitive_key"

const markerPrefix = "[REDACTED:"

// Redactor replaces secrets with markers; it is the engine's Redactor. It
// is safe for concurrent use.
type Redactor struct {
	key    []byte
	scan   *secret.Scanner
	marker *regexp.Regexp
	// plans caches, per struct type, the fields that can hold strings.
	plans sync.Map // reflect.Type → *plan
	// keys caches secret.SensitiveKey for the key names seen (bounded).
	keys  sync.Map // string → bool
	nkeys atomic.Int64
	// decisionKeys and observationKeys say which of the text fields
	// change.go redacts by name sit under a key the scanner takes for a
	// secret's (with the built-in lists, none), as the generic walk would
	// have found from their JSON names.
	decisionKeys    [len(decisionTextNames)]bool
	observationKeys [len(observationTextNames)]bool
	// clean remembers short texts the scanner found nothing in.
	clean cleanTexts
}

// cleanTexts is a bounded set of short texts in which the scanner found no
// secret. Text is a function of its input and the Redactor's scanner, which
// never changes, so a text seen clean once is clean again: most of what a
// decision stores (its reasons, rules, the baseline's signals, paths,
// commands) recurs from call to call, and a lookup costs a fraction of a
// scan. When the set is full it starts again empty, so it keeps what is
// current; it holds no text a secret was found in.
type cleanTexts struct {
	m atomic.Pointer[sync.Map] // string → struct{}
	n atomic.Int64
}

const (
	// minCleanText is the shortest text remembered: the scanner skips
	// shorter ones at no cost.
	minCleanText = 8
	// maxCleanText is the longest text remembered: longer ones (tool
	// output, message bodies) rarely recur whole.
	maxCleanText = 256
	// maxCleanTexts bounds the set (≈ 2 MB at most).
	maxCleanTexts = 8192
)

func (c *cleanTexts) has(s string) bool {
	m := c.m.Load()
	if m == nil {
		return false
	}
	_, ok := m.Load(s)
	return ok
}

func (c *cleanTexts) add(s string) {
	m := c.m.Load()
	if m == nil || c.n.Load() >= maxCleanTexts {
		// Start again (a racing add may land in the set replaced).
		m = &sync.Map{}
		c.m.Store(m)
		c.n.Store(0)
	}
	// A copy, so that the set does not keep alive the larger string s
	// may be part of.
	if _, loaded := m.LoadOrStore(strings.Clone(s), struct{}{}); !loaded {
		c.n.Add(1)
	}
}

// Option configures a Redactor.
type Option func(*Redactor)

// WithScanner makes the Redactor find secrets with s (the built-in
// detectors plus an operator's, see secret.Scanner.With) instead of the
// built-in scanner alone.
func WithScanner(s *secret.Scanner) Option {
	return func(r *Redactor) {
		if s != nil {
			r.scan = s
		}
	}
}

// New returns a Redactor hashing with key (at least 16 bytes).
func New(key []byte, opts ...Option) (*Redactor, error) {
	if len(key) < 16 {
		return nil, fmt.Errorf("redaction key is %d bytes, want at least 16", len(key))
	}
	r := &Redactor{
		key:    append([]byte(nil), key...),
		scan:   secret.Builtin(),
		marker: regexp.MustCompile(`\[REDACTED:[a-z0-9_]+:[0-9a-f]{32}\]`),
	}
	for _, o := range opts {
		o(r)
	}
	for i, name := range decisionTextNames {
		r.decisionKeys[i] = r.sensitiveKey(name)
	}
	for i, name := range observationTextNames {
		r.observationKeys[i] = r.sensitiveKey(name)
	}
	return r, nil
}

// NewKey returns a fresh random key.
func NewKey() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

// LoadOrCreateKey reads the key from dir, creating it (mode 0600) on first
// start.
func LoadOrCreateKey(dir string) ([]byte, error) {
	k, err := LoadKey(dir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	path := filepath.Join(dir, KeyFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadKey(dir) // created meanwhile by another process
	}
	if err != nil {
		return nil, fmt.Errorf("redaction key: %w", err)
	}
	k = NewKey()
	_, err = f.WriteString(hex.EncodeToString(k) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("redaction key: %w", err)
	}
	return k, nil
}

// LoadKey reads the key from dir.
func LoadKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("redaction key: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %04o lets others read the key: chmod 600 it", path, fi.Mode().Perm())
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) < 16 {
		return nil, fmt.Errorf("%s: not a hex key of at least 16 bytes", path)
	}
	return k, nil
}

// Hash is the keyed hash a marker carries for value.
func (r *Redactor) Hash(value string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Marker is what value is replaced with: [REDACTED:<typ>:<hash>].
func (r *Redactor) Marker(typ, value string) string {
	return markerPrefix + typ + ":" + r.Hash(value) + "]"
}

// IsMarker reports whether s is exactly one marker.
func (r *Redactor) IsMarker(s string) bool {
	return strings.HasPrefix(s, markerPrefix) && r.marker.MatchString(s) && len(s) == len(r.marker.FindString(s))
}

// Text replaces the secrets package secret finds in free text, leaving
// markers already in it alone. It reports whether it changed anything.
func (r *Redactor) Text(s string) (string, bool) {
	remember := len(s) >= minCleanText && len(s) <= maxCleanText
	if remember && r.clean.has(s) {
		return s, false
	}
	ms := r.scan.Find(s)
	if len(ms) == 0 {
		if remember {
			r.clean.add(s)
		}
		return s, false
	}
	var markers [][]int
	if strings.Contains(s, markerPrefix) {
		markers = r.marker.FindAllStringIndex(s, -1)
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		if overlapsAny(m.Start, m.End, markers) {
			continue
		}
		b.WriteString(s[last:m.Start])
		b.WriteString(r.Marker(m.Type, s[m.Start:m.End]))
		last = m.End
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

func overlapsAny(start, end int, spans [][]int) bool {
	for _, sp := range spans {
		if start < sp[1] && sp[0] < end {
			return true
		}
	}
	return false
}

// sensitiveString redacts a value found under a sensitive key: all of it,
// unless it is a placeholder or already carries markers.
func (r *Redactor) sensitiveString(s string) (string, bool) {
	if r.scan.IsPlaceholder(s) {
		return s, false
	}
	if strings.Contains(s, markerPrefix) {
		return r.Text(s)
	}
	return r.Marker(KeySensitive, s), true
}

func (r *Redactor) str(s string, sensitive bool) (string, bool) {
	if sensitive {
		return r.sensitiveString(s)
	}
	return r.Text(s)
}

// sensitiveKey is secret.SensitiveKey, remembered for the key names seen.
func (r *Redactor) sensitiveKey(k string) bool {
	if v, ok := r.keys.Load(k); ok {
		return v.(bool)
	}
	v := r.scan.SensitiveKey(k)
	if r.nkeys.Load() < 4096 {
		if _, loaded := r.keys.LoadOrStore(k, v); !loaded {
			r.nkeys.Add(1)
		}
	}
	return v
}

// Value redacts any value, copying on write; it returns v itself when
// nothing had to change.
func (r *Redactor) Value(v any) (any, bool, error) {
	if v == nil {
		return nil, false, nil
	}
	nv, changed, err := r.walk(reflect.ValueOf(v), false)
	if err != nil || !changed {
		return v, false, err
	}
	return nv.Interface(), true, nil
}
