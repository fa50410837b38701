// Package notify delivers Mandate's events to webhooks: a JSON body (or a
// Slack-compatible incoming-webhook body) POSTed for each new approval, and
// optionally for answers, denies and gaps, signed with HMAC-SHA256 over the
// timestamp and the body:
//
//	Mandate-Signature: t=UNIX_SECONDS,v1=HEX(HMAC-SHA256(secret, "UNIX_SECONDS." + body))
//
// Receivers check it with client.VerifyWebhook (or the few lines in
// docs/approvals.md). Each target has its own queue and worker, so a slow or
// failing receiver delays only its own deliveries; failed attempts are
// retried with exponential backoff, and every delivery's status is kept for
// GET /v1/webhooks and counted in metrics. Secrets are never logged.
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/events"
)

// Header is the signature header.
const Header = "Mandate-Signature"

// Sign returns the Mandate-Signature header value for body at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Event names a target may list. deny is a decision event whose effect is
// deny.
const (
	EventApproval = "approval"
	EventAnswered = "approval.answered"
	EventDeny     = "deny"
	EventGap      = "gap"
)

// Target is one webhook.
type Target struct {
	URL    string
	Secret []byte
	// Events are the names above; Format is "json" or "slack".
	Events   []string
	Format   string
	Headers  map[string]string
	Timeout  time.Duration
	Attempts int
}

// Options configure a Notifier.
type Options struct {
	Targets []Target
	Bus     *events.Bus
	// Link makes the address of an approval for people ("{id}" filled).
	Link func(approvalID string) string
	// Backoff is the wait before the second attempt, doubling after
	// (default 1s); MaxBackoff caps it (default 1m).
	Backoff, MaxBackoff time.Duration
	// Queue bounds each target's undelivered events (default 1000); past
	// it the oldest is dropped, and its status says so.
	Queue int
	// Client sends deliveries (default: an http.Client per target with
	// its timeout).
	Client  *http.Client
	Logger  *slog.Logger
	Version string
	// Registerer, if set, gets the delivery counter.
	Registerer prometheus.Registerer
}

// Notifier delivers events to its targets until its context ends.
type Notifier struct {
	opts    Options
	targets []*target
	log     *slog.Logger
	sent    *prometheus.CounterVec
}

// Delivery is one event's delivery to one target; TargetStatus a target
// with its recent deliveries (GET /v1/webhooks).
type (
	Delivery     = api.WebhookDelivery
	TargetStatus = api.WebhookStatus
)

type target struct {
	Target
	client *http.Client
	wake   chan struct{}

	mu      sync.Mutex
	queue   []*pending
	recent  []*Delivery // newest last, bounded
	counts  [3]int      // delivered, failed, dropped
	display string      // URL without credentials or query
}

type pending struct {
	ev *events.Event
	d  *Delivery
}

const keepDeliveries = 100

// New builds a notifier; Run starts delivering.
func New(opts Options) (*Notifier, error) {
	if opts.Bus == nil {
		return nil, errors.New("notify: no event bus")
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = time.Minute
	}
	if opts.Queue <= 0 {
		opts.Queue = 1000
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Link == nil {
		opts.Link = func(id string) string { return "" }
	}
	n := &Notifier{opts: opts, log: opts.Logger}
	n.sent = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mandate_webhook_deliveries_total",
		Help: "Webhook deliveries by target and outcome (delivered, failed, dropped).",
	}, []string{"target", "outcome"})
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(n.sent); err != nil {
			return nil, fmt.Errorf("notify: metrics: %w", err)
		}
	}
	for i, t := range opts.Targets {
		if t.Format == "" {
			t.Format = "json"
		}
		if t.Attempts <= 0 {
			t.Attempts = 6
		}
		if t.Timeout <= 0 {
			t.Timeout = 10 * time.Second
		}
		if len(t.Events) == 0 {
			t.Events = []string{EventApproval}
		}
		tg := &target{Target: t, wake: make(chan struct{}, 1), display: displayURL(t.URL)}
		tg.client = opts.Client
		if tg.client == nil {
			tg.client = &http.Client{Timeout: t.Timeout}
		}
		if tg.display == "" {
			return nil, fmt.Errorf("notify: target %d: url %q is not a URL", i, t.URL)
		}
		n.targets = append(n.targets, tg)
	}
	return n, nil
}

