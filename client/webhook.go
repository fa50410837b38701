package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WebhookHeader is the header Mandate signs its webhook deliveries with:
//
//	Mandate-Signature: t=UNIX_SECONDS,v1=HEX(HMAC-SHA256(secret, "UNIX_SECONDS." + body))
const WebhookHeader = "Mandate-Signature"

// DefaultWebhookTolerance is how old a delivery's timestamp may be (and how
// far ahead of the receiver's clock) before VerifyWebhook refuses it.
const DefaultWebhookTolerance = 5 * time.Minute

// Errors VerifyWebhook returns (wrapped, with detail).
var (
	ErrWebhookSignature = errors.New("webhook signature does not match")
	ErrWebhookStale     = errors.New("webhook timestamp outside the tolerance")
	ErrWebhookReplayed  = errors.New("webhook delivery already seen")
)

// VerifyWebhook checks a delivery's Mandate-Signature header against the
// raw request body: the HMAC must match (compared in constant time) and
// the timestamp must be within tolerance of now (0 means
// DefaultWebhookTolerance), so a captured delivery cannot be replayed later.
// Use a WebhookVerifier to refuse a replay inside the tolerance too.
func VerifyWebhook(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	_, err := verifyWebhook(secret, header, body, now, tolerance)
	return err
}

func verifyWebhook(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("webhook: no secret to verify with")
	}
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if ts == "" || len(sigs) == 0 {
		return "", fmt.Errorf("%w: header %q lacks t= or v1=", ErrWebhookSignature, header)
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: timestamp %q is not a number", ErrWebhookSignature, ts)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	want := mac.Sum(nil)
	matched := ""
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			matched = s
		}
	}
	if matched == "" {
		return "", ErrWebhookSignature
	}
	age := now.Sub(time.Unix(secs, 0))
	if age > tolerance || age < -tolerance {
		return "", fmt.Errorf("%w: signed %s ago, tolerance %s", ErrWebhookStale, age.Round(time.Second), tolerance)
	}
	return ts + "." + matched, nil
}

// WebhookVerifier verifies deliveries and remembers the ones it accepted
// for the tolerance window, so that a delivery replayed within it is
// refused too. It is safe for concurrent use.
type WebhookVerifier struct {
	Secret    []byte
	Tolerance time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu   sync.Mutex
	seen map[string]time.Time
}

// Verify checks one delivery (see VerifyWebhook) and refuses one already
// accepted.
func (v *WebhookVerifier) Verify(header string, body []byte) error {
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	key, err := verifyWebhook(v.Secret, header, body, now, v.Tolerance)
	if err != nil {
		return err
	}
	tol := v.Tolerance
	if tol <= 0 {
		tol = DefaultWebhookTolerance
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen == nil {
		v.seen = map[string]time.Time{}
	}
	for k, at := range v.seen {
		if now.Sub(at) > 2*tol {
			delete(v.seen, k)
		}
	}
	if _, dup := v.seen[key]; dup {
		return ErrWebhookReplayed
	}
	v.seen[key] = now
	return nil
}
