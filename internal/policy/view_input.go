package policy

import (
	"cel.dev/cel-go/common/types/ref"

	"github.com/mandate-dev/mandate/internal/mandate"
)

// callView, reportView and selfView are CallFacts, mandate.Report and
// SelfFacts as rules see them: the same fields under the same names, and a
// cache of the fields' CEL values for the evaluation (see fieldcache.go), a
// slot for each string, list, map or struct field.
// The Input belongs to the caller, so its structs cannot hold an
// evaluation's cache; the activation copies each into its view when a
// program first reads the variable. TestViewsMirrorCoreTypes keeps them in
// step with the types they mirror.
type callView struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`

	cache [2]ref.Val
}

// reportView is mandate.Report as rules see it; see callView.
type reportView struct {
	PathsOutside          []string `json:"paths_outside"`
	SensitivePathsOutside []string `json:"sensitive_paths_outside"`
	HostsOutside          []string `json:"hosts_outside"`
	RecipientsOutside     []string `json:"recipients_outside"`
	RecipientsByName      []string `json:"recipients_by_name"`
	AccountsOutside       []string `json:"accounts_outside"`
	Prohibited            []string `json:"prohibited"`
	KindDenied            bool     `json:"kind_denied"`
	KindAllowed           bool     `json:"kind_allowed"`
	KindAsk               bool     `json:"kind_ask"`
	ConditionsMet         []string `json:"conditions_met"`
	ScratchWrites         []string `json:"scratch_writes"`
	Expired               bool     `json:"expired"`

	cache [9]ref.Val
}

// selfView is SelfFacts as rules see it; see callView.
type selfView struct {
	Addresses []string `json:"addresses"`
	Hosts     []string `json:"hosts"`
	Ports     []string `json:"ports"`
	Paths     []string `json:"paths"`

	cache [4]ref.Val
}

func (v *callView) cachedFields() []ref.Val   { return v.cache[:] }
func (v *reportView) cachedFields() []ref.Val { return v.cache[:] }
func (v *selfView) cachedFields() []ref.Val   { return v.cache[:] }

func (v *callView) fill(c *CallFacts) { *v = callView{Tool: c.Tool, Args: c.Args} }

func (v *reportView) fill(r *mandate.Report) {
	*v = reportView{
		PathsOutside:          r.PathsOutside,
		SensitivePathsOutside: r.SensitivePathsOutside,
		HostsOutside:          r.HostsOutside,
		RecipientsOutside:     r.RecipientsOutside,
		RecipientsByName:      r.RecipientsByName,
		AccountsOutside:       r.AccountsOutside,
		Prohibited:            r.Prohibited,
		KindDenied:            r.KindDenied,
		KindAllowed:           r.KindAllowed,
		KindAsk:               r.KindAsk,
		ConditionsMet:         r.ConditionsMet,
		ScratchWrites:         r.ScratchWrites,
		Expired:               r.Expired,
	}
}

func (v *selfView) fill(s *SelfFacts) {
	*v = selfView{Addresses: s.Addresses, Hosts: s.Hosts, Ports: s.Ports, Paths: s.Paths}
}