// displayURL is a URL fit for logs and status: no user info, no query, and
// no path segment long enough to be a token (Slack's and others' webhook
// URLs carry their secret in the path).
func displayURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	segs := strings.Split(u.Path, "/")
	for i, seg := range segs {
		if len(seg) >= 16 {
			segs[i] = "…"
		}
	}
	return u.Scheme + "://" + u.Host + strings.Join(segs, "/")
}

// busTypes are the bus event types the targets need.
func (n *Notifier) busTypes() []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, t := range n.targets {
		for _, e := range t.Events {
			switch e {
			case EventDeny:
				add("decision")
			default:
				add(e)
			}
		}
	}
	return out
}

// Run delivers until ctx ends. A subscription the bus cuts off (the
// notifier fell behind) is resumed from the last event seen.
func (n *Notifier) Run(ctx context.Context) {
	if len(n.targets) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, t := range n.targets {
		wg.Go(func() { n.deliver(ctx, t) })
	}
	defer wg.Wait()
	last := ""
	for ctx.Err() == nil {
		sub, _ := n.opts.Bus.Subscribe(events.Filter{Types: n.busTypes(), Audience: events.Readers, LocalOnly: true}, last)
	read:
		for {
			select {
			case <-ctx.Done():
				sub.Close()
				return
			case ev, ok := <-sub.Events():
				if !ok {
					n.log.Warn("webhooks fell behind the event stream; resuming")
					break read
				}
				last = ev.ID
				n.route(ev)
			}
		}
	}
}

