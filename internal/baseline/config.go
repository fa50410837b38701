package baseline

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"github.com/mandate-dev/mandate/internal/datafile"
)

// BuiltinFile is the name the built-in knowledge file is read under.
const BuiltinFile = "baseline.yaml"

//go:embed baseline.yaml
var builtinData []byte

// Config is what the behaviour layer knows (baseline.yaml).
type Config struct {
	Lifecycle struct {
		MinSessions     int `yaml:"min_sessions"`
		MinSessionCalls int `yaml:"min_session_calls"`
		MinCalls        int `yaml:"min_calls"`
	} `yaml:"lifecycle"`
	Learning struct {
		Smoothing       float64 `yaml:"smoothing"`
		PathDepth       int     `yaml:"path_depth"`
		MaxDestinations int     `yaml:"max_destinations"`
		MaxTools        int     `yaml:"max_tools"`
		MaxTransitions  int     `yaml:"max_transitions"`
		MaxShapes       int     `yaml:"max_shapes"`
		// SharedSuffixes are public suffixes of more than one label: a
		// host's registrable domain takes one label more under them.
		SharedSuffixes []string `yaml:"shared_suffixes"`
		// FamilyTypes are the destination types generalised into
		// families (family.go); FamilyMembers is how many distinct
		// members of a family a profile must have learned before a new
		// member is no longer somewhere new.
		FamilyTypes   []string `yaml:"family_types"`
		FamilyMembers int      `yaml:"family_members"`
		// FamilySubnets is how many distinct /24s of a /16 the agent
		// must have reached (learned or tried) before an address in
		// another /24 of it is a member of its fleet (0: never).
		FamilySubnets int `yaml:"family_subnets"`
		// TriedSessions is how many earlier sessions must have tried a
		// destination, refused, before trying it again is like the agent.
		TriedSessions int `yaml:"tried_sessions"`
	} `yaml:"learning"`
	Consequential []string `yaml:"consequential"`
	RateKinds     []string `yaml:"rate_kinds"`
	Strong        []string `yaml:"strong_destinations"`
	Reach         []string `yaml:"reach_destinations"`
	// ReadOnly are the kinds that take nothing out and change nothing
	// but the request itself; ReadOnlyTypes the destination types that
	// are only a means (a program, a subcommand, a path) when every call
	// that used them was of those kinds.
	ReadOnly      []string `yaml:"read_only_kinds"`
	ReadOnlyTypes []string `yaml:"read_only_destinations"`
	Signals       struct {
		RareTool     float64 `yaml:"rare_tool"`
		RareMinCalls int     `yaml:"rare_min_calls"`
		// RareHour: the call's hour is rare below this probability (the
		// upper Wilson bound of the agent's learned calls within an hour
		// of it). Recorded on the decision, not weighed in the score.
		RareHour              float64 `yaml:"rare_hour"`
		RareTransition        float64 `yaml:"rare_transition"`
		RareTransitionMinFrom int     `yaml:"rare_transition_min_from"`
		RateFactor            float64 `yaml:"rate_factor"`
		RateExcess            int     `yaml:"rate_excess"`
		RateMinSessions       int     `yaml:"rate_min_sessions"`
		RareTransitionLift    float64 `yaml:"rare_transition_lift"`
		// RareZ is the normal quantile of the one-sided bound a tool's or
		// transition's probability is judged by (Wilson): the most it
		// could be, given how often it was seen in how many calls.
		RareZ           float64 `yaml:"rare_z"`
		NoveltySessions int     `yaml:"novelty_sessions"`
		Weights         struct {
			FirstSeenConsequential float64 `yaml:"first_seen_consequential"`
			FirstSeenReach         float64 `yaml:"first_seen_reach"`
			FirstSeen              float64 `yaml:"first_seen"`
			Exposed                float64 `yaml:"exposed"`
			RareTool               float64 `yaml:"rare_tool"`
			RareTransition         float64 `yaml:"rare_transition"`
			Rate                   float64 `yaml:"rate"`
		} `yaml:"weights"`
		UnlikeSelf float64 `yaml:"unlike_self"`
		// UnlikeSelfMinSessions: while learning, a call is unlike itself
		// (recorded, never asked on: the pack asks only in monitoring)
		// once the agent has this many ordinary sessions — the sample
		// the destination signals need; the others carry their own.
		UnlikeSelfMinSessions int `yaml:"unlike_self_min_sessions"`
	} `yaml:"signals"`
	Drift struct {
		MinSessions               int      `yaml:"min_sessions"`
		Divergence                float64  `yaml:"divergence"`
		MinNewDestinationCalls    int      `yaml:"min_new_destination_calls"`
		MinNewDestinationSessions int      `yaml:"min_new_destination_sessions"`
		Permutations              int      `yaml:"permutations"`
		Significance              float64  `yaml:"significance"`
		RateZ                     float64  `yaml:"rate_z"`
		MinNewTransitionCalls     int      `yaml:"min_new_transition_calls"`
		MinNewTransitionShare     float64  `yaml:"min_new_transition_share"`
		MinNewTransitionFromShare float64  `yaml:"min_new_transition_from_share"`
		RateFactor                float64  `yaml:"rate_factor"`
		RateExcess                float64  `yaml:"rate_excess"`
		EarlyMinPrevious          int      `yaml:"early_min_previous"`
		EarlyMinSessions          int      `yaml:"early_min_sessions"`
		EarlyPermutations         int      `yaml:"early_permutations"`
		EarlyDivergence           float64  `yaml:"early_divergence"`
		SecretKinds               []string `yaml:"secret_kinds"`
	} `yaml:"drift"`
	Review struct {
		MinSessions int        `yaml:"min_sessions"`
		Shortcuts   []Shortcut `yaml:"shortcuts"`
	} `yaml:"review"`

	consequential map[string]bool
	secret        map[string]bool
	strong        map[string]bool
	reach         map[string]bool
	readOnly      map[string]bool
	readOnlyTypes map[string]bool
	familyTypes   map[string]bool
}

