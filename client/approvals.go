package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mandate-dev/mandate/api"
)

// Approval states.
const (
	Pending   = api.ApprovalPending
	Approved  = api.ApprovalApproved
	Denied    = api.ApprovalDenied
	Expired   = api.ApprovalExpired
	Withdrawn = api.ApprovalWithdrawn
)

// The approval queue's wire types (package api).
type (
	// Approval is an ask put to a person, bound to the exact call.
	Approval = api.Approval
	// ApprovalStatus is where an approval stood when a decision was
	// returned (Decision.Approval).
	ApprovalStatus = api.ApprovalStatus
	// JudgeOpinion is what the judge model answered about an ask.
	JudgeOpinion = api.JudgeOpinion
	// Answer is a person's answer: Decision "approve" or "deny", Note
	// (kept verbatim), Scope "once" (default) or "session".
	Answer = api.AnswerRequest
)

// ApprovalFilter selects approvals to list; zero fields select all.
type ApprovalFilter struct {
	SessionID string
	State     string
	Limit     int
	// Before is a cursor: approvals created before this approval id.
	Before string
}

// Approvals lists approvals, newest first (a user, approver or admin
// token).
func (c *Client) Approvals(ctx context.Context, f ApprovalFilter) ([]*Approval, error) {
	q := url.Values{}
	for k, v := range map[string]string{"session_id": f.SessionID, "state": f.State, "before": f.Before} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	path := "/v1/approvals"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out api.ApprovalList
	if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return out.Approvals, nil
}

// GetApproval fetches one approval.
func (c *Client) GetApproval(ctx context.Context, id string) (*Approval, error) {
	var a Approval
	return &a, c.do(ctx, http.MethodGet, "/v1/approvals/"+url.PathEscape(id), nil, &a)
}

// AnswerApproval answers a pending approval (a user, approver or admin
// token). The first answer wins: a later one, or one for an expired or
// withdrawn approval, is a conflict (IsConflict); an unknown id is
// IsNotFound.
func (c *Client) AnswerApproval(ctx context.Context, id string, a Answer) (*Approval, error) {
	var out Approval
	return &out, c.do(ctx, http.MethodPost, "/v1/approvals/"+url.PathEscape(id), a, &out)
}

// Approve approves a pending approval.
func (c *Client) Approve(ctx context.Context, id, note, scope string) (*Approval, error) {
	return c.AnswerApproval(ctx, id, Answer{Decision: "approve", Note: note, Scope: scope})
}

// Deny denies a pending approval.
func (c *Client) Deny(ctx context.Context, id, note string) (*Approval, error) {
	return c.AnswerApproval(ctx, id, Answer{Decision: "deny", Note: note})
}

// longPoll is how long one round of WaitForApproval asks the server to
// hold the request.
const longPoll = 25 * time.Second

// WaitForApproval waits until the approval is answered, expires or is
// withdrawn, or ctx ends, long-polling the server in rounds; it returns the
// approval as it then is. A harness that got effect ask runs the call only
// if the result is Approved — and then evaluates it again, which allows it
// once (rule approval.granted):
//
//	d, _ := c.Evaluate(ctx, sid, "send_email", args)
//	if d.Effect == client.Ask {
//		a, err := c.WaitForApproval(ctx, d.ApprovalID)
//		if err == nil && a.State == client.Approved {
//			d, err = c.Evaluate(ctx, sid, "send_email", args) // effect allow
//		}
//	}
func (c *Client) WaitForApproval(ctx context.Context, id string) (*Approval, error) {
	if id == "" {
		return nil, errors.New("mandate: WaitForApproval: no approval id (the decision was not an ask)")
	}
	path := "/v1/approvals/" + url.PathEscape(id) + "?wait="
	for {
		wait := longPoll
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl))
		}
		if wait <= 0 {
			return nil, context.DeadlineExceeded
		}
		var a Approval
		if err := c.doWaiting(ctx, http.MethodGet, path+wait.Round(time.Millisecond).String(), nil, &a, wait); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if a.Final() {
			return &a, nil
		}
		if ctx.Err() != nil {
			return &a, ctx.Err()
		}
	}
}
