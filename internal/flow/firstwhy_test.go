package flow

// firstWhy returns the reason of the first injected span of an output
// ("" for none), and the spans.
func firstWhy(s *Scanner, raw []byte) (string, []Injection) {
	out := s.Output(raw, Hint{})
	if len(out.Injections) == 0 {
		return "", out.Injections
	}
	return out.Injections[0].Why, out.Injections
}