// destTypes is a set of destination types from the file's key.
func destTypes(key string, types []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, t := range types {
		switch t {
		case DestHost, DestRecipient, DestAccount, DestPath, DestProgram, DestSubcommand:
			out[t] = true
		default:
			return nil, fmt.Errorf("%s: %q is not a destination type (host, recipient, account, path, program, subcommand)", key, t)
		}
	}
	return out, nil
}

// readOnlyCall reports whether every kind of a call is read-only.
func (c *Config) readOnlyCall(kinds []string) bool {
	return len(kinds) > 0 && !slices.ContainsFunc(kinds, func(k string) bool { return !c.readOnly[k] })
}

// Shortcut is a questionable shortcut a review looks for.
type Shortcut struct {
	Name    string `yaml:"name"`
	Pattern string `yaml:"pattern"`
	Why     string `yaml:"why"`
	re      *regexp.Regexp
}

// Match reports whether text shows the shortcut.
func (s *Shortcut) Match(text string) bool { return s.re != nil && s.re.MatchString(text) }

var builtin = sync.OnceValues(func() (*Config, error) { return Parse(BuiltinFile, builtinData) })

// Builtin returns the built-in configuration. The error is a broken
// built-in file, which the tests rule out.
func Builtin() (*Config, error) { return builtin() }

