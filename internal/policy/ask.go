package policy

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// askOptions are what an ask rule may say about the approval it asks for:
//
//	judge: eligible          # the judge model may see (and, in auto mode, resolve) its asks
//	approval_timeout: 2m     # the approval's deadline, instead of the session's or the server's
//
// Both are off by default. When several ask rules fire, the call is
// eligible for the judge if any of them is, and its deadline is the
// shortest they set.
type askOptions struct {
	judge   bool
	timeout time.Duration
	// judgeSrc and timeoutSrc are the values as written, for the hash.
	judgeSrc, timeoutSrc string
	err                  string
}

// maxApprovalTimeout bounds approval_timeout (a week): an approval is a
// question for a person now, not a standing permission.
const maxApprovalTimeout = 7 * 24 * time.Hour

func (o *askOptions) set() bool { return o.judgeSrc != "" || o.timeoutSrc != "" }

func (o *askOptions) parse(key string, v *yaml.Node) bool {
	switch key {
	case "judge":
		switch v.Value {
		case "eligible":
			o.judge = true
		case "never", "off":
		default:
			o.err = fmt.Sprintf("judge %q: want eligible (or never, the default)", v.Value)
			return false
		}
		o.judgeSrc = v.Value
	case "approval_timeout":
		d, err := time.ParseDuration(v.Value)
		if err != nil || d <= 0 || d > maxApprovalTimeout {
			o.err = fmt.Sprintf("approval_timeout %q: want a duration above 0 and at most %s, e.g. 2m or 1h", v.Value, maxApprovalTimeout)
			return false
		}
		o.timeout, o.timeoutSrc = d, v.Value
	}
	return true
}

func (o *askOptions) judgeKey() string   { return o.judgeSrc }
func (o *askOptions) timeoutKey() string { return o.timeoutSrc }

// AskOptions returns what the named rule says about approvals: whether its
// asks may go to the judge, and its approval deadline (0: not set). ok is
// false for a rule that is not loaded.
func (p *Policy) AskOptions(rule string) (judge bool, timeout time.Duration, ok bool) {
	// A scan, not a map: it runs only for asks, over a few dozen rules.
	for i := range p.info {
		if r := &p.info[i]; r.Name == rule && !r.Disabled {
			return r.Judge, r.ApprovalTimeout, true
		}
	}
	return false, 0, false
}
