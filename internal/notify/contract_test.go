package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestSignatureHeaderContract checks the header a receiver relies on
// (issue 13's interface), computed here independently of Sign and the
// client's verifier: Mandate-Signature: t=UNIX_SECONDS,v1=HEX(HMAC-SHA256(
// secret, "UNIX_SECONDS." + body)).
func TestSignatureHeaderContract(t *testing.T) {
	r := &receiver{}
	srv := httptest.NewServer(r)
	defer srv.Close()
	bus, _ := start(t, []Target{{URL: srv.URL, Secret: secret, Events: []string{EventApproval}}})
	before := time.Now().Unix()
	bus.Publish("approval", "s1", approvalData("a-contract"))
	got := r.wait(t, 1)[0]
	h := got.header.Values("Mandate-Signature")
	if len(h) != 1 {
		t.Fatalf("Mandate-Signature headers: %q", h)
	}
	m := regexp.MustCompile(`^t=([0-9]+),v1=([0-9a-f]{64})$`).FindStringSubmatch(h[0])
	if m == nil {
		t.Fatalf("Mandate-Signature %q is not t=UNIX_SECONDS,v1=HEX", h[0])
	}
	ts, _ := strconv.ParseInt(m[1], 10, 64)
	if ts < before-1 || ts > time.Now().Unix()+1 {
		t.Errorf("timestamp %d is not the time of sending", ts)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(m[1] + "." + string(got.body)))
	if want := hex.EncodeToString(mac.Sum(nil)); m[2] != want {
		t.Errorf("v1=%s, want HMAC-SHA256(secret, t + \".\" + body) = %s", m[2], want)
	}
	if ct := got.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
}