// Parse reads a configuration file strictly: unknown keys, wrong types and
// values out of range are errors naming the file and line.
func Parse(file string, data []byte) (*Config, error) {
	var c Config
	if err := datafile.Load(file, data, &c); err != nil {
		return nil, err
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &c, nil
}

func (c *Config) check() error {
	pos := func(name string, v int) error {
		if v <= 0 {
			return fmt.Errorf("%s must be above 0, not %d", name, v)
		}
		return nil
	}
	nonneg := func(name string, v float64) error {
		if !(v >= 0 && v <= 10) {
			return fmt.Errorf("%s must be between 0 and 10, not %v", name, v)
		}
		return nil
	}
	unit := func(name string, v float64) error {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("%s must be between 0 and 1, not %v", name, v)
		}
		return nil
	}
	l, s, d := &c.Learning, &c.Signals, &c.Drift
	for _, err := range []error{
		pos("lifecycle.min_sessions", c.Lifecycle.MinSessions), pos("lifecycle.min_session_calls", c.Lifecycle.MinSessionCalls),
		pos("lifecycle.min_calls", c.Lifecycle.MinCalls), pos("learning.path_depth", l.PathDepth),
		pos("learning.max_destinations", l.MaxDestinations), pos("learning.max_tools", l.MaxTools),
		pos("learning.max_transitions", l.MaxTransitions), pos("learning.max_shapes", l.MaxShapes), pos("learning.family_members", l.FamilyMembers), pos("learning.tried_sessions", l.TriedSessions),
		pos("signals.rate_min_sessions", s.RateMinSessions), pos("signals.unlike_self_min_sessions", s.UnlikeSelfMinSessions), pos("drift.min_sessions", d.MinSessions),
		pos("signals.novelty_sessions", s.NoveltySessions), unit("signals.rare_transition_lift", s.RareTransitionLift),
		nonneg("signals.rare_z", s.RareZ), nonneg("learning.family_subnets", float64(l.FamilySubnets)),
		pos("drift.min_new_destination_calls", d.MinNewDestinationCalls), pos("drift.min_new_destination_sessions", d.MinNewDestinationSessions),
		pos("drift.permutations", d.Permutations), pos("drift.early_min_previous", d.EarlyMinPrevious),
		pos("drift.early_min_sessions", d.EarlyMinSessions), pos("drift.early_permutations", d.EarlyPermutations), unit("drift.significance", d.Significance),
		pos("drift.min_new_transition_calls", d.MinNewTransitionCalls),
		pos("review.min_sessions", c.Review.MinSessions),
		unit("signals.rare_tool", s.RareTool), unit("signals.rare_hour", s.RareHour), unit("signals.rare_transition", s.RareTransition),
		unit("signals.unlike_self", s.UnlikeSelf), unit("signals.weights.first_seen_consequential", s.Weights.FirstSeenConsequential),
		unit("signals.weights.first_seen", s.Weights.FirstSeen), unit("signals.weights.first_seen_reach", s.Weights.FirstSeenReach),
		unit("signals.weights.exposed", s.Weights.Exposed), unit("signals.weights.rare_tool", s.Weights.RareTool),
		unit("signals.weights.rare_transition", s.Weights.RareTransition), unit("signals.weights.rate", s.Weights.Rate),
		unit("drift.divergence", d.Divergence), unit("drift.early_divergence", d.EarlyDivergence), unit("drift.min_new_transition_share", d.MinNewTransitionShare),
		unit("drift.min_new_transition_from_share", d.MinNewTransitionFromShare),
	} {
		if err != nil {
			return err
		}
	}
	if !(l.Smoothing > 0) {
		return fmt.Errorf("learning.smoothing must be above 0, not %v", l.Smoothing)
	}
	if d.RateZ < 0 {
		return fmt.Errorf("drift.rate_z must be at least 0, not %v", d.RateZ)
	}
	if d.Permutations > 10000 || d.EarlyPermutations > 10000 {
		return fmt.Errorf("drift.permutations and drift.early_permutations must be at most 10000, not %d and %d (each drift check runs them)", d.Permutations, d.EarlyPermutations)
	}
	if s.RateFactor < 1 || d.RateFactor < 1 {
		return fmt.Errorf("signals.rate_factor and drift.rate_factor must be at least 1")
	}
	if l.MaxShapes < s.RateMinSessions {
		return fmt.Errorf("learning.max_shapes (%d) must be at least signals.rate_min_sessions (%d)", l.MaxShapes, s.RateMinSessions)
	}
	c.consequential = map[string]bool{}
	for _, k := range c.Consequential {
		c.consequential[k] = true
	}
	c.secret = map[string]bool{}
	for _, k := range d.SecretKinds {
		c.secret[k] = true
	}
	var err error
	if c.strong, err = destTypes("strong_destinations", c.Strong); err != nil {
		return err
	}
	if c.reach, err = destTypes("reach_destinations", c.Reach); err != nil {
		return err
	}
	if c.familyTypes, err = destTypes("learning.family_types", l.FamilyTypes); err != nil {
		return err
	}
	for t := range c.familyTypes {
		if c.strong[t] {
			return fmt.Errorf("learning.family_types: %q names a party (a new recipient or account is never a member of a known family)", t)
		}
	}
	c.readOnly = map[string]bool{}
	for _, k := range c.ReadOnly {
		if c.consequential[k] {
			return fmt.Errorf("read_only_kinds: %q is also consequential", k)
		}
		c.readOnly[k] = true
	}
	if c.readOnlyTypes, err = destTypes("read_only_destinations", c.ReadOnlyTypes); err != nil {
		return err
	}
	for t := range c.readOnlyTypes {
		if c.strong[t] || t == DestHost {
			return fmt.Errorf("read_only_destinations: %q is where a call reaches, not a means (only program, subcommand, path)", t)
		}
	}
	seen := map[string]bool{}
	for i := range c.Review.Shortcuts {
		sc := &c.Review.Shortcuts[i]
		if sc.Name == "" || seen[sc.Name] {
			return fmt.Errorf("review.shortcuts[%d]: a shortcut needs a unique name", i)
		}
		seen[sc.Name] = true
		re, err := regexp.Compile(sc.Pattern)
		if err != nil {
			return fmt.Errorf("review.shortcuts[%d] (%s): pattern: %w", i, sc.Name, err)
		}
		sc.re = re
	}
	return nil
}