// route queues an event for every target that wants it.
func (n *Notifier) route(ev *events.Event) {
	name := ev.Type
	if ev.Type == "decision" {
		var d struct {
			Effect string `json:"effect"`
		}
		data, err := ev.Data()
		if err != nil || json.Unmarshal(data, &d) != nil || d.Effect != "deny" {
			return
		}
		name = EventDeny
	}
	for _, t := range n.targets {
		if !slices.Contains(t.Events, name) {
			continue
		}
		t.mu.Lock()
		p := &pending{ev: ev, d: &Delivery{EventID: ev.ID, Type: name, Status: "queued", At: time.Now().UTC()}}
		if len(t.queue) >= n.opts.Queue {
			old := t.queue[0]
			t.queue = t.queue[1:]
			old.d.Status, old.d.Error = "dropped", "the queue was full"
			t.counts[2]++
			n.sent.WithLabelValues(t.display, "dropped").Inc()
		}
		t.queue = append(t.queue, p)
		t.remember(p.d)
		t.mu.Unlock()
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

func (t *target) remember(d *Delivery) {
	t.recent = append(t.recent, d)
	if len(t.recent) > keepDeliveries {
		t.recent = t.recent[len(t.recent)-keepDeliveries:]
	}
}

// deliver is one target's worker: events in order, each retried with
// backoff until delivered or given up.
func (n *Notifier) deliver(ctx context.Context, t *target) {
	for {
		t.mu.Lock()
		var p *pending
		if len(t.queue) > 0 {
			p = t.queue[0]
			t.queue = t.queue[1:]
		}
		t.mu.Unlock()
		if p == nil {
			select {
			case <-ctx.Done():
				return
			case <-t.wake:
				continue
			}
		}
		n.attempt(ctx, t, p)
		if ctx.Err() != nil {
			return
		}
	}
}

func (n *Notifier) attempt(ctx context.Context, t *target, p *pending) {
	body, err := n.body(t, p.ev)
	if err != nil {
		n.finish(t, p, "failed", 0, fmt.Sprintf("encode: %v", err))
		return
	}
	wait := n.opts.Backoff
	for i := 1; i <= t.Attempts; i++ {
		code, err := n.post(ctx, t, p, body)
		t.mu.Lock()
		p.d.Attempts, p.d.Code, p.d.At = i, code, time.Now().UTC()
		p.d.Error = ""
		if err != nil {
			p.d.Error = err.Error()
		}
		t.mu.Unlock()
		if err == nil {
			n.finish(t, p, "delivered", code, "")
			return
		}
		if ctx.Err() != nil {
			return
		}
		if !retryable(code) || i == t.Attempts {
			n.finish(t, p, "failed", code, err.Error())
			n.log.Warn("webhook delivery failed", "target", t.display, "event", p.ev.ID, "type", p.d.Type, "attempts", i, "err", err)
			return
		}
		t.mu.Lock()
		p.d.Status, p.d.Next = "retrying", time.Now().Add(wait).UTC()
		t.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		wait = min(2*wait, n.opts.MaxBackoff)
	}
}

// retryable: network errors (code 0), timeouts, rate limits and server
// errors are tried again; other refusals would be refused again.
func retryable(code int) bool {
	return code == 0 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

func (n *Notifier) finish(t *target, p *pending, status string, code int, msg string) {
	t.mu.Lock()
	p.d.Status, p.d.Code, p.d.Error, p.d.Next = status, code, msg, time.Time{}
	if status == "delivered" {
		t.counts[0]++
	} else {
		t.counts[1]++
	}
	t.mu.Unlock()
	n.sent.WithLabelValues(t.display, status).Inc()
}

func (n *Notifier) post(ctx context.Context, t *target, p *pending, body []byte) (int, error) {
	cctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mandate/"+n.opts.Version)
	req.Header.Set("Mandate-Event", p.d.Type)
	req.Header.Set("Mandate-Delivery", p.ev.ID)
	for k, v := range t.Headers {
		req.Header.Set(k, v)
	}
	if len(t.Secret) > 0 {
		req.Header.Set(Header, Sign(t.Secret, time.Now(), body))
	}
	resp, err := t.client.Do(req)
	if err != nil {
		// The error names the URL; keep only what is safe to show.
		return 0, fmt.Errorf("POST %s: %s", t.display, errText(err))
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("POST %s: %s", t.display, resp.Status)
	}
	return resp.StatusCode, nil
}

// errText is a transport error without the URL it names (which may hold a
// token, as Slack's do).
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// Payload is the JSON body of a json-format delivery.
type Payload = api.WebhookPayload

func (n *Notifier) body(t *target, ev *events.Event) ([]byte, error) {
	data, err := ev.Data()
	if err != nil {
		return nil, err
	}
	var ref struct {
		ApprovalID string   `json:"approval_id"`
		DecisionID string   `json:"decision_id"`
		Tool       string   `json:"tool"`
		State      string   `json:"state"`
		Reasons    []string `json:"reasons"`
		AnsweredBy string   `json:"answered_by"`
		GapReason  string   `json:"gap_reason"`
		Effect     string   `json:"effect"`
	}
	json.Unmarshal(data, &ref)
	link := ""
	if ref.ApprovalID != "" {
		link = n.opts.Link(ref.ApprovalID)
	}
	name := ev.Type
	if ev.Type == "decision" {
		name = EventDeny
	}
	if t.Format == "slack" {
		return json.Marshal(map[string]string{"text": slackText(name, ev.SessionID, ref.Tool, ref.State, ref.AnsweredBy, ref.GapReason, ref.Reasons, link)})
	}
	return json.Marshal(Payload{ID: ev.ID, Type: name, Time: ev.Time, SessionID: ev.SessionID, Link: link, Data: data})
}

// slackText is a one-message summary in Slack's mrkdwn.
func slackText(typ, session, tool, state, by, gap string, reasons []string, link string) string {
	why := strings.Join(reasons, "; ")
	var s string
	switch typ {
	case EventApproval:
		s = fmt.Sprintf(":raised_hand: Mandate asks: *%s* in session `%s` — %s", esc(tool), esc(session), esc(why))
	case EventAnswered:
		s = fmt.Sprintf(":white_check_mark: Approval for *%s* in session `%s` is *%s*", esc(tool), esc(session), esc(state))
		if by != "" {
			s += " by " + esc(by)
		}
	case EventDeny:
		s = fmt.Sprintf(":no_entry: Mandate denied *%s* in session `%s` — %s", esc(tool), esc(session), esc(why))
	case EventGap:
		s = fmt.Sprintf(":warning: A call ran without Mandate's allow in session `%s` — %s", esc(session), esc(gap))
	default:
		s = fmt.Sprintf("Mandate: %s in session `%s`", esc(typ), esc(session))
	}
	if link != "" {
		s += fmt.Sprintf(" <%s|open the approval>", link)
	}
	return s
}

// esc escapes Slack's control characters.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Status reports every target and its recent deliveries.
func (n *Notifier) Status() []TargetStatus {
	out := []TargetStatus{}
	for _, t := range n.targets {
		t.mu.Lock()
		st := TargetStatus{URL: t.display, Format: t.Format, Events: t.Events, Signed: len(t.Secret) > 0, Queued: len(t.queue),
			Delivered: t.counts[0], Failed: t.counts[1], Dropped: t.counts[2], Deliveries: []Delivery{}}
		for _, d := range slices.Backward(t.recent) {
			st.Deliveries = append(st.Deliveries, *d)
		}
		t.mu.Unlock()
		out = append(out, st)
	}
	return out
}
